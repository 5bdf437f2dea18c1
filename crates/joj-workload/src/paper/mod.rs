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

pub mod rlbench;
pub mod synthetic;
pub mod tpcc;

use crate::WorkloadError;
use crate::db::sql_err;
use rusqlite::Connection;
use rusqlite::types::ValueRef;
use serde::{Deserialize, Serialize};
use std::fmt;

pub use rlbench::RlTest;

/// One of the paper's workloads, with its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "kebab-case")]
pub enum PaperWorkload {
    /// §6.3.1: `rows` rows of ~220 bytes (the paper: 60,000); each transaction reads and
    /// updates `pages_per_txn` random rows (the paper: 1..=20; Table 1 uses 5).
    XftlSynthetic { rows: u64, pages_per_txn: u32 },
    /// §6.3.3: TPC-C with `warehouses` warehouses at reduced cardinalities ([`tpcc`]).
    Tpcc { mix: TpccMix, warehouses: u32 },
    /// §6.3.2: the RL Benchmark's tests with every row and statement count divided by
    /// `divisor` (1 = the benchmark's own sizes: ≈51,000 inserts, 5,200 selects).
    RlBench { divisor: u32 },
}

/// The four TPC-C mixes of the paper's Table 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TpccMix {
    /// Delivery 4 %, Order-Status 4 %, Payment 43 %, Stock-Level 4 %, New-Order 45 %.
    WriteIntensive,
    /// Order-Status 50 %, Stock-Level 45 %, New-Order 5 %.
    ReadIntensive,
    /// Order-Status 100 %.
    SelectionOnly,
    /// Stock-Level 100 % (a join of `order_line` and `stock`).
    JoinOnly,
}

impl PaperWorkload {
    /// The names `--workload` accepts.
    pub const NAMES: [&'static str; 6] = [
        "xftl-synthetic",
        "tpcc-write",
        "tpcc-read",
        "tpcc-select",
        "tpcc-join",
        "rl-bench",
    ];

    /// The synthetic workload at the paper's size (60,000 rows).
    pub fn synthetic(pages_per_txn: u32) -> PaperWorkload {
        PaperWorkload::XftlSynthetic {
            rows: synthetic::PAPER_ROWS,
            pages_per_txn,
        }
    }

    /// The workload called `name` (one of [`Self::NAMES`]) with the given sizes.
    pub fn from_name(
        name: &str,
        pages_per_txn: u32,
        warehouses: u32,
        rl_divisor: u32,
    ) -> Result<PaperWorkload, String> {
        let tpcc = |mix| PaperWorkload::Tpcc { mix, warehouses };
        let w = match name.to_ascii_lowercase().as_str() {
            "xftl-synthetic" | "synthetic" => PaperWorkload::synthetic(pages_per_txn),
            "tpcc-write" => tpcc(TpccMix::WriteIntensive),
            "tpcc-read" => tpcc(TpccMix::ReadIntensive),
            "tpcc-select" => tpcc(TpccMix::SelectionOnly),
            "tpcc-join" => tpcc(TpccMix::JoinOnly),
            "rl-bench" | "rlbench" => PaperWorkload::RlBench {
                divisor: rl_divisor,
            },
            other => {
                return Err(format!(
                    "unknown paper workload '{other}': use one of {}",
                    Self::NAMES.join(", ")
                ));
            }
        };
        w.validate()?;
        Ok(w)
    }

