//! A connection keeps its database open while the database's files are deleted, and a new
//! database is made under the same name in the same process (an application that resets its
//! store, a test fixture made again). The two are two files, as stock SQLite keeps them: the
//! old connection's commits reach its own log, never the new database's.
//!
//! Found by a probe of waldio (2026-11-28; docs/robustness.md H132): waldio found a database's
//! WAL by the database's *name*, and the new database's WAL had taken the name's entry. The old
//! connection's commit ended a write transaction on the new database's log and dropped the
//! frames the new connection's open transaction had spilled into it: the new database was
//! corrupted (`btreeInitPage() returns error code 11` on some 100 pages, still after reopening).
//! Across processes, a database renamed away and a new one made under its name lost another
//! process's 300 acknowledged commits the same way (`/tmp/probe-vfs/rename_replace.py` of that
//! machine); both now match stock SQLite.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_waldio::{WaldioOptions, open};
use std::path::Path;

fn remove_all(db: &Path) {
    for suffix in ["", "-wal", "-shm", "-waldio", "-journal"] {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn a_commit_through_a_deleted_database_leaves_the_new_one_under_its_name_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let opts = WaldioOptions::default();
    let old = open(&db, &opts).unwrap();
    old.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE o(id INTEGER PRIMARY KEY, v); INSERT INTO o(v) VALUES (1);")
        .unwrap();
    remove_all(&db);
    let new = open(&db, &opts).unwrap();
    new.execute_batch(
        "PRAGMA journal_mode=WAL; CREATE TABLE t(id INTEGER PRIMARY KEY, v); PRAGMA cache_size=10; BEGIN;",
    )
    .unwrap();
    // Enough rows that the small cache spills frames into the new database's log before its
    // commit.
    for _ in 0..2000 {
        new.execute("INSERT INTO t(v) VALUES (randomblob(500))", [])
            .unwrap();
    }
    // The old connection commits into its own (deleted) database meanwhile.
    old.execute("INSERT INTO o(v) VALUES (2)", []).unwrap();
    new.execute_batch("COMMIT").unwrap();
    let check = |c: &rusqlite::Connection| {
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        let ok: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        (n, ok)
    };
    assert_eq!(check(&new), (2000, "ok".to_string()));
    let old_rows: i64 = old
        .query_row("SELECT count(*) FROM o", [], |r| r.get(0))
        .unwrap();
    assert_eq!(old_rows, 2, "the old connection sees its own commits");
    drop(old);
    drop(new);
    let again = open(&db, &opts).unwrap();
    assert_eq!(check(&again), (2000, "ok".to_string()));
}
