//! What `joj crash --fs` reports: the log's shape, the states checked by kind and how much of
//! each epoch they cover, the violations found.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::check::Violation;
use super::coalition::CoalitionStats;
use super::mount::MountCost;
use super::options::FsWorkload;
use super::planned::FoundState;
use super::states::{EpochCoverage, KindCounts};
use super::workload::{Canary, JudgeAs, Window};

/// The recorded log's shape and its agreement with tracefs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LogSummary {
    pub writes: u64,
    pub write_bytes: u64,
    pub flushes: u64,
    pub epochs: u64,
    /// tracefs's account of the same window (absent for a saved log).
    pub traced_write_bytes: Option<u64>,
    pub traced_flushes: Option<u64>,
    /// Seconds the recorded run took.
    pub record_s: f64,
}

/// A state that broke its mode's promise.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Found {
    pub index: usize,
    pub state: FoundState,
    pub acknowledged: u64,
    pub begun: u64,
    pub violation: Option<Violation>,
    pub fsck: Option<String>,
    pub description: String,
}

/// The result of `joj crash --fs`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrashFsReport {
    pub fs: String,
    pub mode: String,
    pub workload: FsWorkload,
    pub canary: Option<Canary>,
    /// `FULL` or `EXTRA` for a stock mode, waldio's option for waldio.
    pub synchronous: String,
    pub window: Window,
    pub transactions: u64,
    pub seed: u64,
    pub log: LogSummary,
    /// What reading the run as the optimized journal did (`--emmc-journal`).
    pub emmc_journal: Option<CoalitionStats>,
    pub states_explored: u64,
    pub exhaustive: bool,
    /// The states by kind (boundary, after-flush, prefix, subset, torn).
    pub states_by_kind: KindCounts,
    /// The share of each epoch's states checked (the plain reading; `None` under
    /// `--emmc-journal`).
    pub coverage: Option<Coverage>,
    pub images_checked: u64,
    /// What the violations were judged against: the window, or full durability.
    pub judged_as: JudgeAs,
    pub violations: u64,
    pub lost_acknowledged: u64,
    pub broken: u64,
    pub unmountable: u64,
    pub fsck_failures: u64,
    /// Most acknowledged transactions missing in one state (within the window or not).
    pub largest_loss: u64,
    /// States that lost acknowledged transactions, within the window or not: what the mode
    /// loses against full durability.
    pub losing_acknowledged: u64,
    /// For a saved log (`--from-log`): what the filesystem's own checker said of its image,
    /// run read-only before the kernel mounted any state of it.
    pub image_checked_before_mount: Option<String>,
    /// The journal replay each checked image needs at mount, modeled (ext4).
    pub mount: Option<MountCost>,
    pub check_s: f64,
    pub states_per_s: f64,
    /// Up to 20 violating states (and fsck failures), each with how to rebuild it.
    pub found: Vec<Found>,
    /// Where the violating states were saved.
    pub saved: Option<PathBuf>,
    /// Where the log was saved (with violations, or with `--save-log`).
    pub saved_log: Option<PathBuf>,
}

/// How much of each epoch's states a run checked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Coverage {
    pub epochs: u64,
    /// Epochs with at least one write in flight.
    pub epochs_with_writes: u64,
    /// Of those, epochs with at least one state checked, and with at least one subset or
    /// torn write checked.
    pub epochs_checked: u64,
    pub epochs_with_in_flight_checked: u64,
    /// The share of an epoch's fault-model states checked, over the epochs with writes.
    pub share_median: f64,
    pub share_max: f64,
    pub per_epoch: Vec<EpochCoverage>,
}

impl Coverage {
    pub fn of(per_epoch: Vec<EpochCoverage>) -> Coverage {
        let with: Vec<&EpochCoverage> = per_epoch.iter().filter(|c| c.writes > 0).collect();
        let mut shares: Vec<f64> = with.iter().map(|c| c.share).collect();
        shares.sort_by(f64::total_cmp);
        Coverage {
            epochs: per_epoch.len() as u64,
            epochs_with_writes: with.len() as u64,
            epochs_checked: with.iter().filter(|c| c.states > 0).count() as u64,
            epochs_with_in_flight_checked: with.iter().filter(|c| c.in_flight_states > 0).count()
                as u64,
            share_median: shares.get(shares.len() / 2).copied().unwrap_or(0.0),
            share_max: shares.last().copied().unwrap_or(0.0),
            per_epoch,
        }
    }
}

impl CrashFsReport {
    /// Exit status 0: a sound mode shows no violation, a canary that must break is caught.
    pub fn verdict_ok(&self) -> bool {
        match self.canary {
            Some(c) if c.must_break() => self.violations > 0,
            _ => self.violations == 0 && self.fsck_failures == 0,
        }
    }
}
