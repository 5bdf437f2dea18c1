//! `joj trace import` reads blkparse text twice, a line at a time, and writes each record as it
//! comes: its memory does not grow with the text (it held every event: 1.6 GB for four million
//! requests). The imported file is the one a replay of the text reads. Measured as the peak
//! resident size of the `joj` it ran (`getrusage(RUSAGE_CHILDREN)`: this file is its own test
//! process, and runs no other child).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::long_trace::{children_peak_kib, write_blkparse};

#[test]
fn joj_trace_import_reads_blkparse_text_in_bounded_memory() {
    const N: u64 = 400_000;
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("long.txt");
    write_blkparse(&text, N);
    let out = dir.path().join("long.jsonl");
    let (ok, _, err) = common::run_joj_text(&[
        "trace",
        "import",
        text.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let peak_kib = children_peak_kib();
    eprintln!("joj trace import of {N} requests: peak resident {peak_kib} KiB");
    assert!(
        peak_kib < 32 * 1024,
        "joj trace import of {N} requests peaked at {peak_kib} KiB"
    );
    let (header, records) = joj_trace::read_trace_file(&out).unwrap();
    assert_eq!(records.len() as u64, N);
    assert_eq!(header.devices.len(), 1);
    assert!(records.iter().all(|r| r.complete_ns.is_some()));
}
