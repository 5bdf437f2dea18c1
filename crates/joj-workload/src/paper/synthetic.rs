//! The X-FTL paper's synthetic workload (§6.2, §6.3.1): "a `partsupply` table created by the
//! `dbgen` tool of the TPC-H benchmark ... 60,000 tuples of 220 bytes each. Each transaction
//! reads a fixed number of tuples using random `partkey` values, updates the `supplycost` field
//! of each tuple, and commits." The paper varies that number from 1 to 20 (Figure 5; Table 1
//! uses 5) and runs 1,000 transactions per point.
//!
//! The table is TPC-H's `partsupp` as `dbgen` fills it — four suppliers per part, the supplier
//! keys by dbgen's formula, available quantity 1..=9999, supply cost 1.00..=1000.00 (stored in
//! cents), a comment of random words — with one change: the lookup key is the row's number
//! `ps_key`, SQLite's rowid, so that reading or updating a tuple touches one leaf page and `k`
//! tuples touch about `k` pages (the paper's "updated pages per transaction"). A comment of
//! 180..=220 characters (200 on average) makes each stored tuple about 220 bytes: ~36 per
//! 8 KiB page, ~1,700 leaf pages for 60,000 rows.
//!
//! The driver knows every supply cost: it checks each value it reads against that model and
//! predicts the table's [`Summary`] after every commit ([`Driver::expected`]).

pub use super::workload::{MAX_PAGES_PER_TXN, MAX_ROWS, PAPER_ROWS};

use super::kind::TxnKind;
use super::summary::Summary;
use crate::error::WorkloadError;
use crate::sqlite::sql_err;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::Connection;
use rusqlite::types::ValueRef;
use std::ops::RangeInclusive;

pub const TABLE: &str = "partsupp";
/// The paper's table size.
const SUPPLYCOST_CENTS: RangeInclusive<i64> = 100..=100_000;
const AVAILQTY: RangeInclusive<i64> = 1..=9999;
const COMMENT_CHARS: RangeInclusive<usize> = 180..=220;
const WORDS: [&str; 24] = [
    "furiously",
    "carefully",
    "quickly",
    "blithely",
    "slyly",
    "final",
    "regular",
    "express",
    "pending",
    "special",
    "ironic",
    "bold",
    "even",
    "silent",
    "packages",
    "requests",
    "deposits",
    "accounts",
    "instructions",
    "theodolites",
    "foxes",
    "pinto",
    "beans",
    "sleep",
];

/// One tuple as `dbgen` would make it (supply cost as loaded, before any update).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartSupp {
    pub key: i64,
    pub partkey: i64,
    pub suppkey: i64,
    pub availqty: i64,
    pub supplycost_cents: i64,
    pub comment: String,
}

impl PartSupp {
    /// Tuple `key` (1-based) of a table of `rows` tuples. Each tuple has its own random stream,
    /// so the driver can regenerate any one without the others.
    pub fn generate(seed: u64, rows: u64, key: u64) -> PartSupp {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ key.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        // TPC-H: 4 suppliers per part, S = 10,000·SF suppliers for 800,000·SF partsupp rows.
        let suppliers = (rows / 80).max(4);
        let partkey = (key - 1) / 4 + 1;
        let i = (key - 1) % 4;
        let suppkey = (partkey + i * (suppliers / 4 + (partkey - 1) / suppliers)) % suppliers + 1;
        let availqty = rng.random_range(AVAILQTY);
        let supplycost_cents = rng.random_range(SUPPLYCOST_CENTS);
        let len = rng.random_range(COMMENT_CHARS);
        let mut comment = String::with_capacity(len + 16);
        while comment.len() < len {
            if !comment.is_empty() {
                comment.push(' ');
            }
            comment.push_str(WORDS[rng.random_range(0..WORDS.len())]);
        }
        comment.truncate(len);
        PartSupp {
            key: key as i64,
            partkey: partkey as i64,
            suppkey: suppkey as i64,
            availqty,
            supplycost_cents,
            comment,
        }
    }

    /// The columns in table order, as `SELECT *` returns them.
    fn values(&self, supplycost_cents: i64) -> [ValueRef<'_>; 6] {
        [
            ValueRef::Integer(self.key),
            ValueRef::Integer(self.partkey),
            ValueRef::Integer(self.suppkey),
            ValueRef::Integer(self.availqty),
            ValueRef::Integer(supplycost_cents),
            ValueRef::Text(self.comment.as_bytes()),
        ]
    }
}

pub(super) fn prepare(conn: &Connection, rows: u64, seed: u64) -> Result<(), WorkloadError> {
    let tx = conn
        .unchecked_transaction()
        .map_err(sql_err("BEGIN (load partsupp)"))?;
    tx.execute_batch(
        "CREATE TABLE partsupp (
            ps_key INTEGER PRIMARY KEY,
            ps_partkey INTEGER NOT NULL,
            ps_suppkey INTEGER NOT NULL,
            ps_availqty INTEGER NOT NULL,
            ps_supplycost INTEGER NOT NULL,
            ps_comment TEXT NOT NULL
        );",
    )
    .map_err(sql_err("creating partsupp"))?;
    {
        let mut ins = tx
            .prepare("INSERT INTO partsupp VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            .map_err(sql_err("preparing the partsupp load"))?;
        for key in 1..=rows {
            let r = PartSupp::generate(seed, rows, key);
            ins.execute(rusqlite::params![
                r.key,
                r.partkey,
                r.suppkey,
                r.availqty,
                r.supplycost_cents,
                r.comment
            ])
            .map_err(sql_err("loading partsupp"))?;
        }
    }
    tx.commit().map_err(sql_err("COMMIT (load partsupp)"))
}

