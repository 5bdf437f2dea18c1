//! Threads of one process, each with its own connection to one waldio database, share the
//! process's one state of the WAL. Transfers between accounts keep the total: every read must
//! see it, and the database must end whole, as with stock SQLite.
//!
//! Found by a probe (2026-11-27): a connection ending a write transaction released SQLite's
//! WAL write lock *before* waldio dropped that transaction's uncommitted frames from the shared
//! state, so another thread that took the lock in between had the frames it had just written
//! dropped with them — reads saw other totals, and `integrity_check` failed ("Rowid out of
//! order") after a clean close. Separate processes never met it (each has its own state).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_waldio::{SyncOption, WaldioOptions, open};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const ACCOUNTS: i64 = 1000;
const TOTAL: i64 = 1000 * ACCOUNTS;
const THREADS: u64 = 6;
/// How long the threads run, per option set: long enough that the old ordering failed in 3
/// of 5 runs of this test here (a stress test: a pass of the old code was possible), short
/// enough for the suite.
const RUN: Duration = Duration::from_secs(6);
const SEED: u64 = 0x003a_1d10;

/// The statements that failed, and the first one's error.
#[derive(Default)]
struct Errors {
    count: AtomicU64,
    first: std::sync::Mutex<Option<String>>,
}

fn connect(db: &Path, opts: &WaldioOptions) -> rusqlite::Connection {
    let c = open(db, opts).unwrap();
    c.busy_timeout(Duration::from_secs(60)).unwrap();
    c
}

/// One thread's work: transfers (1, 5 or 200 of them in a transaction, 15 % rolled back),
/// reads of the total, passive checkpoints; a small cache makes large transactions spill
/// frames into the WAL before their commit. Returns the reads that saw another total.
fn transfers(db: &Path, opts: &WaldioOptions, seed: u64, errors: &Errors) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let c = connect(db, opts);
    let cache = [5, 50, 2000][rng.random_range(0..3)];
    c.execute_batch(&format!("PRAGMA cache_size={cache}"))
        .unwrap();
    let mut wrong = 0;
    let end = Instant::now() + RUN;
    while Instant::now() < end {
        let x: f64 = rng.random();
        let r: rusqlite::Result<()> = (|| {
            if x < 0.4 {
                let (sum, n): (i64, i64) =
                    c.query_row("SELECT sum(bal), count(*) FROM acct", [], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })?;
                if (sum, n) != (TOTAL, ACCOUNTS) {
                    wrong += 1;
                }
            } else if x < 0.45 {
                c.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
            } else {
                c.execute_batch("BEGIN IMMEDIATE")?;
                for _ in 0..[1, 5, 200][rng.random_range(0..3)] {
                    let (a, b) = (rng.random_range(0..ACCOUNTS), rng.random_range(0..ACCOUNTS));
                    let amount = rng.random_range(0..100i64);
                    let pad = [10, 500, 1500][rng.random_range(0..3)];
                    c.execute(
                        "UPDATE acct SET bal = bal - ?1, pad = randomblob(?2) WHERE id = ?3",
                        (amount, pad, a),
                    )?;
                    c.execute("UPDATE acct SET bal = bal + ?1 WHERE id = ?2", (amount, b))?;
                }
                let end = if rng.random::<f64>() < 0.15 {
                    "ROLLBACK"
                } else {
                    "COMMIT"
                };
                c.execute_batch(end)?;
            }
            Ok(())
        })();
        if let Err(e) = r {
            errors.count.fetch_add(1, Ordering::Relaxed);
            errors.first.lock().unwrap().get_or_insert(e.to_string());
            let _ = c.execute_batch("ROLLBACK");
        }
    }
    wrong
}

fn threads_keep_the_total(opts: &WaldioOptions) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bank.db");
    {
        let c = connect(&db, opts);
        c.execute_batch("CREATE TABLE acct(id INTEGER PRIMARY KEY, bal INTEGER, pad BLOB); BEGIN")
            .unwrap();
        for id in 0..ACCOUNTS {
            c.execute("INSERT INTO acct VALUES(?1, 1000, randomblob(100))", [id])
                .unwrap();
        }
        c.execute_batch("COMMIT").unwrap();
    }
    let errors = Errors::default();
    let wrong: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (db, errors) = (&db, &errors);
                s.spawn(move || transfers(db, opts, SEED + t, errors))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let c = connect(&db, opts);
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    let (sum, n): (i64, i64) = c
        .query_row("SELECT sum(bal), count(*) FROM acct", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(
        (
            wrong,
            errors.count.load(Ordering::Relaxed),
            ok.as_str(),
            sum,
            n
        ),
        (0, 0, "ok", TOTAL, ACCOUNTS),
        "{} (reads that saw another total, errors, integrity_check, total, rows); first error: \
         {:?}",
        opts.label(),
        errors.first.lock().unwrap()
    );
}

#[test]
fn threads_of_one_process_keep_every_commit_with_full_sync() {
    threads_keep_the_total(&WaldioOptions::default());
}

#[test]
fn threads_of_one_process_keep_every_commit_with_normal_sync() {
    threads_keep_the_total(&WaldioOptions {
        sync: SyncOption::Normal,
        ..WaldioOptions::default()
    });
}
