//! What a database workload's measured window produced.

use crate::paper::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// What the measured window produced.
#[derive(Debug, Clone)]
pub struct DbRunOutput {
    /// One entry per transaction, over all threads, in nanoseconds.
    pub latencies_ns: Vec<u64>,
    pub elapsed: Duration,
    /// Paths of every database file, for the caller's checks.
    pub databases: Vec<PathBuf>,
    /// What a paper workload did (`None` for Mobibench's).
    pub paper: Option<PaperOutcome>,
    /// Each workload thread's context switches, CPU time and run-queue delay over its
    /// measured transactions, in thread order.
    pub threads: Vec<crate::ThreadUsage>,
}

/// An X-FTL paper workload's run: its transactions by kind and the database it left.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PaperOutcome {
    /// Measured transactions by [`crate::paper::TxnKind::name`].
    pub transactions_by_kind: BTreeMap<String, u64>,
    /// TPC-C: committed New-Order transactions, the count tpmC is made of — per minute of
    /// `elapsed_s` or of a device model's `modeled_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_orders: Option<u64>,
    /// TPC-C: committed New-Orders per minute of the measured wall time. (The X-FTL paper's
    /// Table 4 gives "tpmC" for the selection- and join-only mixes too, which have no
    /// New-Orders: there it can only mean all transactions per minute, `ops_per_sec` × 60.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpmc: Option<f64>,
    /// [`crate::paper::check`] after the run (same seed, same workload: same summary in every
    /// journal mode).
    pub summary: Summary,
}
