//! `joj replay --emmc-journal`: on a trace of ordered-mode jbd2 commits as a loop device issues
//! them (data, journal blocks, flush, commit block, flush), every transaction becomes one packed
//! command, the post-commit flush is dropped and the replay is faster than the unchanged trace;
//! `--journal-region-mib` alone is a clear error.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_trace::{BlockClass, Op, TraceHeader, TraceRecord};

fn trace(transactions: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut records = Vec::new();
    let w = |t, sector, sectors, class| {
        let mut r = TraceRecord::new(t, "7:0", Op::Write, sector, sectors);
        r.class = class;
        r
    };
    for i in 0..transactions {
        let t = i * 1_000_000;
        records.push(w(t, 2048 + i * 8, 8, BlockClass::Data));
        records.push(w(t + 1, 65536 + i * 40, 32, BlockClass::FsJournal));
        records.push(TraceRecord::new(t + 2, "7:0", Op::Flush, 0, 0));
        records.push(w(t + 3, 65536 + i * 40 + 32, 8, BlockClass::FsJournal));
        records.push(TraceRecord::new(t + 4, "7:0", Op::Flush, 0, 0));
    }
    let header = common::loop0_header(transactions);
    (header, records)
}

fn replay(path: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "replay",
        path.to_str().unwrap(),
        "--device",
        "galaxy-s5",
        "--json",
    ];
    args.extend_from_slice(extra);
    common::joj_command().args(&args).output().unwrap()
}

#[test]
fn every_commit_becomes_one_packed_command_and_the_replay_is_faster() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ext4.trace.jsonl");
    let (header, records) = trace(50);
    joj_trace::write_trace_file(&path, &header, &records).unwrap();
    let doc = |out: std::process::Output| -> serde_json::Value {
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{stderr}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let base = doc(replay(&path, &[]));
    let opt = doc(replay(
        &path,
        &["--emmc-journal", "--journal-region-mib", "32"],
    ));
    let e = &opt["emmc_journal"];
    assert_eq!(e["region_mib"], 32);
    assert_eq!(e["transactions"], 50);
    assert_eq!(e["packed_commands"], 50);
    assert_eq!(e["journal_writes_coalesced"], 100);
    assert_eq!(e["postflushes_dropped"], 50);
    assert_eq!(e["flushes_kept_for_ordering"], 50);
    assert_eq!(opt["counters"]["packed_commands"], 50);
    assert_eq!(opt["replay"]["flushes"], 50);
    assert_eq!(base["replay"]["flushes"], 100);
    assert!(base["emmc_journal"].is_null());
    let tps = |d: &serde_json::Value| d["device"]["modeled_ops_per_sec"].as_f64().unwrap();
    assert!(tps(&opt) > tps(&base), "{} vs {}", tps(&opt), tps(&base));
}

#[test]
fn a_region_size_without_the_mode_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ext4.trace.jsonl");
    let (header, records) = trace(2);
    joj_trace::write_trace_file(&path, &header, &records).unwrap();
    let out = replay(&path, &["--journal-region-mib", "64"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("add --emmc-journal"), "{stderr}");
}
