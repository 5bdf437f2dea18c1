//! `SQLITE_FCNTL_PERSIST_WAL` on a waldio database (found by a probe of waldio's contract,
//! 2026-11-29, robustness H154). SQLite keeps a persistent WAL after the last close; with it,
//! `PRAGMA journal_mode=DELETE` leaves the WAL in place, SQLite reopens it at the next
//! transaction, and the last close checkpoints page 1's rollback header into the database file.
//! Stock SQLite sees its kept `-wal` and stays in WAL mode; a SQLite without waldio sees no
//! `-waldio`, so it read the unmarked database and committed into it in rollback mode — and the
//! next open through waldio replayed the kept log's stale frames over those commits (the
//! checkpoint then wrote them into the database: 200 of 400 rows gone, `integrity_check` ok).
//! waldio now answers the control `SQLITE_NOTFOUND`, as a VFS without it does: SQLite deletes
//! the WAL at the last close (waldio marks its log absent), and the hand-back works.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use rusqlite::{Connection, OpenFlags};

/// `SQLITE_FCNTL_PERSIST_WAL`.
const PERSIST_WAL: i32 = 10;

fn count(c: &Connection) -> i64 {
    c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_persistent_wal_left_by_a_hand_back_is_not_replayed_over_stock_commits() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    {
        let c = joj_waldio::open(&db, &joj_waldio::WaldioOptions::default()).unwrap();
        c.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
            .unwrap();
        for i in 0..100 {
            c.execute("INSERT INTO t VALUES(?1, 'waldio')", [i])
                .unwrap();
        }
        let mut on: i32 = 1;
        // SAFETY: a valid connection handle, a NUL-terminated schema name and an int argument,
        // as SQLITE_FCNTL_PERSIST_WAL takes.
        let rc = unsafe {
            libsqlite3_sys::sqlite3_file_control(
                c.handle(),
                c"main".as_ptr(),
                PERSIST_WAL,
                (&raw mut on).cast(),
            )
        };
        assert!(
            rc == libsqlite3_sys::SQLITE_OK || rc == libsqlite3_sys::SQLITE_NOTFOUND,
            "{rc}"
        );
        // The README's hand-back to a program without waldio.
        let mode: String = c
            .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
    }
    // A SQLite without waldio: reads the database, commits in rollback mode.
    {
        let s = Connection::open_with_flags_and_vfs(
            &db,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_URI,
            c"unix",
        )
        .unwrap();
        assert_eq!(count(&s), 100);
        s.execute_batch(
            "UPDATE t SET v = 'stock';
             INSERT INTO t SELECT id + 1000, 'stock' FROM t;",
        )
        .unwrap();
        assert_eq!(count(&s), 200);
    }
    // waldio again: every stock commit is there.
    let c = joj_waldio::open(&db, &joj_waldio::WaldioOptions::default()).unwrap();
    let stock: i64 = c
        .query_row("SELECT count(*) FROM t WHERE v = 'stock'", [], |r| r.get(0))
        .unwrap();
    let check: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    assert_eq!(
        (count(&c), stock),
        (200, 200),
        "the stock process's commits were lost to the log waldio kept"
    );
    drop(c);
    // And stock SQLite still reads them after waldio's close.
    let s = Connection::open_with_flags_and_vfs(
        &db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
        c"unix",
    );
    if let Ok(s) = s {
        // (waldio's open put the database in WAL mode again and marked it: stock refuses it,
        // as documented; if it reads it, it reads every row.)
        if let Ok(n) = s.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0)) {
            assert_eq!(n, 200);
        }
    }
}
