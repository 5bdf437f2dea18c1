//! Latency percentiles of a run, from every transaction's measured duration.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl LatencySummary {
    /// Summarise latencies given in nanoseconds; the figures are in microseconds.
    /// Percentiles use the nearest-rank method on the sorted samples.
    pub fn from_ns(mut samples_ns: Vec<u64>) -> LatencySummary {
        if samples_ns.is_empty() {
            return LatencySummary::default();
        }
        samples_ns.sort_unstable();
        let n = samples_ns.len();
        let rank = |q: f64| -> f64 {
            let idx = ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
            samples_ns[idx] as f64 / 1000.0
        };
        let sum: u128 = samples_ns.iter().map(|&v| v as u128).sum();
        LatencySummary {
            count: n as u64,
            mean: sum as f64 / n as f64 / 1000.0,
            p50: rank(0.50),
            p99: rank(0.99),
            p999: rank(0.999),
            max: samples_ns[n - 1] as f64 / 1000.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let s = LatencySummary::from_ns((1..=1000).map(|v| v * 1000).collect());
        assert_eq!(s.count, 1000);
        assert_eq!(s.p50, 500.0);
        assert_eq!(s.p99, 990.0);
        assert_eq!(s.p999, 999.0);
        assert_eq!(s.max, 1000.0);
        assert!((s.mean - 500.5).abs() < 1e-9);
    }

    #[test]
    fn empty_is_zero() {
        assert_eq!(LatencySummary::from_ns(vec![]).count, 0);
    }
}
