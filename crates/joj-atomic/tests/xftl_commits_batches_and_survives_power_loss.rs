//! SQLite on the `xftl` VFS: commits go the batch-atomic way (one device transaction each),
//! the data reads back, and survives a power cut with recovery.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_atomic::{FlashFs, XftlVfs};
use joj_device::{Emmc, Profile};
use rusqlite::{Connection, OpenFlags};

fn profile() -> Profile {
    common::profile(128)
}

fn open(vfs: &XftlVfs, name: &str) -> Connection {
    Connection::open_with_flags_and_vfs(
        name,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        vfs.name(),
    )
    .unwrap()
}

#[test]
fn batches_commit_read_back_and_survive_a_power_cut() {
    let vfs = joj_atomic::register("xftl-smoke").unwrap();
    let fs = common::formatted(&profile());
    vfs.attach(fs).unwrap();
    let before = vfs.counters();
    {
        let c = open(&vfs, "smoke.db");
        c.execute_batch("PRAGMA page_size=8192; PRAGMA journal_mode=DELETE; CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);")
            .unwrap();
        for i in 0..200 {
            c.execute(
                "INSERT INTO t VALUES (?1, ?2)",
                rusqlite::params![i, format!("value {i}")],
            )
            .unwrap();
        }
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 200);
    }
    let after = vfs.counters();
    assert!(
        after.batch_commits - before.batch_commits >= 199,
        "batch path not taken: {before:?} -> {after:?}"
    );
    // Power cut right after the last acknowledged commit, then recovery and remount.
    let fs = vfs.detach().unwrap();
    let cut = fs.into_device().power_loss(0, 7);
    let (dev, report) = Emmc::recover(cut, &profile()).unwrap();
    assert!(report.modeled_ns > 0);
    vfs.attach(FlashFs::mount(dev).unwrap()).unwrap();
    let c = open(&vfs, "smoke.db");
    let n: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 200, "acknowledged commits lost");
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}
