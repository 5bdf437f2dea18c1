//! Application transactions from several threads, each with its own device transaction open
//! at the same time: every thread updates its own database and appends to its own log, and
//! every fifth transaction also counts in a database all threads share. Transactions that
//! lose a conflict on the shared database are aborted whole and retried. In the end every
//! thread's database and log show exactly its transactions, the shared count is exact, and
//! every database passes `PRAGMA integrity_check`.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_atomic::{AppTxnError, FlashFs, FsOptions, XftlVfs, new_device};
use rusqlite::Connection;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// Transactions open right now, and the most that were open at once.
static OPEN: AtomicU64 = AtomicU64::new(0);
static MOST_OPEN: AtomicU64 = AtomicU64::new(0);

const THREADS: u64 = 4;
const TXNS: u64 = 30;

fn open_off(vfs: &XftlVfs, name: &str) -> Connection {
    let c = common::bank::open_off(vfs.name(), name).unwrap();
    c.busy_timeout(Duration::from_secs(5)).unwrap();
    c
}

fn setup(vfs: &XftlVfs) {
    for k in 0..THREADS {
        let c = common::bank::open(vfs.name(), &format!("t{k}.db")).unwrap();
        c.execute_batch(
            "PRAGMA page_size=8192; CREATE TABLE kv(id INTEGER PRIMARY KEY, v INTEGER);
             WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9)
             INSERT INTO kv SELECT i, 0 FROM n;",
        )
        .unwrap();
        vfs.create_file(&format!("t{k}.log")).unwrap();
    }
    let c = common::bank::open(vfs.name(), "shared.db").unwrap();
    c.execute_batch(
        "CREATE TABLE hits(id INTEGER PRIMARY KEY, n INTEGER); INSERT INTO hits VALUES (1, 0);",
    )
    .unwrap();
}

/// One thread's work; returns the conflicts it lost.
fn worker(vfs: XftlVfs, k: u64, start: Arc<Barrier>) -> u64 {
    let own = open_off(&vfs, &format!("t{k}.db"));
    let shared = open_off(&vfs, "shared.db");
    let log = format!("t{k}.log");
    let mut lost = 0;
    start.wait();
    for i in 0..TXNS {
        loop {
            let r = (|| {
                let mut tx = vfs.begin_app()?;
                let now = OPEN.fetch_add(1, Ordering::SeqCst) + 1;
                MOST_OPEN.fetch_max(now, Ordering::SeqCst);
                if i % 5 == 0 {
                    tx.enroll(&shared)?;
                    tx.execute(&shared, "UPDATE hits SET n = n + 1 WHERE id = 1", [])?;
                }
                // Stay open a while, so that the threads' transactions interleave.
                std::thread::sleep(Duration::from_micros(100));
                tx.enroll(&own)?;
                tx.execute(
                    &own,
                    "UPDATE kv SET v = v + ?1 WHERE id = ?2",
                    [(i + 1) as i64, (i % 10) as i64],
                )?;
                tx.append(&log, format!("{k}:{i:04}\n").as_bytes())?;
                tx.commit()
            })();
            OPEN.fetch_sub(1, Ordering::SeqCst);
            match r {
                Ok(()) => break,
                Err(e @ AppTxnError::Conflict { .. }) => {
                    assert!(e.is_conflict());
                    lost += 1;
                    std::thread::sleep(Duration::from_micros(200));
                }
                Err(e) => panic!("thread {k}, transaction {i}: {e}"),
            }
        }
    }
    lost
}

#[test]
fn threads_commit_their_transactions_and_the_losers_of_conflicts_retry() {
    let vfs = joj_atomic::register("apptxn-threads").unwrap();
    let p = common::profile(64);
    let opts = FsOptions {
        fs_bytes: 64 << 20,
        slots: 16,
    };
    vfs.attach(FlashFs::format(new_device(&p).unwrap(), opts).unwrap())
        .unwrap();
    setup(&vfs);
    let start = Arc::new(Barrier::new(THREADS as usize));
    let handles: Vec<_> = (0..THREADS)
        .map(|k| {
            let start = start.clone();
            std::thread::spawn(move || worker(vfs, k, start))
        })
        .collect();
    let lost: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();

    // Each thread: v of id r is the sum of i + 1 over its transactions i with i % 10 == r.
    let expect: i64 = (0..TXNS as i64).map(|i| i + 1).sum();
    for k in 0..THREADS {
        let c = common::bank::open(vfs.name(), &format!("t{k}.db")).unwrap();
        let ok: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
        let sum: i64 = c
            .query_row("SELECT sum(v) FROM kv", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sum, expect, "thread {k}'s database");
        let log = vfs
            .with_fs(|fs| {
                let id = fs.lookup(&format!("t{k}.log")).unwrap();
                let mut buf = vec![0u8; fs.size(id) as usize];
                fs.read(id, 0, &mut buf).unwrap();
                buf
            })
            .unwrap();
        let want: String = (0..TXNS).map(|i| format!("{k}:{i:04}\n")).collect();
        assert_eq!(String::from_utf8(log).unwrap(), want, "thread {k}'s log");
    }
    let c = common::bank::open(vfs.name(), "shared.db").unwrap();
    let n: i64 = c
        .query_row("SELECT n FROM hits WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n as u64, THREADS * TXNS / 5);
    vfs.with_fs(|fs| fs.device().ftl().check_invariants());
    let most = MOST_OPEN.load(Ordering::SeqCst);
    eprintln!(
        "{THREADS} threads × {TXNS} transactions; at most {most} open at once; {lost} \
         conflicts lost and retried"
    );
    assert!(most >= 2, "the threads' transactions never overlapped");
}
