//! `joj compare`: one operation, every journal mode, one filesystem, each run traced; one row
//! per mode with the run's full result, and a text table of the JOJ per transaction.

use crate::WorkloadError;
use crate::config::{DbWorkload, JournalMode};
use crate::result::RunResult;
use crate::run::{RunOptions, Workload, run};
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

/// Run `base` once per mode in `modes` (journal mode replaced), with `opts` (tracing on).
/// `each` is called after every row (for progress output).
pub fn compare(
    base: &DbWorkload,
    modes: &[JournalMode],
    opts: &RunOptions,
    mut each: impl FnMut(&CompareRow),
) -> Result<Comparison, WorkloadError> {
    let mut rows = Vec::new();
    for &mode in modes {
        let w = DbWorkload {
            journal: mode,
            ..base.clone()
        };
        let o = RunOptions {
            label: format!("{}-{}", opts.label, mode),
            ..opts.clone()
        };
        let result = run(&Workload::Db(w), &o)?;
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
/// (`joj compare --device`), a last column gives the modeled transactions per second.
pub fn table(c: &Comparison) -> String {
    let mut s = String::new();
    let device = c.rows.iter().any(|r| r.result.device.is_some());
    let (dev_head, dev_unit) = if device {
        (
            format!(" | {:>9}", "dev txn/s"),
            format!(" | {:>9}", "modeled"),
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
        let dev_col = match (&r.result.device, device) {
            (Some(d), _) => format!(" | {:>9.1}", d.modeled_ops_per_sec),
            (None, true) => format!(" | {:>9}", "-"),
            (None, false) => String::new(),
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
