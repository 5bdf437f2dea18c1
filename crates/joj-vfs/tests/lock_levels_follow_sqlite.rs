//! The seam's LockTable, under a VFS whose files are in memory, gives SQLite's lock levels:
//! readers share, one writer reserves alongside them, a commit waits at PENDING for readers to
//! leave (keeping new ones out), and a second writer is refused.

mod common;

use common::MemVfs;
use rusqlite::{Connection, ErrorCode, OpenFlags};

fn busy(r: rusqlite::Result<()>) -> bool {
    matches!(r, Err(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy))
}

#[test]
fn lock_levels_follow_sqlite() {
    let name = common::unique_name("locks");
    joj_vfs::register_vfs(&name, |_| MemVfs::default()).unwrap();
    let open = || {
        let c = Connection::open_with_flags_and_vfs(
            "/mem/locks.db",
            OpenFlags::default(),
            name.as_str(),
        )
        .unwrap();
        c.execute_batch("PRAGMA journal_mode=DELETE; PRAGMA busy_timeout=0")
            .unwrap();
        c
    };
    let count = |c: &Connection| -> rusqlite::Result<i64> {
        c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
    };
    let (a, b, c, d) = (open(), open(), open(), open());
    a.execute_batch("CREATE TABLE t(v)").unwrap();
    for conn in [&b, &c, &d] {
        assert_eq!(count(conn).unwrap(), 0, "the schema is read");
    }

    // B reads (SHARED); A reserves alongside it; C, a second writer, is refused.
    b.execute_batch("BEGIN").unwrap();
    assert_eq!(count(&b).unwrap(), 0);
    a.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES(1)")
        .unwrap();
    assert!(
        busy(c.execute_batch("BEGIN IMMEDIATE")),
        "second RESERVED granted"
    );

    // A's commit needs EXCLUSIVE: it waits at PENDING while B reads, and PENDING keeps D out.
    assert!(
        busy(a.execute_batch("COMMIT")),
        "EXCLUSIVE granted with a reader"
    );
    let r = count(&d);
    assert!(
        matches!(&r, Err(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)),
        "a new reader got in past PENDING: {r:?}"
    );

    // B leaves: A commits; everyone sees the row.
    b.execute_batch("COMMIT").unwrap();
    a.execute_batch("COMMIT").unwrap();
    for conn in [&a, &b, &c, &d] {
        assert_eq!(count(conn).unwrap(), 1);
    }
    c.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES(2); COMMIT")
        .unwrap();
    assert_eq!(count(&a).unwrap(), 2);
}
