//! A trace record's length is the trace's word, not a number to allocate: a request of
//! 2^32 − 1 sectors (2 TiB) in a joj-trace file or in blkparse text is refused naming the
//! record, instead of aborting while allocating its buffer.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

fn replay(path: &std::path::Path) -> (Option<i32>, String) {
    let out = common::joj_command()
        .args(["replay", "--device", "emmc5"])
        .arg(path)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_refused(path: &std::path::Path) {
    let (code, err) = replay(path);
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("memory allocation"), "{err}");
    assert!(
        err.contains("trace record 0") && err.contains("4294967295 sectors"),
        "{err}"
    );
    assert!(
        err.contains("beyond the emulated device") && err.contains("fix:"),
        "{err}"
    );
}

#[test]
fn a_huge_joj_trace_request_is_refused_naming_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
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
    let records = [
        joj_trace::TraceRecord::new(1, "7:0", joj_trace::Op::Write, 0, u64::from(u32::MAX)),
        joj_trace::TraceRecord::new(2, "7:0", joj_trace::Op::Write, 8, 8),
    ];
    joj_trace::write_trace_file(&path, &header, &records).unwrap();
    assert_refused(&path);
}

#[test]
fn a_huge_blkparse_request_is_refused_naming_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.blktrace.txt");
    std::fs::write(
        &path,
        "  7,0    0        1     0.000001000  1234  D  WS 0 + 4294967295 [joj]\n  \
         7,0    0        2     0.000002000  1234  D  WS 8 + 8 [joj]\n",
    )
    .unwrap();
    assert_refused(&path);
}
