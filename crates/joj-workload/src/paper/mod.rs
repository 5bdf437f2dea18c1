//! The X-FTL paper's SQLite workloads (SIGMOD '13, §6.2–6.3), written against a plain
//! [`rusqlite::Connection`] so that any VFS can run them: the stock journal modes on real
//! filesystems (through `db::run`), WALDIO, or a transactional device with the journal off.
//!
//! - [`PaperWorkload::XftlSynthetic`] (§6.3.1): a TPC-H `partsupp` table of 60,000 rows of
//!   about 220 bytes; each transaction reads `pages_per_txn` random rows by key and updates
//!   their supply cost ([`synthetic`]).
//! - [`PaperWorkload::Tpcc`] (§6.3.3, Table 3): a reduced TPC-C with its five transaction types
//!   in the paper's four mixes ([`tpcc`]).
//! - [`PaperWorkload::RlBench`] (§6.3.2): the RL Benchmark's sequence of SQLite tests
//!   ([`rlbench`]).
//!
//! The API keeps loading apart from measuring: [`prepare`] creates the schema and loads the
//! data (not measured); a [`Driver`] then runs one transaction per call, `BEGIN` to `COMMIT`
//! inside. Every random choice — the load and the transactions — comes from one seed, so two
//! runs with the same seed leave the same database whatever the journal mode or VFS.
//!
//! [`check`] verifies a database afterwards: it tests the workload's consistency conditions
//! and returns a [`Summary`] whose digest depends only on the logical contents. A crash test
//! compares a recovered database with the state after some prefix of committed transactions:
//! [`Driver::expected`] predicts that state for the synthetic workload as it goes, and
//! [`reference_summaries`] computes it for any workload by running the same transactions on
//! SQLite's in-memory database.
//!
//! Invariants: a driver never issues SQL outside `BEGIN`..`COMMIT`/`ROLLBACK`; after any
//! error it refuses further transactions (the database state is then unknown to it).

mod kind;
pub mod rlbench;
mod rltest;
mod summary;
pub mod synthetic;
pub mod tpcc;
mod workload;

pub use kind::{KindCounts, TxnKind};
pub use rltest::RlTest;
pub use summary::Summary;
pub use workload::{PaperWorkload, TpccMix};

use crate::error::WorkloadError;
use crate::sqlite::sql_err;
use rusqlite::Connection;
use summary::digest_table;

/// Create the workload's schema and load its data, deterministically from `seed`, in one
/// transaction. Not part of any measurement. The caller sets `page_size` and `journal_mode`
/// before (page size takes effect only on an empty database).
pub fn prepare(conn: &Connection, w: &PaperWorkload, seed: u64) -> Result<(), WorkloadError> {
    w.validate()?;
    match *w {
        PaperWorkload::XftlSynthetic { rows, .. } => synthetic::prepare(conn, rows, seed),
        PaperWorkload::Tpcc { warehouses, .. } => tpcc::prepare(conn, warehouses, seed),
        // The benchmark creates its own tables in its first tests.
        PaperWorkload::RlBench { .. } => Ok(()),
    }
}

/// Verify the database after a run or a recovery: the workload's consistency conditions
/// (TPC-C's, the synthetic row count), then its [`Summary`]. Reads in one transaction; the
/// connection must not be inside one.
pub fn check(conn: &Connection, w: &PaperWorkload) -> Result<Summary, WorkloadError> {
    conn.execute_batch("BEGIN")
        .map_err(sql_err("BEGIN (check)"))?;
    let result = (|| {
        let mut summary = Summary::EMPTY;
        match *w {
            PaperWorkload::XftlSynthetic { rows, .. } => {
                digest_table(conn, synthetic::TABLE, &mut summary)?;
                if summary.rows != rows {
                    return Err(WorkloadError::Mismatch {
                        what: "rows of partsupp".into(),
                        expected: rows.to_string(),
                        found: summary.rows.to_string(),
                    });
                }
            }
            PaperWorkload::Tpcc { .. } => {
                tpcc::check_consistency(conn)?;
                for table in tpcc::TABLES {
                    digest_table(conn, table, &mut summary)?;
                }
            }
            PaperWorkload::RlBench { .. } => {
                // The benchmark creates and drops tables and indexes: its schema is state too.
                digest_table(conn, rlbench::SCHEMA_VIEW, &mut summary)?;
                for table in rlbench::existing_tables(conn)? {
                    digest_table(conn, table, &mut summary)?;
                }
            }
        }
        Ok(summary)
    })();
    let end = conn
        .execute_batch("COMMIT")
        .map_err(sql_err("COMMIT (check)"));
    let summary = result?;
    end?;
    Ok(summary)
}

