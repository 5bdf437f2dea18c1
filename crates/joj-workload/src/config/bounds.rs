//! Upper bounds of every size-like workload parameter, each with the reason joj stops there.
//!
//! A number a user typed never sizes an allocation or a loop before it has passed these
//! bounds: `-n 10000000000` used to ask the allocator for 80 GB up front and abort, skipping
//! every cleanup. The bounds are generous — far beyond the papers' runs — and each is checked
//! before anything is created.

use crate::error::ConfigError;

/// Transactions per thread. A latency sample (8 B) is kept per transaction, and 10^8 commits
/// at a phone's ≈1 ms each already take more than a day.
pub const MAX_TRANSACTIONS: u64 = 100_000_000;
/// Threads. Each has its own connection and database files; Mobibench's runs used 1 to 8.
pub const MAX_THREADS: u32 = 64;
/// Database files in all: threads × (1 + attached). Each holds up to three open files (the
/// database, its journal or WAL, the shared-memory index), so 256 stay well under the usual
/// 1024-descriptor limit.
pub const MAX_DATABASES: u64 = 256;
/// Tables per database (Mobibench's default is 3); each gets its prepared statements.
pub const MAX_TABLES: u32 = 1_000;
/// Statements on every table in each transaction.
pub const MAX_STATEMENTS: u32 = 10_000;
/// Pause between transactions: one hour (jbd2's commit timer is 5 s, SQLite's none).
pub const MAX_INTERVAL_MS: u64 = 3_600_000;
/// Rows written into each table before the run, in KiB: 16 GiB.
pub const MAX_PREFILL_KIB: u64 = 16 << 20;
/// A file workload's file per thread: 64 GiB.
pub const MAX_FILE_BYTES: u64 = 64 << 30;
/// A file workload's record, one buffer in memory: 64 MiB.
pub const MAX_FILE_RECORD_BYTES: u64 = 64 << 20;
/// Samples of a run's latencies reserved up front; more grow as the run makes them.
pub const PREALLOCATED_SAMPLES: u64 = 1 << 16;

/// `given` for `what` must be at most `max`, for the reason `why`.
pub fn at_most(
    what: &'static str,
    given: u64,
    max: u64,
    why: &'static str,
) -> Result<(), ConfigError> {
    if given > max {
        return Err(ConfigError::TooMany {
            what,
            given,
            max,
            why,
        });
    }
    Ok(())
}

/// An empty vector for one latency sample per planned operation, with room reserved for at
/// most [`PREALLOCATED_SAMPLES`]: memory grows with the work done, not with the work asked.
pub fn latency_samples(planned: u64) -> Vec<u64> {
    Vec::with_capacity(planned.min(PREALLOCATED_SAMPLES) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_above_its_bound_names_the_bound_and_the_reason() {
        assert_eq!(at_most("threads", 64, MAX_THREADS.into(), "r"), Ok(()));
        let err = at_most("threads", 65, MAX_THREADS.into(), "each has a connection").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("65") && text.contains("at most 64"), "{text}");
        assert!(text.contains("each has a connection"), "{text}");
    }

    #[test]
    fn latency_samples_reserve_a_bounded_amount() {
        assert!(latency_samples(10_000_000_000).capacity() <= PREALLOCATED_SAMPLES as usize * 2);
        assert!(latency_samples(10).capacity() >= 10);
    }
}
