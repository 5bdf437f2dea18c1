//! A trace whose header counts transactions (`meta.transactions`, as `joj bench --trace` writes
//! it) gives the replay its count; `--transactions N` overrides it, and the output says where the
//! count came from. The recorded host time is composed over the same N.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_trace::{Op, TraceRecord};

fn replay(path: &std::path::Path, args: &[&str]) -> String {
    let path = path.to_str().unwrap();
    let out = common::joj_ok([&["replay", path, "--device", "emmc5"], args].concat());
    String::from_utf8(out).unwrap()
}

fn json(path: &std::path::Path, args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&replay(path, &[args, &["--json"]].concat())).unwrap()
}

#[test]
fn replay_transactions_overrides_the_header_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.trace.jsonl");
    let records: Vec<TraceRecord> = (0..8)
        .flat_map(|i| {
            [
                TraceRecord::new(i * 1000, "7:0", Op::Write, 2048 + i * 16, 16),
                TraceRecord::new(i * 1000 + 1, "7:0", Op::Flush, 0, 0),
            ]
        })
        .collect();
    let mut header = common::loop0_header(1);
    header.meta.insert(
        "host".into(),
        serde_json::json!({
            "threads": 1, "elapsed_s": 0.3, "cpu_s": 0.14, "journal_thread_cpu_s": 0.01,
            "run_delay_s": 0.0, "voluntary_switches": 40, "involuntary_switches": 0,
            "sync_calls": 8, "sync_s": 0.15, "overhead_s": 0.1, "paced_sleep_s": 0.0,
            "host_s": 0.2, "wait_s": 0.15
        }),
    );
    joj_trace::write_trace_file(&path, &header, &records).unwrap();

    let from_header = json(&path, &[]);
    assert_eq!(from_header["device"]["ops"], 1);
    assert_eq!(from_header["transactions_from"], "header");
    assert_eq!(from_header["header_transactions"], 1);
    let text = replay(&path, &[]);
    assert!(
        text.contains("over 1 transactions (the trace's header)"),
        "{text}"
    );

    let given = json(&path, &["--transactions", "1000"]);
    let d = &given["device"];
    assert_eq!(d["ops_basis"], "transactions", "{d}");
    assert_eq!(d["ops"], 1000, "{d}");
    assert_eq!(given["transactions_from"], "option");
    assert_eq!(
        given["header_transactions"], 1,
        "the header's count is kept"
    );
    let m = &given["modeled"];
    assert_eq!(
        m["ops"], 1000,
        "the host time is composed over the same count: {m}"
    );
    let per_sec = m["modeled_ops_per_sec"].as_f64().unwrap();
    let modeled_s = m["modeled_s"].as_f64().unwrap();
    assert!(
        (per_sec - 1000.0 / modeled_s).abs() <= 1e-9 * per_sec,
        "{m}"
    );

    let text = replay(&path, &["--transactions", "1000"]);
    assert!(
        text.contains("over 1000 transactions (--transactions; the trace's header said 1)"),
        "{text}"
    );
}
