//! Bad input to `joj replay` fails with a message naming the file and the cause: a file that
//! is no trace at all, a truncated joj-trace file, a request beyond the modeled device, an
//! unknown profile.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_trace::{Clock, DeviceRole, Op, TraceDevice, TraceHeader, TraceRecord, TraceSource};

fn replay(path: &std::path::Path, profile: &str) -> (bool, String) {
    let out = common::joj_command()
        .args(["replay", path.to_str().unwrap(), "--device", profile])
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn header() -> TraceHeader {
    TraceHeader {
        clock: Clock::Relative,
        devices: vec![TraceDevice {
            dev: "7:0".into(),
            role: DeviceRole::Main,
            name: "/dev/loop0".into(),
        }],
        source: TraceSource::Tracefs,
        meta: serde_json::Map::new(),
    }
}

#[test]
fn bad_trace_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();

    let junk = dir.path().join("notes.txt");
    std::fs::write(&junk, "shopping list\neggs\n").unwrap();
    let (ok, err) = replay(&junk, "emmc5");
    assert!(!ok);
    assert!(
        err.contains("notes.txt") && err.contains("no block request"),
        "{err}"
    );

    let good = dir.path().join("t.jsonl");
    let records: Vec<TraceRecord> = (0..4)
        .map(|i| TraceRecord::new(i, "7:0", Op::Write, i * 8, 8))
        .collect();
    joj_trace::write_trace_file(&good, &header(), &records).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, &bytes[..bytes.len() - 10]).unwrap();
    let (ok, err) = replay(&cut, "emmc5");
    assert!(!ok);
    assert!(
        err.contains("cut.jsonl") && err.contains("the file was cut short"),
        "{err}"
    );

    let far = dir.path().join("far.jsonl");
    let beyond = vec![TraceRecord::new(0, "7:0", Op::Write, 1 << 40, 8)];
    joj_trace::write_trace_file(&far, &header(), &beyond).unwrap();
    let (ok, err) = replay(&far, "galaxy-s5");
    assert!(!ok);
    assert!(err.contains("beyond the emulated device"), "{err}");

    let (ok, err) = replay(&good, "no-such-phone");
    assert!(!ok);
    assert!(
        err.contains("unknown device profile") && err.contains("galaxy-s5"),
        "{err}"
    );
}
