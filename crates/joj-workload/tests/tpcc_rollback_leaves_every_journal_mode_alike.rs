//! TPC-C's New-Orders that roll back (1 %, after their first writes) leave nothing behind in
//! any journal mode — DELETE, WAL, MEMORY and OFF (where SQLite's ROLLBACK works only because
//! nothing left the page cache) — so every mode reaches the same database.

mod paper_common;

use joj_workload::paper::{self, Driver, KindCounts, TpccMix, TxnKind};
use paper_common::{open, tpcc};

#[test]
fn tpcc_rollback_leaves_every_journal_mode_alike() {
    let w = tpcc(TpccMix::WriteIntensive);
    let dir = tempfile::tempdir().unwrap();
    let mut summaries = Vec::new();
    for mode in ["delete", "wal", "memory", "off"] {
        let conn = open(dir.path(), &format!("{mode}.db"), mode);
        paper::prepare(&conn, &w, 4).unwrap();
        let mut driver = Driver::new(&w, 4).unwrap();
        let mut counts = KindCounts::default();
        for _ in 0..400 {
            counts.add(driver.transaction(&conn).unwrap());
        }
        assert!(
            counts.get(TxnKind::NewOrderRolledBack) > 0,
            "the run must contain a rollback to test one"
        );
        paper_common::integrity_ok(&conn);
        summaries.push((mode, paper::check(&conn, &w).unwrap()));
    }
    for (mode, s) in &summaries[1..] {
        assert_eq!(*s, summaries[0].1, "{mode} differs from delete");
    }
}
