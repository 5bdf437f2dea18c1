//! The recorded workload and what a crash state must show of it.
//!
//! Transaction *i* (from 1) inserts row *i* of `t` with a 300-byte value derived from *i* and
//! sets `meta.n` to *i*, in one SQLite transaction. A database shows *k* transactions when
//! `meta.n` = *k* and `t` holds exactly rows 1..=*k*, each with its value: any other content
//! (a row without its `meta`, a wrong value, a gap) is a transaction partly visible or a
//! corrupt page, and `PRAGMA integrity_check` must say `ok`.

use std::path::Path;

use joj_linux::BeneathEntry;
use joj_workload::JournalMode;
use rusqlite::{Connection, OpenFlags, params};
use serde::{Deserialize, Serialize};

use super::confined::{Confinement, ImageEscape, broken_or_escape};

/// Bytes of each row's value.
const VALUE_BYTES: usize = 300;
/// SQLite's auto-checkpoint in WAL modes, pages: small, so the window holds checkpoints.
pub const WAL_AUTOCHECKPOINT_PAGES: u32 = 64;
/// The database file in the scratch filesystem's `joj` directory.
pub const DB_NAME: &str = "crash.db";

/// A test canary: a mode made unsafe on purpose, which the check must catch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Canary {
    /// waldio without its per-commit `fdatasync` (and without `RWF_DSYNC`).
    SkipSync,
    /// waldio that preallocates with `fallocate` alone (unwritten extents, no sync) and makes
    /// each commit durable with a cache flush that does not commit the WAL's metadata.
    FallocateFlushOnly,
    /// waldio that preallocates with `fallocate` alone but keeps its `fdatasync`: what this
    /// kernel does with unwritten extents under `fdatasync` (not expected to break).
    FallocateOnly,
    /// waldio whose commit is the same bare cache flush, on its written, synced preallocation:
    /// WALDIO's claim that such an overwrite needs no journal commit (not expected to break).
    FlushOnly,
    /// A stock mode with `PRAGMA synchronous=OFF`: expected to lose acknowledged commits.
    SyncOff,
    /// The optimized journal (`--emmc-journal`) on a device whose packed reliable write is
    /// atomic per 4 KiB page only: a cut inside a commit may leave part of it.
    PerPageReliable,
}

impl Canary {
    pub const NAMES: [&'static str; 6] = [
        "skip-sync",
        "fallocate-flush-only",
        "fallocate-only",
        "flush-only",
        "sync-off",
        "per-page-reliable",
    ];

    pub fn from_name(s: &str) -> Option<Canary> {
        [
            Canary::SkipSync,
            Canary::FallocateFlushOnly,
            Canary::FallocateOnly,
            Canary::FlushOnly,
            Canary::SyncOff,
            Canary::PerPageReliable,
        ]
        .into_iter()
        .find(|c| c.name() == s)
    }

    pub fn name(self) -> &'static str {
        match self {
            Canary::SkipSync => "skip-sync",
            Canary::FallocateFlushOnly => "fallocate-flush-only",
            Canary::FallocateOnly => "fallocate-only",
            Canary::FlushOnly => "flush-only",
            Canary::SyncOff => "sync-off",
            Canary::PerPageReliable => "per-page-reliable",
        }
    }

    /// Whether the canary must break durability (a sound check catches it).
    pub fn must_break(self) -> bool {
        !matches!(self, Canary::FallocateOnly | Canary::FlushOnly)
    }

    pub fn is_waldio(self) -> bool {
        !matches!(self, Canary::SyncOff | Canary::PerPageReliable)
    }
}

/// `PRAGMA synchronous` of the recorded run's connection. A stock mode's durability follows it;
/// a waldio mode's does not (its option decides, docs/formats/waldio.md), so under waldio it
/// is what the application sets, and the run checks that the option still holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum StockSync {
    /// Only under waldio: a stock mode at OFF is the `sync-off` canary.
    Off,
    Normal,
    Full,
    Extra,
}

impl StockSync {
    pub const NAMES: [&'static str; 4] = ["full", "extra", "normal", "off"];

    pub fn name(self) -> &'static str {
        match self {
            StockSync::Off => "off",
            StockSync::Normal => "normal",
            StockSync::Full => "full",
            StockSync::Extra => "extra",
        }
    }

