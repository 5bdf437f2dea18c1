//! What `joj crash --fs` is asked to run ([`CrashFsOptions`]), and the combinations it refuses
//! before anything is made.

use std::path::PathBuf;

use joj_linux::FsKind;
use joj_workload::JournalMode;
use serde::{Deserialize, Serialize};

use super::check::Reader;
use super::error::CrashFsError;
use super::postmark::Expected;
use super::share::Shard;
use super::workload::{self, Canary, JudgeAs};
use crate::error::ExperimentError;

/// What the recorded run does on the filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsWorkload {
    /// SQLite transactions in the journal mode given (`workload.rs`).
    Sqlite,
    /// PostMark-like file creates, appends and deletes (`postmark.rs`); the journal mode is not
    /// used.
    Postmark,
}

impl FsWorkload {
    pub const NAMES: [&'static str; 2] = ["sqlite", "postmark"];

    pub fn from_name(s: &str) -> Option<FsWorkload> {
        match s {
            "sqlite" => Some(FsWorkload::Sqlite),
            "postmark" => Some(FsWorkload::Postmark),
            _ => None,
        }
    }
}

/// Largest `-n`.
pub const MAX_TRANSACTIONS: u64 = 100_000;

/// Largest `--states`.
pub const MAX_STATES: u64 = 10_000_000;

/// What to run.
#[derive(Debug, Clone)]
pub struct CrashFsOptions {
    pub fs: FsKind,
    pub mode: JournalMode,
    pub workload: FsWorkload,
    /// Read the run as the eMMC paper's optimized journal issues it (`coalition.rs`).
    pub emmc_journal: bool,
    pub canary: Option<Canary>,
    /// The recorded connection's `PRAGMA synchronous`: a stock mode's durability, or under
    /// waldio what the application sets (the option decides durability).
    pub sync: workload::StockSync,
    /// Transactions of the recorded run.
    pub transactions: u64,
    /// Crash states to check (fewer when the run has fewer: then every one is checked).
    pub states: u64,
    pub seed: u64,
    /// A saved log to check instead of recording a run.
    pub from_log: Option<PathBuf>,
    /// Where to save the log and the violating states (none when `None`).
    pub save_dir: Option<PathBuf>,
    /// Save the recorded run's log in `save_dir` even when no state violates.
    pub save_log: bool,
    /// Judge against the mode's window or against full durability.
    pub judge_as: JudgeAs,
    /// Check only this share of the planned states and write a part (`shard.rs`).
    pub shard: Option<Shard>,
    /// Record the run and save its log (in `save_dir`), checking no state.
    pub record_only: bool,
}

impl CrashFsOptions {
    pub fn setup(&self) -> workload::Setup {
        workload::Setup {
            mode: self.mode,
            canary: self.canary,
            sync: self.sync,
        }
    }

