//! `joj compare`: one operation, every journal mode, one filesystem, each run traced; one row
//! per mode with the run's full result, and a text table of the JOJ per transaction.

use crate::config::{DbWorkload, JournalMode};
use crate::result::RunResult;
use crate::run::{run, RunOptions, Workload};
use crate::WorkloadError;
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
        let w = DbWorkload { journal: mode, ..base.clone() };
        let o = RunOptions { label: format!("{}-{}", opts.label, mode), ..opts.clone() };
        let result = run(&Workload::Db(w), &o)?;
        let row = CompareRow { mode: mode.to_string(), result };
        each(&row);
        rows.push(row);
    }
    Ok(Comparison { rows })
}

/// The table `joj compare` prints: per mode, transactions/s and KiB written per transaction
/// split into data / metadata / FS journal / total, and flushes per transaction.
pub fn table(c: &Comparison) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "{:<10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}\n",
        "mode", "txn/s", "data", "meta", "fs-jnl", "total", "KiB/txn", "flush/tx"
    ));
    s.push_str(&format!("{:<10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}\n", "", "", "KiB", "KiB", "KiB", "KiB", "(of which WAL/jnl)", ""));
    for r in &c.rows {
        let res = &r.result;
        match &res.block_per_txn {
            Some(b) => {
                let log = b.data_by_role.wal + b.data_by_role.rollback_journal;
                s.push_str(&format!(
                    "{:<10} {:>10.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8.2}\n",
                    r.mode,
                    res.ops_per_sec,
                    b.data_bytes / 1024.0,
                    b.metadata_bytes / 1024.0,
                    b.fs_journal_bytes / 1024.0,
                    b.write_bytes / 1024.0,
                    log / 1024.0,
                    b.flushes
                ));
            }
            None => s.push_str(&format!("{:<10} {:>10.1}   (not traced)\n", r.mode, res.ops_per_sec)),
        }
    }
    s
}
