//! A steady-state run of the synthetic workload warms up with the same driver and measures the
//! transactions that follow: the database it leaves is the reference state after both, and
//! each measured commit logs about `pages_per_txn` pages of 8 KiB to the WAL.

use joj_experiment::{RunOptions, Workload};
use joj_workload::paper::{self, PaperWorkload};
use joj_workload::{DbWorkload, JournalMode, StartState};

fn run(paper: PaperWorkload, journal: JournalMode, start: StartState) -> joj_experiment::RunResult {
    let w = DbWorkload {
        paper: Some(paper),
        transactions: 100,
        journal,
        page_size: 8192,
        start,
        ..Default::default()
    };
    joj_experiment::run(&Workload::Db(w), &RunOptions::default()).expect("run")
}

#[test]
fn synthetic_steady_run_continues_the_warm_up() {
    let w = PaperWorkload::XftlSynthetic {
        rows: 5000,
        pages_per_txn: 5,
    };
    let r = run(w, JournalMode::Wal, StartState::Steady);
    let p = r.paper.unwrap();
    assert_eq!(p.transactions_by_kind["xftl_update"], 100);
    assert_eq!(p.new_orders, None);
    // The database after 100 warm-up and 100 measured transactions.
    let reference = paper::reference_summaries(&w, 42, 200).unwrap();
    assert_eq!(p.summary, reference[200]);
    // About 5 pages of 8 KiB per commit reach the WAL (one frame per page, plus headers).
    let per_txn = r.files.wal as f64 / 100.0;
    // (Two of a transaction's rows share a leaf page now and then: a little under 5 frames.)
    assert!(
        (4.5 * 8216.0..=6.0 * 8216.0).contains(&per_txn),
        "{per_txn} B per txn"
    );
}
