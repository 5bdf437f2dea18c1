//! `reference_summaries` gives, for every prefix of a run, the state a database file reaches
//! when those transactions commit — for TPC-C and RL Benchmark, whose drivers cannot predict
//! it themselves — so a crash test can tell whether a recovered database is a prefix state.

mod paper_common;

use joj_workload::paper::{self, Driver, RlTest, TpccMix, TxnKind};
use paper_common::{RL, open, tpcc};

#[test]
fn reference_summaries_match_a_file_run() {
    for (w, n) in [(tpcc(TpccMix::WriteIntensive), 15), (RL, 80)] {
        let reference = paper::reference_summaries(&w, 21, n).unwrap();
        assert_eq!(reference.len(), n as usize + 1);
        let dir = tempfile::tempdir().unwrap();
        let conn = open(dir.path(), "r.db", "delete");
        paper::prepare(&conn, &w, 21).unwrap();
        let mut driver = Driver::new(&w, 21).unwrap();
        assert_eq!(paper::check(&conn, &w).unwrap(), reference[0], "{w}");
        for i in 1..=n as usize {
            let kind = driver.transaction(&conn).unwrap();
            assert_eq!(
                paper::check(&conn, &w).unwrap(),
                reference[i],
                "{w} after {i}"
            );
            // Exactly the transactions that write change the state (schema included).
            let reads = matches!(
                kind,
                TxnKind::OrderStatus
                    | TxnKind::StockLevel
                    | TxnKind::NewOrderRolledBack
                    | TxnKind::Rl(
                        RlTest::SelectsNoIndex | RlTest::SelectsLike | RlTest::SelectsIndexed
                    )
            );
            assert_eq!(reference[i] == reference[i - 1], reads, "{w}: {i} {kind:?}");
        }
    }
}
