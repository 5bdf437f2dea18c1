//! A steady-state run of the synthetic workload warms up with the same driver and measures the
//! transactions that follow: the database it leaves is the reference state after both, its WAL
//! is at its final size from the window's start, and each measured commit logs about
//! `pages_per_txn` pages of 8 KiB to the WAL.

mod common;

use common::paper_on_host as run;
use joj_workload::paper::{self, PaperWorkload};
use joj_workload::{DbWorkload, JournalMode, StartState};

#[test]
fn synthetic_steady_run_continues_the_warm_up() {
    let w = PaperWorkload::XftlSynthetic {
        rows: 5000,
        pages_per_txn: 5,
    };
    let r = run(w, JournalMode::Wal, StartState::Steady);
    let steady = r.checks.iter().find(|c| c.name == "steady_wal");
    assert!(steady.is_some_and(|c| c.ok), "{:?}", r.checks);
    let p = r.paper.unwrap();
    assert_eq!(p.transactions_by_kind["xftl_update"], 100);
    assert_eq!(p.new_orders, None);
    // The database after the warm-up's transactions (a quarter more than measured, see
    // `DbWorkload::warm_up_transactions`) and the 100 measured ones.
    let warm_up = DbWorkload {
        start: StartState::Steady,
        transactions: 100,
        ..Default::default()
    }
    .warm_up_transactions();
    assert_eq!(warm_up, 125);
    let reference = paper::reference_summaries(&w, 42, warm_up + 100).unwrap();
    assert_eq!(p.summary, reference[(warm_up + 100) as usize]);
    // About 5 pages of 8 KiB per commit reach the WAL (one frame per page, plus headers).
    let per_txn = r.files.wal as f64 / 100.0;
    // (Two of a transaction's rows share a leaf page now and then: a little under 5 frames.)
    assert!(
        (4.5 * 8216.0..=6.0 * 8216.0).contains(&per_txn),
        "{per_txn} B per txn"
    );
}
