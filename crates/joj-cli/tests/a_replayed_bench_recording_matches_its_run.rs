//! `joj syscalls record --bench-window -- joj bench --fs ext4 --trace …` then `joj syscalls
//! replay … --fs ext4`: the replay of the recorded system calls, on a fresh scratch ext4,
//! classifies the same KiB per transaction (file data, metadata, FS journal) and the same
//! flushes per transaction as the recorded run's own trace, each within 5 % (figures under 0.1
//! within 0.1). DELETE mode, where every transaction creates, syncs and deletes its journal:
//! the most metadata-heavy of SQLite's modes, and one whose volumes do not depend on timestamp
//! granularity (each transaction changes the directory and allocates blocks whatever the clock).

mod common;

use std::process::Command;

const N: &str = "100";

fn json(out: std::process::Output, what: &str) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{what} printed no JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Data, metadata and FS journal KiB and flushes, per transaction of the recorded run.
fn per_txn(doc: &serde_json::Value, txns: f64) -> [f64; 4] {
    let b = |k: &str| {
        doc["block"][k]
            .as_f64()
            .unwrap_or_else(|| panic!("no block.{k} in {doc}"))
    };
    [
        b("data_bytes") / 1024.0 / txns,
        b("metadata_bytes") / 1024.0 / txns,
        b("fs_journal_bytes") / 1024.0 / txns,
        b("flushes") / txns,
    ]
}

#[test]
fn a_replayed_bench_recording_matches_its_run() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    common::need_strace();
    let joj = common::JOJ;
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.jsonl");
    let bench = json(
        Command::new(joj)
            .args(["syscalls", "record", "--bench-window", "--transactions", N])
            .arg("-o")
            .arg(&rec)
            .args([
                "--", joj, "bench", "--fs", "ext4", "--trace", "--json", "-j", "delete", "-n", N,
                "--out",
            ])
            .arg(dir.path())
            .output()
            .unwrap(),
        "joj syscalls record -- joj bench",
    );
    let replay = json(
        Command::new(joj)
            .args(["syscalls", "replay"])
            .arg(&rec)
            .args(["--fs", "ext4", "--json", "--out"])
            .arg(dir.path())
            .output()
            .unwrap(),
        "joj syscalls replay",
    );
    assert_eq!(replay["config"]["workload"], "syscalls-replay");
    let txns = bench["transactions"].as_f64().unwrap();
    let (a, b) = (per_txn(&bench, txns), per_txn(&replay, txns));
    for (i, what) in ["data KiB", "metadata KiB", "FS journal KiB", "flushes"]
        .iter()
        .enumerate()
    {
        let ok = if a[i].abs() < 0.1 {
            (b[i] - a[i]).abs() <= 0.1
        } else {
            ((b[i] - a[i]) / a[i]).abs() <= 0.05
        };
        assert!(
            ok,
            "{what} per transaction: recorded run {:.3}, replay {:.3} (all: recorded {a:?}, replay {b:?})",
            a[i], b[i]
        );
    }
    assert!(
        a[0] > 8.0 && a[2] > 8.0,
        "the run wrote data and FS journal: {a:?}"
    );
    // The replay's per-file rows: the database and its deleted journal.
    let files = replay["command"]["files"].as_array().unwrap();
    let kind = |p: &str| {
        files
            .iter()
            .find(|f| f["path"] == p)
            .map(|f| f["kind"].as_str().unwrap().to_string())
    };
    assert_eq!(kind("joj-0.db").as_deref(), Some("database"), "{files:?}");
    assert_eq!(
        kind("joj-0.db-journal").as_deref(),
        Some("rollback_journal"),
        "{files:?}"
    );
}
