//! The i-FTL paper's multi-file application transaction (§IV.A, its withdraw/deposit example)
//! as a measured workload: each transaction takes an amount from an account of `a.db`, puts it
//! into an account of `b.db` and appends a record to the plain file `ledger.log` — two databases
//! and a file, one application transaction (`joj_atomic::AppTxn`), SQLite's journal off — on
//! X-FTL's eMMC (`xftl`) or the i-FTL device (`iftl`). The device's counters cover the
//! transactions only (the databases and the ledger are made before); after the run both
//! databases pass `PRAGMA integrity_check`, money is conserved and the ledger holds one record
//! per transaction, or the run is an error.
//!
//! Invariants: every random choice comes from `seed`; a transaction that fails aborts whole and
//! ends the run with its error.

use joj_atomic::{AppTxnError, XftlVfs};
use joj_device::{DeviceSummary, Profile};
use joj_workload::JournalMode;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use crate::error::{ExperimentError, StackError};
use crate::stack::TxnDeviceKind;
use crate::txn_device::{self, OnTxnDevice, RunDevice, TxnDeviceOptions, TxnDeviceReport};

/// Accounts in each database.
pub const ACCOUNTS: i64 = 1000;
/// Bytes of a ledger record: transaction, from, to, amount (little-endian u64 each, the last
/// three as i64).
pub const RECORD_BYTES: usize = 32;
const LEDGER: &str = "ledger.log";
/// Most transactions of one run (the CLI's bound).
pub const MAX_TRANSACTIONS: u64 = 1_000_000;

/// What to run.
#[derive(Debug, Clone)]
pub struct WithdrawDepositOptions {
    pub profile: Profile,
    /// `xftl` or `iftl`.
    pub mode: JournalMode,
    pub transactions: u64,
    /// SQLite page size of both databases.
    pub page_size: u32,
    pub seed: u64,
}

/// What a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct WithdrawDepositReport {
    pub mode: String,
    pub transactions: u64,
    pub seed: u64,
    /// The device over the transactions (modeled time, commands, programs).
    pub device: DeviceSummary,
    /// The file layer's and the device's own counts (mapping programs, NVM metadata).
    pub xftl: TxnDeviceReport,
    /// Ledger bytes after the run.
    pub ledger_bytes: u64,
}

fn sql(what: &'static str) -> impl FnOnce(rusqlite::Error) -> ExperimentError {
    move |source| ExperimentError::WithdrawDepositSql { what, source }
}

fn app(e: AppTxnError) -> ExperimentError {
    ExperimentError::AppTxn(e)
}

/// Runs the workload on a fresh device of `opts.profile`.
pub fn run(opts: &WithdrawDepositOptions) -> Result<WithdrawDepositReport, ExperimentError> {
    if opts.transactions == 0 {
        return Err(StackError::Zero { what: "-n" }.into());
    }
    // SQLite would ignore another page size and run at its default, silently.
    joj_workload::config::check_page_size(opts.page_size)?;
    match TxnDeviceKind::of(opts.mode) {
        Some(kind) => kind.run(opts),
        None => Err(ExperimentError::WithdrawDepositMode(opts.mode)),
    }
}

impl OnTxnDevice for &WithdrawDepositOptions {
    type Output = Result<WithdrawDepositReport, ExperimentError>;

    fn on<D: RunDevice>(self) -> Self::Output {
        run_on::<D>(self)
    }
}

fn open(vfs: &str, name: &str) -> Result<Connection, ExperimentError> {
    Connection::open_with_flags_and_vfs(
        name,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        vfs,
    )
    .map_err(sql("opening a database"))
}

/// Both databases with their accounts (made with a journal, before the window), then their
/// journal off for the application transactions.
fn prepare(vfs: &str, page_size: u32) -> Result<(Connection, Connection), ExperimentError> {
    let mut out = Vec::new();
    for name in ["/wd/a.db", "/wd/b.db"] {
        let c = open(vfs, name)?;
        c.execute_batch(&format!(
            "PRAGMA page_size={page_size}; PRAGMA journal_mode=DELETE;
             CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL, note TEXT);"
        ))
        .map_err(sql("creating the schema"))?;
        let tx = c.unchecked_transaction().map_err(sql("loading accounts"))?;
        for id in 1..=ACCOUNTS {
            tx.execute(
                "INSERT INTO account VALUES (?1, 1000, ?2)",
                rusqlite::params![id, "n".repeat(60)],
            )
            .map_err(sql("loading accounts"))?;
        }
        tx.commit().map_err(sql("loading accounts"))?;
        c.execute_batch("PRAGMA journal_mode=OFF; PRAGMA temp_store=MEMORY;")
            .map_err(sql("turning the journal off"))?;
        out.push(c);
    }
    let b = out.pop().expect("two");
    let a = out.pop().expect("two");
    Ok((a, b))
}

