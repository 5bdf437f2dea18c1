//! A recording `joj bench` made carries the host time it measured (`meta.host`), and `joj replay`
//! composes it with the device's time as the run did: two replays of the same recording give the
//! same modeled figures, host included, and the profile's `host` section scales the CPU part
//! (`galaxy-s5`: the Galaxy S5's CPU, 2.32 times this machine's time) and keeps the waits.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_trace::{Op, TraceRecord};

fn replay(path: &std::path::Path, profile: &str) -> serde_json::Value {
    let out = common::joj_command()
        .args([
            "replay",
            path.to_str().unwrap(),
            "--device",
            profile,
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

#[test]
fn replay_of_a_recording_composes_its_host_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.trace.jsonl");
    let txns = 20u64;
    let mut records = Vec::new();
    for i in 0..txns {
        let t = i * 1_000_000;
        records.push(TraceRecord::new(t, "7:0", Op::Write, 2048 + i * 16, 16));
        records.push(TraceRecord::new(t + 1, "7:0", Op::Flush, 0, 0));
    }
    let mut header = common::loop0_header(txns);
    // What a bench run measured: 0.2 s of host time, 0.05 s of it CPU (the thread's 0.14 s
    // less joj's 0.1 s of measuring on it, and the journal thread's 0.01 s), 20 sync calls.
    header.meta.insert(
        "host".into(),
        serde_json::json!({
            "threads": 1, "elapsed_s": 0.3, "cpu_s": 0.14, "journal_thread_cpu_s": 0.01,
            "run_delay_s": 0.0, "voluntary_switches": 40, "involuntary_switches": 0,
            "sync_calls": 20, "sync_s": 0.15, "overhead_s": 0.1, "paced_sleep_s": 0.0,
            "host_s": 0.2, "wait_s": 0.15
        }),
    );
    header.meta.insert("paced_on".into(), "galaxy-s5".into());
    joj_trace::write_trace_file(&path, &header, &records).unwrap();

    let a = replay(&path, "galaxy-s5");
    let b = replay(&path, "galaxy-s5");
    assert_eq!(
        a["modeled"], b["modeled"],
        "the same recording, the same figures"
    );
    let m = &a["modeled"];
    let device_s = a["device"]["modeled_s"].as_f64().unwrap();
    let host_s = m["host_s"].as_f64().unwrap();
    assert!((host_s - (2.32 * 0.05 + 0.15)).abs() < 1e-9, "{m}");
    assert!(
        (m["modeled_s"].as_f64().unwrap() - (host_s + device_s)).abs() < 1e-9,
        "{m}"
    );
    assert!(
        (m["modeled_ops_per_sec"].as_f64().unwrap() - txns as f64 / (host_s + device_s)).abs()
            < 1e-6
    );
    assert_eq!(m["paced"], true);

    // The zero-latency device: the host's time alone, this machine's (no host section).
    let z = replay(&path, "zero-latency");
    let zm = &z["modeled"];
    assert!((zm["host_s"].as_f64().unwrap() - 0.2).abs() < 1e-9, "{zm}");
    assert!(zm["host_share"].as_f64().unwrap() > 0.999, "{zm}");
}
