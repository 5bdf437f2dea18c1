//! SQLite's online backup (`sqlite3_backup_*`: Python's `Connection.backup`, the shell's
//! `.restore`) copies the source's pages verbatim, page 1's header — and so its reserve — with
//! them. Into a waldio database in WAL mode, a source without waldio's 24-byte reserve (any
//! database stock SQLite made) is refused: SQLite gets `SQLITE_IOERR_WRITE`, the waldio error
//! names the source's reserve and the fix, nothing reaches the WAL, and the destination keeps
//! its rows. Before, waldio's error named only a page "with data in its last 24 bytes", not the
//! backup nor the source's reserve; and a source whose pages left those bytes zero (an empty
//! database) was taken: the destination became a WAL database of reserve 0 that waldio then
//! refused to open.
//! A source with the reserve is copied as stock SQLite copies it; a destination in a rollback
//! journal mode takes any source, as without waldio (waldio is not in use for it).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_waldio::{WaldioOptions, open};
use rusqlite::Connection;
use std::path::Path;

/// The destination: a waldio database in WAL mode holding rows 1..=20 of `d`.
fn destination(path: &Path) -> Connection {
    let c = open(path, &WaldioOptions::default()).unwrap();
    c.execute_batch(
        "CREATE TABLE d(k INTEGER PRIMARY KEY, v TEXT NOT NULL);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
         INSERT INTO d SELECT i, 'destination ' || i FROM n;",
    )
    .unwrap();
    c
}

/// A database stock SQLite made (reserve 0), with `rows` rows in `s` (0: no table at all,
/// so that no page holds data in its last 24 bytes).
fn stock_source(path: &Path, rows: u32) -> Connection {
    let c = Connection::open(path).unwrap();
    if rows == 0 {
        c.execute_batch("PRAGMA user_version = 7").unwrap();
    } else {
        c.execute_batch(&format!(
            "CREATE TABLE s(k INTEGER PRIMARY KEY, v TEXT NOT NULL);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
             INSERT INTO s SELECT i, printf('source %040d', i) FROM n;"
        ))
        .unwrap();
    }
    assert_eq!(reserve_of(path), 0, "stock SQLite makes no reserve");
    c
}

fn reserve_of(path: &Path) -> u8 {
    std::fs::read(path).unwrap()[20]
}

/// `sqlite3_backup` of `src`'s main database over `dst`'s, `pages` pages a step (-1: all at
/// once, as Python's default; 100: as the shell's `.restore`). The result code of the last step
/// (`SQLITE_DONE` when the copy completed).
fn backup(src: &Connection, dst: &Connection, pages: i32) -> i32 {
    use libsqlite3_sys as ffi;
    // SAFETY: both handles are open connections owned by the caller, used on this thread only;
    // the backup object is finished before this returns, and "main" is a NUL-terminated name.
    unsafe {
        let b = ffi::sqlite3_backup_init(
            dst.handle(),
            c"main".as_ptr(),
            src.handle(),
            c"main".as_ptr(),
        );
        assert!(!b.is_null(), "sqlite3_backup_init failed");
        let mut rc;
        loop {
            rc = ffi::sqlite3_backup_step(b, pages);
            if rc != ffi::SQLITE_OK {
                break;
            }
        }
        ffi::sqlite3_backup_finish(b);
        rc
    }
}

/// The destination, opened again through waldio: intact and holding its own 20 rows.
fn assert_destination_kept(path: &Path) {
    let c = open(path, &WaldioOptions::default()).unwrap();
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let rows: Vec<(i64, String)> = c
        .prepare("SELECT k, v FROM d ORDER BY k")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let want: Vec<(i64, String)> = (1..=20).map(|k| (k, format!("destination {k}"))).collect();
    assert_eq!(rows, want);
    assert!(reserve_of(path) >= 24);
}

/// The refusal: `SQLITE_IOERR_WRITE`, and the waldio error of this thread naming the cause.
fn assert_refused(rc: i32, source_reserve_named: bool) {
    assert_eq!(
        rc,
        libsqlite3_sys::SQLITE_IOERR_WRITE,
        "backup step's result"
    );
    let why = joj_waldio::last_error_on_this_thread().unwrap();
    assert!(why.contains("backup"), "{why}");
    assert!(why.contains("joj waldio convert"), "{why}");
    if source_reserve_named {
        assert!(
            why.contains("keeps 0 reserved bytes per page"),
            "the source's reserve: {why}"
        );
    }
}

#[test]
fn a_backup_from_a_stock_database_is_refused_naming_its_reserve_and_the_destination_keeps_its_rows()
{
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("stock.db"), dir.path().join("dst.db"));
    let s = stock_source(&src, 30);
    let d = destination(&dst);
    assert_refused(backup(&s, &d, -1), true);
    // The connection goes on as before the backup.
    let n: i64 = d
        .query_row("SELECT count(*) FROM d", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 20);
    drop(d);
    assert_destination_kept(&dst);
}

#[test]
fn a_backup_from_an_empty_stock_database_is_refused_too_though_no_page_uses_the_reserve() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("empty.db"), dir.path().join("dst.db"));
    let s = stock_source(&src, 0);
    let d = destination(&dst);
    assert_refused(backup(&s, &d, -1), true);
    drop(d);
    assert_destination_kept(&dst);
}

#[test]
fn a_backup_of_a_large_stock_database_in_steps_is_refused_and_the_destination_keeps_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("large.db"), dir.path().join("dst.db"));
    // Larger than the page cache: SQLite spills pages into the WAL before it writes page 1.
    let s = stock_source(&src, 60_000);
    let d = destination(&dst);
    assert_refused(backup(&s, &d, 100), false);
    drop(d);
    assert_destination_kept(&dst);
}

#[test]
fn a_backup_from_a_database_with_the_reserve_is_copied_as_stock_sqlite_copies_it() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("converted.db"), dir.path().join("dst.db"));
    drop(stock_source(&src, 30));
    // The fix the refusal names: the source converted first.
    joj_waldio::convert(&src).unwrap();
    let s = open(&src, &WaldioOptions::default()).unwrap();
    let d = destination(&dst);
    assert_eq!(backup(&s, &d, -1), libsqlite3_sys::SQLITE_DONE);
    drop(d);
    let d = open(&dst, &WaldioOptions::default()).unwrap();
    let n: i64 = d
        .query_row("SELECT count(*) FROM s", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 30);
    let ok: String = d
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    assert!(reserve_of(&dst) >= 24);
}

#[test]
fn a_destination_in_a_rollback_journal_mode_takes_a_stock_database_as_stock_sqlite_does() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("stock.db"), dir.path().join("dst.db"));
    let s = stock_source(&src, 30);
    let vfs = joj_waldio::register().unwrap();
    let d = Connection::open_with_flags_and_vfs(&dst, rusqlite::OpenFlags::default(), vfs.name())
        .unwrap();
    d.execute_batch("CREATE TABLE d(k); INSERT INTO d VALUES(1);")
        .unwrap();
    assert_eq!(backup(&s, &d, -1), libsqlite3_sys::SQLITE_DONE);
    let n: i64 = d
        .query_row("SELECT count(*) FROM s", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 30);
    drop(d);
    // Now the source's copy, reserve and all: waldio is not in use for it until it is converted.
    assert_eq!(reserve_of(&dst), 0);
}