/// Transaction `i`'s transfer: (from, to, amount).
fn transfer(rng: &mut ChaCha8Rng) -> (i64, i64, i64) {
    (
        rng.random_range(1..=ACCOUNTS),
        rng.random_range(1..=ACCOUNTS),
        rng.random_range(1..=50),
    )
}

fn run_on<D: RunDevice>(
    opts: &WithdrawDepositOptions,
) -> Result<WithdrawDepositReport, ExperimentError> {
    let xo = TxnDeviceOptions::for_run(&opts.profile, None, opts.page_size, opts.seed);
    let vfs = txn_device::fresh_device::<D>(&xo)?;
    let result = measure(&vfs, opts, &xo);
    let _ = vfs.detach();
    result
}

fn measure<D: RunDevice>(
    vfs: &XftlVfs<D>,
    opts: &WithdrawDepositOptions,
    xo: &TxnDeviceOptions,
) -> Result<WithdrawDepositReport, ExperimentError> {
    let (a, b) = prepare(vfs.name(), opts.page_size)?;
    vfs.create_file(LEDGER)?;
    let window = txn_device::Window::new(*vfs);
    joj_workload::Window::begin(&window).map_err(ExperimentError::from)?;
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    for i in 0..opts.transactions {
        let (from, to, amount) = transfer(&mut rng);
        let mut tx = vfs.begin_app().map_err(app)?;
        tx.enroll(&a).map_err(app)?;
        tx.enroll(&b).map_err(app)?;
        tx.execute(
            &a,
            "UPDATE account SET balance = balance - ?1 WHERE id = ?2",
            (amount, from),
        )
        .map_err(app)?;
        tx.execute(
            &b,
            "UPDATE account SET balance = balance + ?1 WHERE id = ?2",
            (amount, to),
        )
        .map_err(app)?;
        let mut record = [0u8; RECORD_BYTES];
        for (k, v) in [i as i64, from, to, amount].into_iter().enumerate() {
            record[k * 8..k * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        tx.append(LEDGER, &record).map_err(app)?;
        tx.commit().map_err(app)?;
    }
    joj_workload::Window::end(&window).map_err(ExperimentError::from)?;
    let (device, report) = window.take(&xo.profile, opts.transactions)?;
    let ledger_bytes = check(vfs, &a, &b, opts.transactions)?;
    Ok(WithdrawDepositReport {
        mode: opts.mode.to_string(),
        transactions: opts.transactions,
        seed: opts.seed,
        device,
        xftl: report,
        ledger_bytes,
    })
}

/// Both databases intact, money conserved, one ledger record per transaction.
fn check<D: RunDevice>(
    vfs: &XftlVfs<D>,
    a: &Connection,
    b: &Connection,
    transactions: u64,
) -> Result<u64, ExperimentError> {
    let mut total = 0i64;
    for c in [a, b] {
        let ok: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(sql("checking"))?;
        if ok != "ok" {
            return Err(ExperimentError::WithdrawDepositCorrupt(ok));
        }
        let sum: i64 = c
            .query_row("SELECT sum(balance) FROM account", [], |r| r.get(0))
            .map_err(sql("checking"))?;
        total += sum;
    }
    let ledger = vfs
        .with_fs(|fs| fs.lookup(LEDGER).map(|id| fs.size(id)))
        .flatten()
        .unwrap_or(0);
    let (expected, expected_ledger_bytes) =
        (2 * 1000 * ACCOUNTS, transactions * RECORD_BYTES as u64);
    if total != expected || ledger != expected_ledger_bytes {
        return Err(ExperimentError::WithdrawDepositLost {
            total,
            expected,
            ledger_bytes: ledger,
            expected_ledger_bytes,
        });
    }
    Ok(ledger)
}
