//! The classification works beyond ext4: xfs's internal log is FS journal, ext4's external
//! journal device is all FS journal, and btrfs (no journal area; its fsync log tree is
//! metadata) shows WAL data and metadata.

mod common;

use joj_linux::FsKind;
use joj_workload::{DbWorkload, JournalMode};

#[test]
fn xfs_btrfs_and_external_journal_are_classified() {
    let kinds = [FsKind::Xfs, FsKind::Btrfs, FsKind::Ext4ExtJournal];
    if !common::kernel_ready(&kinds) {
        return;
    }
    for kind in kinds {
        let r = common::traced(
            kind,
            DbWorkload {
                journal: JournalMode::Wal,
                transactions: 20,
                ..Default::default()
            },
        );
        common::assert_checks(&r);
        let b = r.block.unwrap();
        assert!(b.data_by_role.wal >= r.files.wal, "{kind}: {b:?}");
        match kind {
            FsKind::Btrfs => {
                assert_eq!(b.fs_journal_bytes, 0, "btrfs has no journal area");
                assert!(
                    b.metadata_bytes > 0,
                    "btrfs fsync writes its log tree: {b:?}"
                );
            }
            _ => assert!(b.fs_journal_bytes > 0, "{kind}: {b:?}"),
        }
    }
}
