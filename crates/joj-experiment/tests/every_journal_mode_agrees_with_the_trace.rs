//! Every SQLite journal mode on ext4, traced: what SQLite wrote through the VFS reaches the
//! block layer for each file role it synced (including rollback journals SQLite deleted), and
//! modes without a log write no log bytes.

mod common;

use joj_linux::FsKind;
use joj_workload::{DbOp, DbWorkload, JournalMode};

#[test]
fn every_journal_mode_agrees_with_the_trace() {
    if !common::kernel_ready(&[FsKind::Ext4]) {
        return;
    }
    for op in [DbOp::Insert, DbOp::Update] {
        for mode in JournalMode::SQLITE {
            let r = common::traced(
                FsKind::Ext4,
                DbWorkload {
                    op,
                    journal: mode,
                    transactions: 20,
                    ..Default::default()
                },
            );
            let b = r.block.as_ref().unwrap();
            common::assert_checks(&r);
            match mode {
                JournalMode::Off | JournalMode::Memory => {
                    assert_eq!(
                        b.data_by_role.wal + b.data_by_role.rollback_journal,
                        0,
                        "{op:?} {mode}"
                    );
                    assert!(b.data_by_role.database > 0, "{op:?} {mode}: {b:?}");
                }
                JournalMode::Wal => {
                    assert!(b.data_by_role.wal >= r.files.wal, "{op:?} {mode}: {b:?}")
                }
                // WALDIO has its own test (waldio_log_commits_journal_nothing.rs).
                JournalMode::Waldio(_) | JournalMode::Xftl | JournalMode::Iftl => {
                    unreachable!("JournalMode::SQLITE holds SQLite's modes")
                }
                JournalMode::Delete | JournalMode::Truncate | JournalMode::Persist => {
                    assert!(r.files.rollback_journal > 0);
                    assert!(
                        b.data_by_role.rollback_journal >= r.files.rollback_journal,
                        "{op:?} {mode}: {b:?}"
                    );
                    assert!(
                        b.data_by_role.database >= r.files.database,
                        "{op:?} {mode}: {b:?}"
                    );
                }
            }
            assert!(
                b.flushes >= 20,
                "{op:?} {mode}: a flush per commit at least: {b:?}"
            );
        }
    }
}
