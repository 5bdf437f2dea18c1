//! `joj replay` reads its trace from the file one record at a time, twice (what it must know
//! first, then the requests to apply), joj-trace and blkparse text alike: its memory is the
//! emulated device's and does not grow with the trace (it held every record, some 160 bytes
//! each of a joj-trace file and 250 of blkparse text: 1 GB for four million requests). Measured
//! as the peak resident size of the `joj`s it ran (`getrusage(RUSAGE_CHILDREN)`: this file is
//! its own test process, and runs no other child).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::Path;

use common::long_trace::{children_peak_kib, write_blkparse, write_joj_trace};

#[test]
fn joj_replay_reads_a_long_trace_in_bounded_memory() {
    const N: u64 = 400_000;
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("long.jsonl");
    let text = dir.path().join("long.txt");
    write_joj_trace(&jsonl, N, N);
    write_blkparse(&text, N);
    let mut requests = Vec::new();
    for trace in [&jsonl, &text] {
        let out = common::joj_ok([Path::new("replay"), Path::new("--json"), trace]);
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        requests.push(doc["replay"]["records"].as_u64().unwrap());
    }
    assert_eq!(requests, [N, N], "every request replayed");
    let peak_kib = children_peak_kib();
    eprintln!("joj replay of {N} records: peak resident {peak_kib} KiB");
    // The binary and the emulated device (an 8 GiB eMMC's page map): some 32 MiB whatever the
    // trace. Holding the records took some 90 MiB (joj-trace) and 120 MiB (blkparse) here.
    assert!(
        peak_kib < 64 * 1024,
        "joj replay of {N} records peaked at {peak_kib} KiB"
    );
}
