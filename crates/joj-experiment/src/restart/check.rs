//! What every restart is checked against and timed by: the states the database may be in
//! after the cut, its integrity, the first statement, and the modeled time of a traced window.

use std::path::Path;

use joj_device::{Profile, ReplayOptions, replay_with};
use joj_trace::TraceRecord;
use joj_workload::paper::{self, Driver, Summary};
use joj_workload::sqlite::sql_err;
use joj_workload::{DbWorkload, JournalMode, WorkloadError};
use rusqlite::Connection;

use super::options::RestartOptions;
use crate::error::ExperimentError;

/// The synthetic workload of the run the cut interrupts, in `journal`.
pub(super) fn workload(opts: &RestartOptions, journal: JournalMode) -> DbWorkload {
    DbWorkload {
        journal,
        transactions: opts.transactions,
        page_size: opts.page_size,
        seed: opts.seed,
        paper: Some(opts.workload),
        ..DbWorkload::default()
    }
}

/// What the database holds after the first `n` and the first `n + 1` transactions of the run:
/// the same driver on SQLite's in-memory database, in one pass. ([`paper::reference_summaries`]
/// gives every prefix, at a check per transaction: too slow for a cut late in the run.)
fn states_at(opts: &RestartOptions, n: u64) -> Result<[Summary; 2], ExperimentError> {
    let conn = Connection::open_in_memory().map_err(sql_err("opening an in-memory database"))?;
    paper::prepare(&conn, &opts.workload, opts.seed)?;
    let mut driver = Driver::new(&opts.workload, opts.seed)?;
    for _ in 0..n {
        driver.transaction(&conn)?;
    }
    let before = paper::check(&conn, &opts.workload)?;
    driver.transaction(&conn)?;
    Ok([before, paper::check(&conn, &opts.workload)?])
}

/// Check the restarted database and say how many transactions it holds.
pub(super) fn recovered(
    opts: &RestartOptions,
    conn: &Connection,
    path: &Path,
    acknowledged: u64,
) -> Result<u64, ExperimentError> {
    let answer: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .map_err(sql_err("PRAGMA integrity_check after the restart"))?;
    if answer != "ok" {
        return Err(WorkloadError::Integrity {
            path: path.to_path_buf(),
            answer,
        }
        .into());
    }
    let found = paper::check(conn, &opts.workload)?;
    let [before, after] = states_at(opts, acknowledged)?;
    if found == before {
        return Ok(acknowledged);
    }
    if found == after {
        return Ok(acknowledged + 1);
    }
    Err(WorkloadError::Mismatch {
        what: format!(
            "database after a power cut in transaction {}",
            acknowledged + 1
        ),
        expected: format!(
            "the state after {acknowledged} or {} transactions",
            acknowledged + 1
        ),
        found: found.to_string(),
    }
    .into())
}

/// The first statement after a restart, the same in every mode: it reads the schema, which is
/// when SQLite looks for a hot journal or a WAL to recover.
const FIRST_STATEMENT: &str = "SELECT count(*) FROM sqlite_schema";

pub(super) fn first_access(conn: &Connection) -> Result<(), ExperimentError> {
    conn.query_row(FIRST_STATEMENT, [], |_| Ok(()))
        .map_err(sql_err("the first statement after the restart"))?;
    Ok(())
}

/// Modeled device time of a traced window, in ms, with its read, write and flush counts.
pub(super) fn modeled(
    records: &[TraceRecord],
    profile: &Profile,
) -> Result<(f64, u64, u64, u64), ExperimentError> {
    let opts = ReplayOptions {
        partitions: true,
        prefill_reads: true,
        ..ReplayOptions::default()
    };
    let r = replay_with(records, profile, &opts)?;
    Ok((r.modeled_s * 1e3, r.reads, r.writes, r.flushes))
}
