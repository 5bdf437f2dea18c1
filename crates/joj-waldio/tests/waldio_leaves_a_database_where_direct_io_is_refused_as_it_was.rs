//! A database on a filesystem that refuses direct I/O (`O_DIRECT`), which waldio writes its WAL
//! with: the switch to WAL mode through waldio is refused with the reason and the fix, and the
//! database stays in its rollback-journal mode — unmarked, readable and writable by any SQLite,
//! through waldio too.
//!
//! Found by a probe of FUSE (2026-11-29, docs/robustness.md H149): waldio marked the database
//! with the header write that put it in WAL mode, then could not open its WAL. Neither waldio
//! nor a stock SQLite could open the database afterwards, and the documented way back
//! (`PRAGMA journal_mode=DELETE` through waldio) failed too. ramfs stands in for such a FUSE
//! filesystem here: its `O_DIRECT` open fails with `EINVAL`, as theirs does.
//!
//! Kernel-level: needs root to mount; fails (not skips) without it, unless
//! `JOJ_SKIP_KERNEL_TESTS=1`.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use rusqlite::{Connection, OpenFlags};
use rustix::mount::{MountFlags, UnmountFlags, mount, unmount};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

struct Ramfs {
    dir: tempfile::TempDir,
}

impl Ramfs {
    fn mount() -> Option<Ramfs> {
        if !joj_linux::testgate::root_test() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        mount(
            "joj-waldio-test",
            dir.path(),
            "ramfs",
            MountFlags::empty(),
            c"mode=0755",
        )
        .unwrap();
        Some(Ramfs { dir })
    }

    fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }
}

impl Drop for Ramfs {
    fn drop(&mut self) {
        let _ = unmount(self.dir.path(), UnmountFlags::DETACH);
    }
}

/// Rows and integrity as a stock SQLite reads them (the default VFS).
fn stock_reads(db: &Path) -> (i64, String) {
    let c = Connection::open(db).unwrap_or_else(|e| panic!("stock open: {e}"));
    let n = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("stock read: {e}"));
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    (n, ok)
}

fn read_version(db: &Path) -> u8 {
    std::fs::read(db).unwrap()[19]
}

#[test]
fn a_filesystem_without_direct_io_leaves_the_database_readable_by_any_sqlite() {
    let Some(fs) = Ramfs::mount() else { return };
    assert!(
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .custom_flags(libc::O_DIRECT)
            .open(fs.path().join("probe"))
            .is_err(),
        "ramfs took an O_DIRECT open: the test needs a filesystem that refuses it"
    );
    let db = fs.path().join("app.db");
    {
        let c = Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
             INSERT INTO t SELECT i, printf('%0100d', i) FROM n;",
        )
        .unwrap();
    }
    // The conversion adds the reserve, and cannot go on to WAL mode: it says why.
    let e = joj_waldio::convert(&db).unwrap_err().to_string();
    assert!(e.contains("direct I/O"), "{e}");
    assert_eq!(
        read_version(&db),
        1,
        "the header after the conversion failed"
    );
    assert_eq!(stock_reads(&db), (200, "ok".into()));

    // An application that opens it through waldio and switches it itself is refused the
    // switch, and goes on in its rollback mode.
    let vfs = joj_waldio::register().unwrap();
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    let c = Connection::open_with_flags_and_vfs(&db, flags, vfs.name()).unwrap();
    // Every step: the header is written by the commit after the result row.
    let switched: rusqlite::Result<Vec<String>> = c
        .prepare("PRAGMA journal_mode=WAL")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect();
    let why = joj_waldio::last_error_on_this_thread().unwrap_or_default();
    assert!(switched.is_err(), "switched: {switched:?}");
    assert!(why.contains("direct I/O") && why.contains("fix:"), "{why}");
    c.execute("INSERT INTO t VALUES(1000, 'after')", [])
        .unwrap();
    let mode: String = c
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
    drop(c);
    assert_eq!(read_version(&db), 1, "the header after the refused switch");
    assert_eq!(stock_reads(&db), (201, "ok".into()));
    assert!(
        !joj_waldio::wal_path(&db).exists(),
        "the check left {}",
        joj_waldio::wal_path(&db).display()
    );
}

