//! Counters of an emulated device: host requests, NAND work, write amplification, modeled time,
//! and latency distributions per request kind. Serialized into run results as `device`.

use serde::{Deserialize, Serialize};

/// A latency distribution in simulated time: log-linear buckets (8 per power of two, so a
/// percentile is exact to within 12.5 %), plus exact count, sum and maximum.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LatencyHistogram {
    buckets: Vec<u64>,
    count: u64,
    sum_ns: u64,
    max_ns: u64,
}

const SUB: u32 = 8;

impl LatencyHistogram {
    fn bucket_of(ns: u64) -> usize {
        if ns < u64::from(SUB) {
            return ns as usize;
        }
        let log = 63 - ns.leading_zeros(); // ≥ 3
        let sub = (ns >> (log - 3)) & u64::from(SUB - 1);
        ((log - 2) * SUB + sub as u32) as usize
    }

    /// Upper bound (exclusive) of bucket `i`.
    fn bucket_upper(i: usize) -> u64 {
        let i = i as u32;
        if i < SUB {
            return u64::from(i) + 1;
        }
        let log = i / SUB + 2;
        let sub = u64::from(i % SUB);
        ((SUB as u64 + sub + 1) << (log - 3)).saturating_sub(0)
    }

    pub fn record(&mut self, ns: u64) {
        let b = Self::bucket_of(ns);
        if self.buckets.len() <= b {
            self.buckets.resize(b + 1, 0);
        }
        self.buckets[b] += 1;
        self.count += 1;
        self.sum_ns += ns;
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `q`-quantile (0..=1), as the upper bound of its bucket, capped at the maximum.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return (Self::bucket_upper(i) - 1).min(self.max_ns);
            }
        }
        self.max_ns
    }

    pub fn summary(&self) -> LatencySummary {
        let us = |ns: u64| ns as f64 / 1000.0;
        LatencySummary {
            count: self.count,
            mean_us: if self.count == 0 {
                0.0
            } else {
                self.sum_ns as f64 / self.count as f64 / 1000.0
            },
            p50_us: us(self.quantile_ns(0.5)),
            p90_us: us(self.quantile_ns(0.9)),
            p99_us: us(self.quantile_ns(0.99)),
            p999_us: us(self.quantile_ns(0.999)),
            max_us: us(self.max_ns),
        }
    }
}

/// Summary of a latency distribution, in microseconds of simulated time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

/// Latency distributions per request kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Latencies {
    pub read: LatencyHistogram,
    pub write: LatencyHistogram,
    pub fua_write: LatencyHistogram,
    pub flush: LatencyHistogram,
    pub discard: LatencyHistogram,
}

/// Latency summaries per request kind (serialized form of `Latencies`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummaries {
    pub read: LatencySummary,
    pub write: LatencySummary,
    pub fua_write: LatencySummary,
    pub flush: LatencySummary,
    pub discard: LatencySummary,
}

impl Latencies {
    pub fn summaries(&self) -> LatencySummaries {
        LatencySummaries {
            read: self.read.summary(),
            write: self.write.summary(),
            fua_write: self.fua_write.summary(),
            flush: self.flush.summary(),
            discard: self.discard.summary(),
        }
    }
}

