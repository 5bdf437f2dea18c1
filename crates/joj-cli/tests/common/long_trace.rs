//! Long synthetic traces, written a record at a time (so that the test process stays small:
//! the kernel counts the peak memory of a process into that of the program it starts), and
//! the peak memory of the `joj` a test ran.

use std::io::Write;
use std::path::Path;

use joj_trace::{BlockClass, FileRole, Op, TraceRecord};

/// A WAL-mode commit's requests, again and again: WAL data, FS journal, its commit block with
/// a preflush, a flush; each completed 30 µs after its issue.
pub fn records(n: u64) -> impl Iterator<Item = TraceRecord> {
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
        r.complete_ns = Some(t + 30_000);
        r
    })
}

/// The trace of [`records`]`(n)` as a joj-trace file whose header announces `announced`
/// records (`n` for a valid one), as `joj_trace::write_trace` writes it.
pub fn write_joj_trace(path: &Path, n: u64, announced: u64) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut line = serde_json::to_value(super::loop0_header(n / 4)).unwrap();
    let fields = line.as_object_mut().unwrap();
    fields.insert("format".into(), "joj-trace".into());
    fields.insert("version".into(), 1.into());
    fields.insert("records".into(), announced.into());
    serde_json::to_writer(&mut w, &line).unwrap();
    w.write_all(b"\n").unwrap();
    for r in records(n) {
        serde_json::to_writer(&mut w, &r).unwrap();
        w.write_all(b"\n").unwrap();
    }
    w.flush().unwrap();
}

/// The requests of [`records`]`(n)` as blkparse text: a `D` line and a `C` line each, in time
/// order.
pub fn write_blkparse(path: &Path, n: u64) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let secs = |t: u64| format!("{}.{:09}", t / 1_000_000_000, t % 1_000_000_000);
    for (i, r) in records(n).enumerate() {
        let rwbs = match (r.op, r.preflush) {
            (Op::Flush, _) => "FN",
            (_, true) => "FWS",
            _ => "WS",
        };
        let range = if r.op == Op::Flush {
            String::new()
        } else {
            format!(" {} + {}", r.sector, r.sectors)
        };
        let t = r.time_ns;
        let done = r.complete_ns.unwrap();
        writeln!(w, "  7,0 1 {i} {} 1234 D {rwbs}{range} [x]", secs(t)).unwrap();
        writeln!(w, "  7,0 0 {i} {} 0 C {rwbs}{range} [0]", secs(done)).unwrap();
    }
    w.flush().unwrap();
}

/// The peak resident size, in KiB, of the children this process has waited for (a test file
/// that measures it runs no other child).
pub fn children_peak_kib() -> i64 {
    // SAFETY: an all-zero `rusage` is valid; getrusage writes one to the pointer it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage`.
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    usage.ru_maxrss
}
