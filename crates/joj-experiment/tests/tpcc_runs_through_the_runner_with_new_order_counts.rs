//! The runner runs TPC-C like a Mobibench workload — load outside the window, `-n` paper
//! transactions inside it — and its result document says which workload ran, counts the
//! transactions by kind (New-Orders for tpmC) and carries the database's summary, which is the
//! same in DELETE and WAL mode. (One test per file: the runner's VFS counters are per process.)

mod common;

use common::paper_on_host as run;
use joj_workload::paper::{PaperWorkload, TpccMix};
use joj_workload::{JournalMode, StartState};

#[test]
fn tpcc_runs_through_the_runner_with_new_order_counts() {
    let w = PaperWorkload::Tpcc {
        mix: TpccMix::WriteIntensive,
        warehouses: 1,
    };
    let delete = run(w, JournalMode::Delete, StartState::Fresh);
    let wal = run(w, JournalMode::Wal, StartState::Fresh);
    for r in [&delete, &wal] {
        assert_eq!(r.transactions, 100);
        assert_eq!(r.config.op, "tpcc-write");
        assert_eq!(r.config.paper, Some(w));
        assert_eq!(r.config.page_size, Some(8192));
        let p = r.paper.as_ref().expect("paper section");
        assert_eq!(p.transactions_by_kind.values().sum::<u64>(), 100);
        assert_eq!(p.transactions_by_kind["payment"], 43);
        let new_orders = p.new_orders.unwrap();
        assert_eq!(
            new_orders
                + p.transactions_by_kind
                    .get("new_order_rolled_back")
                    .unwrap_or(&0),
            45
        );
        let tpmc = p.tpmc.unwrap();
        assert!((tpmc - new_orders as f64 * 60.0 / r.elapsed_s).abs() < 1e-6 * tpmc.max(1.0));
        // A sync per committed write transaction at least (Order-Status and Stock-Level read,
        // a rolled-back New-Order writes nothing durable).
        let writes = new_orders + 43 + p.transactions_by_kind["delivery"];
        let syncs = r.syscalls.fdatasync + r.syscalls.fsync;
        assert!(syncs >= writes, "{syncs} syncs for {writes} write commits");
    }
    assert_eq!(delete.paper.unwrap().summary, wal.paper.unwrap().summary);
    let json = serde_json::to_value(&wal.config).unwrap();
    assert_eq!(json["paper"]["name"], "tpcc");
    assert_eq!(json["paper"]["mix"], "write-intensive");

    // The load (≈60,000 rows) is outside the window: read-only transactions write nothing.
    let select = PaperWorkload::Tpcc {
        mix: TpccMix::SelectionOnly,
        warehouses: 1,
    };
    let r = run(select, JournalMode::Delete, StartState::Fresh);
    assert_eq!(r.paper.unwrap().transactions_by_kind["order_status"], 100);
    assert_eq!(
        r.files.database + r.files.rollback_journal,
        0,
        "{:?}",
        r.files
    );
    assert_eq!(r.syscalls.fdatasync + r.syscalls.fsync, 0);
}