    pub fn name(&self) -> &'static str {
        match self {
            PaperWorkload::XftlSynthetic { .. } => "xftl-synthetic",
            PaperWorkload::Tpcc { mix, .. } => match mix {
                TpccMix::WriteIntensive => "tpcc-write",
                TpccMix::ReadIntensive => "tpcc-read",
                TpccMix::SelectionOnly => "tpcc-select",
                TpccMix::JoinOnly => "tpcc-join",
            },
            PaperWorkload::RlBench { .. } => "rl-bench",
        }
    }

    /// Check the sizes before anything is created; the message names the fix.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            PaperWorkload::XftlSynthetic {
                rows,
                pages_per_txn,
            } => {
                if pages_per_txn == 0 || pages_per_txn > synthetic::MAX_PAGES_PER_TXN {
                    return Err(format!(
                        "--pages-per-txn {pages_per_txn}: the synthetic workload updates 1..={} rows per transaction (the paper: 1..=20)",
                        synthetic::MAX_PAGES_PER_TXN
                    ));
                }
                if rows < u64::from(pages_per_txn) || rows > synthetic::MAX_ROWS {
                    return Err(format!(
                        "{rows} rows: the synthetic table needs at least --pages-per-txn ({pages_per_txn}) rows and at most {}",
                        synthetic::MAX_ROWS
                    ));
                }
            }
            PaperWorkload::Tpcc { warehouses, .. } => {
                if warehouses == 0 || warehouses > tpcc::MAX_WAREHOUSES {
                    return Err(format!(
                        "--warehouses {warehouses}: TPC-C needs 1..={} warehouses",
                        tpcc::MAX_WAREHOUSES
                    ));
                }
            }
            PaperWorkload::RlBench { divisor } => {
                if divisor == 0 || divisor > rlbench::MAX_DIVISOR {
                    return Err(format!(
                        "--rl-divisor {divisor}: the RL Benchmark's counts can be divided by 1..={}",
                        rlbench::MAX_DIVISOR
                    ));
                }
            }
        }
        Ok(())
    }

    /// Transactions of a run when the caller names none: the paper's 1,000 for the synthetic
    /// workload and TPC-C, one complete pass of the benchmark for RL Benchmark.
    pub fn default_transactions(&self) -> u64 {
        match *self {
            PaperWorkload::RlBench { divisor } => rlbench::transactions_per_pass(divisor),
            _ => 1000,
        }
    }
}

impl fmt::Display for PaperWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PaperWorkload::XftlSynthetic {
                rows,
                pages_per_txn,
            } => write!(f, "xftl-synthetic ({rows} rows, {pages_per_txn} per txn)"),
            PaperWorkload::Tpcc { warehouses, .. } => {
                let s = if *warehouses == 1 { "" } else { "s" };
                write!(f, "{} ({warehouses} warehouse{s})", self.name())
            }
            PaperWorkload::RlBench { divisor } => write!(f, "rl-bench (sizes / {divisor})"),
        }
    }
}

/// What one [`Driver::transaction`] call ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnKind {
    /// Synthetic: read and update `pages_per_txn` rows.
    XftlUpdate,
    /// TPC-C New-Order that committed.
    NewOrder,
    /// TPC-C New-Order that rolled back on its unused item number (1 % by design).
    NewOrderRolledBack,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
    /// One commit of an RL Benchmark test.
    Rl(RlTest),
}

impl TxnKind {
    pub fn name(self) -> &'static str {
        match self {
            TxnKind::XftlUpdate => "xftl_update",
            TxnKind::NewOrder => "new_order",
            TxnKind::NewOrderRolledBack => "new_order_rolled_back",
            TxnKind::Payment => "payment",
            TxnKind::OrderStatus => "order_status",
            TxnKind::Delivery => "delivery",
            TxnKind::StockLevel => "stock_level",
            TxnKind::Rl(t) => t.name(),
        }
    }
}

/// The logical contents of a workload's database: rows over its tables, and a digest that
/// is the wrapping sum of one hash per row (table name and every column value). It does not
/// depend on page layout, row order or journal mode; any changed, added or lost row changes
/// it (but for a 2⁻⁶⁴ chance). For RL Benchmark, which creates and drops its tables, the
/// schema's entries (type, name, table, SQL) count as rows too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Summary {
    pub rows: u64,
    pub digest: u64,
}

impl Summary {
    pub const EMPTY: Summary = Summary { rows: 0, digest: 0 };

