//! `--start steady` is steady for every operation: the warm-up leaves each WAL larger than the
//! window needs, so the window creates no WAL, none grows, and the filesystem journals nothing
//! for the WAL's syncs — while the measured updates and deletes do write (an update that left a
//! row's bytes as they were would write nothing: the warm-up's values differ from both the
//! pre-fill's and the measured ones).

mod common;

use joj_linux::FsKind;
use joj_workload::{DbOp, DbWorkload, JournalMode, KeyOrder, StartState};

#[test]
fn steady_update_window_creates_no_wal_and_journals_no_wal_growth() {
    if !common::kernel_ready(&[FsKind::Ext4]) {
        return;
    }
    for (op, keys) in [
        (DbOp::Update, KeyOrder::Sequential),
        (DbOp::Update, KeyOrder::Random),
        (DbOp::Delete, KeyOrder::Random),
        (DbOp::Insert, KeyOrder::Sequential),
    ] {
        let w = DbWorkload {
            op,
            keys,
            journal: JournalMode::Wal,
            transactions: 200,
            start: StartState::Steady,
            ..Default::default()
        };
        let r = common::traced(FsKind::Ext4, w);
        common::assert_checks(&r);
        let steady = r.checks.iter().find(|c| c.name == "steady_wal");
        assert!(
            steady.is_some_and(|c| c.ok),
            "{op} {keys:?}: {:?}",
            r.checks
        );
        let per_txn = r.block_per_txn.as_ref().unwrap();
        // Every measured transaction logs at least its page (a 4 KiB WAL block, usually two).
        assert!(
            per_txn.data_by_role.wal >= 4096.0,
            "{op} {keys:?}: {} B of WAL per transaction",
            per_txn.data_by_role.wal
        );
        // Overwrites of allocated WAL blocks with fdatasync commit no journal transaction.
        let wal_joj = r.fs_journal_by_synced_file.unwrap().wal;
        assert_eq!(
            wal_joj, 0,
            "{op} {keys:?}: {wal_joj} B of FS journal for WAL syncs"
        );
    }
    assert_eq!(common::leftovers(), (vec![], vec![], vec![]));
}