    pub fn from_name(s: &str) -> Option<StockSync> {
        [
            StockSync::Off,
            StockSync::Normal,
            StockSync::Full,
            StockSync::Extra,
        ]
        .into_iter()
        .find(|c| c.name() == s)
    }

    /// What a run of `mode` sets when no `--synchronous` is given: FULL for a stock mode, the
    /// one a waldio option asks of SQLite (`WaldioOptions::sqlite_synchronous`) for waldio.
    pub fn default_for(mode: JournalMode) -> StockSync {
        match mode {
            JournalMode::Waldio(m) if m.options().sqlite_synchronous() == "NORMAL" => {
                StockSync::Normal
            }
            _ => StockSync::Full,
        }
    }

    pub fn pragma(self) -> &'static str {
        match self {
            StockSync::Off => "OFF",
            StockSync::Normal => "NORMAL",
            StockSync::Full => "FULL",
            StockSync::Extra => "EXTRA",
        }
    }
}

/// How far behind the acknowledged transactions a crash state may be in a mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "transactions")]
pub enum Window {
    /// Every acknowledged transaction survives.
    Durable,
    /// Up to this many of the last acknowledged transactions may be lost.
    Transactions(u64),
}

/// What a state is judged against: the mode's stated window, or full durability (every
/// acknowledged transaction), which shows what a window such as `synchronous=NORMAL` loses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JudgeAs {
    Window,
    Full,
}

impl JudgeAs {
    pub const NAMES: [&'static str; 2] = ["window", "full"];

    pub fn from_name(s: &str) -> Option<JudgeAs> {
        match s {
            "window" => Some(JudgeAs::Window),
            "full" => Some(JudgeAs::Full),
            _ => None,
        }
    }

    /// The acknowledged transactions a state may lose, for a mode of `window`.
    pub fn allowed_loss(self, window: Window) -> u64 {
        match self {
            JudgeAs::Window => window.allowed_loss(),
            JudgeAs::Full => 0,
        }
    }
}

impl Shown {
    /// The most transactions the image can be read as showing whole, if it shows any.
    pub fn most(&self) -> Option<u64> {
        match self {
            Shown::Transactions(k) => Some(*k),
            Shown::Candidates { whole, partial } => whole.iter().chain(partial).max().copied(),
            Shown::Broken(_) => None,
        }
    }
}

impl Window {
    /// The window a mode states (docs/formats/waldio.md for the waldio modes; SQLite's
    /// documentation for `synchronous=NORMAL` in WAL mode: durable at the next checkpoint).
    pub fn of(mode: JournalMode, canary: Option<Canary>, sync: StockSync) -> Window {
        if canary.is_some() {
            return Window::Durable;
        }
        let checkpoint = Window::Transactions(u64::from(WAL_AUTOCHECKPOINT_PAGES));
        match mode {
            // SQLite's documentation of `synchronous`: only EXTRA syncs the directory after
            // DELETE mode unlinks the journal, the commit point; at FULL a power cut right
            // after the commit may bring the journal back and roll the last one back.
            JournalMode::Delete if sync != StockSync::Extra => Window::Transactions(1),
            // pager.c syncs TRUNCATE's truncation of the journal (its commit point) only at
            // FULL and above.
            JournalMode::Truncate if sync == StockSync::Normal => Window::Transactions(1),
            // WAL at NORMAL syncs the WAL at checkpoint only.
            JournalMode::Wal if sync == StockSync::Normal => checkpoint,
            JournalMode::Waldio(m) => {
                let o = m.options();
                if o.sync == joj_waldio::SyncOption::Normal {
                    // Synced at checkpoint: every commit since the last one may be lost.
                    checkpoint
                } else if let Some(g) = o.group {
                    // One group buffer of commits, each at least one page.
                    Window::Transactions((g.frame_buffer_bytes / 4096) as u64)
                } else {
                    Window::Durable
                }
            }
            _ => Window::Durable,
        }
    }