pub(super) struct Driver {
    seed: u64,
    rows: u64,
    pages_per_txn: u32,
    rng: ChaCha8Rng,
    /// Every tuple's supply cost as last committed, index `key - 1`.
    costs: Vec<i64>,
    expected: Summary,
}

impl Driver {
    pub(super) fn new(rows: u64, pages_per_txn: u32, seed: u64) -> Driver {
        let mut costs = Vec::with_capacity(rows as usize);
        let mut expected = Summary::EMPTY;
        for key in 1..=rows {
            let r = PartSupp::generate(seed, rows, key);
            costs.push(r.supplycost_cents);
            expected.add_row(TABLE, &r.values(r.supplycost_cents));
        }
        Driver {
            seed,
            rows,
            pages_per_txn,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5e1e_c7ed_0000_0001),
            costs,
            expected,
        }
    }

    pub(super) fn expected(&self) -> Summary {
        self.expected
    }

    /// `k` distinct random keys, each with its new supply cost.
    fn choose(&mut self) -> Vec<(u64, i64)> {
        let k = self.pages_per_txn as usize;
        let mut picks: Vec<(u64, i64)> = Vec::with_capacity(k);
        while picks.len() < k {
            let key = self.rng.random_range(1..=self.rows);
            if picks.iter().all(|&(p, _)| p != key) {
                picks.push((key, self.rng.random_range(SUPPLYCOST_CENTS)));
            }
        }
        picks
    }

    pub(super) fn transaction(&mut self, conn: &Connection) -> Result<TxnKind, WorkloadError> {
        let picks = self.choose();
        conn.execute_batch("BEGIN").map_err(sql_err("BEGIN"))?;
        {
            let mut read = conn
                .prepare_cached(
                    "SELECT ps_partkey, ps_suppkey, ps_availqty, ps_supplycost, ps_comment
                     FROM partsupp WHERE ps_key = ?1",
                )
                .map_err(sql_err("preparing the partsupp read"))?;
            let mut update = conn
                .prepare_cached("UPDATE partsupp SET ps_supplycost = ?2 WHERE ps_key = ?1")
                .map_err(sql_err("preparing the partsupp update"))?;
            for &(key, cost) in &picks {
                let found: i64 = read
                    .query_row([key as i64], |r| r.get(3))
                    .map_err(sql_err(format!("reading partsupp row {key}")))?;
                let model = self.costs[(key - 1) as usize];
                if found != model {
                    return Err(WorkloadError::Mismatch {
                        what: format!("ps_supplycost of partsupp row {key} read back"),
                        expected: model.to_string(),
                        found: found.to_string(),
                    });
                }
                let changed = update
                    .execute(rusqlite::params![key as i64, cost])
                    .map_err(sql_err(format!("updating partsupp row {key}")))?;
                debug_assert_eq!(changed, 1, "ps_key {key} is in 1..=rows");
            }
        }
        conn.execute_batch("COMMIT").map_err(sql_err("COMMIT"))?;
        // Committed: the model follows.
        for (key, cost) in picks {
            let slot = &mut self.costs[(key - 1) as usize];
            let row = PartSupp::generate(self.seed, self.rows, key);
            self.expected.remove_row(TABLE, &row.values(*slot));
            self.expected.add_row(TABLE, &row.values(cost));
            *slot = cost;
        }
        Ok(TxnKind::XftlUpdate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_are_about_220_bytes_with_four_suppliers_per_part() {
        let rows = PAPER_ROWS;
        let sample: Vec<PartSupp> = (1..=400).map(|k| PartSupp::generate(7, rows, k)).collect();
        let mean = sample.iter().map(|r| r.comment.len()).sum::<usize>() / sample.len();
        assert!((190..=210).contains(&mean), "comment mean {mean}");
        assert_eq!(sample[0].partkey, 1);
        assert_eq!(sample[3].partkey, 1);
        assert_eq!(sample[4].partkey, 2);
        let mut supp: Vec<i64> = sample[..4].iter().map(|r| r.suppkey).collect();
        supp.sort();
        supp.dedup();
        assert_eq!(supp.len(), 4, "a part's four suppliers differ: {supp:?}");
        assert!(sample.iter().all(|r| (1..=750).contains(&r.suppkey)));
        assert_eq!(
            PartSupp::generate(7, rows, 99),
            PartSupp::generate(7, rows, 99)
        );
        assert_ne!(
            PartSupp::generate(7, rows, 99),
            PartSupp::generate(8, rows, 99)
        );
    }
}
