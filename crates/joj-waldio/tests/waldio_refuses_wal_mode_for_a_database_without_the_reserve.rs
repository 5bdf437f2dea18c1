//! A database stock SQLite made (reserve 0) may be opened through waldio in a rollback-journal
//! mode, as without waldio. Two ways put it in WAL mode all the same, and waldio, which keeps
//! each frame's header in a page's last 24 bytes, could then never open its WAL: `PRAGMA
//! journal_mode=WAL` answered `wal`, and every statement after failed with `SQLITE_CANTOPEN`
//! ("unable to open database file") on that connection, `journal_mode=DELETE` included; and a
//! backup from a stock database in WAL mode into a waldio database in a rollback mode reported
//! success and left a destination no connection through waldio could use (found by a probe of
//! 2026-11-29). The header write that says WAL without the reserve is now refused before it is
//! stored: SQLite rolls the switch or the backup back, the database stays as it was and
//! usable, and the waldio error names the reserve and the fix.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use rusqlite::Connection;
use std::path::Path;

/// A database stock SQLite made: reserve 0, `rows` rows in `s`, in journal mode `mode`.
fn stock(path: &Path, rows: u32, mode: &str) -> Connection {
    let c = Connection::open(path).unwrap();
    c.execute_batch(&format!(
        "PRAGMA journal_mode={mode};
         CREATE TABLE s(k INTEGER PRIMARY KEY);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
         INSERT INTO s SELECT i FROM n;"
    ))
    .unwrap();
    assert_eq!(
        std::fs::read(path).unwrap()[20],
        0,
        "stock SQLite makes no reserve"
    );
    c
}

fn through_waldio(path: &Path) -> Connection {
    let vfs = joj_waldio::register().unwrap();
    Connection::open_with_flags_and_vfs(path, rusqlite::OpenFlags::default(), vfs.name()).unwrap()
}

fn count(c: &Connection, table: &str) -> i64 {
    c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

fn assert_named_with_the_fix() {
    let why = joj_waldio::last_error_on_this_thread().unwrap();
    assert!(
        why.contains("keeps 0 reserved bytes per page") && why.contains("joj waldio convert"),
        "{why}"
    );
}

#[test]
fn journal_mode_wal_is_refused_and_the_connection_goes_on_in_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stock.db");
    drop(stock(&db, 5, "delete"));
    let c = through_waldio(&db);
    // Stepped to its end: the switch's commit is where the header is written. (SQLite has
    // produced its row, `wal`, by then; the statement fails, and the switch is rolled back.)
    let switched = (|| -> rusqlite::Result<()> {
        let mut st = c.prepare("PRAGMA journal_mode=WAL")?;
        let mut rows = st.query([])?;
        while rows.next()?.is_some() {}
        Ok(())
    })();
    assert!(switched.is_err(), "switched: {switched:?}");
    assert_named_with_the_fix();
    c.execute("INSERT INTO s VALUES (6)", []).unwrap();
    assert_eq!(count(&c, "s"), 6, "the connection goes on");
    drop(c);
    let bytes = std::fs::read(&db).unwrap();
    assert_eq!(
        (bytes[18], bytes[19]),
        (1, 1),
        "still a rollback-mode header"
    );
    assert_eq!(count(&Connection::open(&db).unwrap(), "s"), 6);
}

#[test]
fn a_backup_of_a_stock_wal_database_into_a_rollback_mode_destination_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("stock.db"), dir.path().join("dst.db"));
    let s = stock(&src, 30, "wal");
    let d = through_waldio(&dst);
    d.execute_batch("CREATE TABLE d(k); INSERT INTO d VALUES (1), (2);")
        .unwrap();
    use libsqlite3_sys as ffi;
    // SAFETY: both handles are open connections owned here, used on this thread only; the
    // backup object is finished before the block ends.
    let rc = unsafe {
        let b =
            ffi::sqlite3_backup_init(d.handle(), c"main".as_ptr(), s.handle(), c"main".as_ptr());
        assert!(!b.is_null());
        let rc = ffi::sqlite3_backup_step(b, -1);
        ffi::sqlite3_backup_finish(b);
        rc
    };
    assert_eq!(rc, ffi::SQLITE_IOERR_WRITE, "the backup's step");
    assert_named_with_the_fix();
    assert_eq!(
        count(&d, "d"),
        2,
        "the destination keeps its rows and goes on"
    );
    drop(d);
    let again = through_waldio(&dst);
    assert_eq!(count(&again, "d"), 2);
    let ok: String = again
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}
