//! A saved log of more flushes than joj plans crash states of is refused, naming the bound and
//! the fix, before any state is planned or mounted; a log of more records than joj holds is
//! refused while it is read. 20 million 1-byte flush records (a 21 MB log) used to abort
//! allocating 1.9 GB for the epochs, and a log of the largest size read would have needed about
//! 180 GB.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::record::{LogOp, Mark};

#[test]
fn a_log_of_more_epochs_or_records_than_joj_plans_is_refused_with_its_bound() {
    let Some(staging) = common::ext4_staging() else {
        return;
    };
    // 2^20 flushes split the log into one epoch more than joj plans; 2^22 flushes and two
    // marks are more records than it reads.
    for (flushes, said) in [
        (1usize << 20, "1048577 epochs"),
        (1 << 22, "more than 4194304 records"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut ops = vec![LogOp::Mark(Mark::Begun(1))];
        ops.resize(1 + flushes, LogOp::Flush);
        ops.push(LogOp::Mark(Mark::Acknowledged(1)));
        let labels = [("fs", "ext4"), ("journal", "wal")];
        let log = common::crafted_ext4_log_of(staging.path(), dir.path(), &labels, ops);
        let run = common::joj_bounded(&[
            "crash",
            "fs",
            "--from-log",
            log.to_str().unwrap(),
            "--states",
            "1",
        ]);
        assert!(
            run.code == Some(1) && run.stderr.contains(said) && run.stderr.contains("fix:"),
            "{flushes} flushes: joj ended with {:?}: {}",
            run.code,
            run.stderr
        );
        assert!(
            !run.stderr.contains("e2fsck"),
            "{flushes} flushes: the image was checked before the log was refused: {}",
            run.stderr
        );
    }
}
