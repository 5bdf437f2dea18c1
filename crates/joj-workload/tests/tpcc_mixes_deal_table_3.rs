//! Each TPC-C mix runs its transaction types in the proportions of the X-FTL paper's Table 3,
//! about 1 % of New-Orders roll back, Stock-Level joins, and TPC-C's consistency conditions
//! hold afterwards — and `check` reports a database where they do not.

mod paper_common;

use joj_workload::WorkloadError;
use joj_workload::paper::{self, Driver, KindCounts, TpccMix, TxnKind, tpcc};
use rusqlite::Connection;

const KINDS: [TxnKind; 5] = [
    TxnKind::Delivery,
    TxnKind::OrderStatus,
    TxnKind::Payment,
    TxnKind::StockLevel,
    TxnKind::NewOrder,
];

#[test]
fn tpcc_mixes_deal_table_3() {
    let table_3 = [
        (TpccMix::WriteIntensive, [4, 4, 43, 4, 45]),
        (TpccMix::ReadIntensive, [0, 50, 0, 45, 5]),
        (TpccMix::SelectionOnly, [0, 100, 0, 0, 0]),
        (TpccMix::JoinOnly, [0, 0, 0, 100, 0]),
    ];
    let n = 2000u64;
    for (mix, percent) in table_3 {
        let w = paper_common::tpcc(mix);
        let conn = Connection::open_in_memory().unwrap();
        paper::prepare(&conn, &w, 9).unwrap();
        let mut driver = Driver::new(&w, 9).unwrap();
        let mut counts = KindCounts::default();
        for _ in 0..n {
            counts.add(driver.transaction(&conn).unwrap());
        }
        for (kind, pct) in KINDS.into_iter().zip(percent) {
            assert_eq!(mix.percent(kind), pct, "{mix:?} {kind:?}");
            let mut got = counts.get(kind);
            if kind == TxnKind::NewOrder {
                got += counts.get(TxnKind::NewOrderRolledBack);
            }
            let share = got as f64 / n as f64 * 100.0;
            assert!(
                (share - f64::from(pct)).abs() <= 3.0,
                "{mix:?} {kind:?}: {share:.1} % for {pct} %"
            );
            // A deck of 100 cards per 100 transactions: exact over whole decks.
            assert_eq!(got, u64::from(pct) * n / 100, "{mix:?} {kind:?}");
        }
        if mix == TpccMix::WriteIntensive {
            // 1 % of 900 New-Orders roll back by design.
            let rolled = counts.get(TxnKind::NewOrderRolledBack);
            assert!((2..=25).contains(&rolled), "{rolled} of 900 rolled back");
            assert_eq!(counts.new_orders + rolled, 900);
            let undelivered: i64 = conn
                .query_row("SELECT count(*) FROM new_order", [], |r| r.get(0))
                .unwrap();
            // 900 loaded, + committed New-Orders, − up to 10 per Delivery.
            assert!(undelivered > 900, "{undelivered}");
        }
        // Consistency conditions 1–4 hold after every mix.
        paper::check(&conn, &w).unwrap();
    }
}

#[test]
fn check_reports_a_broken_consistency_condition() {
    let w = paper_common::tpcc(TpccMix::WriteIntensive);
    let conn = Connection::open_in_memory().unwrap();
    paper::prepare(&conn, &w, 2).unwrap();
    let mut driver = Driver::new(&w, 2).unwrap();
    for _ in 0..50 {
        driver.transaction(&conn).unwrap();
    }
    paper::check(&conn, &w).unwrap();
    // A Payment that reached the district but not the warehouse.
    conn.execute_batch("UPDATE district SET d_ytd = d_ytd + 100 WHERE d_id = 3")
        .unwrap();
    match paper::check(&conn, &w) {
        Err(WorkloadError::Mismatch { what, .. }) => {
            assert!(what.contains("condition 1"), "{what}")
        }
        other => panic!("{other:?}"),
    }
    // A New-Order that lost its order lines.
    conn.execute_batch(
        "UPDATE district SET d_ytd = d_ytd - 100 WHERE d_id = 3;
         DELETE FROM order_line WHERE ol_d_id = 4 AND ol_o_id = 2;",
    )
    .unwrap();
    match paper::check(&conn, &w) {
        Err(WorkloadError::Mismatch { what, .. }) => {
            assert!(what.contains("condition 4"), "{what}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn stock_level_is_a_join_of_order_line_and_stock() {
    let w = paper_common::tpcc(TpccMix::JoinOnly);
    let conn = Connection::open_in_memory().unwrap();
    paper::prepare(&conn, &w, 1).unwrap();
    let mut driver = Driver::new(&w, 1).unwrap();
    for _ in 0..3 {
        assert_eq!(driver.transaction(&conn).unwrap(), TxnKind::StockLevel);
    }
    // The plan SQLite runs visits both tables, the inner one by its key.
    let plan: Vec<String> = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {}", tpcc::STOCK_LEVEL_JOIN))
        .unwrap()
        .query_map([1, 1, 301, 15], |r| r.get::<_, String>(3))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(plan.iter().any(|p| p.contains("order_line")), "{plan:?}");
    assert!(
        plan.iter()
            .any(|p| p.contains("stock") && p.contains("PRIMARY KEY")),
        "{plan:?}"
    );
    // Low stock exists in a fresh database (quantities 10..=100, thresholds 10..=20).
    let low: i64 = conn
        .query_row(tpcc::STOCK_LEVEL_JOIN, [1, 1, 301, 20], |r| r.get(0))
        .unwrap();
    assert!(low > 0, "{low}");
}
