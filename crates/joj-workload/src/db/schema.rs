//! Mobibench's database layout: table `tblMyList(id, Value, creation_Date)` (more tables get a
//! numeric suffix), one database file per thread plus its attached ones, the 100-byte values,
//! and the connection each thread runs on.

use crate::config::{DbOp, DbWorkload};
use crate::error::WorkloadError;
use crate::sqlite::{self, SqliteSetup, sql_err};
use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// Which of the workload's values a statement writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Value {
    /// What Mobibench inserts (`INSERT_STR`), and what the pre-fill holds.
    Insert,
    /// What Mobibench updates to (`UPDATE_STR`, the same bytes rotated by 50).
    Update,
    /// What a steady-state warm-up of updates writes, alternating between two values by
    /// transaction: neither of the others, so that the warm-up (even a row it updates twice)
    /// and the measured updates change every row they touch (SQLite writes nothing for an
    /// update that leaves a row's bytes as they were).
    WarmUp { odd: bool },
}

/// The 100-byte pattern of `value`, repeated to `len`.
pub(super) fn record(len: usize, value: Value) -> String {
    const PATTERN: &str = "aaaaaaaaaabbbbbbbbbbccccccccccddddddddddeeeeeeeeeeffffffffffgggggggggghhhhhhhhhhiiiiiiiiiijjjjjjjjjj";
    let start = match value {
        Value::Insert => 0,
        Value::Update => 50,
        Value::WarmUp { odd } => 25 + usize::from(odd),
    };
    PATTERN
        .bytes()
        .cycle()
        .skip(start)
        .take(len)
        .map(char::from)
        .collect()
}

pub(super) fn table_name(t: u32) -> String {
    if t == 0 {
        "tblMyList".to_string()
    } else {
        format!("tblMyList{t}")
    }
}

/// `main`, then `aux1`.. for the attached databases.
pub(super) fn schema_names(w: &DbWorkload) -> Vec<String> {
    let mut v = vec!["main".to_string()];
    v.extend((1..=w.attached_dbs).map(|k| format!("aux{k}")));
    v
}

/// Database files of thread `thread`: main first, then the attached ones.
pub fn database_paths(dir: &Path, w: &DbWorkload, thread: u32) -> Vec<PathBuf> {
    let mut v = vec![dir.join(format!("joj-{thread}.db"))];
    v.extend((1..=w.attached_dbs).map(|k| dir.join(format!("joj-{thread}-aux{k}.db"))));
    v
}

/// The rows each table needs so that every update, delete and select (of the warm-up too)
/// finds its row: every transaction runs its statements on every table.
pub(super) fn rows_needed(w: &DbWorkload) -> u64 {
    let needed = (w.transactions + w.warm_up_transactions()) * u64::from(w.statements_per_txn);
    let by_size = (w.prefill_kib() * 1024).div_ceil(w.record_bytes as u64);
    match w.op {
        DbOp::Insert => by_size,
        _ => needed.max(by_size),
    }
}

/// Open thread `thread`'s connection with its attached databases, and set the setup's
/// pragmas on each.
pub fn connect(
    dir: &Path,
    w: &DbWorkload,
    thread: u32,
    setup: &SqliteSetup,
) -> Result<Connection, WorkloadError> {
    let paths = database_paths(dir, w, thread);
    let conn = sqlite::open(&paths[0], &setup.vfs)?;
    for (k, p) in paths.iter().enumerate().skip(1) {
        conn.execute(
            "ATTACH DATABASE ?1 AS ?2",
            rusqlite::params![p.to_string_lossy(), format!("aux{k}")],
        )
        .map_err(sql_err(format!("attaching {}", p.display())))?;
    }
    for schema in schema_names(w) {
        sqlite::apply(&conn, &schema, setup)?;
    }
    Ok(conn)
}
