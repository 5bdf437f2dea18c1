//! A saved log that begins more transactions than a run of joj records (`-n` is at most
//! 100,000) is refused, naming the bound and the fix, before its image is checked or mounted.
//! The PostMark-like check holds the state after each transaction, so a log of 400,000 begun
//! marks (4 MB) took 1 GB, and memory grew faster than the marks.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::record::{LogOp, Mark};

#[test]
fn a_log_of_more_begun_transactions_than_a_run_has_is_refused() {
    let Some(staging) = common::ext4_staging() else {
        return;
    };
    let labels = [("fs", "ext4"), ("journal", "wal"), ("workload", "postmark")];
    for (begun, refused) in [(100_001u64, true), (100_000, false)] {
        let dir = tempfile::tempdir().unwrap();
        let mut ops: Vec<LogOp> = (1..=begun).map(|i| LogOp::Mark(Mark::Begun(i))).collect();
        ops.push(LogOp::Flush);
        let log = common::crafted_ext4_log_of(staging.path(), dir.path(), &labels, ops);
        let run = common::joj_bounded(&[
            "crash",
            "fs",
            "--from-log",
            log.to_str().unwrap(),
            "--states",
            "1",
        ]);
        let said = format!("the log begins {begun} transactions, more than the 100000");
        if refused {
            assert!(
                run.code == Some(1) && run.stderr.contains(&said) && run.stderr.contains("fix:"),
                "{begun} begun: joj ended with {:?}: {}",
                run.code,
                run.stderr
            );
        } else {
            // Checked (the image holds none of the pool's files: a violation).
            assert!(
                matches!(run.code, Some(0 | 1)) && !run.stderr.contains("more than the 100000"),
                "{begun} begun: joj ended with {:?}: {}",
                run.code,
                run.stderr
            );
        }
    }
}