    pub(crate) fn add_row(&mut self, table: &str, values: &[ValueRef<'_>]) {
        self.rows += 1;
        self.digest = self.digest.wrapping_add(row_hash(table, values));
    }

    pub(crate) fn remove_row(&mut self, table: &str, values: &[ValueRef<'_>]) {
        self.rows -= 1;
        self.digest = self.digest.wrapping_sub(row_hash(table, values));
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} rows, digest {:016x}", self.rows, self.digest)
    }
}

/// One row's hash: FNV-1a over the table name and a tagged encoding of each value, finished
/// with splitmix64 so that the sum of many row hashes stays well spread.
struct RowHasher(u64);

impl RowHasher {
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn new(table: &str) -> RowHasher {
        let mut h = RowHasher(0xcbf2_9ce4_8422_2325);
        h.eat(table.as_bytes());
        h
    }

    fn eat(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    fn value(&mut self, v: ValueRef<'_>) {
        match v {
            ValueRef::Null => self.eat(&[0]),
            ValueRef::Integer(i) => {
                self.eat(&[1]);
                self.eat(&i.to_le_bytes());
            }
            ValueRef::Real(r) => {
                self.eat(&[2]);
                self.eat(&r.to_bits().to_le_bytes());
            }
            ValueRef::Text(t) => {
                self.eat(&[3]);
                self.eat(&(t.len() as u64).to_le_bytes());
                self.eat(t);
            }
            ValueRef::Blob(b) => {
                self.eat(&[4]);
                self.eat(&(b.len() as u64).to_le_bytes());
                self.eat(b);
            }
        }
    }

    fn finish(self) -> u64 {
        let mut z = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn row_hash(table: &str, values: &[ValueRef<'_>]) -> u64 {
    let mut h = RowHasher::new(table);
    for &v in values {
        h.value(v);
    }
    h.finish()
}

/// Add every row of `table` (a table name or a parenthesised subquery) to `summary`; the
/// caller holds a read transaction.
fn digest_table(
    conn: &Connection,
    table: &str,
    summary: &mut Summary,
) -> Result<(), WorkloadError> {
    let what = format!("reading {table} for its digest");
    let mut stmt = conn
        .prepare(&format!("SELECT * FROM {table}"))
        .map_err(sql_err(what.clone()))?;
    let columns = stmt.column_count();
    let mut rows = stmt.query([]).map_err(sql_err(what.clone()))?;
    while let Some(row) = rows.next().map_err(sql_err(what.clone()))? {
        let mut h = RowHasher::new(table);
        for i in 0..columns {
            h.value(row.get_ref(i).map_err(sql_err(what.clone()))?);
        }
        summary.rows += 1;
        summary.digest = summary.digest.wrapping_add(h.finish());
    }
    Ok(())
}

/// Create the workload's schema and load its data, deterministically from `seed`, in one
/// transaction. Not part of any measurement. The caller sets `page_size` and `journal_mode`
/// before (page size takes effect only on an empty database).
pub fn prepare(conn: &Connection, w: &PaperWorkload, seed: u64) -> Result<(), WorkloadError> {
    w.validate().map_err(WorkloadError::Config)?;
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
    let mut out = Vec::with_capacity(n as usize + 1);
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
        w.validate().map_err(WorkloadError::Config)?;
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
            return Err(WorkloadError::Config(
                "a paper workload driver is not reusable after a failed transaction".into(),
            ));
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

/// Counts of the transactions a run made, by kind ([`TxnKind::name`]), and TPC-C's committed
/// New-Orders, from which tpmC (New-Orders per minute) follows for any elapsed time, wall or
/// modeled; the New-Orders that rolled back by design are counted apart, under
/// `new_order_rolled_back`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindCounts {
    pub by_kind: std::collections::BTreeMap<String, u64>,
    pub new_orders: u64,
}

impl KindCounts {
    pub fn add(&mut self, kind: TxnKind) {
        *self.by_kind.entry(kind.name().to_string()).or_default() += 1;
        if kind == TxnKind::NewOrder {
            self.new_orders += 1;
        }
    }

    pub fn get(&self, kind: TxnKind) -> u64 {
        self.by_kind.get(kind.name()).copied().unwrap_or(0)
    }
}
