//! Two connections of one process to one database on the `xftl` VFS: one writes transactions
//! (each a device batch, `SQLITE_FCNTL_BEGIN_ATOMIC_WRITE` … `COMMIT_ATOMIC_WRITE`), the other
//! opens and closes its own connection over and over, holding no lock. Every acknowledged
//! transaction must be there, whole. Found by a probe (2026-11-27): closing *any* handle of
//! the database aborted the batch open on it — the writer's — and the writer's `COMMIT` still
//! answered OK (60 acknowledged rows of 4,001 missing, or a malformed database, in 3 of 3
//! runs); a batch now belongs to the handle that began it.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_atomic::{FlashFs, FsOptions, new_device};
use rusqlite::{Connection, OpenFlags};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

const TRANSACTIONS: i64 = 200;
const ROWS_PER_TRANSACTION: i64 = 20;

fn connect(vfs: &str) -> Connection {
    let c = Connection::open_with_flags_and_vfs(
        "p.db",
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        vfs,
    )
    .unwrap();
    c.busy_timeout(Duration::from_secs(30)).unwrap();
    c
}

/// Rows present and `integrity_check`'s answer.
fn state(vfs: &str) -> (i64, String) {
    let c = connect(vfs);
    let ok = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap_or_else(|e: rusqlite::Error| e.to_string());
    let rows = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap_or(-1);
    (rows, ok)
}

#[test]
fn closing_another_connection_keeps_the_writers_batch() {
    let fs = FlashFs::format(
        new_device(&common::profile(1024)).unwrap(),
        FsOptions {
            fs_bytes: 128 << 20,
            slots: 4,
        },
    )
    .unwrap();
    let vfs = joj_atomic::register("xftl-closing-another").unwrap();
    vfs.attach(fs).unwrap();
    let name = vfs.name();
    connect(name)
        .execute_batch(
            "PRAGMA page_size=8192; PRAGMA journal_mode=DELETE; \
             CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)",
        )
        .unwrap();
    let done = AtomicBool::new(false);
    let acknowledged = AtomicI64::new(0);
    let failed = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let c = connect(name);
            let mut failed = None;
            for i in 0..TRANSACTIONS {
                let r: rusqlite::Result<()> = (|| {
                    c.execute_batch("BEGIN IMMEDIATE")?;
                    for k in 0..ROWS_PER_TRANSACTION {
                        c.execute(
                            "INSERT INTO t VALUES (?1, randomblob(3000))",
                            [i * ROWS_PER_TRANSACTION + k],
                        )?;
                    }
                    c.execute_batch("COMMIT")
                })();
                match r {
                    Ok(()) => {
                        acknowledged.fetch_add(ROWS_PER_TRANSACTION, Ordering::SeqCst);
                    }
                    Err(e) => {
                        failed = Some(format!("transaction {i}: {e}"));
                        break;
                    }
                }
            }
            done.store(true, Ordering::SeqCst);
            failed
        });
        s.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                drop(connect(name));
            }
        });
        writer.join().unwrap()
    });
    let want = acknowledged.load(Ordering::SeqCst);
    let live = state(name);
    // What the device holds: a fresh mount, no host cache.
    let fs = FlashFs::mount(vfs.detach().unwrap().into_device()).unwrap();
    vfs.attach(fs).unwrap();
    let remounted = state(name);
    let counters = vfs.counters();
    assert_eq!(
        (failed, live.clone(), remounted),
        (
            None,
            (TRANSACTIONS * ROWS_PER_TRANSACTION, "ok".to_string()),
            (want, "ok".to_string())
        ),
        "(the writer's failure, rows and integrity_check live, and after a remount); {counters:?}"
    );
    assert_eq!(counters.batch_rollbacks, 0, "{counters:?}");
}
