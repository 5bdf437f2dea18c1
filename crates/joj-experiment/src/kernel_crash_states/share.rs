//! A share of a run's crash states (`--shard K/N`): the K-th of N disjoint, contiguous parts
//! of the plan (docs/formats/crash-part.md, "Which states a shard checks").

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::error::CrashFsError;

/// Most shares one run is split into: more than any cluster joj's runs would use, few enough
/// that a missing-part message stays readable.
pub const MAX_SHARDS: u32 = 10_000;

/// The K-th (from 1) of N shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    pub k: u32,
    pub n: u32,
}

impl Shard {
    /// Parses `K/N`, refusing anything but 1 ≤ K ≤ N ≤ [`MAX_SHARDS`].
    pub fn parse(s: &str) -> Result<Shard, CrashFsError> {
        let bad = || CrashFsError::ShardSpec {
            given: s.to_string(),
            max: MAX_SHARDS,
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (u32, u32) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if n == 0 || k == 0 || k > n || n > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }

    /// The indices of this share of `states` states: `[⌊(K−1)·S/N⌋, ⌊K·S/N⌋)`.
    pub fn range(self, states: usize) -> Range<usize> {
        let at = |k: u32| (states as u128 * u128::from(k) / u128::from(self.n)) as usize;
        at(self.k - 1)..at(self.k)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_spec_is_k_of_n_and_nothing_else() {
        assert_eq!(Shard::parse("2/3").unwrap(), Shard { k: 2, n: 3 });
        assert_eq!(Shard::parse("1/1").unwrap(), Shard { k: 1, n: 1 });
        for bad in [
            "0/0", "3/2", "0/3", "1/0", "1", "a/b", "-1/2", "1/3/4", "", "1/10001",
        ] {
            let e = Shard::parse(bad).unwrap_err().to_string();
            assert!(e.contains("fix:") && e.contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn the_shares_are_disjoint_contiguous_and_cover_every_state() {
        for states in [0usize, 1, 2, 5, 7, 100, 2001] {
            for n in 1..=7u32 {
                let mut next = 0;
                for k in 1..=n {
                    let r = Shard { k, n }.range(states);
                    assert_eq!(r.start, next, "{states} states, {k}/{n}");
                    assert!(r.len() <= states.div_ceil(n as usize));
                    next = r.end;
                }
                assert_eq!(next, states);
            }
        }
    }
}
