#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! One harness for the file formats joj reads from other people: a valid sample of each,
//! damaged by a few seeded mutations (bytes flipped, inserted, deleted, repeated, the file cut,
//! a number swapped for an extreme one, markup or a path inserted), is read, and what reads is
//! handed on to what uses it (a trace is summed, plotted and replayed; a profile replays a small
//! trace; a saved document becomes a `joj report` page, which must hold no markup unescaped).
//! Every outcome must be a value or an error: a panic, an abort from an allocation no bound
//! stopped, or a hang (the test's time) fails. Property-based: proptest generates the mutations
//! from one printed seed (`JOJ_SEED` reruns a case exactly, `JOJ_FUZZ_CASES` runs more) and
//! shrinks a failure to its fewest mutations.
//!
//! Formats: joj-trace (as read, and with its announced count made to agree), blkparse text,
//! every built-in device profile, joj-syscalls recordings (both ways), strace text, joj-blocklog
//! (as read, and with its checksum made to agree), and the saved compare, trace, replay, crash
//! and paper-figures documents `joj report` reads. Not here: crash-state parts (a sample needs a
//! crash run; `merge` checks each against its run) and what the kernel and its tools print.
//!
//! Hand-written probes found the bounds of each format one case at a time (docs/robustness.md);
//! this runs the same kind of damage over all of them on every test run.

mod common;

use std::io::Cursor;

use joj_device::Profile;
use joj_device::replay::replay;
use joj_linux::record::{BlockLog, LogOp, Mark, SparseImage};
use joj_trace::{
    BlockTotals, PlotAxis, TraceRecord, TraceSummary, import_blkparse, read_trace, render_svg,
};
use joj_workload::syscalls::{ImportOptions, Recording, import_strace};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

/// Seed when `JOJ_SEED` is not set.
const DEFAULT_SEED: u64 = 0x6A6F_6A5F_6675_7A7A;

/// Cases per format (`JOJ_FUZZ_CASES` to run more). Each is read once, and used once if it
/// reads: about a second in all.
const CASES: u32 = 400;

fn cases() -> u32 {
    std::env::var("JOJ_FUZZ_CASES")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(CASES)
}

/// Numbers that sit at or beyond every bound a format has.
const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "1e308",
    "-1e308",
    "5e-324",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "4294967296",
    "99999999999999999999999999",
    "NaN",
    "1.5",
];

/// Text meant to be markup or a path where a format holds a name (no `"`: it stays inside a
/// JSON string it lands in).
const HOSTILE_TEXT: &[&str] = &[
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "</svg><script>alert(1)</script>",
    "../../../../etc/passwd",
    "\\u0000",
    "%n%s%s",
];

