//! Model-based test: the same random SQL through waldio and through SQLite's default VFS (also
//! in WAL mode) gives the same results after every step — transactions large and small,
//! rollbacks, cache spills that rewrite frames (SQLite's checksum rewrite), every checkpoint
//! mode, a second connection, and close/reopen. One seed per case; a failure prints it.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_waldio::{GroupSync, SyncOption, WaldioOptions};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::Connection;
use std::path::Path;

fn reference(path: &Path) -> Connection {
    let c = Connection::open(path).unwrap();
    c.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
        .unwrap();
    c
}

fn contents(c: &Connection) -> Vec<(i64, Vec<u8>)> {
    let mut st = c
        .prepare("SELECT k, CAST(v AS BLOB) FROM t ORDER BY k")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn run_case(seed: u64, opts: WaldioOptions, steps: usize) {
    let dir = tempfile::tempdir().unwrap();
    let wpath = dir.path().join("w.db");
    let rpath = dir.path().join("r.db");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut w = joj_waldio::open(&wpath, &opts).unwrap();
    let mut r = reference(&rpath);
    let mut w2: Option<Connection> = None;
    for c in [&w, &r] {
        c.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB); CREATE INDEX tv ON t(v);")
            .unwrap();
    }
    for step in 0..steps {
        let what = rng.random_range(0..100u32);
        let ctx = format!(
            "seed {seed}, step {step}, op {what}, options {}",
            opts.label()
        );
        match what {
            0..=44 => {
                // A transaction of 1..20 statements, committed or rolled back.
                let n = rng.random_range(1..20usize);
                let rollback = rng.random_range(0..8u32) == 0;
                let mut stmts = vec!["BEGIN".to_string()];
                for _ in 0..n {
                    let k = rng.random_range(0..3000i64);
                    let len = rng.random_range(0..1500usize);
                    let byte = rng.random_range(0..255u8);
                    stmts.push(match rng.random_range(0..3u32) {
                        0 | 1 => format!(
                            "INSERT OR REPLACE INTO t VALUES({k}, zeroblob({len}) || x'{byte:02x}')"
                        ),
                        _ => format!("DELETE FROM t WHERE k BETWEEN {k} AND {}", k + 20),
                    });
                }
                stmts.push(if rollback { "ROLLBACK" } else { "COMMIT" }.to_string());
                let sql = stmts.join(";");
                w.execute_batch(&sql)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                r.execute_batch(&sql).unwrap();
            }
            45..=52 => {
                // A big transaction with a tiny cache: SQLite spills pages into the WAL before
                // the commit and rewrites frames it wrote (walRewriteChecksums).
                let base = rng.random_range(0..3000i64);
                let sql = format!(
                    "PRAGMA cache_size=8; BEGIN; \
                     WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM s WHERE i<400) \
                     INSERT OR REPLACE INTO t SELECT {base}+i, zeroblob(700+i%50) FROM s; \
                     UPDATE t SET v = v || x'01' WHERE k % 3 = 0; \
                     COMMIT; PRAGMA cache_size=-2000;"
                );
                w.execute_batch(&sql)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                r.execute_batch(&sql).unwrap();
            }
            53..=62 => {
                let mode = ["PASSIVE", "FULL", "RESTART", "TRUNCATE"][rng.random_range(0..4usize)];
                let sql = format!("PRAGMA wal_checkpoint({mode})");
                w.query_row(&sql, [], |_| Ok(()))
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                r.query_row(&sql, [], |_| Ok(())).unwrap();
            }
            63..=72 => {
                drop(w2.take());
                drop(w);
                drop(r);
                w = joj_waldio::open(&wpath, &opts).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                r = reference(&rpath);
            }
            73..=82 => {
                // A second connection reads (and sometimes writes) the same database.
                if w2.is_none() {
                    w2 = Some(
                        joj_waldio::open(&wpath, &opts).unwrap_or_else(|e| panic!("{ctx}: {e}")),
                    );
                }
                let c2 = w2.as_ref().unwrap();
                if rng.random_range(0..2u32) == 0 {
                    let k = rng.random_range(0..3000i64);
                    let sql = format!("INSERT OR REPLACE INTO t VALUES({k}, x'c2c2')");
                    c2.execute_batch(&sql)
                        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                    r.execute_batch(&sql).unwrap();
                }
                assert_eq!(contents(c2), contents(&r), "{ctx}: second connection");
            }
            _ => {
                let k = rng.random_range(0..3000i64);
                let sql = format!("UPDATE t SET v = x'ee' || v WHERE k >= {k} AND k < {k} + 50");
                w.execute_batch(&sql)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                r.execute_batch(&sql).unwrap();
            }
        }
        let (a, b) = (contents(&w), contents(&r));
        if a != b {
            let first = a.iter().zip(&b).position(|(x, y)| x != y);
            let detail = first.map(|i| {
                format!(
                    "row {i}: waldio k={} len={} / default k={} len={}",
                    a[i].0,
                    a[i].1.len(),
                    b[i].0,
                    b[i].1.len()
                ) + &format!(
                    " differing bytes at {:?}",
                    a[i].1
                        .iter()
                        .zip(&b[i].1)
                        .enumerate()
                        .filter(|(_, (x, y))| x != y)
                        .map(|(j, (x, y))| (j, *x, *y))
                        .take(8)
                        .collect::<Vec<_>>()
                )
            });
            panic!(
                "{ctx}: {} vs {} rows; first difference {detail:?}",
                a.len(),
                b.len()
            );
        }
    }
    let ok: String = w
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok", "seed {seed}");
}

#[test]
fn full_sync_matches_the_default_vfs() {
    for seed in 1..=4 {
        run_case(seed, WaldioOptions::default(), 150);
    }
}

#[test]
fn fua_and_normal_match_the_default_vfs() {
    for (seed, sync) in [(11, SyncOption::Fua), (12, SyncOption::Normal)] {
        let opts = WaldioOptions {
            sync,
            ..WaldioOptions::default()
        };
        run_case(seed, opts, 150);
    }
}

#[test]
fn group_sync_matches_the_default_vfs() {
    let opts = WaldioOptions {
        group: Some(GroupSync::default()),
        ..WaldioOptions::default()
    };
    run_case(21, opts, 150);
}

#[test]
fn small_preallocation_grows_in_chunks_and_matches() {
    let opts = WaldioOptions {
        prealloc_frames: 8,
        extend_frames: 4,
        ..WaldioOptions::default()
    };
    run_case(31, opts, 120);
}
