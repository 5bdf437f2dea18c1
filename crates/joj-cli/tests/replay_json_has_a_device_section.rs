//! `joj replay <trace> --json` prints one JSON document whose `device` section has the
//! counters of the run result contract, and counts modeled throughput in the transactions the
//! trace's header names.

mod common;

use joj_trace::{Op, TraceHeader, TraceRecord};

/// Per transaction: an 8 KiB log write, a flush, a 4 KiB commit write, a flush.
fn wal_like_trace(transactions: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut records = Vec::new();
    for i in 0..transactions {
        let t = i * 1_000_000;
        records.push(TraceRecord::new(t, "7:0", Op::Write, 2048 + i * 16, 16));
        records.push(TraceRecord::new(t + 1, "7:0", Op::Flush, 0, 0));
        records.push(TraceRecord::new(t + 2, "7:0", Op::Write, 65536 + i * 8, 8));
        records.push(TraceRecord::new(t + 3, "7:0", Op::Flush, 0, 0));
    }
    let header = common::loop0_header(transactions);
    (header, records)
}

#[test]
fn replay_json_has_a_device_section() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wal.trace.jsonl");
    let (header, records) = wal_like_trace(20);
    joj_trace::write_trace_file(&path, &header, &records).unwrap();

    let out = common::joj_command()
        .args([
            "replay",
            path.to_str().unwrap(),
            "--device",
            "galaxy-s5",
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document");

    let d = &doc["device"];
    for key in [
        "host_write_bytes",
        "nand_program_bytes",
        "erases",
        "gc_copies",
        "waf",
        "flushes",
        "fua",
        "modeled_s",
        "modeled_ops_per_sec",
    ] {
        assert!(d[key].is_number(), "device.{key} missing: {d}");
    }
    assert_eq!(d["profile"], "galaxy-s5");
    assert_eq!(d["host_write_bytes"], 20 * (8192 + 4096));
    assert_eq!(d["flushes"], 40);
    assert_eq!(d["ops_basis"], "transactions");
    assert_eq!(d["ops"], 20);
    let modeled_s = d["modeled_s"].as_f64().unwrap();
    assert!(modeled_s > 0.0);
    let per_s = d["modeled_ops_per_sec"].as_f64().unwrap();
    assert!((per_s - 20.0 / modeled_s).abs() < 1e-6 * per_s);
    // Every 4 KiB write is a sub-page write on galaxy-s5's 8 KiB pages, and every flush writes
    // a map page: NAND sees more than the host wrote.
    assert!(d["waf"].as_f64().unwrap() > 1.0);
    assert_eq!(doc["format"], "joj-trace");
    assert_eq!(doc["replay"]["records"], 80);
}
