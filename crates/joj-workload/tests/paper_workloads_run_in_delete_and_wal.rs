//! Every paper workload loads and runs on a database file with SQLite's default VFS in
//! journal modes DELETE and WAL, leaving a database that passes `integrity_check` and the
//! workload's own check; the synthetic workload's is the one its driver predicted.

mod paper_common;

use joj_workload::paper::{self, Driver, KindCounts, PaperWorkload, TxnKind};
use paper_common::{all_small, integrity_ok, open};

#[test]
fn paper_workloads_run_in_delete_and_wal() {
    for mode in ["delete", "wal"] {
        for w in all_small() {
            let dir = tempfile::tempdir().unwrap();
            let conn = open(dir.path(), "paper.db", mode);
            paper::prepare(&conn, &w, 11).unwrap();
            let loaded = paper::check(&conn, &w).unwrap();
            let mut driver = Driver::new(&w, 11).unwrap();
            let mut counts = KindCounts::default();
            let n = match w {
                // One full pass, so every test of the benchmark runs, and a few more.
                PaperWorkload::RlBench { divisor } => {
                    joj_workload::paper::rlbench::transactions_per_pass(divisor) + 5
                }
                _ => 60,
            };
            for _ in 0..n {
                counts.add(driver.transaction(&conn).unwrap());
            }
            assert_eq!(driver.committed(), n);
            assert!(conn.is_autocommit(), "{w}: no transaction left open");
            integrity_ok(&conn);
            let after = paper::check(&conn, &w).unwrap();
            match w {
                PaperWorkload::XftlSynthetic { rows, .. } => {
                    assert_eq!(after.rows, rows);
                    assert_ne!(after, loaded, "{w}: the updates changed the digest");
                    assert_eq!(Some(after), driver.expected(), "{mode} {w}");
                    assert_eq!(counts.get(TxnKind::XftlUpdate), n);
                }
                PaperWorkload::Tpcc { .. } => {
                    assert!(loaded.rows > 50_000, "{w}: {loaded}");
                    assert_eq!(driver.expected(), None);
                    assert_eq!(counts.by_kind.values().sum::<u64>(), n);
                }
                PaperWorkload::RlBench { .. } => {
                    assert_eq!(loaded.rows, 0, "RL Benchmark creates its own tables");
                    // 14 tests, each at least once.
                    assert_eq!(counts.by_kind.len(), 14, "{:?}", counts.by_kind);
                    // The second pass began: t1 was recreated and holds its first inserts.
                    let t1: i64 = conn
                        .query_row("SELECT count(*) FROM t1", [], |r| r.get(0))
                        .unwrap();
                    assert_eq!(t1, 4);
                    // Its four rows and its one schema entry.
                    assert_eq!(after.rows, 4 + 1);
                }
            }
        }
    }
}
