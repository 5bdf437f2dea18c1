//! `kill -9` of a writing process at random points (many runs): every commit the writer
//! acknowledged survives, nothing uncommitted shows, `PRAGMA integrity_check` passes. With
//! group sync the loss is bounded by one frame buffer (the documented window).
//!
//! The writer is this test binary re-run with `WALDIO_KILL9_DB` set: it inserts rows 1, 2, ...
//! one per transaction and prints `ack N` after each commit returns.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::value_of;
use joj_waldio::{GroupSync, SyncOption, WaldioOptions};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn options(name: &str) -> WaldioOptions {
    let base = WaldioOptions {
        prealloc_frames: 64,
        extend_frames: 32,
        ..WaldioOptions::default()
    };
    match name {
        "full" => base,
        "fua" => WaldioOptions {
            sync: SyncOption::Fua,
            ..base
        },
        "normal" => WaldioOptions {
            sync: SyncOption::Normal,
            ..base
        },
        "group" => WaldioOptions {
            group: Some(GroupSync::default()),
            ..base
        },
        other => panic!("unknown mode {other}"),
    }
}

/// The child side, run only by the parent (`--ignored --exact`): writes until it is killed.
#[test]
#[ignore = "the writer process of the kill -9 tests, which start it"]
fn kill9_writer_child() {
    let Ok(db) = std::env::var("WALDIO_KILL9_DB") else {
        panic!(
            "kill9_writer_child only runs as the child of a kill -9 test (WALDIO_KILL9_DB unset)"
        );
    };
    let opts = options(&std::env::var("WALDIO_KILL9_MODE").unwrap());
    let c = joj_waldio::open(std::path::Path::new(&db), &opts).unwrap();
    c.execute_batch("PRAGMA wal_autocheckpoint=50; CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        .unwrap();
    let mut k: u64 = c
        .query_row("SELECT coalesce(max(k), 0) FROM t", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap() as u64;
    let mut out = std::io::stdout().lock();
    loop {
        k += 1;
        c.execute("INSERT INTO t VALUES(?1, ?2)", (k as i64, value_of(k)))
            .unwrap();
        writeln!(out, "ack {k}").unwrap();
        out.flush().unwrap();
    }
}

fn kill_runs(mode: &str, runs: u32, seed: u64) -> u64 {
    let exe = std::env::current_exe().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut worst_loss = 0;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    for run in 0..runs {
        let stop_after = rng.random_range(1..300u64);
        // The child's stderr, shown when a run fails (a child that dies early says why here).
        let child_err = dir.path().join("child.stderr");
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "--ignored",
                "kill9_writer_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("WALDIO_KILL9_DB", &db)
            .env("WALDIO_KILL9_MODE", mode)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&child_err).unwrap())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut acked = 0u64;
        let mut seen = 0u64;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(n) = line.strip_prefix("ack ") {
                acked = n.parse().unwrap();
                seen += 1;
                if seen >= stop_after {
                    break;
                }
            }
        }
        child.kill().unwrap(); // SIGKILL
        // Acks printed before the kill landed still count.
        for line in lines {
            if let Some(n) = line.unwrap().strip_prefix("ack ") {
                acked = n.parse().unwrap();
            }
        }
        child.wait().unwrap();
        let stderr = std::fs::read_to_string(&child_err).unwrap_or_default();
        let ctx = format!(
            "{mode}: seed {seed}, run {run}, killed after {seen} new acks ({acked} acknowledged in all); the child's stderr:\n{stderr}"
        );
        let c =
            joj_waldio::open(&db, &options(mode)).unwrap_or_else(|e| panic!("{ctx}: reopen: {e}"));
        let ok: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok", "{ctx}");
        let mut st = c.prepare("SELECT k, v FROM t ORDER BY k").unwrap();
        let rows: Vec<(i64, Vec<u8>)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for (i, (k, v)) in rows.iter().enumerate() {
            assert_eq!(*k, i as i64 + 1, "{ctx}: not a prefix");
            assert_eq!(v, &value_of(*k as u64), "{ctx}: row {k} damaged");
        }
        let n = rows.len() as u64;
        assert!(
            n <= acked + 1,
            "{ctx}: {n} rows but only {acked} acknowledged (+1 in flight)"
        );
        worst_loss = worst_loss.max(acked.saturating_sub(n));
    }
    eprintln!("{mode}: {runs} kills, worst loss {worst_loss} acknowledged commits");
    worst_loss
}

#[test]
fn kill9_loses_no_acknowledged_commit() {
    if std::env::var("WALDIO_KILL9_DB").is_ok() {
        return;
    }
    for (i, mode) in ["full", "fua", "normal"].into_iter().enumerate() {
        assert_eq!(
            kill_runs(mode, 12, 100 + i as u64),
            0,
            "{mode} lost an acknowledged commit"
        );
    }
}

#[test]
fn kill9_with_group_sync_loses_at_most_one_buffer() {
    if std::env::var("WALDIO_KILL9_DB").is_ok() {
        return;
    }
    let loss = kill_runs("group", 12, 200);
    assert!(
        loss <= 4,
        "group sync lost {loss} acknowledged commits, more than one 16 KiB buffer"
    );
}
