//! One seed decides every choice: the same workload and seed leave the same database (the same
//! summary) in DELETE mode, in WAL mode and in memory; another seed leaves another.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod paper_common;

use joj_workload::paper::{self, Driver, PaperWorkload, Summary};
use paper_common::{all_small, open};
use rusqlite::Connection;

fn run(conn: &Connection, w: &PaperWorkload, seed: u64, n: u64) -> Summary {
    paper::prepare(conn, w, seed).unwrap();
    let mut driver = Driver::new(w, seed).unwrap();
    for _ in 0..n {
        driver.transaction(conn).unwrap();
    }
    paper::check(conn, w).unwrap()
}

#[test]
fn paper_workloads_are_deterministic() {
    for w in all_small() {
        // Enough RL transactions to pass the inserts, updates and deletes of the first pass (73 = through test 13 at divisor 100).
        let n = match w {
            PaperWorkload::RlBench { .. } => 73,
            _ => 40,
        };
        let dir = tempfile::tempdir().unwrap();
        let delete = run(&open(dir.path(), "a.db", "delete"), &w, 5, n);
        let wal = run(&open(dir.path(), "b.db", "wal"), &w, 5, n);
        let memory = run(&Connection::open_in_memory().unwrap(), &w, 5, n);
        assert_eq!(delete, wal, "{w}");
        assert_eq!(delete, memory, "{w}");
        let other = run(&Connection::open_in_memory().unwrap(), &w, 6, n);
        assert_ne!(
            delete.digest, other.digest,
            "{w}: seed 6 ran other transactions"
        );
    }
}
