//! The crash-test document: every trial's cut and what the recovered database held.

use joj_atomic::XftlCounters;
use serde::{Deserialize, Serialize};

/// One power cut and what the recovered database held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrashTrial {
    pub trial: u64,
    /// The device failed at this command of the run (0-based).
    pub cut_at_command: u64,
    /// The command before it ran garbage collection (a cut aimed at GC).
    pub after_gc: bool,
    /// Power went this long after the failed command.
    pub delay_ns: u64,
    /// Transactions acknowledged before the failure.
    pub acknowledged: u64,
    /// A transaction was under way when the device failed.
    pub in_flight: bool,
    /// Transactions the recovered database holds (`None` when the trial failed).
    pub recovered: Option<u64>,
    /// NAND pages the recovery found torn.
    pub torn_pages: u64,
    /// X-FTL commit-table entries the recovery applied.
    pub xl2p_entries_applied: u64,
    /// What broke, when something did.
    pub failure: Option<String>,
}

/// The whole test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrashReport {
    pub workload: String,
    /// The profile's name (`profile`) and where it came from (`profile_source`).
    #[serde(flatten)]
    pub profile: joj_device::ProfileRef,
    pub transactions: u64,
    pub cuts: u64,
    pub seed: u64,
    pub canary: bool,
    pub fail_batch_one_in: u32,
    pub aging_validity: Option<u32>,
    /// Garbage-collection runs the device made in the counting run (the trials make as many
    /// up to their cut), and how many of its commands ran them.
    pub gc_runs_per_run: u64,
    pub gc_commands_per_run: u64,
    /// Device commands of one whole run, the range the cuts are drawn from.
    pub commands_per_run: u64,
    /// Cuts that failed the command right after one that ran GC.
    pub cuts_after_gc: u64,
    pub passed: u64,
    pub failed: u64,
    /// Cuts with a transaction under way whose commit the recovered database holds / lacks.
    pub in_flight_durable: u64,
    pub in_flight_lost: u64,
    pub torn_pages: u64,
    /// The commit paths SQLite took over every trial (and the counting run).
    pub paths: XftlCounters,
    /// The first failed trials (at most 20).
    pub failures: Vec<CrashTrial>,
}

impl CrashReport {
    /// Did the test show what it should: no failure on a sound device, at least one on the
    /// canary?
    pub fn verdict_ok(&self) -> bool {
        if self.canary {
            self.failed > 0
        } else {
            self.failed == 0
        }
    }
}
