//! Processes may run waldio with different durability options (`docs/formats/waldio.md`,
//! "Durability options"): a process at `waldio_sync=normal` commits frames it does not sync, and a
//! process at `full` or `fua` then checkpoints them. The checkpoint must make them durable in the
//! WAL before it copies the first one into the database, or a power cut during the copy leaves
//! the database with pages of commits the WAL no longer holds. The `full`/`fua` process's own
//! commits were durable, so its checkpoint's `xSync` right after its commit was taken as that
//! commit's and nothing synced the other process's frames (seen as no `fdatasync` of the WAL
//! during the checkpoint).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_waldio::{SyncOption, WaldioOptions};

#[test]
fn normal_writer_child() {
    let Ok(db) = std::env::var("WALDIO_MIXED_DB") else {
        return;
    };
    let opts = WaldioOptions {
        sync: SyncOption::Normal,
        ..WaldioOptions::default()
    };
    let c = joj_waldio::open(std::path::Path::new(&db), &opts).unwrap();
    c.busy_timeout(std::time::Duration::from_secs(20)).unwrap();
    for i in 0..40 {
        c.execute("INSERT INTO t VALUES (?1, randomblob(900))", [i])
            .unwrap();
    }
    println!("done");
}

#[test]
fn a_checkpoint_under_full_or_fua_syncs_the_frames_a_normal_process_left_unsynced() {
    if std::env::var("WALDIO_MIXED_DB").is_ok() {
        return;
    }
    for sync in [SyncOption::Full, SyncOption::Fua] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("mixed.db");
        let opts = WaldioOptions {
            sync,
            ..WaldioOptions::default()
        };
        let vfs = joj_waldio::register().unwrap();
        let c = joj_waldio::open(&db, &opts).unwrap();
        c.execute_batch(
            "PRAGMA wal_autocheckpoint=0; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);",
        )
        .unwrap();
        common::run_child_test("normal_writer_child", ("WALDIO_MIXED_DB", &db));
        // This process commits (durable by its option) and SQLite's auto-checkpoint runs right
        // after the commit, on the same handle; at `synchronous=NORMAL` (Android's default in
        // WAL mode) SQLite issues no `xSync` for the commit in between.
        c.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=10")
            .unwrap();
        let before = vfs.counters();
        c.execute("INSERT INTO t VALUES (1000, x'00')", []).unwrap();
        let syncs = vfs.counters().wal_syncs - before.wal_syncs;
        // The auto-checkpoint copied everything: nothing is left to copy.
        let (busy, log, copied): (i64, i64, i64) = c
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap();
        assert_eq!((busy, copied), (0, log), "{sync:?}");
        // `full` syncs its own commit once; the checkpoint needs one more.
        let own = u64::from(sync == SyncOption::Full);
        assert!(
            syncs > own,
            "{sync:?}: the auto-checkpoint copied 40 commits never synced, with {syncs} \
             fdatasync of the WAL ({own} for this process's commit)"
        );
    }
}
