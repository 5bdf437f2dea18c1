//! A recording that holds 400 files open at once, replayed by a joj whose descriptor limit is
//! 100: it used to fail at the 100th open with "Too many open files … fix: replay on a fresh
//! filesystem". joj now raises its soft limit to what the recording needs when the hard limit
//! allows it (the replay then succeeds), and otherwise refuses before any filesystem is made,
//! naming the numbers and the fix.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::joj_limited;

const FILES: u32 = 400;

fn recording(dir: &std::path::Path) -> std::path::PathBuf {
    let rec = dir.join("open.jsonl");
    let mut text = format!(
        r#"{{"format":"joj-syscalls","version":1,"source":"strace","root":"/r","transactions":1,"threads":1,"calls":{FILES},"dropped_outside_root":0}}"#
    );
    text.push('\n');
    for i in 0..FILES {
        text.push_str(&format!(
            r#"{{"seq":{i},"tid":1,"start_ns":{},"dur_ns":1,"ret":{},"call":"open","path":"f{i}","flags":["O_RDWR","O_CREAT"],"mode":420,"fd":{}}}"#,
            i * 1000,
            i + 3,
            i + 3
        ));
        text.push('\n');
    }
    std::fs::write(&rec, text).unwrap();
    rec
}

#[test]
fn a_replay_holding_many_files_open_raises_the_limit_or_says_it_cannot() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rec = recording(dir.path());
    let out = dir.path().join("out");
    let args = [
        "syscalls",
        "replay",
        rec.to_str().unwrap(),
        "--fs",
        "ext4",
        "--image-mib",
        "64",
        "--timing",
        "fast",
        "--out",
        out.to_str().unwrap(),
    ];

    let run = joj_limited(&["--nofile=100:300"], None, &args);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr
            .contains(&format!("holds {FILES} descriptors open at once"))
            && run.stderr.contains("its hard limit is 300")
            && run.stderr.contains("fix: raise the hard limit"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("replay: call"),
        "refused before the replay: {}",
        run.stderr
    );

    let run = joj_limited(&["--nofile=100:20000"], None, &args);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}