/// Everything a device run reports. The first fields are the `device` section of a run
/// result (`host_write_bytes` … `modeled_ops_per_sec`). `Default` is all zeros (a device
/// that saw no request, or the host-side counts of a device seen through a connection).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    pub host_write_bytes: u64,
    /// Bytes programmed to NAND: host pages, GC copies and map pages.
    pub nand_program_bytes: u64,
    /// Data blocks erased (by GC).
    pub erases: u64,
    /// Blocks of the map area erased (the FTL's metadata log, X-FTL Table 1's "metadata
    /// blocks erased by FTL"); not in `erases`.
    #[serde(default)]
    pub map_erases: u64,
    pub gc_copies: u64,
    /// Garbage-collection runs (one victim block each).
    #[serde(default)]
    pub gc_runs: u64,
    /// Share of its victims' pages GC found valid and copied (0 without GC).
    #[serde(default)]
    pub gc_validity: f64,
    /// Write amplification: `nand_program_bytes / host_write_bytes` (0 when nothing was
    /// written).
    pub waf: f64,
    /// Flush requests (including preflushes).
    pub flushes: u64,
    /// FUA or reliable writes.
    pub fua: u64,
    /// Simulated time from the first request to the completion of the last.
    pub modeled_s: f64,
    /// Host read and write requests per modeled second.
    pub modeled_ops_per_sec: f64,

    pub host_read_requests: u64,
    pub host_read_bytes: u64,
    pub host_write_requests: u64,
    pub discards: u64,
    pub discard_bytes: u64,
    /// Host commands that carried several writes (eMMC packed commands).
    pub packed_commands: u64,
    /// Reliable write commands (packed or not) made atomic across the command
    /// (`ReliableWriteAtomicity::Command`), and the distinct pages they wrote.
    #[serde(default)]
    pub reliable_atomic_commands: u64,
    #[serde(default)]
    pub reliable_atomic_pages: u64,
    /// Slot reads (one per page read unless the mapping unit is smaller than the page).
    pub nand_reads: u64,
    pub nand_read_bytes: u64,
    /// NAND page programs: data (host and GC), map pages and commit tables.
    pub nand_programs: u64,
    /// Host pages (mapping units) programmed (cache destage, write-through, FUA).
    pub host_page_programs: u64,
    /// Slots programmed empty (a page programmed with fewer mapping units than it holds; 0
    /// unless the mapping unit is smaller than the page).
    #[serde(default)]
    pub padding_slots: u64,
    pub map_page_programs: u64,
    pub checkpoints: u64,
    /// X-FTL transactions committed and aborted.
    #[serde(default)]
    pub txn_commits: u64,
    #[serde(default)]
    pub txn_aborts: u64,
    /// Pages programmed for X-FTL commit tables (included in `nand_programs`).
    #[serde(default)]
    pub commit_table_programs: u64,
    /// Page reads done to merge a partial-page write with the old page contents.
    pub rmw_reads: u64,
    /// Host read pages served entirely from the cache.
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// Write pages merged into a page already in the cache.
    pub cache_write_hits: u64,
    /// Time the NAND units were busy, summed over units.
    pub nand_busy_s: f64,
    /// Write amplification of the FTL alone: NAND page programs (host + GC + map) over host
    /// page programs. Excludes the read-modify-write inflation of sub-page writes.
    pub ftl_waf: f64,
    pub wear_min_erases: u32,
    pub wear_max_erases: u32,
    pub wear_mean_erases: f64,
    /// Torn pages (interrupted programs) the recovery at the last power-on found on flash and
    /// set aside: the host reads each page's previous copy. Tears stay until GC erases their
    /// block. 0 for a freshly formatted device.
    pub recovery_torn_pages: u64,
    /// Blocks whose erase that power loss interrupted.
    pub recovery_torn_erase_blocks: u64,
    pub latency: LatencySummaries,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_bound_their_values() {
        let mut last = 0;
        for ns in [
            0u64,
            1,
            7,
            8,
            9,
            15,
            16,
            17,
            100,
            1000,
            123_456,
            10_000_000_000,
        ] {
            let b = LatencyHistogram::bucket_of(ns);
            assert!(b >= last);
            last = b;
            assert!(LatencyHistogram::bucket_upper(b) > ns, "{ns} in bucket {b}");
            if b > 0 {
                assert!(
                    LatencyHistogram::bucket_upper(b - 1) <= ns,
                    "{ns} lower bound"
                );
            }
        }
    }

    #[test]
    fn quantiles_are_within_a_bucket() {
        let mut h = LatencyHistogram::default();
        for i in 1..=1000u64 {
            h.record(i * 1000);
        }
        let p50 = h.quantile_ns(0.5);
        assert!((500_000..=570_000).contains(&p50), "{p50}");
        assert_eq!(h.quantile_ns(1.0), 1_000_000);
        assert_eq!(h.summary().count, 1000);
    }
}
