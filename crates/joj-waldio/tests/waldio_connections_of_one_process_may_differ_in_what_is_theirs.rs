//! Connections of one process share the state of a WAL, so they must agree on what decides a
//! commit's durability (`waldio_sync`, group sync). What is theirs alone — `waldio_journal`,
//! which switches a database to WAL mode, and the preallocation sizes, hints of how the file
//! grows — may differ, as stock SQLite lets each connection choose its own settings. A second
//! connection asking for `waldio_journal=wal` or other sizes used to fail its first read with
//! `unable to open database file` (found by a probe, 2026-11-27).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_waldio::{SyncOption, WaldioOptions, open};

fn rows(c: &rusqlite::Connection) -> rusqlite::Result<i64> {
    c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
}

#[test]
fn connections_may_differ_in_journal_switch_and_sizes_not_in_durability() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let first = open(
        &db,
        &WaldioOptions {
            wal_mode: true,
            prealloc_frames: 64,
            ..WaldioOptions::default()
        },
    )
    .unwrap();
    first
        .execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES(1)")
        .unwrap();
    for (what, opts) in [
        ("plain", WaldioOptions::default()),
        (
            "other sizes",
            WaldioOptions {
                prealloc_frames: 4096,
                extend_frames: 16,
                ..WaldioOptions::default()
            },
        ),
    ] {
        let second = open(&db, &opts).unwrap();
        let seen = rows(&second)
            .map_err(|e| format!("{e}: {:?}", joj_waldio::last_error_on_this_thread()));
        assert!(seen.is_ok(), "{what}: {seen:?}");
        second.execute("INSERT INTO t VALUES(2)", []).unwrap();
        assert_eq!(rows(&first).unwrap(), rows(&second).unwrap(), "{what}");
    }
    // A different durability is still refused (here by the open, which sets WAL mode), naming
    // both.
    let refused = open(
        &db,
        &WaldioOptions {
            sync: SyncOption::Normal,
            ..WaldioOptions::default()
        },
    )
    .map(|c| rows(&c).map_err(|e| format!("{e}: {:?}", joj_waldio::last_error_on_this_thread())))
    .map_err(|e| e.to_string());
    let why = match refused {
        Err(why) | Ok(Err(why)) => why,
        Ok(Ok(_)) => panic!("a connection asking for another durability was let in"),
    };
    assert!(
        why.contains("already open in this process") && why.contains("normal"),
        "{why}"
    );
}
