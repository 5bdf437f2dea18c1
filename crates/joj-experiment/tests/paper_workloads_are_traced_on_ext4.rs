//! The paper workloads run on a scratch ext4 like Mobibench's: traced, classified, their
//! cross-checks holding, a flush per committed write, the synthetic workload's database the
//! one its driver predicted, and the same database in DELETE and WAL mode.

mod common;

use joj_linux::FsKind;
use joj_workload::paper::{PaperWorkload, TpccMix};
use joj_workload::{DbWorkload, JournalMode};

#[test]
fn paper_workloads_are_traced_on_ext4() {
    if !common::kernel_ready(&[FsKind::Ext4]) {
        return;
    }
    let workloads = [
        PaperWorkload::XftlSynthetic {
            rows: 5000,
            pages_per_txn: 5,
        },
        PaperWorkload::Tpcc {
            mix: TpccMix::WriteIntensive,
            warehouses: 1,
        },
    ];
    for paper in workloads {
        let mut summaries = Vec::new();
        for journal in [JournalMode::Delete, JournalMode::Wal] {
            let r = common::traced(
                FsKind::Ext4,
                DbWorkload {
                    paper: Some(paper),
                    journal,
                    transactions: 40,
                    page_size: 8192,
                    ..Default::default()
                },
            );
            common::assert_checks(&r);
            assert_eq!(r.config.op, paper.name());
            let b = r.block.as_ref().unwrap();
            let p = r.paper.as_ref().unwrap();
            let kinds = &p.transactions_by_kind;
            let writes = kinds.get("xftl_update").unwrap_or(&0)
                + kinds.get("new_order").unwrap_or(&0)
                + kinds.get("payment").unwrap_or(&0)
                + kinds.get("delivery").unwrap_or(&0);
            assert!(writes > 0);
            assert!(
                b.flushes >= writes,
                "{paper} {journal}: {} flushes for {writes} write commits",
                b.flushes
            );
            match journal {
                JournalMode::Wal => assert!(b.data_by_role.wal >= r.files.wal),
                _ => assert!(b.data_by_role.rollback_journal >= r.files.rollback_journal),
            }
            summaries.push(p.summary);
        }
        assert_eq!(summaries[0], summaries[1], "{paper}");
    }
}