    pub fn validate(&self) -> Result<(), ExperimentError> {
        if self.fs.needs_journal_device() {
            return Err(ExperimentError::CrashStates(format!(
                "{} keeps its journal on a second device, and the recording disk records one; \
                 fix: use ext4, ext4-writeback, ext4-datajournal, ext4-nojournal, xfs or btrfs",
                self.fs
            )));
        }
        self.validate_emmc_journal()?;
        if self.mode == JournalMode::Xftl && self.workload == FsWorkload::Sqlite {
            return Err(ExperimentError::CrashStates(
                "xftl runs on the emulated device, not a kernel filesystem; fix: use \
                 `joj crash --device …` (power cuts inside the device) for xftl"
                    .into(),
            ));
        }
        if self.workload == FsWorkload::Postmark && self.sync != workload::StockSync::Full {
            return Err(ExperimentError::CrashStates(
                "--synchronous sets a SQLite mode's PRAGMA synchronous, and --fs-workload \
                 postmark runs no SQLite (it fsyncs every transaction); fix: drop --synchronous"
                    .into(),
            ));
        }
        match self.canary {
            Some(c) if self.workload == FsWorkload::Postmark && c != Canary::PerPageReliable => {
                return Err(ExperimentError::CrashStates(format!(
                    "the {} canary breaks a SQLite mode, and --fs-workload postmark runs no \
                     SQLite; fix: drop --fs-canary, or use --fs-workload sqlite",
                    c.name()
                )));
            }
            Some(
                c @ (Canary::SkipSync
                | Canary::FallocateOnly
                | Canary::FallocateFlushOnly
                | Canary::FlushOnly),
            ) if !matches!(self.mode, JournalMode::Waldio(_)) => {
                return Err(ExperimentError::CrashStates(format!(
                    "the {} canary breaks waldio; fix: use --journal waldio",
                    c.name()
                )));
            }
            Some(Canary::SyncOff) if matches!(self.mode, JournalMode::Waldio(_)) => {
                return Err(ExperimentError::CrashStates(
                    "the sync-off canary is a stock SQLite mode; fix: use --journal wal, delete, \
                     truncate or persist"
                        .into(),
                ));
            }
            _ => {}
        }
        if self.sync == workload::StockSync::Off && !matches!(self.mode, JournalMode::Waldio(_)) {
            return Err(ExperimentError::CrashStates(
                "--synchronous off is for waldio, whose own option keeps commits durable \
                 whatever the application sets; a stock mode at OFF loses acknowledged commits \
                 by design; fix: use --canary sync-off to see that, or --journal waldio"
                    .into(),
            ));
        }
        if self.transactions == 0 || self.states == 0 {
            return Err(crate::error::StackError::Zero {
                what: "--states and -n",
            }
            .into());
        }
        self.validate_saving()
    }

    /// `--save-log` and `--save-dir`, `--shard` and `--record-only`, checked before anything
    /// runs.
    fn validate_saving(&self) -> Result<(), ExperimentError> {
        match (self.shard, self.record_only) {
            (Some(_), true) => {
                return Err(CrashFsError::RecordOnly {
                    fix: "drop --shard (record once, then give each shard --from-log)",
                }
                .into());
            }
            (Some(s), false) if self.from_log.is_none() => {
                return Err(CrashFsError::ShardNeedsLog {
                    shard: s.to_string(),
                }
                .into());
            }
            (Some(_), false) if self.save_dir.is_some() => {
                return Err(CrashFsError::ShardSavesNothing.into());
            }
            (None, true) if self.from_log.is_some() => {
                return Err(CrashFsError::RecordOnly {
                    fix: "drop --record-only (the log is already saved), or --from-log",
                }
                .into());
            }
            (None, true) if self.save_dir.is_none() => {
                return Err(CrashFsError::RecordOnly {
                    fix: "add --save-dir DIR, where the log goes",
                }
                .into());
            }
            _ => {}
        }
        match (&self.save_dir, &self.from_log) {
            (None, _) if self.save_log => return Err(CrashFsError::SaveLogNeedsDir.into()),
            (_, Some(log)) if self.save_log => {
                return Err(CrashFsError::SaveLogFromLog { log: log.clone() }.into());
            }
            _ => {}
        }
        if let Some(dir) = &self.save_dir {
            joj_trace::output::check_output_dir(dir).map_err(CrashFsError::SaveDir)?;
        }
        Ok(())
    }
}

impl CrashFsOptions {
    fn validate_emmc_journal(&self) -> Result<(), ExperimentError> {
        let jbd2 = self.fs.fs_type() == "ext4"
            && self.fs != FsKind::Ext4NoJournal
            && !self.fs.needs_journal_device();
        if self.emmc_journal && !jbd2 {
            return Err(ExperimentError::CrashStates(format!(
                "--emmc-journal reads jbd2's transactions, and {} has no internal jbd2 journal; \
                 fix: use --fs ext4 (or ext4-writeback, ext4-datajournal)",
                self.fs
            )));
        }
        if self.canary == Some(Canary::PerPageReliable) && !self.emmc_journal {
            return Err(ExperimentError::CrashStates(
                "the per-page-reliable canary breaks the optimized journal's commit; fix: add \
                 --emmc-journal"
                    .into(),
            ));
        }
        Ok(())
    }

    /// How the recovered filesystem is read.
    pub(super) fn reader<'a>(&self, expected: Option<&'a Expected>) -> Reader<'a> {
        match expected {
            Some(e) => Reader::Postmark(e),
            None => Reader::Sqlite(self.setup()),
        }
    }
}
