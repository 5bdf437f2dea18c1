//! `joj compare`: one operation, every journal mode, one filesystem, each run traced; one row
//! per mode with the run's full result, and a text table of the JOJ per transaction.

use crate::error::{ExperimentError, StackError};
use crate::result::RunResult;
use crate::run::run_on;
use crate::stack::{FsChoice, RunOptions, Stack, Workload};
use joj_workload::{DbWorkload, JournalMode};
use serde::{Deserialize, Serialize};

/// One mode's row: its name and the fields of its `joj bench` document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompareRow {
    pub mode: String,
    #[serde(flatten)]
    pub result: RunResult,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    pub rows: Vec<CompareRow>,
}

/// The rows `joj compare` runs when none are named: SQLite's own modes beside joj's answer to
/// their journaling of journal — WALDIO, without and with group sync — and, when a device is
/// given, X-FTL on it.
pub fn default_modes(device: bool) -> Vec<JournalMode> {
    let mut modes = JournalMode::SQLITE.to_vec();
    modes.push(JournalMode::waldio(joj_waldio::SyncOption::Full, false));
    modes.push(JournalMode::waldio(joj_waldio::SyncOption::Full, true));
    if device {
        modes.push(JournalMode::Xftl);
    }
    modes
}

/// Run `base` once per mode in `modes` (journal mode replaced), every kernel-side row traced,
/// on a scratch filesystem; with a device every traced row is also replayed through it. Every
/// row's stack is resolved before the first runs, so options a mode cannot take fail at once.
/// `each` is called after every row (for progress output).
pub fn compare(
    base: &DbWorkload,
    modes: &[JournalMode],
    opts: &RunOptions,
    mut each: impl FnMut(&CompareRow),
) -> Result<Comparison, ExperimentError> {
    if modes.is_empty() {
        return Err(StackError::NoModes.into());
    }
    if !matches!(opts.fs, FsChoice::Scratch(_)) {
        return Err(StackError::CompareNeedsScratch.into());
    }
    base.validate()?;
    let mut planned = Vec::new();
    for &mode in modes {
        let w = Workload::Db(DbWorkload {
            journal: mode,
            ..base.clone()
        });
        let o = RunOptions {
            trace: true,
            label: Some(format!("compare-{}-{}-{mode}", opts.fs.name(), base.name())),
            ..opts.clone()
        };
        planned.push((mode, Stack::resolve(&w, &o)?, w));
    }
    let mut rows = Vec::new();
    for (mode, stack, w) in planned {
        let result = run_on(&stack, &w, opts.progress.clone())?;
        let row = CompareRow {
            mode: mode.to_string(),
            result,
        };
        each(&row);
        rows.push(row);
    }
    Ok(Comparison { rows })
}

/// The table `joj compare` prints: per mode, transactions/s, then KiB written per
/// transaction — database data, log data (WAL or rollback journal), filesystem metadata,
/// filesystem journal and the part of it written while SQLite synced its log (the JOJ), total —
/// and flush requests per transaction. When the rows were replayed through a device model
/// (`joj compare --device`), the last columns give the modeled transactions per second (host
/// and device) and the host's and the device's shares of the modeled time.
pub fn table(c: &Comparison) -> String {
    let mut s = String::new();
    let device = c.rows.iter().any(|r| r.result.device.is_some());
    let (dev_head, dev_unit) = if device {
        (
            format!(" | {:>9} {:>5} {:>6}", "txn/s", "host", "device"),
            format!(" | {:>9} {:>12}", "modeled", "share of time"),
        )
    } else {
        (String::new(), String::new())
    };
    s.push_str(&format!(
        "{:<14} {:>9} | {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} | {:>7}{dev_head}\n",
        "mode", "txn/s", "db", "log", "meta", "fs-jnl", "(JOJ)", "total", "flushes"
    ));
    s.push_str(&format!(
        "{:<14} {:>9} | {:^53} | {:>7}{dev_unit}\n",
        "", "", "KiB written per transaction", "per txn"
    ));
    for r in &c.rows {
        let dev_col = match (&r.result.modeled, &r.result.device, device) {
            (Some(m), _, _) => format!(
                " | {:>9.1} {:>4.0}% {:>5.0}%",
                m.time.modeled_ops_per_sec,
                m.time.host_share * 100.0,
                (1.0 - m.time.host_share) * 100.0
            ),
            // A run on the device itself (xftl, iftl): the device's time only.
            (None, Some(d), _) => {
                format!(" | {:>9.1} {:>5} {:>6}", d.modeled_ops_per_sec, "-", "100%")
            }
            (None, None, true) => format!(" | {:>9}", "-"),
            (None, None, false) => String::new(),
        };
        let res = &r.result;
        match &res.block_per_txn {
            Some(b) => {
                let n = res.transactions.max(1) as f64;
                let joj = res
                    .fs_journal_by_synced_file
                    .map(|f| (f.wal + f.rollback_journal) as f64 / n)
                    .unwrap_or(0.0);
                let log = b.data_by_role.wal + b.data_by_role.rollback_journal;
                s.push_str(&format!(
                    "{:<14} {:>9.1} | {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} | {:>7.2}{dev_col}\n",
                    r.mode,
                    res.ops_per_sec,
                    b.data_by_role.database / 1024.0,
                    log / 1024.0,
                    b.metadata_bytes / 1024.0,
                    b.fs_journal_bytes / 1024.0,
                    joj / 1024.0,
                    b.write_bytes / 1024.0,
                    b.flushes
                ));
            }
            None => s.push_str(&format!(
                "{:<14} {:>9.1} | (not traced){dev_col}\n",
                r.mode, res.ops_per_sec
            )),
        }
    }
    s
}
