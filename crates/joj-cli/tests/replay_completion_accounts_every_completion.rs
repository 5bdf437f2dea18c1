//! `joj replay --completion`: polling adds no time and no context switch and keeps the CPU busy
//! for exactly the device time; interrupt adds one wakeup per device command (each write and
//! flush of the trace) and nothing else. Both replay the same trace, so the device time is the
//! same; `--honor-timestamps` is refused with the fix named.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_trace::{Op, TraceRecord};
use std::path::Path;

/// 30 transactions of a 4 KiB write and a flush: 60 device commands.
fn write_trace(path: &Path) {
    let mut records = Vec::new();
    for i in 0..30u64 {
        records.push(TraceRecord::new(i * 10, "7:0", Op::Write, 4096 + i * 64, 8));
        records.push(TraceRecord::new(i * 10 + 1, "7:0", Op::Flush, 0, 0));
    }
    let header = common::loop0_header(30u64);
    joj_trace::write_trace_file(path, &header, &records).unwrap();
}

fn replay(path: &Path, extra: &[&str]) -> std::process::Output {
    common::joj_command()
        .args(["replay", path.to_str().unwrap(), "--device", "galaxy-s5"])
        .args(extra)
        .output()
        .unwrap()
}

fn completion(path: &Path, extra: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let out = replay(path, extra);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (doc["device"].clone(), doc["device"]["completion"].clone())
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn replay_completion_accounts_every_completion() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.trace.jsonl");
    write_trace(&path);

    let (dev, poll) = completion(&path, &["--completion", "poll", "--json"]);
    assert_eq!(poll["completion"], "poll");
    assert_eq!(poll["completions"], 60);
    assert_eq!(poll["wakeups"], 0);
    assert_eq!(poll["context_switches"], 0);
    assert_eq!(f(&poll["host_overhead_s"]), 0.0);
    assert!((f(&poll["modeled_s"]) - f(&dev["modeled_s"])).abs() < 1e-9);
    assert!((f(&poll["cpu_busy_s"]) - f(&poll["device_s"])).abs() < 1e-12);

    let (dev_i, intr) = completion(
        &path,
        &["--completion", "interrupt", "--wakeup-us", "7", "--json"],
    );
    assert_eq!(
        dev_i["modeled_s"], dev["modeled_s"],
        "same trace, same device time"
    );
    assert_eq!(intr["completions"], 60);
    assert_eq!(intr["wakeups"], 60);
    assert_eq!(intr["context_switches"], 120);
    let added = f(&intr["modeled_s"]) - f(&intr["device_s"]);
    assert!((added - 60.0 * 7e-6).abs() < 1e-9, "added {added} s");
    assert!((f(&intr["cpu_busy_s"]) - 60.0 * 7e-6).abs() < 1e-9);

    let out = replay(&path, &["--completion", "poll", "--honor-timestamps"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("fix: drop --honor-timestamps"), "{stderr}");
}
