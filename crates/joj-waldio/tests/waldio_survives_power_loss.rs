//! Power loss at hundreds of points of a run (crash states rebuilt from every physical write,
//! see `common`): with `full` and `fua` every acknowledged commit survives and nothing
//! uncommitted shows; `PRAGMA integrity_check` passes every time. A canary that skips the
//! flush must be caught. Group sync and `normal` may lose acknowledged commits; their window
//! is measured and bounded (group sync: at most one frame buffer of commits).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::{Recorder, value_of};
use joj_waldio::{GroupSync, SyncOption, WaldioOptions};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

struct Outcome {
    states: usize,
    /// Crash states in which an acknowledged commit was missing, and the worst loss.
    lost_states: usize,
    max_lost: u64,
    /// Crash states that did not recover to a consistent prefix (first few, with context).
    broken: Vec<String>,
}

/// Run the workload under `opts` with a recorder, then check `points` crash states.
fn run(name: &str, opts: WaldioOptions, seed: u64, commits: u64, points: usize) -> Outcome {
    run_at(name, opts, "FULL", seed, commits, points)
}

/// [`run`], the connection at `PRAGMA synchronous=<synchronous>`.
fn run_at(
    name: &str,
    opts: WaldioOptions,
    synchronous: &str,
    seed: u64,
    commits: u64,
    points: usize,
) -> Outcome {
    let vfs = joj_waldio::register_over(name, "unix").unwrap();
    let rec = Arc::new(Recorder::default());
    vfs.set_tap(Some(rec.clone()));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Commit i (1-based) ends with row boundary[i]; boundary[0] = 0.
    let mut boundary = vec![0u64];
    {
        let c = joj_waldio::open_with(vfs, &db, &opts).unwrap();
        c.execute_batch(&format!(
            "PRAGMA synchronous={synchronous}; PRAGMA wal_autocheckpoint=40; \
             CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL);"
        ))
        .unwrap();
        let mut next = 1u64;
        for i in 1..=commits {
            let rows = if rng.random_range(0..5u32) == 0 {
                rng.random_range(2..6u64)
            } else {
                1
            };
            c.execute_batch("BEGIN").unwrap();
            for _ in 0..rows {
                c.execute(
                    "INSERT INTO t VALUES(?1, ?2)",
                    (next as i64, value_of(next)),
                )
                .unwrap();
                next += 1;
            }
            c.execute_batch("COMMIT").unwrap();
            boundary.push(next - 1);
            rec.ack(i);
            if i % 45 == 0 {
                c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                    .unwrap();
            }
        }
    }
    vfs.set_tap(None);
    let total = rec.len();
    let plain = WaldioOptions {
        canary_skip_sync: false,
        ..opts
    };
    let mut out = Outcome {
        states: 0,
        lost_states: 0,
        max_lost: 0,
        broken: Vec::new(),
    };
    for p in 0..points {
        let k = rng.random_range(1..=total);
        let state_seed = seed * 100_000 + p as u64;
        let crash = tempfile::tempdir().unwrap();
        rec.crash_state(k, state_seed, crash.path());
        let acked = rec.acked_before(k);
        let cdb = crash.path().join("c.db");
        let ctx = format!(
            "{name}: seed {seed}, crash before op {k} of {total} (state seed {state_seed}), {acked} acknowledged"
        );
        out.states += 1;
        let m = match recovered_rows(&cdb, &plain, &boundary) {
            Ok(n) => n,
            Err(why) => {
                out.broken.push(format!("{ctx}: {why}"));
                continue;
            }
        };
        if m < acked {
            out.lost_states += 1;
            out.max_lost = out.max_lost.max(acked - m);
        }
    }
    eprintln!(
        "{name}: {} crash states over {total} ops, {} lost acknowledged commits (worst {}), {} \
         not recovered{}",
        out.states,
        out.lost_states,
        out.max_lost,
        out.broken.len(),
        out.broken
            .first()
            .map(|b| format!(" (first: {b})"))
            .unwrap_or_default()
    );
    out
}