/// A connection opened with `waldio_journal=wal` (the switch waldio makes itself).
fn with_the_switch_option(db: &Path) -> Connection {
    let opts = joj_waldio::WaldioOptions {
        wal_mode: true,
        ..joj_waldio::WaldioOptions::default()
    };
    let vfs = joj_waldio::register().unwrap();
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_URI;
    Connection::open_with_flags_and_vfs(joj_waldio::uri(db, &opts), flags, vfs.name()).unwrap()
}

/// Run by the test below as a process of its own: a transaction spilled into the database
/// file, and the process gone before it commits (its rollback journal is left hot).
#[test]
fn a_writer_that_dies_mid_transaction() {
    let Ok(db) = std::env::var("WALDIO_RAMFS_HOT_DB") else {
        return;
    };
    let c = Connection::open(&db).unwrap();
    c.execute_batch(
        "PRAGMA cache_size=5; BEGIN;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
         INSERT INTO t SELECT 10000 + i, printf('%0500d', i) FROM n;",
    )
    .unwrap();
    // SAFETY: ends this test process at once, its transaction uncommitted.
    unsafe { libc::_exit(0) };
}

#[test]
fn the_switch_option_where_direct_io_is_refused_commits_and_rolls_back_in_rollback_mode() {
    if std::env::var("WALDIO_RAMFS_HOT_DB").is_ok() {
        return;
    }
    let Some(fs) = Ramfs::mount() else { return };
    let db = fs.path().join("app.db");
    {
        // Made through waldio in DELETE mode: it has the reserve, and the option would switch it.
        let vfs = joj_waldio::register().unwrap();
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
        let c = Connection::open_with_flags_and_vfs(&db, flags, vfs.name()).unwrap();
        c.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)")
            .unwrap();
    }
    let c = with_the_switch_option(&db);
    c.execute("INSERT INTO t VALUES(1, 'a')", []).unwrap();
    c.execute("INSERT INTO t VALUES(2, 'b')", []).unwrap();
    let mode: String = c
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
    drop(c);
    assert_eq!(read_version(&db), 1);
    assert_eq!(stock_reads(&db), (2, "ok".into()));

    // A hot journal, rolled back by a connection with the option: its rewrite of page 1 is
    // not switched either, and the rollback goes through.
    common::run_child_leaving_a_hot_journal(
        "a_writer_that_dies_mid_transaction",
        "WALDIO_RAMFS_HOT_DB",
        &db,
    );
    let c = with_the_switch_option(&db);
    let n: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("the rollback through the option: {e}"));
    assert_eq!(n, 2);
    drop(c);
    assert_eq!(read_version(&db), 1);
    assert_eq!(stock_reads(&db), (2, "ok".into()));
}

#[test]
fn an_empty_log_left_at_the_name_on_a_filesystem_with_direct_io_takes_the_switch() {
    if std::env::var("WALDIO_RAMFS_HOT_DB").is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("app.db");
    let vfs = joj_waldio::register().unwrap();
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    let c = Connection::open_with_flags_and_vfs(&db, flags, vfs.name()).unwrap();
    c.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES(1, 'a')")
        .unwrap();
    // Left by a crash during an earlier check, or by a log whose preallocation failed: the
    // check writes a block into it, and cuts it back to empty.
    std::fs::File::create(joj_waldio::wal_path(&db)).unwrap();
    let mode: String = c
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    c.execute("INSERT INTO t VALUES(2, 'b')", []).unwrap();
    drop(c);
    let c = joj_waldio::open(&db, &joj_waldio::WaldioOptions::default()).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
}
