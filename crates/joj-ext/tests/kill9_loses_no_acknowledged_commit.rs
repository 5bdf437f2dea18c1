//! `kill -9` of a Python writer at random points, through the extension: for every durability
//! option, ≥ 50 runs; after each, every acknowledged row is there, nothing beyond the one commit
//! under way, rows are contiguous, and `PRAGMA integrity_check` passes. Group sync is judged
//! against its stated window: the commits still in the frame buffer may be lost, nothing else.

mod common;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 50;

/// Kill a writer opened with `params` 50 times; at most `window` acknowledged commits may be
/// lost in one kill. Returns the largest loss seen.
fn kill_runs(params: &str, window: u64, seed: u64) -> u64 {
    let sync = params;
    let mut worst = 0;
    let lib = common::lib();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kill.db");
    let mut acked_total = 0u64;
    for run in 0..RUNS {
        let mut child = Command::new(common::python())
            .arg(common::script("writer.py"))
            .args([lib.as_os_str(), db.as_os_str()])
            .arg(params)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning writer.py");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().expect("writer output").expect("writer output");
        assert_eq!(first, "ready", "run {run}: the writer did not start");
        // Kill after a random number of acknowledged commits (0..200), at a random moment
        // within the next commit.
        let wanted: u64 = rng.random_range(0..200);
        let mut last = None;
        let started = Instant::now();
        for _ in 0..wanted {
            match lines.next() {
                Some(Ok(l)) => last = Some(l.parse::<u64>().expect("row number")),
                _ => break,
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "writer too slow"
            );
        }
        std::thread::sleep(Duration::from_micros(rng.random_range(0..2000)));
        child.kill().expect("kill -9");
        // Acknowledgements already printed before the kill count too.
        let _ = child.wait();
        for l in lines.map_while(Result::ok) {
            last = Some(l.parse::<u64>().expect("row number"));
        }
        let out = common::run_ok(
            Command::new(common::python())
                .arg(common::script("check.py"))
                .args([lib.as_os_str(), db.as_os_str()]),
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let (count, max) = (v["count"].as_u64().unwrap(), v["max"].as_u64().unwrap());
        let acked = last.unwrap_or(acked_total);
        assert_eq!(v["integrity"], "ok", "{sync} run {run}: {v}");
        assert_eq!(count, max, "{sync} run {run}: rows are not contiguous: {v}");
        assert!(
            max + window >= acked,
            "{sync} run {run}: acknowledged row {acked} lost (the database has up to {max}; \
             at most {window} may be lost)"
        );
        worst = worst.max(acked.saturating_sub(max));
        assert!(
            max <= acked + 1,
            "{sync} run {run}: {max} rows but only {acked} were ever written and acknowledged \
             (at most one more commit can have been under way)"
        );
        acked_total = max;
    }
    eprintln!("{sync}: {RUNS} kills, {acked_total} rows at the end, at most {worst} lost");
    worst
}

#[test]
fn full_loses_nothing_acknowledged_over_50_kills() {
    assert_eq!(kill_runs("waldio_sync=full", 0, 1), 0);
}

#[test]
fn fua_loses_nothing_acknowledged_over_50_kills() {
    assert_eq!(kill_runs("waldio_sync=fua", 0, 2), 0);
}

#[test]
fn normal_loses_nothing_acknowledged_over_50_kills() {
    assert_eq!(kill_runs("waldio_sync=normal", 0, 3), 0);
}

/// Group sync's window (docs/formats/waldio.md, docs/results/waldio.md): a commit is durable once
/// its group is written; the frame buffer (16 KiB) holds at most 4 one-page commits (each insert
/// of a 200-byte row here) — a kill may lose those, never more, and never part of one.
#[test]
fn group_sync_loses_at_most_its_window_over_50_kills() {
    let worst = kill_runs("waldio_sync=full&waldio_group=1", 4, 4);
    eprintln!("group sync: the largest loss in one kill was {worst} commits (window 4)");
}
