//! A file of the PostMark-like workload in a crash image that is longer than the run ever made
//! it is a broken state, said with its size, and is not read: a crafted image's sparse
//! `joj/pm000000` of 64 GiB (which `e2fsck -fn` finds clean) used to be read whole, into as
//! much memory (1 GiB: 4 GB and 25 s; 64 GiB: out of memory).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::record::{LogOp, Mark};

#[test]
fn a_sparse_file_of_64_gib_is_judged_broken_by_its_size() {
    let Some(staging) = common::ext4_staging() else {
        return;
    };
    let bytes = 64u64 << 30;
    std::fs::File::create(staging.path().join("joj/pm000000"))
        .and_then(|f| f.set_len(bytes))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ops = vec![
        LogOp::Mark(Mark::Begun(1)),
        LogOp::Flush,
        LogOp::Mark(Mark::Acknowledged(1)),
    ];
    let labels = [("fs", "ext4"), ("journal", "wal"), ("workload", "postmark")];
    let log = common::crafted_ext4_log_of(staging.path(), dir.path(), &labels, ops);
    let out = dir.path().join("report.json");
    let run = common::joj_bounded_to(
        &[
            "crash",
            "fs",
            "--from-log",
            log.to_str().unwrap(),
            "--states",
            "2",
            "--json",
        ],
        &out,
    );
    assert_eq!(run.code, Some(1), "a violation, not {}", run.stderr);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap())
        .unwrap_or_else(|e| {
            panic!("no report ({e}): {}", run.stderr);
        });
    let found = doc["found"].as_array().unwrap();
    assert!(
        !found.is_empty() && doc["broken"] == doc["states_explored"],
        "{doc}"
    );
    for f in found {
        let detail = f["violation"]["detail"].as_str().unwrap_or_default();
        assert!(
            f["violation"]["kind"] == "broken"
                && detail.contains(&format!(
                    "pm000000 holds {bytes} bytes, more than the run ever made it"
                )),
            "{f}"
        );
    }
}