/// Reopen a crash state and return how many commits it holds, or why it is not a consistent
/// prefix of the commits (`boundary[i]`: last row of commit `i`).
fn recovered_rows(
    db: &std::path::Path,
    opts: &WaldioOptions,
    boundary: &[u64],
) -> Result<u64, String> {
    let c = joj_waldio::open(db, opts).map_err(|e| format!("reopen: {e}"))?;
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .map_err(|e| format!("integrity_check: {e}"))?;
    if ok != "ok" {
        return Err(format!("integrity_check: {ok}"));
    }
    let has_table: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name='t'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| e.to_string())?;
    let rows: Vec<(i64, Vec<u8>)> = if has_table == 1 {
        let mut st = c
            .prepare("SELECT k, v FROM t ORDER BY k")
            .map_err(|e| e.to_string())?;
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| e.to_string())?
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?
    } else {
        Vec::new()
    };
    // Nothing uncommitted, nothing torn: rows 1..=n exactly, n the end of some commit.
    for (i, (key, v)) in rows.iter().enumerate() {
        if *key != i as i64 + 1 {
            return Err(format!("rows are not a prefix (row {i} has key {key})"));
        }
        if v != &value_of(*key as u64) {
            return Err(format!("row {key} has wrong bytes"));
        }
    }
    let n = rows.len() as u64;
    boundary
        .iter()
        .position(|&b| b == n)
        .map(|m| m as u64)
        .ok_or_else(|| format!("{n} rows is not the end of any commit"))
}

fn small(opts: WaldioOptions) -> WaldioOptions {
    WaldioOptions {
        prealloc_frames: 24,
        extend_frames: 8,
        ..opts
    }
}

#[test]
fn full_sync_keeps_every_acknowledged_commit() {
    for seed in [1, 6, 7] {
        let o = run(
            "waldio-pl-full",
            small(WaldioOptions::default()),
            seed,
            160,
            400,
        );
        assert!(o.broken.is_empty(), "full: {:?}", o.broken);
        assert_eq!(o.lost_states, 0, "full: an acknowledged commit was lost");
    }
}

/// The option decides, not `PRAGMA synchronous`: at OFF, SQLite's checkpoint copies frames into
/// the database without syncing it, and the next restart's header block (or the TRUNCATE's
/// absent one) made those frames unrecoverable while the pages were still only in the page
/// cache: 346 of 400 crash states failed `integrity_check` before the database was synced ahead
/// of every header block (found by a probe, 2026-11-28).
#[test]
fn full_keeps_every_acknowledged_commit_at_synchronous_off() {
    for seed in [1, 6] {
        let o = run_at(
            "waldio-pl-full-off",
            small(WaldioOptions::default()),
            "OFF",
            seed,
            160,
            400,
        );
        assert!(o.broken.is_empty(), "full at OFF: {:?}", o.broken);
        assert_eq!(
            o.lost_states, 0,
            "full at OFF: an acknowledged commit was lost"
        );
    }
}

#[test]
fn fua_keeps_every_acknowledged_commit() {
    let opts = small(WaldioOptions {
        sync: SyncOption::Fua,
        ..WaldioOptions::default()
    });
    for seed in [2, 8, 9] {
        let o = run("waldio-pl-fua", opts, seed, 160, 400);
        assert!(o.broken.is_empty(), "fua: {:?}", o.broken);
        assert_eq!(o.lost_states, 0, "fua: an acknowledged commit was lost");
    }
}

#[test]
fn canary_without_flush_is_caught() {
    let opts = small(WaldioOptions {
        canary_skip_sync: true,
        ..WaldioOptions::default()
    });
    let o = run("waldio-pl-canary", opts, 3, 160, 300);
    assert!(
        o.lost_states > 0 || !o.broken.is_empty(),
        "the crash test did not notice a WAL that is never flushed: it tests nothing"
    );
}

#[test]
fn group_sync_loses_at_most_one_buffer() {
    let g = GroupSync::default();
    let opts = small(WaldioOptions {
        group: Some(g),
        ..WaldioOptions::default()
    });
    let o = run("waldio-pl-group", opts, 4, 160, 300);
    // Every commit adds at least one block, so a full buffer holds at most this many.
    assert!(o.broken.is_empty(), "group: {:?}", o.broken);
    let bound = (g.frame_buffer_bytes / 4096) as u64;
    assert!(
        o.max_lost <= bound,
        "group sync lost {} commits, more than one buffer ({bound})",
        o.max_lost
    );
}

#[test]
fn normal_sync_recovers_a_prefix() {
    let opts = small(WaldioOptions {
        sync: SyncOption::Normal,
        ..WaldioOptions::default()
    });
    // `normal` promises durability only at checkpoints; what must hold is a consistent prefix.
    let o = run("waldio-pl-normal", opts, 5, 160, 200);
    assert!(
        o.states == 200 && o.lost_states > 0,
        "normal is not durable per commit: some crash states should lose acknowledged commits, or the test did not cut where it matters"
    );
    assert!(o.broken.is_empty(), "normal: {:?}", o.broken);
}
