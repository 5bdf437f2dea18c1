//! WALDIO on ext4 (ordered), traced: each insert's log commit is one 4 KiB direct write and a
//! flush, the filesystem journals nothing while the WAL is synced (no JOJ), and the waldio
//! counters agree with the block layer. Stock WAL in the same shape journals ~20 KiB per insert.

mod common;

use joj_linux::FsKind;
use joj_workload::{DbWorkload, JournalMode, WaldioMode};

#[test]
fn waldio_log_commits_journal_nothing() {
    if !common::kernel_ready(&[FsKind::Ext4]) {
        return;
    }
    let n = 100u64;
    for sync in [joj_waldio::SyncOption::Full, joj_waldio::SyncOption::Fua] {
        let r = common::traced(
            FsKind::Ext4,
            DbWorkload {
                journal: JournalMode::Waldio(WaldioMode { sync, group: false }),
                transactions: n,
                ..Default::default()
            },
        );
        common::assert_checks(&r);
        let b = r.block.as_ref().unwrap();
        let jnl = r.fs_journal_by_synced_file.as_ref().unwrap();
        assert_eq!(
            jnl.wal, 0,
            "{sync}: FS journal written while the WAL was synced: {jnl:?}"
        );
        let w = r.waldio.as_ref().expect("waldio counters");
        assert_eq!(w.commits, n, "{w:?}");
        assert_eq!(
            w.prealloc_bytes, 0,
            "preallocation happens when the WAL is created, before the window: {w:?}"
        );
        // One direct write per commit; a commit is one 4 KiB frame unless a page split adds some.
        assert!(w.direct_writes >= n && w.direct_writes <= n + 2, "{w:?}");
        assert!(b.data_by_role.wal >= w.direct_write_bytes, "{b:?} {w:?}");
        assert!(
            b.data_by_role.wal <= n * 4096 * 12 / 10,
            "more than 4.8 KiB of WAL per insert: {b:?}"
        );
        assert!(b.flushes >= n, "a flush per commit: {b:?}");
    }
}
