//! `joj speed`: transactions per second of journal modes against stock WAL, measured in
//! interleaved rounds and summarised by medians.
//!
//! On a shared machine the rate of one run moves by a factor of several from minute to minute
//! (the loop device's backing file lives in the host's page cache, and every flush is an
//! `fsync` of it on the host disk), so a ratio taken from two separate commands says little.
//! Here every round runs each operation in every mode back to back, untraced, on a new scratch
//! filesystem per run; the order of the modes rotates from round to round so that no mode is
//! always first; a mode's ratio is taken *within* its round (`mode txn/s / wal txn/s` of the
//! same round) and the reported figure is the median of those per-round ratios, next to the
//! median rates. Nothing here asserts a speed: the figures are printed (and written as JSON).

use crate::error::{ExperimentError, StackError};
use crate::run::run_on;
use crate::stack::{RunOptions, Stack, Workload};
use joj_workload::{DbOp, DbWorkload, JournalMode};
use serde::{Deserialize, Serialize};

/// One run of one operation in one mode.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpeedRun {
    pub round: u32,
    pub op: String,
    pub mode: String,
    pub transactions: u64,
    pub ops_per_sec: f64,
    /// Median transaction latency in microseconds (less moved by the host's slow flushes than
    /// the rate, which their tail dominates).
    pub p50_latency_us: f64,
    /// The run's checks (a steady run includes `steady_wal`) all passed.
    pub checks_ok: bool,
}

/// One operation in one mode over all rounds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpeedSummary {
    pub op: String,
    pub mode: String,
    /// Median of the rounds' transactions per second.
    pub median_ops_per_sec: f64,
    /// Per round: this mode's rate over the baseline's rate in the same round.
    pub ratios: Vec<f64>,
    /// Median of `ratios`.
    pub median_ratio: f64,
    /// Median of the rounds' median latencies, microseconds.
    pub median_p50_latency_us: f64,
    /// Per round: the baseline's median latency over this mode's (above 1: this mode is faster).
    pub latency_ratios: Vec<f64>,
    /// Median of `latency_ratios`.
    pub median_latency_ratio: f64,
}

/// Every run, in the order they ran, and the summaries.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpeedReport {
    /// The mode every ratio is taken against (stock WAL).
    pub baseline: String,
    pub rounds: u32,
    pub runs: Vec<SpeedRun>,
    pub summaries: Vec<SpeedSummary>,
}

/// The median of `v` (mean of the middle two for an even count); `None` when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    Some(if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    })
}

/// The order of `modes` in round `round`: rotated by the round number, so each mode runs first
/// in some round.
pub fn round_order<T: Copy>(modes: &[T], round: u32) -> Vec<T> {
    let mut v = modes.to_vec();
    if !v.is_empty() {
        let k = round as usize % v.len();
        v.rotate_left(k);
    }
    v
}

/// Summaries of `runs` against `baseline`: per (op, mode), the median rate and the median of
/// the per-round ratios to the baseline's rate in the same round and operation.
pub fn summarise(runs: &[SpeedRun], baseline: &str) -> Vec<SpeedSummary> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in runs {
        let k = (r.op.clone(), r.mode.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(op, mode)| {
            let mine: Vec<&SpeedRun> = runs
                .iter()
                .filter(|r| r.op == op && r.mode == mode)
                .collect();
            let rates: Vec<f64> = mine.iter().map(|r| r.ops_per_sec).collect();
            let latencies: Vec<f64> = mine.iter().map(|r| r.p50_latency_us).collect();
            let base_of = |r: &SpeedRun| {
                runs.iter()
                    .find(|b| b.op == op && b.mode == baseline && b.round == r.round)
            };
            let ratios: Vec<f64> = mine
                .iter()
                .filter_map(|r| {
                    base_of(r)
                        .filter(|b| b.ops_per_sec > 0.0)
                        .map(|b| r.ops_per_sec / b.ops_per_sec)
                })
                .collect();
            let latency_ratios: Vec<f64> = mine
                .iter()
                .filter(|r| r.p50_latency_us > 0.0)
                .filter_map(|r| base_of(r).map(|b| b.p50_latency_us / r.p50_latency_us))
                .collect();
            SpeedSummary {
                median_ops_per_sec: median(&rates).unwrap_or(0.0),
                median_ratio: median(&ratios).unwrap_or(0.0),
                median_p50_latency_us: median(&latencies).unwrap_or(0.0),
                median_latency_ratio: median(&latency_ratios).unwrap_or(0.0),
                latency_ratios,
                ratios,
                op,
                mode,
            }
        })
        .collect()
}