/// The state after each prefix of a run: element `i` is what [`check`] returns after the first
/// `i` transactions of `Driver::new(w, seed)` committed (`n + 1` elements). Computed by running
/// them on SQLite's in-memory database with the default VFS; costs a [`check`] per transaction.
pub fn reference_summaries(
    w: &PaperWorkload,
    seed: u64,
    n: u64,
) -> Result<Vec<Summary>, WorkloadError> {
    let conn = Connection::open_in_memory().map_err(sql_err("opening an in-memory database"))?;
    prepare(&conn, w, seed)?;
    let mut driver = Driver::new(w, seed)?;
    let mut out =
        Vec::with_capacity(n.min(crate::config::bounds::PREALLOCATED_SAMPLES) as usize + 1);
    out.push(check(&conn, w)?);
    for _ in 0..n {
        driver.transaction(&conn)?;
        out.push(check(&conn, w)?);
    }
    Ok(out)
}

enum Inner {
    Synthetic(synthetic::Driver),
    Tpcc(tpcc::Driver),
    Rl(rlbench::Driver),
}

/// Runs a workload's transactions on one connection, one per call, every choice drawn from the
/// seed. The database must have been made by [`prepare`] with the same workload and seed.
pub struct Driver {
    inner: Inner,
    committed: u64,
    failed: bool,
}

impl Driver {
    pub fn new(w: &PaperWorkload, seed: u64) -> Result<Driver, WorkloadError> {
        w.validate()?;
        let inner = match *w {
            PaperWorkload::XftlSynthetic {
                rows,
                pages_per_txn,
            } => Inner::Synthetic(synthetic::Driver::new(rows, pages_per_txn, seed)),
            PaperWorkload::Tpcc { mix, warehouses } => {
                Inner::Tpcc(tpcc::Driver::new(mix, warehouses, seed))
            }
            PaperWorkload::RlBench { divisor } => Inner::Rl(rlbench::Driver::new(divisor, seed)),
        };
        Ok(Driver {
            inner,
            committed: 0,
            failed: false,
        })
    }

    /// Run the next transaction, `BEGIN` to `COMMIT` (or, for TPC-C's 1 % of New-Orders that
    /// must fail, to `ROLLBACK`). After an error the driver refuses every further call: the
    /// database may hold that transaction or not, and the driver's model can no longer tell.
    pub fn transaction(&mut self, conn: &Connection) -> Result<TxnKind, WorkloadError> {
        if self.failed {
            return Err(WorkloadError::DriverFailed);
        }
        // The TPC-C transactions alone use a few dozen statements; keep them all prepared.
        conn.set_prepared_statement_cache_capacity(128);
        let result = match &mut self.inner {
            Inner::Synthetic(d) => d.transaction(conn),
            Inner::Tpcc(d) => d.transaction(conn),
            Inner::Rl(d) => d.transaction(conn),
        };
        match result {
            Ok(kind) => {
                self.committed += 1;
                Ok(kind)
            }
            Err(e) => {
                self.failed = true;
                // Leave no transaction open on the caller's connection; the error that
                // stopped this one is the one to report.
                if !conn.is_autocommit() {
                    let _ = conn.execute_batch("ROLLBACK");
                }
                Err(e)
            }
        }
    }

    /// Transactions that returned successfully so far.
    pub fn committed(&self) -> u64 {
        self.committed
    }

    /// What [`check`] must return now, when the driver can predict it without SQL (the
    /// synthetic workload: it tracks every supply cost); `None` for TPC-C and RL Benchmark,
    /// whose states [`reference_summaries`] computes instead.
    pub fn expected(&self) -> Option<Summary> {
        match &self.inner {
            Inner::Synthetic(d) => Some(d.expected()),
            _ => None,
        }
    }
}
