//! A connection in `locking_mode=EXCLUSIVE` (entered after WAL mode, so the wal-index stays in
//! `-shm`) rolls back a transaction whose pages spilled into the WAL, leaves exclusive mode, and
//! another process then commits: the other process's commits stay, and the database stays
//! intact. In exclusive mode SQLite takes no wal-index locks, so the release of the WAL write lock
//! that waldio drops a rolled-back transaction's frames at never comes; waldio drops them when the
//! connection lets go of its exclusive lock on the database file instead (`docs/formats/waldio.md`,
//! "Locks and opens", rule 2). Before that, the rolled-back frames were read in place of the
//! other process's frames at the same positions and checkpointed over them: `file is not a
//! database` in 5 of 5 runs of the probe that found it.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_waldio::WaldioOptions;

const OTHERS: i64 = 20;

#[test]
fn exclusive_other_writer_child() {
    let Ok(db) = std::env::var("WALDIO_EXCL_DB") else {
        return;
    };
    let c = joj_waldio::open(std::path::Path::new(&db), &WaldioOptions::default()).unwrap();
    c.busy_timeout(std::time::Duration::from_secs(20)).unwrap();
    for _ in 0..OTHERS {
        c.execute("INSERT INTO t(v) VALUES (randomblob(3000))", [])
            .unwrap();
    }
    println!("done");
}

fn count_and_check(c: &rusqlite::Connection) -> (i64, String) {
    let n = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    let ok = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    (n, ok)
}

#[test]
fn a_rollback_in_exclusive_mode_leaves_nothing_that_later_overwrites_another_process() {
    if std::env::var("WALDIO_EXCL_DB").is_ok() {
        return;
    }
    for spill in [50, 200] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("excl.db");
        let c = joj_waldio::open(&db, &WaldioOptions::default()).unwrap();
        c.execute_batch(
            "CREATE TABLE t(i INTEGER PRIMARY KEY, v);
             WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 10)
             INSERT INTO t(v) SELECT randomblob(3000) FROM s;
             PRAGMA cache_size=5; PRAGMA locking_mode=EXCLUSIVE;",
        )
        .unwrap();
        c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
            .unwrap();
        // A transaction larger than the cache: its pages spill into the WAL, then it rolls back.
        c.execute_batch(&format!(
            "BEGIN;
             WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < {spill})
             INSERT INTO t(v) SELECT randomblob(3000) FROM s;
             ROLLBACK;
             PRAGMA locking_mode=NORMAL;"
        ))
        .unwrap();
        c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
            .unwrap();

        common::run_child_test("exclusive_other_writer_child", ("WALDIO_EXCL_DB", &db));

        assert_eq!(
            count_and_check(&c),
            (10 + OTHERS, "ok".to_string()),
            "spill of {spill} rows: the connection that rolled back, after the other's commits"
        );
        drop(c);
        let c = joj_waldio::open(&db, &WaldioOptions::default()).unwrap();
        assert_eq!(
            count_and_check(&c),
            (10 + OTHERS, "ok".to_string()),
            "spill of {spill} rows: after its close"
        );
    }
}