    pub fn allowed_loss(self) -> u64 {
        match self {
            Window::Durable => 0,
            Window::Transactions(n) => n,
        }
    }
}

/// The value of row `i`.
pub fn value(i: u64) -> Vec<u8> {
    let mut x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..VALUE_BYTES)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Opening or using the database failed.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error(transparent)]
    Waldio(#[from] joj_waldio::WaldioError),
}

/// How the recorded run drives SQLite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    pub mode: JournalMode,
    pub canary: Option<Canary>,
    /// The connection's `PRAGMA synchronous` ([`StockSync`]).
    pub sync: StockSync,
}

/// Opens (creating) the database in `dir` as `setup` runs it.
pub fn open(dir: &Path, setup: Setup) -> Result<Connection, DbError> {
    open_via(&dir.join(DB_NAME), setup, None)
}

/// Opens the database at `path` as `setup` runs it, through SQLite's own VFS (waldio over it
/// for the waldio modes) or, with `confined`, through the VFS that keeps it inside a crash
/// image.
fn open_via(
    path: &Path,
    setup: Setup,
    confined: Option<&Confinement>,
) -> Result<Connection, DbError> {
    let Setup { mode, canary, sync } = setup;
    let conn = match mode {
        JournalMode::Waldio(m) => {
            let mut o = m.options();
            if let Some(c) = canary.filter(|c| c.is_waldio()) {
                o.canary_skip_sync = c == Canary::SkipSync;
                o.canary_fallocate =
                    matches!(c, Canary::FallocateOnly | Canary::FallocateFlushOnly);
                o.canary_flush_only = matches!(c, Canary::FallocateFlushOnly | Canary::FlushOnly);
            }
            let conn = match confined {
                None => joj_waldio::open(path, &o)?,
                Some(c) => joj_waldio::open_with(c.waldio()?, path, &o)?,
            };
            // The application's setting, which the option must not depend on.
            conn.pragma_update(None, "synchronous", sync.pragma())?;
            conn
        }
        _ => {
            let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let conn = match confined {
                None => Connection::open_with_flags(path, flags)?,
                Some(c) => Connection::open_with_flags_and_vfs(path, flags, c.vfs_name().as_str())?,
            };
            let _: String =
                conn.query_row(&format!("PRAGMA journal_mode={}", mode.pragma()), [], |r| {
                    r.get(0)
                })?;
            let sync = match canary {
                Some(Canary::SyncOff) => "OFF",
                _ => sync.pragma(),
            };
            conn.pragma_update(None, "synchronous", sync)?;
            conn
        }
    };
    if mode.is_wal() {
        conn.pragma_update(None, "wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES)?;
    }
    Ok(conn)
}

/// Creates the schema (before the recorded window).
pub fn prepare(conn: &Connection) -> Result<(), rusqlite::Error> {
    conn.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB NOT NULL);
         CREATE TABLE meta(n INTEGER NOT NULL);
         INSERT INTO meta VALUES(0);",
    )
}

/// Runs transaction `i`.
pub fn transaction(conn: &mut Connection, i: u64) -> Result<(), rusqlite::Error> {
    let tx = conn.transaction()?;
    tx.execute(
        "INSERT INTO t(id, v) VALUES(?1, ?2)",
        params![i as i64, value(i)],
    )?;
    tx.execute("UPDATE meta SET n = ?1", params![i as i64])?;
    tx.commit()
}

/// What a recovered database shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "detail")]
pub enum Shown {
    /// Exactly the first `k` transactions, intact.
    Transactions(u64),
    /// A workload of file operations, whose states may repeat (a file created, then deleted):
    /// the `k`s whose state after `k` transactions the image equals (`whole`), and those for
    /// which it equals that state with transaction `k + 1` begun, not finished (`partial`:
    /// POSIX does not make a create or an append atomic). Both increasing, not both empty.
    Candidates { whole: Vec<u64>, partial: Vec<u64> },
    /// Anything else, said in words.
    Broken(String),
}

/// The directory of the scratch filesystem the workload runs in.
pub const DIR_NAME: &str = "joj";

/// The files SQLite and waldio may open beside the database: each must be a regular file or
/// missing in a crash image.
const COMPANIONS: [&str; 4] = ["-wal", "-shm", "-journal", "-waldio"];

