//! `joj trace plot` reads its trace one record at a time and keeps a summary of fixed size:
//! its memory does not grow with the trace (it held every record, some 270 bytes of memory
//! and 70 bytes of SVG each: 1 GB and a 280 MB picture for four million). Measured as the peak
//! resident size of the `joj` it ran (`getrusage(RUSAGE_CHILDREN)`: this file is its own test
//! process, and runs no other child).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::Path;

use common::long_trace::{children_peak_kib, write_joj_trace};

#[test]
fn joj_trace_plot_reads_a_long_trace_in_bounded_memory() {
    const N: u64 = 400_000;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("long.jsonl");
    write_joj_trace(&trace, N, N);
    let svg = dir.path().join("long.svg");
    common::joj_ok([
        Path::new("trace"),
        Path::new("plot"),
        &trace,
        Path::new("-o"),
        &svg,
    ]);
    let peak_kib = children_peak_kib();
    eprintln!("joj trace plot of {N} records: peak resident {peak_kib} KiB");
    // The binary, its libraries and the summary: some 15 MiB whatever the trace. Holding the
    // records took over 100 MiB for these.
    assert!(
        peak_kib < 48 * 1024,
        "joj trace plot of {N} records peaked at {peak_kib} KiB"
    );
    let svg_bytes = std::fs::metadata(&svg).unwrap().len();
    assert!(
        svg_bytes <= 4 << 20,
        "{svg_bytes} bytes of SVG for {N} records"
    );
}
