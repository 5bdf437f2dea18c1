//! `kill -9` of a Python writer at random points, through the extension: for every durability
//! option, ≥ 50 runs; after each, every acknowledged row is there, nothing beyond the one commit
//! under way, rows are contiguous, and `PRAGMA integrity_check` passes.

mod common;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 50;

fn kill_runs(sync: &str, seed: u64) {
    let lib = common::lib();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kill.db");
    let mut acked_total = 0u64;
    for run in 0..RUNS {
        let mut child = Command::new(common::python())
            .arg(common::script("writer.py"))
            .args([lib.as_os_str(), db.as_os_str()])
            .arg(sync)
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
            max >= acked,
            "{sync} run {run}: acknowledged row {acked} lost (the database has up to {max})"
        );
        assert!(
            max <= acked + 1,
            "{sync} run {run}: {max} rows but only {acked} were ever written and acknowledged \
             (at most one more commit can have been under way)"
        );
        acked_total = max;
    }
    eprintln!("{sync}: {RUNS} kills, {acked_total} rows at the end, none lost");
}

#[test]
fn full_loses_nothing_acknowledged_over_50_kills() {
    kill_runs("full", 1);
}

#[test]
fn fua_loses_nothing_acknowledged_over_50_kills() {
    kill_runs("fua", 2);
}

#[test]
fn normal_loses_nothing_acknowledged_over_50_kills() {
    kill_runs("normal", 3);
}
