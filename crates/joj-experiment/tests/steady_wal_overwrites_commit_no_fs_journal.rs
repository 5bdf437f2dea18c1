//! Once the WAL file has its size (steady state: warm-up, then a checkpoint restarts the WAL),
//! commits overwrite allocated blocks and `fdatasync` needs no ext4 journal transaction: the
//! FS-journal volume per insert collapses while WAL data stays.

mod common;

use joj_linux::FsKind;
use joj_workload::{DbWorkload, JournalMode, StartState};

#[test]
fn steady_wal_overwrites_commit_no_fs_journal() {
    if !common::kernel_ready(&[FsKind::Ext4]) {
        return;
    }
    let w = DbWorkload {
        journal: JournalMode::Wal,
        transactions: 50,
        ..Default::default()
    };
    let fresh = common::traced(FsKind::Ext4, w.clone());
    let steady = common::traced(
        FsKind::Ext4,
        DbWorkload {
            start: StartState::Steady,
            ..w
        },
    );
    common::assert_checks(&steady);
    let (f, s) = (fresh.block_per_txn.unwrap(), steady.block_per_txn.unwrap());
    assert!(s.data_by_role.wal >= 4096.0, "{s:?}");
    assert!(
        s.fs_journal_bytes * 4.0 < f.fs_journal_bytes,
        "steady FS journal {} B/txn should be far below fresh {} B/txn",
        s.fs_journal_bytes,
        f.fs_journal_bytes
    );
}
