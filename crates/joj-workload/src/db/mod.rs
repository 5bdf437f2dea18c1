//! The SQLite workloads: Mobibench's ([`mobibench`]: table `tblMyList(id, Value,
//! creation_Date)`, 100-byte values, one connection and database file per thread) and the
//! X-FTL paper's ([`crate::paper`], on one connection), each in three phases: *prepare*
//! (create and load, not measured), *set up* (connect, set the pragmas, warm up for a
//! steady-state run) and the *measured window*, which the caller brackets through [`Window`]
//! so that tracing and counters cover exactly the transactions and nothing else.
//!
//! How SQLite is set up — the VFS, the journal mode and synchronous level it is given — comes
//! in a [`SqliteSetup`]; the workload applies it and never looks at a journal mode itself.

mod keys;
mod mobibench;
mod output;
mod paper;
mod schema;

pub use output::{DbRunOutput, PaperOutcome};
pub use schema::{connect, database_paths};

use crate::config::DbWorkload;
use crate::error::WorkloadError;
use crate::made::Made;
use crate::sqlite::SqliteSetup;
use crate::window::Window;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// Create every database, its tables and the pre-fill (or the paper workload's load); close
/// them. Not measured. Refuses before making anything when a name the run would create or
/// delete in `dir` — any thread's databases, and their journals — is taken
/// ([`crate::sqlite::check_free`]).
pub fn prepare(dir: &Path, w: &DbWorkload, setup: &SqliteSetup) -> Result<(), WorkloadError> {
    prepare_made(dir, w, setup, None)
}

/// [`prepare`] in a host directory, recording in `made` each database it creates (created on
/// the host with `O_EXCL` first: [`crate::sqlite::create_made`]), those of a failed prepare
/// included, so that the run can remove them at its end.
pub fn prepare_made(
    dir: &Path,
    w: &DbWorkload,
    setup: &SqliteSetup,
    made: Option<&mut Made>,
) -> Result<(), WorkloadError> {
    w.validate()?;
    let every: Vec<_> = (0..w.threads)
        .flat_map(|t| database_paths(dir, w, t))
        .collect();
    crate::sqlite::check_free(&every)?;
    match &w.paper {
        Some(p) => paper::prepare(dir, w, p, setup, made),
        None => mobibench::prepare(dir, w, setup, made),
    }
}

/// Run the workload on databases made by [`prepare`], measuring only inside `window`;
/// `progress` is incremented once per completed transaction.
pub fn run(
    dir: &Path,
    w: &DbWorkload,
    setup: &SqliteSetup,
    window: &dyn Window,
    progress: Option<Arc<AtomicU64>>,
) -> Result<DbRunOutput, WorkloadError> {
    w.validate()?;
    match &w.paper {
        Some(p) => paper::run(dir, w, p, setup, window, progress),
        None => mobibench::run(dir, w, setup, window, progress),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DbOp, JournalMode, KeyOrder, StartState};
    use crate::error::ConfigError;
    use crate::window::Unmeasured;
    use rusqlite::Connection;

    fn unix(w: &DbWorkload) -> SqliteSetup {
        SqliteSetup::new("unix", w.journal.sqlite_journal(), w.synchronous)
    }

    fn count(path: &Path, table: &str) -> i64 {
        let c = Connection::open(path).unwrap();
        c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn every_transaction_writes_every_table_of_every_database() {
        let dir = tempfile::tempdir().unwrap();
        let w = DbWorkload {
            transactions: 12,
            statements_per_txn: 2,
            tables: 2,
            attached_dbs: 1,
            ..Default::default()
        };
        prepare(dir.path(), &w, &unix(&w)).unwrap();
        let out = run(dir.path(), &w, &unix(&w), &Unmeasured, None).unwrap();
        assert_eq!(out.latencies_ns.len(), 12);
        let paths = database_paths(dir.path(), &w, 0);
        // Mobibench's -T and -D: 2 statements on each of the 4 (schema, table) targets in
        // each of the 12 transactions.
        for path in &paths {
            for table in ["tblMyList", "tblMyList1"] {
                assert_eq!(count(path, table), 24, "{} {table}", path.display());
            }
        }
        crate::sqlite::integrity_check(&paths, "unix").unwrap();
    }

    #[test]
    fn delete_removes_prefilled_rows_and_update_keeps_the_count() {
        for keys in [KeyOrder::Sequential, KeyOrder::Random] {
            let dir = tempfile::tempdir().unwrap();
            let w = DbWorkload {
                op: DbOp::Delete,
                transactions: 50,
                journal: JournalMode::Delete,
                keys,
                ..Default::default()
            };
            prepare(dir.path(), &w, &unix(&w)).unwrap();
            let before = count(&database_paths(dir.path(), &w, 0)[0], "tblMyList");
            assert!(
                before as u64 * 100 >= 40 * 1024,
                "pre-filled to at least 40 KiB"
            );
            run(dir.path(), &w, &unix(&w), &Unmeasured, None).unwrap();
            assert_eq!(
                count(&database_paths(dir.path(), &w, 0)[0], "tblMyList"),
                before - 50
            );

            let dir = tempfile::tempdir().unwrap();
            let w = DbWorkload {
                op: DbOp::Update,
                transactions: 50,
                keys,
                ..Default::default()
            };
            prepare(dir.path(), &w, &unix(&w)).unwrap();
            run(dir.path(), &w, &unix(&w), &Unmeasured, None).unwrap();
            assert_eq!(
                count(&database_paths(dir.path(), &w, 0)[0], "tblMyList"),
                before
            );
        }
    }

    #[test]
    fn threads_each_get_their_own_database_and_steady_state_warms_up() {
        let dir = tempfile::tempdir().unwrap();
        let w = DbWorkload {
            transactions: 20,
            threads: 2,
            start: StartState::Steady,
            journal: JournalMode::Off,
            ..Default::default()
        };
        prepare(dir.path(), &w, &unix(&w)).unwrap();
        let out = run(dir.path(), &w, &unix(&w), &Unmeasured, None).unwrap();
        assert_eq!(out.latencies_ns.len(), 40);
        for t in 0..2 {
            // The warm-up's inserts (a quarter more than measured, at least 8 more) and the 20
            // measured ones.
            assert_eq!(w.warm_up_transactions(), 28);
            assert_eq!(
                count(&database_paths(dir.path(), &w, t)[0], "tblMyList"),
                48
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let w = DbWorkload {
            transactions: 20,
            start: StartState::Steady,
            keys: KeyOrder::Random,
            ..Default::default()
        };
        prepare(dir.path(), &w, &unix(&w)).unwrap();
        run(dir.path(), &w, &unix(&w), &Unmeasured, None).unwrap();
        assert_eq!(
            count(&database_paths(dir.path(), &w, 0)[0], "tblMyList"),
            48
        );
    }

    #[test]
    fn an_existing_database_is_never_reused() {
        let dir = tempfile::tempdir().unwrap();
        let w = DbWorkload {
            transactions: 1,
            page_size: 8192,
            ..Default::default()
        };
        prepare(dir.path(), &w, &unix(&w)).unwrap();
        let c = Connection::open(database_paths(dir.path(), &w, 0)[0].clone()).unwrap();
        let ps: i64 = c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
        assert_eq!(ps, 8192);
        let err = prepare(dir.path(), &w, &unix(&w)).unwrap_err();
        assert!(
            matches!(&err, WorkloadError::Config(ConfigError::DatabaseExists(p)) if *p == database_paths(dir.path(), &w, 0)[0]),
            "{err}"
        );
    }
}
