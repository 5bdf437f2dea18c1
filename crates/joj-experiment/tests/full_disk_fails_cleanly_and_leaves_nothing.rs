//! A run that fails after its scratch filesystem was made — here a real full disk while
//! pre-filling — reports the cause and the fix, and leaves no loop device, mount or tracefs
//! instance behind.

mod common;

use joj_experiment::{FsChoice, RunOptions, Workload};
use joj_linux::FsKind;
use joj_workload::{DbOp, DbWorkload, WorkloadError};

#[test]
fn full_disk_fails_cleanly_and_leaves_nothing() {
    if !common::kernel_ready(&[FsKind::Ext4]) {
        return;
    }
    let before = common::leftovers();
    // 64 MiB of pre-fill into a 32 MiB filesystem.
    let w = DbWorkload {
        op: DbOp::Update,
        transactions: 10,
        prefill_kib: Some(64 * 1024),
        ..Default::default()
    };
    let opts = RunOptions {
        fs: FsChoice::Scratch(FsKind::Ext4),
        trace: true,
        image_size_bytes: 32 << 20,
        trace_buffer_kb: 1024,
        ..RunOptions::default()
    };
    let err = joj_experiment::run(&Workload::Db(w), &opts).unwrap_err();
    assert!(
        matches!(err.workload(), Some(WorkloadError::DiskFull { .. })),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("--image-mib"),
        "the message names the fix: {err}"
    );
    assert_eq!(common::leftovers(), before, "nothing left behind");
}
