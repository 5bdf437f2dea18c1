//! The writes a planned crash state keeps, held in a few bytes however large its epoch is
//! ([`Kept`]), and the set that keeps a plan from holding one state twice ([`Seen`]).
//!
//! A plan may hold millions of states, some of them of an epoch of millions of writes: a list of
//! kept indices per state makes planning quadratic in an epoch's writes (a crafted log of
//! 40,000 writes in one epoch took 3.2 GB to plan one state). A state's kept writes are instead
//! the first *n* (a boundary or an in-order prefix), a bit mask (an epoch of at most
//! [`MASK_WRITES`] writes), or the place in the plan's seeded generator where they were drawn,
//! each write kept with probability 1/2 ([`draw`]): drawn again from there when the state is
//! built ([`Draws::indices`]).
//!
//! Invariants: [`Draws::indices`] gives back exactly the indices the plan chose, increasing;
//! [`Seen`] takes a state only if no state with the same key and the same indices was taken (a
//! fingerprint of the indices narrows the comparison, the indices decide it).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Largest epoch whose kept writes a bit mask holds.
pub const MASK_WRITES: usize = u64::BITS as usize;

/// Which writes of its epoch a planned state keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kept {
    /// The first `n` writes, in the order received.
    First(u32),
    /// The writes whose bit is set (an epoch of at most [`MASK_WRITES`] writes).
    Mask(u64),
    /// The writes [`draw`] kept, drawing from this word of the plan's generator (an epoch of
    /// more than [`MASK_WRITES`] writes).
    Drawn { word_pos: u64 },
}

impl Kept {
    /// The increasing `indices` of an epoch of `writes` writes, which [`draw`] drew starting at
    /// `word_pos` of the plan's generator.
    pub fn drawn(word_pos: u128, indices: &[u32], writes: usize) -> Kept {
        if writes <= MASK_WRITES {
            return Kept::mask(indices);
        }
        Kept::Drawn {
            word_pos: u64::try_from(word_pos)
                .expect("a plan draws fewer than 2^64 words from its generator"),
        }
    }

    /// The increasing `indices`, each below [`MASK_WRITES`], as a mask.
    pub fn mask(indices: &[u32]) -> Kept {
        Kept::Mask(indices.iter().fold(0u64, |m, &i| {
            assert!(
                (i as usize) < MASK_WRITES,
                "a mask holds writes 0..{MASK_WRITES}: {i}"
            );
            m | 1 << i
        }))
    }

    /// Whether every write this keeps is one of `writes` (a drawn set is by construction).
    pub fn within(self, writes: usize) -> bool {
        match self {
            Kept::First(n) => n as usize <= writes,
            Kept::Mask(m) => writes >= MASK_WRITES || m >> writes == 0,
            Kept::Drawn { .. } => writes > MASK_WRITES,
        }
    }
}

/// Each of `writes` writes kept with probability 1/2, from `rng`: the plan's random subsets,
/// drawn once when planned and again, from the same word, when built.
pub fn draw(rng: &mut ChaCha8Rng, writes: usize) -> Vec<u32> {
    (0..writes as u32)
        .filter(|_| rng.random_bool(0.5))
        .collect()
}

/// Equal sets of indices have equal fingerprints.
pub fn fingerprint(indices: &[u32]) -> u64 {
    let mut h = DefaultHasher::new();
    indices.hash(&mut h);
    h.finish()
}

/// The plan's seeded generator, which drawn states are drawn again from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Draws {
    seed: u64,
}

impl Draws {
    /// The generator seeded with `seed`.
    pub fn new(seed: u64) -> Draws {
        Draws { seed }
    }

    /// The generator at its start.
    pub fn rng(&self) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(self.seed)
    }

    /// The increasing indices `kept` stands for, of an epoch of `writes` writes.
    pub fn indices(&self, kept: Kept, writes: usize) -> Vec<u32> {
        match kept {
            Kept::First(n) => (0..n).collect(),
            Kept::Mask(m) => (0..writes.min(MASK_WRITES) as u32)
                .filter(|&i| m >> i & 1 == 1)
                .collect(),
            Kept::Drawn { word_pos } => {
                let mut rng = self.rng();
                rng.set_word_pos(u128::from(word_pos));
                draw(&mut rng, writes)
            }
        }
    }

    /// Whether `a` and `b`, of an epoch of `writes` writes, keep the same writes.
    pub fn same(&self, a: Kept, b: Kept, writes: usize) -> bool {
        a == b || self.indices(a, writes) == self.indices(b, writes)
    }
}

/// The states taken so far, by key (the epoch and the torn write) and kept writes.
#[derive(Debug)]
pub struct Seen<K> {
    taken: HashMap<(K, u64), Kept>,
    /// Further sets under a key and fingerprint already taken by another set (a fingerprint
    /// collision: all but never).
    also: HashMap<(K, u64), Vec<Kept>>,
}

impl<K> Default for Seen<K> {
    fn default() -> Self {
        Seen {
            taken: HashMap::new(),
            also: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq + Clone> Seen<K> {
    /// Takes `kept` under `key` unless the same writes were taken under it: `fingerprint` is
    /// that of its indices, `same` whether two sets of the key's epoch keep the same writes.
    pub fn insert(
        &mut self,
        key: K,
        fingerprint: u64,
        kept: Kept,
        same: impl Fn(Kept, Kept) -> bool,
    ) -> bool {
        let at = (key, fingerprint);
        let Some(&first) = self.taken.get(&at) else {
            self.taken.insert(at, kept);
            return true;
        };
        if same(first, kept) {
            return false;
        }
        let more = self.also.entry(at).or_default();
        if more.iter().any(|&k| same(k, kept)) {
            return false;
        }
        more.push(kept);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drawn_set_is_drawn_again_from_its_word() {
        let draws = Draws::new(7);
        let mut rng = draws.rng();
        let mut planned = Vec::new();
        for writes in [1usize, 3, 64, 65, 100, 1000, 3, 200] {
            let at = rng.get_word_pos();
            let indices = draw(&mut rng, writes);
            // Draws of other things in between move the generator on.
            let _: u64 = rng.random();
            planned.push((Kept::drawn(at, &indices, writes), indices, writes));
        }
        for (kept, indices, writes) in planned {
            assert!(kept.within(writes));
            assert_eq!(draws.indices(kept, writes), indices, "{kept:?}");
            assert!(matches!(kept, Kept::Mask(_)) == (writes <= MASK_WRITES));
        }
        assert_eq!(draws.indices(Kept::First(3), 10), vec![0, 1, 2]);
    }

    #[test]
    fn seen_takes_each_set_once_whatever_holds_it() {
        let draws = Draws::new(1);
        let mut rng = draws.rng();
        let writes = 100;
        let at = rng.get_word_pos();
        let indices = draw(&mut rng, writes);
        let drawn = Kept::drawn(at, &indices, writes);
        let mut seen = Seen::default();
        let same = |a, b| draws.same(a, b, writes);
        assert!(seen.insert(0u32, fingerprint(&indices), drawn, same));
        assert!(!seen.insert(0u32, fingerprint(&indices), drawn, same));
        // The same writes under another key are another state.
        assert!(seen.insert(1u32, fingerprint(&indices), drawn, same));
        // Other writes under a colliding fingerprint are told apart by their indices.
        assert!(seen.insert(0u32, fingerprint(&indices), Kept::First(3), same));
        assert!(!seen.insert(0u32, fingerprint(&indices), Kept::First(3), same));
    }
}
