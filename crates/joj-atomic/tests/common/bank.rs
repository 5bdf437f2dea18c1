//! The i-FTL paper's withdraw/deposit as application transactions: each one takes an amount
//! from an account of `a.db`, puts it into an account of `b.db`, and appends a fixed-size
//! record to the plain file `ledger.log` — two databases and a file, one device transaction.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_atomic::{AppTxn, AppTxnError, XftlVfs};
use joj_device::TransactionalDevice;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::{Connection, OpenFlags};

pub const ACCOUNTS: i64 = 300;
pub const LEDGER: &str = "ledger.log";
pub const RECORD_BYTES: usize = 24;

pub fn open(vfs: &str, name: &str) -> rusqlite::Result<Connection> {
    Connection::open_with_flags_and_vfs(
        name,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        vfs,
    )
}

/// A connection for application transactions: SQLite's journal off (the device transaction
/// is the only log).
pub fn open_off(vfs: &str, name: &str) -> rusqlite::Result<Connection> {
    let c = open(vfs, name)?;
    c.execute_batch("PRAGMA journal_mode=OFF; PRAGMA temp_store=MEMORY;")?;
    Ok(c)
}

pub fn schema(c: &Connection, pad: bool) -> rusqlite::Result<()> {
    if !pad {
        c.execute_batch("PRAGMA page_size=8192; PRAGMA journal_mode=DELETE;")?;
    }
    c.execute_batch("CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER, note TEXT)")?;
    let tx = c.unchecked_transaction()?;
    for id in 1..=ACCOUNTS {
        // A note long enough to spread the accounts over many pages.
        tx.execute(
            "INSERT INTO account VALUES (?1, 1000, ?2)",
            rusqlite::params![id, "n".repeat(60)],
        )?;
    }
    tx.commit()
}

/// Both databases with their accounts and an empty ledger, on the attached file layer.
pub fn setup<D: TransactionalDevice + Send + 'static>(vfs: &XftlVfs<D>) {
    for db in ["a.db", "b.db"] {
        schema(&open(vfs.name(), db).unwrap(), false).unwrap();
    }
    vfs.create_file(LEDGER).unwrap();
}

/// One transfer: `amount` from `a.db`'s account `from` to `b.db`'s account `to`.
#[derive(Debug, Clone, Copy)]
pub struct Transfer {
    pub from: i64,
    pub to: i64,
    pub amount: i64,
}

/// Transfer `i` of the run seeded `seed`.
pub fn transfer(seed: u64, i: u64) -> Transfer {
    let mut r = ChaCha8Rng::seed_from_u64(seed.wrapping_mul(1_000_003).wrapping_add(i));
    Transfer {
        from: r.random_range(1..=ACCOUNTS),
        to: r.random_range(1..=ACCOUNTS),
        amount: r.random_range(1..=500),
    }
}

pub fn record(i: u64, t: Transfer) -> Vec<u8> {
    let s = format!("{i:06} {:03}>{:03} {:08}\n", t.from, t.to, t.amount);
    assert_eq!(s.len(), RECORD_BYTES);
    s.into_bytes()
}

/// The transfer inside application transaction `tx` (on enrolled `a` and `b`).
pub fn run<D: TransactionalDevice + Send + 'static>(
    tx: &mut AppTxn<D>,
    a: &Connection,
    b: &Connection,
    i: u64,
    t: Transfer,
) -> Result<(), AppTxnError> {
    tx.execute(
        a,
        "UPDATE account SET balance = balance - ?2 WHERE id = ?1",
        [t.from, t.amount],
    )?;
    tx.execute(
        b,
        "UPDATE account SET balance = balance + ?2 WHERE id = ?1",
        [t.to, t.amount],
    )?;
    tx.append(LEDGER, &record(i, t))?;
    Ok(())
}

/// A database's accounts, as one number pair (row count, checksum).
pub fn digest(c: &Connection) -> rusqlite::Result<(i64, i64)> {
    c.query_row(
        "SELECT count(*), coalesce(sum((id * 1000003 + balance * 7919 + length(note)) % 1000000007), 0) FROM account",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// `PRAGMA integrity_check`'s first line (`ok` when intact).
pub fn integrity(c: &Connection) -> String {
    c.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

/// What a fresh connection reads of database `name`: its accounts' digest and its integrity.
pub fn seen<D: TransactionalDevice + Send + 'static>(
    vfs: &XftlVfs<D>,
    name: &str,
) -> ((i64, i64), String) {
    let c = open(vfs.name(), name).unwrap();
    (digest(&c).unwrap(), integrity(&c))
}

/// What the two databases and the ledger show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    pub a: (i64, i64),
    pub b: (i64, i64),
    pub ledger: Vec<u8>,
}

/// The in-memory reference: SQLite's default VFS in memory and a `Vec` for the ledger.
pub struct Model {
    a: Connection,
    b: Connection,
    ledger: Vec<u8>,
}

impl Model {
    pub fn new() -> Model {
        let a = Connection::open_in_memory().unwrap();
        let b = Connection::open_in_memory().unwrap();
        schema(&a, true).unwrap();
        schema(&b, true).unwrap();
        Model {
            a,
            b,
            ledger: Vec::new(),
        }
    }

    pub fn apply(&mut self, i: u64, t: Transfer) {
        self.a
            .execute(
                "UPDATE account SET balance = balance - ?2 WHERE id = ?1",
                [t.from, t.amount],
            )
            .unwrap();
        self.b
            .execute(
                "UPDATE account SET balance = balance + ?2 WHERE id = ?1",
                [t.to, t.amount],
            )
            .unwrap();
        self.ledger.extend(record(i, t));
    }

    pub fn state(&self) -> State {
        State {
            a: digest(&self.a).unwrap(),
            b: digest(&self.b).unwrap(),
            ledger: self.ledger.clone(),
        }
    }
}

/// What the device shows now, through fresh connections and the file layer.
pub fn observe<D: TransactionalDevice + Send + 'static>(vfs: &XftlVfs<D>) -> Result<State, String> {
    let mut dbs = Vec::new();
    for db in ["a.db", "b.db"] {
        let c = open(vfs.name(), db).map_err(|e| format!("open {db}: {e}"))?;
        let ok: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(|e| format!("{db}: integrity_check: {e}"))?;
        if ok != "ok" {
            return Err(format!("{db}: integrity_check: {ok}"));
        }
        dbs.push(digest(&c).map_err(|e| format!("{db}: {e}"))?);
    }
    let ledger = read_ledger(vfs)?;
    Ok(State {
        a: dbs[0],
        b: dbs[1],
        ledger,
    })
}

pub fn read_ledger<D: TransactionalDevice + Send + 'static>(
    vfs: &XftlVfs<D>,
) -> Result<Vec<u8>, String> {
    vfs.with_fs(|fs| {
        let id = fs.lookup(LEDGER).ok_or("no ledger file")?;
        let mut buf = vec![0u8; fs.size(id) as usize];
        fs.read(id, 0, &mut buf).map_err(|e| e.to_string())?;
        Ok(buf)
    })
    .ok_or_else(|| "no file layer".to_string())?
}
