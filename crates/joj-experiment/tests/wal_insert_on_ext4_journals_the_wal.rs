//! The JOJ itself: on ext4 (ordered), a fresh-database WAL insert with synchronous=FULL makes
//! ext4 write its journal while SQLite syncs the WAL. The classified trace must show WAL data of
//! at least what SQLite wrote, FS journal bytes attributed to the WAL's syncs, and a flush per
//! commit.

mod common;

use joj_linux::FsKind;
use joj_workload::{DbWorkload, JournalMode};

#[test]
fn wal_insert_on_ext4_journals_the_wal() {
    if !common::kernel_ready(&[FsKind::Ext4]) {
        return;
    }
    let n = 50;
    let r = common::traced(
        FsKind::Ext4,
        DbWorkload {
            journal: JournalMode::Wal,
            transactions: n,
            ..Default::default()
        },
    );
    common::assert_checks(&r);
    let b = r.block.expect("block totals");
    let per = r.block_per_txn.expect("per transaction");
    // Each commit writes one 4120-byte frame, which spans two 4 KiB blocks.
    assert!(b.data_by_role.wal >= r.files.wal, "{b:?}");
    assert!(per.data_by_role.wal >= 4096.0, "{per:?}");
    // While the WAL grows, every fdatasync commits an ext4 journal transaction.
    assert!(per.fs_journal_bytes >= 8192.0, "{per:?}");
    let joj = r.fs_journal_by_synced_file.expect("attribution");
    assert!(
        joj.wal as f64 >= 0.9 * b.fs_journal_bytes as f64,
        "JOJ is the WAL's: {joj:?} of {b:?}"
    );
    assert!(per.flushes >= 1.0, "{per:?}");
    assert!(r.syscalls.fdatasync >= n, "{:?}", r.syscalls);
    assert_eq!(b.data_by_role.rollback_journal, 0);
}