/// One damage to a file, its positions as fractions of the file's length (so a mutation means
/// the same place in any sample).
#[derive(Debug, Clone)]
enum Damage {
    Cut(f64),
    Flip(f64, u8),
    Insert(f64, Vec<u8>),
    Delete(f64, usize),
    Repeat(f64, usize, u8),
    Number(f64, usize),
    Text(f64, usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    let at = 0.0..1.0f64;
    prop_oneof![
        at.clone().prop_map(Damage::Cut),
        (at.clone(), any::<u8>()).prop_map(|(a, b)| Damage::Flip(a, b)),
        (at.clone(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(a, b)| Damage::Insert(a, b)),
        (at.clone(), 1..64usize).prop_map(|(a, n)| Damage::Delete(a, n)),
        (at.clone(), 1..256usize, 1..8u8).prop_map(|(a, n, k)| Damage::Repeat(a, n, k)),
        (at.clone(), 0..EXTREMES.len()).prop_map(|(a, i)| Damage::Number(a, i)),
        (at.clone(), 0..EXTREMES.len()).prop_map(|(a, i)| Damage::Number(a, i)),
        (at, 0..HOSTILE_TEXT.len()).prop_map(|(a, i)| Damage::Text(a, i)),
    ]
}

fn place(bytes: &[u8], at: f64) -> usize {
    ((bytes.len() as f64 * at) as usize).min(bytes.len())
}

/// `bytes` with `d` done to it.
fn apply(mut bytes: Vec<u8>, d: &Damage) -> Vec<u8> {
    match d {
        Damage::Cut(at) => {
            let p = place(&bytes, *at);
            bytes.truncate(p);
        }
        Damage::Flip(at, b) => {
            let p = place(&bytes, *at);
            if p < bytes.len() {
                bytes[p] ^= b | 1;
            }
        }
        Damage::Insert(at, b) => {
            let p = place(&bytes, *at);
            bytes.splice(p..p, b.iter().copied());
        }
        Damage::Delete(at, n) => {
            let p = place(&bytes, *at);
            let end = (p + n).min(bytes.len());
            bytes.drain(p..end);
        }
        Damage::Repeat(at, n, k) => {
            let p = place(&bytes, *at);
            let end = (p + n).min(bytes.len());
            let piece = bytes[p..end].to_vec();
            for _ in 0..*k {
                bytes.splice(end..end, piece.iter().copied());
            }
        }
        Damage::Number(at, i) => {
            // The first run of digits at or after the place, replaced whole.
            let p = place(&bytes, *at);
            if let Some(start) = bytes[p..].iter().position(u8::is_ascii_digit) {
                let start = p + start;
                let len = bytes[start..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                bytes.splice(start..start + len, EXTREMES[*i].bytes());
            }
        }
        Damage::Text(at, i) => {
            let p = place(&bytes, *at);
            bytes.splice(p..p, HOSTILE_TEXT[*i].bytes());
        }
    }
    bytes
}

fn config(cases: u32) -> Config {
    let seed = match std::env::var("JOJ_SEED") {
        Ok(s) => s
            .trim()
            .parse::<u64>()
            .unwrap_or_else(|_| panic!("JOJ_SEED={s:?} is not a u64; give a decimal seed")),
        Err(_) => DEFAULT_SEED,
    };
    eprintln!("proptest seed {seed} (rerun exactly with JOJ_SEED={seed})");
    Config {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    }
}

/// Runs `read` on `sample` damaged by 1 to 4 mutations, [`cases`] times. `read` returns whether
/// the damaged file read (for the count printed at the end: a harness whose every case is
/// refused at the first byte tests little).
fn damaged(name: &str, sample: &[u8], read: impl Fn(&[u8]) -> bool) {
    damaged_n(name, sample, cases(), read)
}

/// [`damaged`] with `cases` cases.
fn damaged_n(name: &str, sample: &[u8], cases: u32, read: impl Fn(&[u8]) -> bool) {
    assert!(read(sample), "{name}: the undamaged sample must read");
    let read_ok = std::cell::Cell::new(0u32);
    let mut runner = TestRunner::new(config(cases));
    runner
        .run(&prop::collection::vec(damage(), 1..5), |ds| {
            let bytes = ds.iter().fold(sample.to_vec(), apply);
            if read(&bytes) {
                read_ok.set(read_ok.get() + 1);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    eprintln!(
        "{name}: {} of {cases} damaged files still read",
        read_ok.get()
    );
}

/// A small trace of every kind of request, completions included, as joj writes it.
fn trace_sample() -> Vec<u8> {
    let mut s = String::from(
        r#"{"format":"joj-trace","version":1,"records":12,"clock":"relative","devices":[{"dev":"7:0","role":"main","name":"/dev/loop0"}],"source":"tracefs","meta":{"transactions":3}}
"#,
    );
    let kinds = [
        ("write", 2048, 8, true, false, false),
        ("write", 526336, 24, false, false, true),
        ("flush", 0, 0, false, false, false),
        ("write", 526360, 8, false, true, true),
        ("read", 4096, 16, false, false, false),
        ("discard", 8192, 2048, false, false, false),
    ];
    for i in 0..12u64 {
        let (op, sector, sectors, sync, fua, meta) = kinds[(i % 6) as usize];
        let t = 1_000_000 + i * 50_000;
        s.push_str(&format!(
            r#"{{"time_ns":{t},"dev":"7:0","op":"{op}","preflush":{pre},"fua":{fua},"sync":{sync},"meta":{meta},"sector":{sector},"sectors":{sectors},"comm":"joj","class":"unknown","complete_ns":{done}}}
"#,
            pre = i == 3,
            done = t + 20_000,
        ));
    }
    s.into_bytes()
}

/// What joj does with a trace it read: its summary, its plot on both axes, its replay.
fn use_trace(records: &[TraceRecord], profile: &Profile) {
    let _ = BlockTotals::from_records(records);
    let _ = render_svg("damaged", records, PlotAxis::Time);
    let _ = render_svg("damaged", records, PlotAxis::Sequence);
    let _ = replay(records, profile);
}

fn emmc5() -> Profile {
    Profile::builtin("emmc5").expect("emmc5 is built in")
}

#[test]
fn a_damaged_trace_is_refused_or_summed_plotted_and_replayed() {
    let profile = emmc5();
    damaged("joj-trace", &trace_sample(), |b| {
        match read_trace(Cursor::new(b)) {
            Ok((header, records)) => {
                let _ = TraceSummary::of(header, &records);
                use_trace(&records, &profile);
                true
            }
            Err(e) => {
                assert!(!e.to_string().is_empty());
                false
            }
        }
    });
}

/// `bytes` with the count its first line announces (`"key":N`) made to agree with its lines, so
/// that damage to the records reaches the checks past the count.
fn count_fixed(bytes: &[u8], key: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    let Some((first, rest)) = text.split_once('\n') else {
        return bytes.to_vec();
    };
    let lines = rest.lines().filter(|l| !l.trim().is_empty()).count();
    let pat = format!("\"{key}\":");
    let Some(at) = first.find(&pat) else {
        return bytes.to_vec();
    };
    let start = at + pat.len();
    let len = first[start..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    format!(
        "{}{lines}{}\n{rest}",
        &first[..start],
        &first[start + len..]
    )
    .into_bytes()
}

#[test]
fn a_damaged_trace_whose_count_agrees_is_refused_or_used() {
    let profile = emmc5();
    damaged(
        "joj-trace, count fixed",
        &trace_sample(),
        |b| match read_trace(Cursor::new(count_fixed(b, "records"))) {
            Ok((header, records)) => {
                let _ = TraceSummary::of(header, &records);
                use_trace(&records, &profile);
                true
            }
            Err(_) => false,
        },
    );
}

#[test]
fn damaged_blkparse_text_is_refused_or_imported_and_replayed() {
    let sample = b"\
  7,0    1        1     0.000100000  1234  Q  WS 2048 + 8 [joj]
  7,0    1        6     0.000104500  1234  D  WS 2048 + 8 [joj]
  7,0    0        1     0.000250000     0  C  WS 2048 + 8 [0]
  7,0    2        3     0.000303000   321  D  WS 526336 + 24 [jbd2/loop0-8]
  7,0    2        5     0.000401000   321  D  FN [jbd2/loop0-8]
  7,0    2        6     0.000650000   321  D WFS 526360 + 8 [jbd2/loop0-8]
  7,0    2        7     0.000660000   321  R WFS 526360 + 8 [jbd2/loop0-8]
  7,0    2        8     0.000670000   321  D WFS 526360 + 8 [jbd2/loop0-8]
  7,0    0        2     0.000900000     0  C WFS 526360 + 8 [0]
  7,1    1        8     0.001002000  1234  D  RM 4096 + 16 [sqlite worker]
  7,0    3        2     0.003000000    77  D   D 8192 + 2048 [fstrim]
CPU0 (7,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           0,        0KiB
";
    let profile = emmc5();
    damaged("blkparse text", sample, |b| {
        match import_blkparse(Cursor::new(b)) {
            Ok(import) => {
                use_trace(&import.records, &profile);
                true
            }
            Err(_) => false,
        }
    });
}

#[test]
fn a_damaged_profile_is_refused_or_replays_a_trace() {
    let records = read_trace(Cursor::new(trace_sample())).unwrap().1;
    for name in Profile::builtin_names() {
        let sample = serde_json::to_vec_pretty(&Profile::builtin(name).unwrap()).unwrap();
        damaged(&format!("profile {name}"), &sample, |b| {
            let Ok(text) = std::str::from_utf8(b) else {
                return false;
            };
            match Profile::from_json(text) {
                Ok(p) => {
                    let _ = replay(&records, &p);
                    true
                }
                Err(_) => false,
            }
        });
    }
}

#[test]
fn a_damaged_recording_of_system_calls_is_refused_or_checked() {
    let whole = include_str!("../../../docs/recordings/mobibench-insert-wal.jsonl");
    let rec = Recording::read(Cursor::new(whole), "sample").expect("the sample reads");
    // The first 60 calls, with the header's counts made to agree, as a recording of its own.
    let mut small = rec.clone();
    small.calls.truncate(60);
    small.header.calls = small.calls.len() as u64;
    let mut sample = Vec::new();
    small.write(&mut sample).unwrap();
    let sample = if Recording::read(Cursor::new(&sample), "cut").is_ok() {
        sample
    } else {
        let mut whole_bytes = Vec::new();
        rec.write(&mut whole_bytes).unwrap();
        whole_bytes
    };
    damaged("joj-syscalls recording", &sample, |b| {
        Recording::read(Cursor::new(b), "damaged").is_ok()
    });
    damaged("joj-syscalls recording, count fixed", &sample, |b| {
        Recording::read(Cursor::new(count_fixed(b, "calls")), "damaged").is_ok()
    });
}

#[test]
fn damaged_strace_text_is_refused_or_imported() {
    let text = include_str!("../../joj-workload/src/syscalls/testdata/threads-truncate.strace");
    let opts = ImportOptions {
        root: Some("/tmp/st/h2".into()),
        transactions: 6,
        ..Default::default()
    };
    damaged("strace text", text.as_bytes(), |b| {
        let text = String::from_utf8_lossy(b);
        match import_strace(&text, "damaged", &opts) {
            Ok(rec) => {
                let mut out = Vec::new();
                rec.write(&mut out).unwrap();
                Recording::read(Cursor::new(&out), "re-read").is_ok()
            }
            Err(_) => false,
        }
    });
}

/// A block log of a few writes, flushes and marks over a base image with data.
fn blocklog_sample() -> Vec<u8> {
    let mut base = SparseImage::zeroed(1 << 20);
    base.write(0, &[7u8; 4096]);
    base.write(65536, &[9u8; 8192]);
    let log = BlockLog {
        base,
        ops: vec![
            LogOp::Mark(Mark::Begun(1)),
            LogOp::Write {
                offset_bytes: 4096,
                data: vec![1u8; 4096],
            },
            LogOp::Flush,
            LogOp::Write {
                offset_bytes: 512 * 9,
                data: vec![2u8; 1024],
            },
            LogOp::Mark(Mark::Acknowledged(1)),
            LogOp::Flush,
        ],
        labels: [("fs".to_string(), "ext4".to_string())].into(),
    };
    let mut out = Vec::new();
    log.write_to(&mut out).unwrap();
    out
}

#[test]
fn a_damaged_block_log_is_refused_or_read() {
    let sample = blocklog_sample();
    damaged("joj-blocklog", &sample, |b| {
        let _ = BlockLog::read_labels(Cursor::new(b));
        BlockLog::read_from(Cursor::new(b)).is_ok()
    });
    // The same damage with the checksum made to agree: the reader's checks past the checksum.
    damaged("joj-blocklog, checksum fixed", &sample, |b| {
        let mut b = b.to_vec();
        if b.len() >= 4 {
            let n = b.len() - 4;
            let crc = crc32fast::hash(&b[..n]);
            b[n..].copy_from_slice(&crc.to_le_bytes());
        }
        BlockLog::read_from(Cursor::new(&b)).is_ok()
    });
}

/// `joj report` of a damaged saved document: joj's answer is a page (exit 0) or an error
/// (exit 1), never a panic or a signal, and no markup a document carried reaches the page
/// unescaped. Each case runs the binary, so a tenth as many cases as the in-process readers.
#[test]
fn joj_report_of_a_damaged_document_writes_an_escaped_page_or_refuses() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/report");
    let tmp = tempfile::tempdir().unwrap();
    for name in [
        "compare.json",
        "trace.json",
        "replay.json",
        "crash.json",
        "paper-figures.json",
    ] {
        let sample = std::fs::read(format!("{fixtures}/{name}")).unwrap();
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        damaged_n(&format!("report of {name}"), &sample, cases() / 10, |b| {
            std::fs::write(dir.join(name), b).unwrap();
            let page = tmp.path().join("page.html");
            let _ = std::fs::remove_file(&page);
            let run = common::joj_report(&dir, &page);
            let err = String::from_utf8_lossy(&run.stderr);
            match run.status.code() {
                Some(0) => {
                    let html = std::fs::read_to_string(&page).unwrap();
                    // Escaped, the markup is harmless text (`&lt;img src=x onerror…`).
                    for bad in ["<script", "<img src=x"] {
                        assert!(
                            !html.to_ascii_lowercase().contains(bad),
                            "{name}: the page holds `{bad}` unescaped"
                        );
                    }
                    true
                }
                Some(1) => {
                    assert!(err.contains("joj: error:"), "{name}: {err}");
                    false
                }
                other => panic!("{name}: joj report ended with {other:?}: {err}"),
            }
        });
    }
}