/// Run `base` for every operation in `ops` and every mode in `modes` (which must include
/// `JournalMode::Wal`, the baseline), `rounds` times, interleaved; `each` is called after every
/// run (for progress output).
pub fn speed(
    base: &DbWorkload,
    ops: &[DbOp],
    modes: &[JournalMode],
    rounds: u32,
    opts: &RunOptions,
    mut each: impl FnMut(&SpeedRun),
) -> Result<SpeedReport, ExperimentError> {
    if modes.is_empty() || ops.is_empty() || rounds == 0 {
        return Err(StackError::NoModes.into());
    }
    if !modes.contains(&JournalMode::Wal) {
        return Err(StackError::SpeedNeedsWal.into());
    }
    if let Some(&mode) = modes.iter().find(|m| m.on_device()) {
        return Err(StackError::SpeedOnDevice(mode).into());
    }
    base.validate()?;
    let opts = RunOptions {
        trace: false,
        device: None,
        ..opts.clone()
    };
    // Resolve every stack first, so an option a mode cannot take fails before the first run.
    let mut planned = Vec::new();
    for &op in ops {
        for &mode in modes {
            let w = Workload::Db(DbWorkload {
                op,
                journal: mode,
                ..base.clone()
            });
            planned.push((op, mode, Stack::resolve(&w, &opts)?, w));
        }
    }
    let mut runs = Vec::new();
    for round in 0..rounds {
        for &op in ops {
            for mode in round_order(modes, round) {
                let (_, _, stack, w) = planned
                    .iter()
                    .find(|(o, m, _, _)| *o == op && *m == mode)
                    .expect("every (op, mode) was planned");
                let result = run_on(stack, w, opts.progress.clone())?;
                let run = SpeedRun {
                    round: round + 1,
                    op: op.to_string(),
                    mode: mode.to_string(),
                    transactions: result.transactions,
                    ops_per_sec: result.ops_per_sec,
                    p50_latency_us: result.latency_us.map_or(0.0, |l| l.p50),
                    checks_ok: result.checks.iter().all(|c| c.ok),
                };
                each(&run);
                runs.push(run);
            }
        }
    }
    let baseline = JournalMode::Wal.to_string();
    Ok(SpeedReport {
        summaries: summarise(&runs, &baseline),
        baseline,
        rounds,
        runs,
    })
}

/// The table `joj speed` prints: per operation and mode, the median rate, the median of the
/// per-round ratios to stock WAL, and the ratios themselves.
pub fn table(r: &SpeedReport) -> String {
    let mut s = format!(
        "{:<8} {:<18} {:>12} {:>7}  {:<30} {:>7} {:>8}  per-round\n",
        "op", "mode", "median txn/s", "ratio", "per-round ratios", "p50 µs", "p50 rat."
    );
    let list = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for m in &r.summaries {
        s.push_str(&format!(
            "{:<8} {:<18} {:>12.1} {:>6.2}×  {:<30} {:>7.0} {:>7.2}×  {}\n",
            m.op,
            m.mode,
            m.median_ops_per_sec,
            m.median_ratio,
            list(&m.ratios),
            m.median_p50_latency_us,
            m.median_latency_ratio,
            list(&m.latency_ratios)
        ));
    }
    let failed: Vec<String> = r
        .runs
        .iter()
        .filter(|x| !x.checks_ok)
        .map(|x| format!("round {} {} {}", x.round, x.op, x.mode))
        .collect();
    if !failed.is_empty() {
        s.push_str(&format!("checks failed in: {}\n", failed.join(", ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(round: u32, op: &str, mode: &str, ops_per_sec: f64) -> SpeedRun {
        SpeedRun {
            round,
            op: op.into(),
            mode: mode.into(),
            transactions: 1000,
            ops_per_sec,
            p50_latency_us: 1e6 / ops_per_sec,
            checks_ok: true,
        }
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn every_mode_runs_first_in_some_round() {
        let modes = ["wal", "waldio", "waldio-fua"];
        let firsts: Vec<&str> = (0..3).map(|r| round_order(&modes, r)[0]).collect();
        assert_eq!(firsts, ["wal", "waldio", "waldio-fua"]);
        assert_eq!(round_order(&modes, 4), ["waldio", "waldio-fua", "wal"]);
    }

    #[test]
    fn ratios_pair_runs_of_the_same_round() {
        // The baseline's rate swings tenfold between rounds; the paired ratio does not.
        let runs = vec![
            run(1, "insert", "wal", 100.0),
            run(1, "insert", "waldio", 120.0),
            run(2, "insert", "waldio", 1300.0),
            run(2, "insert", "wal", 1000.0),
            run(3, "insert", "wal", 500.0),
            run(3, "insert", "waldio", 550.0),
        ];
        let s = summarise(&runs, "wal");
        let w = s.iter().find(|m| m.mode == "waldio").unwrap();
        assert_eq!(w.ratios.len(), 3);
        assert!((w.median_ratio - 1.2).abs() < 1e-9);
        assert!((w.median_ops_per_sec - 550.0).abs() < 1e-9);
        let b = s.iter().find(|m| m.mode == "wal").unwrap();
        assert!((b.median_ratio - 1.0).abs() < 1e-9);
        // Latency ratios are baseline over mode: above 1 when the mode is faster.
        assert!((w.median_latency_ratio - 1.2).abs() < 1e-9);
    }
}
