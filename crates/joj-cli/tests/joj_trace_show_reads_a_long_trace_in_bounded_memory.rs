//! `joj trace show` sums its trace as it reads it, a record at a time: its memory does not
//! grow with the trace (it held every record: 631 MB for four million). Measured as the peak
//! resident size of the `joj` it ran (`getrusage(RUSAGE_CHILDREN)`: this file is its own test
//! process, and runs no other child).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::long_trace::{children_peak_kib, write_joj_trace};

#[test]
fn joj_trace_show_reads_a_long_trace_in_bounded_memory() {
    const N: u64 = 400_000;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("long.jsonl");
    write_joj_trace(&trace, N, N);
    let (ok, stdout, err) = common::run_joj_text(&["trace", "show", trace.to_str().unwrap()]);
    assert!(ok, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["records"], N);
    assert_eq!(doc["block"]["requests"], N);
    let peak_kib = children_peak_kib();
    eprintln!("joj trace show of {N} records: peak resident {peak_kib} KiB");
    // The binary and its libraries: some 6 MiB whatever the trace. Holding the records took
    // some 60 MiB for these.
    assert!(
        peak_kib < 32 * 1024,
        "joj trace show of {N} records peaked at {peak_kib} KiB"
    );
}
