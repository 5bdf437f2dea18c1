//! `joj trace plot` reads its trace one record at a time and keeps a summary of fixed size:
//! its memory does not grow with the trace (it held every record, some 330 bytes of memory
//! and 100 bytes of SVG each: 4 GB and a 200 MB picture for two million). Measured as the peak
//! resident size of the `joj` it ran (`getrusage(RUSAGE_CHILDREN)`: this file is its own test
//! process, and runs no other child). The trace is written a record at a time, so that this
//! process stays small too: the kernel counts the peak of the process that starts a program
//! into the program's.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_trace::{BlockClass, FileRole, Op, TraceRecord};

/// A WAL-mode commit's requests, again and again: WAL data, FS journal, its commit block with
/// a preflush, a flush.
fn records(n: u64) -> impl Iterator<Item = TraceRecord> {
    (0..n).map(|i| {
        let t = 1_000_000 + i * 50_000;
        let (op, sector, sectors, class, file) = match i % 4 {
            0 => (
                Op::Write,
                274_432 + (i * 2) % 65_536,
                8,
                BlockClass::Data,
                Some(FileRole::Wal),
            ),
            1 => (
                Op::Write,
                526_336 + (i * 8) % 262_144,
                24,
                BlockClass::FsJournal,
                None,
            ),
            2 => (
                Op::Write,
                526_360 + (i * 8) % 262_144,
                8,
                BlockClass::FsJournal,
                None,
            ),
            _ => (Op::Flush, 0, 0, BlockClass::Flush, None),
        };
        let mut r = TraceRecord::new(t, "7:0", op, sector, sectors);
        r.class = class;
        r.file = file;
        r.preflush = i % 4 == 2;
        r
    })
}

/// The trace of [`records`]`(n)` in the joj-trace format, written a line at a time (as
/// `joj_trace::write_trace` writes it, without holding the records).
fn write_streamed(path: &std::path::Path, header: &joj_trace::TraceHeader, n: u64) {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut line = serde_json::to_value(header).unwrap();
    let fields = line.as_object_mut().unwrap();
    fields.insert("format".into(), "joj-trace".into());
    fields.insert("version".into(), 1.into());
    fields.insert("records".into(), n.into());
    serde_json::to_writer(&mut w, &line).unwrap();
    w.write_all(b"\n").unwrap();
    for r in records(n) {
        serde_json::to_writer(&mut w, &r).unwrap();
        w.write_all(b"\n").unwrap();
    }
    w.flush().unwrap();
}

/// The peak resident size, in KiB, of the children this process has waited for.
fn children_peak_kib() -> i64 {
    // SAFETY: an all-zero `rusage` is valid; getrusage writes one to the pointer it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage`.
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    usage.ru_maxrss
}

#[test]
fn joj_trace_plot_reads_a_long_trace_in_bounded_memory() {
    const N: u64 = 400_000;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("long.jsonl");
    {
        let header = joj_trace::TraceHeader {
            clock: joj_trace::Clock::Relative,
            devices: vec![joj_trace::TraceDevice {
                dev: "7:0".into(),
                role: joj_trace::DeviceRole::Main,
                name: "/dev/loop0".into(),
            }],
            source: joj_trace::TraceSource::Tracefs,
            meta: serde_json::Map::new(),
        };
        write_streamed(&trace, &header, N);
    }
    let svg = dir.path().join("long.svg");
    let out = common::joj_command()
        .args([
            "trace",
            "plot",
            trace.to_str().unwrap(),
            "-o",
            svg.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let peak_kib = children_peak_kib();
    eprintln!("joj trace plot of {N} records: peak resident {peak_kib} KiB");
    // The binary, its libraries and the summary: some 20 MiB whatever the trace. Holding the
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
