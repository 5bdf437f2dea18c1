//! Shared by the paper-workload tests: a database file in a temporary directory with the
//! default VFS, in a given journal mode, and small sizes of each workload.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
#![allow(dead_code)]

use joj_workload::paper::{PaperWorkload, TpccMix};
use rusqlite::Connection;
use std::path::Path;

/// The synthetic workload at a size that loads in milliseconds.
pub const SYNTHETIC: PaperWorkload = PaperWorkload::XftlSynthetic {
    rows: 3000,
    pages_per_txn: 5,
};

pub const RL: PaperWorkload = PaperWorkload::RlBench { divisor: 100 };

pub fn tpcc(mix: TpccMix) -> PaperWorkload {
    PaperWorkload::Tpcc { mix, warehouses: 1 }
}

/// Every workload in a small size: the synthetic one, the four TPC-C mixes, RL Benchmark.
pub fn all_small() -> Vec<PaperWorkload> {
    let mut v = vec![SYNTHETIC];
    v.extend(TpccMix::ALL.map(tpcc));
    v.push(RL);
    v
}

/// `dir/name` opened with SQLite's default VFS, 8 KiB pages (the paper's), `journal_mode`.
pub fn open(dir: &Path, name: &str, journal_mode: &str) -> Connection {
    let conn = Connection::open(dir.join(name)).expect("open");
    conn.execute_batch("PRAGMA page_size=8192;").unwrap();
    let mode: String = conn
        .query_row(&format!("PRAGMA journal_mode={journal_mode}"), [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(mode.eq_ignore_ascii_case(journal_mode), "{mode}");
    conn
}

pub fn integrity_ok(conn: &Connection) {
    let answer: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(answer, "ok");
}
