//! A saved log whose writes all fall in one epoch (no flush between them) is planned in memory
//! proportional to the log and to the states checked. The crash states used to be built for the
//! whole epoch before `--states` applied, every in-order prefix listing its writes: 40,000
//! writes took 3.2 GB to check one state, and 200,000 aborted at 4 GB (about 80 GB needed).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::record::{LogOp, Mark};

#[test]
fn a_log_of_200_000_writes_in_one_epoch_is_checked_within_4_gib() {
    let Some(staging) = common::ext4_staging() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // 200,000 one-sector writes to the last 64 sectors of the 64 MiB device, then one flush.
    let device = 64u64 << 20;
    let mut ops = vec![LogOp::Mark(Mark::Begun(1))];
    ops.extend((0..200_000u64).map(|i| LogOp::Write {
        offset_bytes: device - 512 * (1 + i % 64),
        data: vec![0; 512],
    }));
    ops.extend([LogOp::Flush, LogOp::Mark(Mark::Acknowledged(1))]);
    let labels = [("fs", "ext4"), ("journal", "wal")];
    let log = common::crafted_ext4_log_of(staging.path(), dir.path(), &labels, ops);
    let out = dir.path().join("report.json");
    // Three states: an in-order prefix and two drawn from the epoch's writes.
    let run = common::joj_bounded_to(
        &[
            "crash",
            "fs",
            "--from-log",
            log.to_str().unwrap(),
            "--states",
            "3",
            "--json",
        ],
        &out,
    );
    // A verdict (the image holds no database: every state is a violation), not an abort.
    assert!(
        matches!(run.code, Some(0 | 1)),
        "joj ended with {:?}: {}",
        run.code,
        run.stderr
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap())
        .unwrap_or_else(|e| {
            panic!("no report ({e}): {}", run.stderr);
        });
    assert_eq!(doc["states_explored"], 3, "{doc}");
    assert_eq!(doc["log"]["writes"], 200_000, "{doc}");
}