/// Reads what the database in the image's `joj` directory shows, opened by `mode`'s own VFS
/// (which recovers it: SQLite rolls back a hot journal or rebuilds its WAL index here), over
/// the VFS that keeps SQLite inside the image. The directory, the database and every file
/// beside it that SQLite or waldio may open must be a directory or regular files (or missing):
/// anything else — a symbolic link, a FIFO, a device node — or any path SQLite asks for outside
/// the image is an [`ImageEscape`], which no crash of joj's workload can leave.
pub fn shown(image: &Confinement, setup: Setup) -> Result<Shown, ImageEscape> {
    let beneath = image.beneath();
    let dir = Path::new(DIR_NAME);
    let db = dir.join(DB_NAME);
    let entry = |rel: &Path| beneath.entry(rel).map_err(broken_or_escape);
    let looked_up = (|| {
        match entry(dir)? {
            BeneathEntry::Directory => {}
            BeneathEntry::Missing => return Err(Ok(format!("{DIR_NAME}/ is missing"))),
            BeneathEntry::File { .. } => {
                return Err(Err(ImageEscape(format!(
                    "{DIR_NAME} is a regular file, where a directory is expected"
                ))));
            }
        }
        for name in COMPANIONS {
            entry(&dir.join(format!("{DB_NAME}{name}")))?;
        }
        match entry(&db)? {
            BeneathEntry::File { .. } => Ok(()),
            BeneathEntry::Missing => Err(Ok(format!("{DB_NAME} is missing"))),
            BeneathEntry::Directory => Err(Err(ImageEscape(format!(
                "{DIR_NAME}/{DB_NAME} is a directory, where a regular file is expected"
            )))),
        }
    })();
    match looked_up {
        Ok(()) => {}
        Err(Ok(broken)) => return Ok(Shown::Broken(broken)),
        Err(Err(escape)) => return Err(escape),
    }
    let shown = match open_via(&beneath.absolute(&db), setup, Some(image)) {
        Ok(conn) => match read(&conn) {
            Ok(s) => s,
            Err(e) => Shown::Broken(format!("cannot read: {e}")),
        },
        Err(e) => Shown::Broken(format!("cannot open: {e}")),
    };
    match image.take_refusal() {
        Some(why) => Err(ImageEscape(why)),
        None => Ok(shown),
    }
}

fn read(conn: &Connection) -> Result<Shown, rusqlite::Error> {
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if check != "ok" {
        return Ok(Shown::Broken(format!("integrity_check: {check}")));
    }
    let n: i64 = conn.query_row("SELECT n FROM meta", [], |r| r.get(0))?;
    let mut stmt = conn.prepare("SELECT id, v FROM t ORDER BY id")?;
    let mut rows = stmt.query([])?;
    let mut expect = 1i64;
    while let Some(row) = rows.next()? {
        let (id, v): (i64, Vec<u8>) = (row.get(0)?, row.get(1)?);
        if id != expect {
            return Ok(Shown::Broken(format!(
                "row {expect} missing (next row is {id})"
            )));
        }
        if v != value(id as u64) {
            return Ok(Shown::Broken(format!("row {id} has the wrong value")));
        }
        expect += 1;
    }
    let rows = expect - 1;
    if rows != n {
        return Ok(Shown::Broken(format!(
            "partly visible: {rows} rows but meta.n = {n}"
        )));
    }
    Ok(Shown::Transactions(rows as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_reads_a_clean_database_and_catches_a_partial_one() {
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup {
            mode: JournalMode::Wal,
            canary: None,
            sync: StockSync::Full,
        };
        let mut conn = open(dir.path(), setup).unwrap();
        prepare(&conn).unwrap();
        for i in 1..=5 {
            transaction(&mut conn, i).unwrap();
        }
        assert_eq!(read(&conn).unwrap(), Shown::Transactions(5));
        conn.execute("UPDATE meta SET n = 4", []).unwrap();
        assert!(matches!(read(&conn).unwrap(), Shown::Broken(s) if s.contains("partly visible")));
        conn.execute("UPDATE meta SET n = 5", []).unwrap();
        conn.execute("UPDATE t SET v = x'00' WHERE id = 3", [])
            .unwrap();
        assert!(matches!(read(&conn).unwrap(), Shown::Broken(s) if s.contains("row 3")));
    }
}
