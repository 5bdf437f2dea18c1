//! Several processes on one database through waldio, as SQLite's WAL allows: two writer
//! processes and this one interleave commits and reads; every row arrives and the database is
//! intact. Group sync keeps its buffer in one process, so it refuses to share: a second process
//! gets a clear error while a group-sync connection is open, and can open after it closes.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_waldio::{GroupSync, WaldioOptions};
use std::process::Command;

const ROWS: i64 = 150;

#[test]
fn mp_writer_child() {
    let (Ok(db), Ok(id)) = (std::env::var("WALDIO_MP_DB"), std::env::var("WALDIO_MP_ID")) else {
        return;
    };
    let id: i64 = id.parse().unwrap();
    let group = std::env::var("WALDIO_MP_GROUP").is_ok();
    let opts = WaldioOptions {
        group: group.then(GroupSync::default),
        ..WaldioOptions::default()
    };
    let c = match joj_waldio::open(std::path::Path::new(&db), &opts) {
        Ok(c) => c,
        Err(e) => {
            println!("open-failed {e}");
            return;
        }
    };
    c.busy_timeout(std::time::Duration::from_secs(20)).unwrap();
    for i in 0..ROWS {
        c.execute(
            "INSERT INTO t VALUES(?1, ?2)",
            (id * 100_000 + i, format!("p{id}-{i}")),
        )
        .unwrap();
    }
    println!("done {id}");
}

fn spawn(db: &std::path::Path, id: i64, group: bool) -> std::process::Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "mp_writer_child",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("WALDIO_MP_DB", db)
    .env("WALDIO_MP_ID", id.to_string())
    .stdout(std::process::Stdio::piped());
    if group {
        cmd.env("WALDIO_MP_GROUP", "1");
    }
    cmd.spawn().unwrap()
}

#[test]
fn two_writer_processes_and_a_reader_share_one_database() {
    if std::env::var("WALDIO_MP_DB").is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mp.db");
    let c = joj_waldio::open(&db, &WaldioOptions::default()).unwrap();
    c.busy_timeout(std::time::Duration::from_secs(20)).unwrap();
    c.execute_batch("PRAGMA wal_autocheckpoint=20; CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)")
        .unwrap();
    let children = [spawn(&db, 1, false), spawn(&db, 2, false)];
    // This process writes too, and reads while the others write.
    for i in 0..ROWS {
        c.execute("INSERT INTO t VALUES(?1, ?2)", (i, format!("p0-{i}")))
            .unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert!(n > i);
    }
    for child in children {
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("done"), "{text}");
    }
    let n: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 3 * ROWS);
    for id in 0..3i64 {
        let v: String = c
            .query_row(
                "SELECT v FROM t WHERE k = ?1",
                [id * 100_000 + ROWS - 1],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(v, format!("p{id}-{}", ROWS - 1));
    }
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

#[test]
fn group_sync_refuses_a_second_process_with_a_clear_error() {
    if std::env::var("WALDIO_MP_DB").is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gs.db");
    let opts = WaldioOptions {
        group: Some(GroupSync::default()),
        ..WaldioOptions::default()
    };
    let c = joj_waldio::open(&db, &opts).unwrap();
    c.execute_batch(
        "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES(-1, 'x');",
    )
    .unwrap();
    let out = spawn(&db, 1, false).wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("open-failed") && text.contains("group sync"),
        "{text}"
    );
    drop(c);
    // Once the group-sync connection is gone, the other process opens and writes.
    let out = spawn(&db, 1, false).wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("done 1"), "{text}");
    let c = joj_waldio::open(&db, &WaldioOptions::default()).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, ROWS + 1);
}
