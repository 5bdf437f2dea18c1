//! Which row each statement of a Mobibench workload touches.
//!
//! As in Mobibench, every transaction runs its statements on *every* table of every database
//! (the targets: `-T` tables × `-D` databases), so each target sees the same sequence of
//! statements: the `k`-th statement on a target is its `k`-th, counted over the warm-up and the
//! measured run. Keys are sequential (inserts continue after the pre-filled rows; updates,
//! deletes and selects walk the pre-filled rows) or random (`-R`: inserts draw 62-bit keys,
//! updates and selects draw a pre-filled row, deletes take a seeded permutation so that no row
//! is deleted twice). One seed per thread decides every draw.

use super::schema::rows_needed;
use crate::config::{DbOp, DbWorkload, KeyOrder};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The keys of one thread's statements.
pub(super) struct KeyPlan {
    rows: u64,
    order: KeyOrder,
    op: DbOp,
    rng: ChaCha8Rng,
    /// For random deletes: a shuffled permutation of the pre-filled ids, so no row is deleted
    /// twice.
    permutation: Vec<u64>,
    /// Statements each target has run so far (warm-up included).
    done: Vec<u64>,
}

impl KeyPlan {
    /// The plan of thread `thread`, after `start_at` statements on each target (a warm-up).
    pub(super) fn new(w: &DbWorkload, thread: u32, start_at: u64) -> KeyPlan {
        let targets = u64::from(w.tables) * u64::from(w.attached_dbs + 1);
        let rows = rows_needed(w);
        let base_seed = w.seed ^ (u64::from(thread) << 32);
        let mut permutation = Vec::new();
        if w.op == DbOp::Delete && w.keys == KeyOrder::Random {
            // The same permutation for warm-up and measured run, so no row is deleted twice.
            permutation = (1..=rows).collect();
            permutation.shuffle(&mut ChaCha8Rng::seed_from_u64(base_seed));
        }
        // The measured run after a warm-up draws other random keys than the warm-up did.
        let rng = ChaCha8Rng::seed_from_u64(base_seed ^ start_at.rotate_left(17));
        KeyPlan {
            rows,
            order: w.keys,
            op: w.op,
            rng,
            permutation,
            done: vec![start_at; targets as usize],
        }
    }

    /// The id of the next statement on `target`.
    pub(super) fn next(&mut self, target: usize) -> i64 {
        let index = self.done[target];
        self.done[target] += 1;
        let rows = self.rows.max(1);
        let id = match (self.op, self.order) {
            // Sequential inserts continue after the pre-filled rows.
            (DbOp::Insert, KeyOrder::Sequential) => self.rows + 1 + index,
            // Random 62-bit keys: collisions are vanishingly unlikely (n²/2⁶³).
            (DbOp::Insert, KeyOrder::Random) => self.rng.random_range(self.rows + 1..1u64 << 62),
            (DbOp::Delete, KeyOrder::Random) => self.permutation[(index % rows) as usize],
            (_, KeyOrder::Sequential) => index % rows + 1,
            (_, KeyOrder::Random) => self.rng.random_range(1..=rows),
        };
        id as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_walks_the_same_sequential_keys() {
        let w = DbWorkload {
            op: DbOp::Update,
            tables: 3,
            transactions: 10,
            ..DbWorkload::default()
        };
        let mut plan = KeyPlan::new(&w, 0, 0);
        for k in 1..=4 {
            for t in 0..3 {
                assert_eq!(plan.next(t), k);
            }
        }
        let w = DbWorkload {
            tables: 2,
            ..DbWorkload::default()
        };
        // Inserts after a warm-up of 5 statements per target continue at row 6.
        let mut plan = KeyPlan::new(&w, 0, 5);
        assert_eq!((plan.next(0), plan.next(1), plan.next(0)), (6, 6, 7));
    }

    #[test]
    fn random_deletes_never_repeat_a_row() {
        let w = DbWorkload {
            op: DbOp::Delete,
            keys: KeyOrder::Random,
            transactions: 50,
            ..DbWorkload::default()
        };
        let mut plan = KeyPlan::new(&w, 0, 0);
        let mut ids: Vec<i64> = (0..50).map(|_| plan.next(0)).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 50);
    }
}
