//! The crash-state generator (CrashMonkey / ALICE style), a pure function of a recorded log's
//! shape, a budget and a seed.
//!
//! Fault model (docs/formats/blocklog.md, "What a crash state is"): a power cut leaves every
//! write completed before the last flush, any subset of the writes received since (the
//! *epoch* in flight), and any one of those torn after a prefix of its 512-byte sectors. A state
//! is therefore (epoch, kept subset, optional torn write). The image it gives could have been
//! left by a cut at any instant from the receipt of its last kept write up to the epoch's flush,
//! so it is judged against the most acknowledged transactions of that span (the epoch's end)
//! and the fewest begun ones (its start): the strictest reading.
//!
//! Exploration within `budget`: exhaustive (every subset of every epoch, and every tear point
//! of every write on top of its in-order prefix and of all other writes) when that fits;
//! otherwise every flush boundary (an epoch fully written, the flush not yet done) and the
//! state right after each flush, then in-order prefixes, then random subsets with a torn write
//! half of the time, all drawn from `seed`. Invariant: no state appears twice.

use std::collections::HashSet;

use joj_linux::record::{LogOp, Mark, SECTOR_BYTES};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// One write of an epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochWrite {
    /// Index of the write in the log's ops.
    pub op: usize,
    pub sectors: u32,
    /// Transactions begun before the write was received.
    pub begun_before: u64,
}

/// The writes between two flushes (or after the last one), and the marks around them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Epoch {
    pub writes: Vec<EpochWrite>,
    /// Transactions acknowledged before the flush that ends the epoch (or the log's end).
    pub acked_at_end: u64,
    /// Transactions begun before the epoch's first write.
    pub begun_at_start: u64,
    /// Index in the ops of the flush that ends the epoch (`None`: the log's end).
    pub flush_op: Option<usize>,
}

/// Splits a log's ops into epochs at its flushes.
pub fn epochs(ops: &[LogOp]) -> Vec<Epoch> {
    let (mut acked, mut begun) = (0u64, 0u64);
    let mut out = Vec::new();
    let mut cur = Epoch {
        writes: Vec::new(),
        acked_at_end: 0,
        begun_at_start: 0,
        flush_op: None,
    };
    for (i, op) in ops.iter().enumerate() {
        match op {
            LogOp::Write { data, .. } => {
                if cur.writes.is_empty() {
                    cur.begun_at_start = begun;
                }
                cur.writes.push(EpochWrite {
                    op: i,
                    sectors: (data.len() as u64 / SECTOR_BYTES) as u32,
                    begun_before: begun,
                });
            }
            LogOp::Flush => {
                if cur.writes.is_empty() {
                    cur.begun_at_start = begun;
                }
                cur.acked_at_end = acked;
                cur.flush_op = Some(i);
                out.push(std::mem::replace(
                    &mut cur,
                    Epoch {
                        writes: Vec::new(),
                        acked_at_end: 0,
                        begun_at_start: begun,
                        flush_op: None,
                    },
                ));
            }
            LogOp::Mark(Mark::Begun(_)) => begun += 1,
            LogOp::Mark(Mark::Acknowledged(_)) => acked += 1,
        }
    }
    if cur.writes.is_empty() {
        cur.begun_at_start = begun;
    }
    cur.acked_at_end = acked;
    out.push(cur);
    out
}

/// Why a state was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StateKind {
    /// Every write of the epoch landed; the flush did not happen.
    FlushBoundary,
    /// Right after the previous flush: none of the epoch's writes landed.
    AfterFlush,
    /// The first writes of the epoch, in the order received.
    Prefix,
    /// Any subset of the epoch's writes.
    Subset,
    /// A subset with one write torn at a sector boundary.
    Torn,
}

/// A write torn after its first `sectors` sectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Torn {
    /// Index within the epoch's writes; also in `kept`.
    pub write: u32,
    pub sectors: u32,
}

/// One crash state.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct CrashState {
    pub epoch: u32,
    /// Indices within the epoch's writes that landed, increasing.
    pub kept: Vec<u32>,
    pub torn: Option<Torn>,
    pub kind: StateKind,
}

impl CrashState {
    /// Transactions acknowledged and begun that the state is judged against.
    pub fn bounds(&self, epochs: &[Epoch]) -> (u64, u64) {
        let e = &epochs[self.epoch as usize];
        let begun = match self.kept.last() {
            Some(&last) => e.writes[last as usize].begun_before,
            None => e.begun_at_start,
        };
        (e.acked_at_end, begun.max(e.begun_at_start))
    }

    /// One line: which writes were dropped or torn.
    pub fn describe(&self, epochs: &[Epoch]) -> String {
        let e = &epochs[self.epoch as usize];
        let n = e.writes.len();
        let dropped: Vec<String> = (0..n as u32)
            .filter(|i| !self.kept.contains(i))
            .map(|i| e.writes[i as usize].op.to_string())
            .collect();
        let torn = self.torn.map_or(String::new(), |t| {
            let w = e.writes[t.write as usize];
            format!(
                "; log record {} torn after {} of its {} sectors",
                w.op, t.sectors, w.sectors
            )
        });
        let flush = e
            .flush_op
            .map_or("the log's end".into(), |f| format!("flush at record {f}"));
        format!(
            "cut before {flush} (epoch {}, {} of {n} writes in flight landed; dropped records [{}]{torn})",
            self.epoch,
            self.kept.len(),
            dropped.join(", ")
        )
    }
}

/// The states to check, and whether they are every state there is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub states: Vec<CrashState>,
    pub exhaustive: bool,
}

/// Largest epoch whose subsets are enumerated.
const MAX_ENUMERATED_WRITES: usize = 20;

/// Every state of one epoch, if there are few enough.
fn all_states(epoch: u32, e: &Epoch) -> Option<Vec<CrashState>> {
    let w = e.writes.len();
    if w > MAX_ENUMERATED_WRITES {
        return None;
    }
    let mut out = Vec::new();
    for mask in 0u32..(1 << w) {
        let kept: Vec<u32> = (0..w as u32).filter(|i| mask & (1 << i) != 0).collect();
        let kind = if kept.len() == w {
            StateKind::FlushBoundary
        } else if kept.is_empty() {
            StateKind::AfterFlush
        } else if kept.iter().enumerate().all(|(j, &i)| j as u32 == i) {
            StateKind::Prefix
        } else {
            StateKind::Subset
        };
        out.push(CrashState {
            epoch,
            kept,
            torn: None,
            kind,
        });
    }
    for (i, wr) in e.writes.iter().enumerate() {
        for t in 1..wr.sectors {
            let prefix: Vec<u32> = (0..=i as u32).collect();
            let others: Vec<u32> = (0..w as u32).collect();
            for kept in [prefix, others] {
                out.push(CrashState {
                    epoch,
                    kept,
                    torn: Some(Torn {
                        write: i as u32,
                        sectors: t,
                    }),
                    kind: StateKind::Torn,
                });
            }
        }
    }
    Some(out)
}

/// The crash states of `epochs` to check within `budget`, chosen from `seed`.
pub fn plan(epochs: &[Epoch], budget: usize, seed: u64) -> Plan {
    let mut seen = HashSet::new();
    let mut states = Vec::new();
    let mut push = |s: CrashState, states: &mut Vec<CrashState>| {
        if states.len() < budget && seen.insert((s.epoch, s.kept.clone(), s.torn)) {
            states.push(s);
        }
    };
    // Exhaustive when every epoch's space is small and the total fits.
    let mut all = Vec::new();
    let mut fits = true;
    for (i, e) in epochs.iter().enumerate() {
        match all_states(i as u32, e) {
            Some(s) if all.len() + s.len() <= budget => all.extend(s),
            _ => {
                fits = false;
                break;
            }
        }
    }
    if fits {
        for s in all {
            push(s, &mut states);
        }
        return Plan {
            states: sorted(states),
            exhaustive: true,
        };
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xc4a5_5a7e);
    let prefix = |e: u32, j: usize, kind| CrashState {
        epoch: e,
        kept: (0..j as u32).collect(),
        torn: None,
        kind,
    };
    for (i, e) in epochs.iter().enumerate() {
        push(
            prefix(i as u32, e.writes.len(), StateKind::FlushBoundary),
            &mut states,
        );
    }
    for (i, e) in epochs.iter().enumerate() {
        if !e.writes.is_empty() {
            push(prefix(i as u32, 0, StateKind::AfterFlush), &mut states);
        }
    }
    let mut prefixes: Vec<CrashState> = epochs
        .iter()
        .enumerate()
        .flat_map(|(i, e)| (1..e.writes.len()).map(move |j| (i, j)))
        .map(|(i, j)| prefix(i as u32, j, StateKind::Prefix))
        .collect();
    shuffle(&mut prefixes, &mut rng);
    for s in prefixes {
        push(s, &mut states);
    }
    // Random draws may repeat a prefix above: draw again until the budget is met or no draw
    // adds a state.
    loop {
        let before = states.len();
        for s in random_states(epochs, budget.saturating_sub(before), &mut rng) {
            push(s, &mut states);
        }
        if states.len() == before || states.len() >= budget {
            break;
        }
    }
    // Random draws stall once the small epochs are used up: then every state of every epoch
    // small enough to enumerate, the epochs in an order drawn from the seed.
    let mut order: Vec<usize> = (0..epochs.len()).collect();
    shuffle(&mut order, &mut rng);
    for i in order {
        if states.len() >= budget {
            break;
        }
        for s in all_states(i as u32, &epochs[i]).unwrap_or_default() {
            push(s, &mut states);
        }
    }
    Plan {
        states: sorted(states),
        exhaustive: false,
    }
}

/// Up to `wanted` random states: an epoch drawn by its writes, each write kept with
/// probability 1/2, one kept write torn half of the time; none twice.
fn random_states(epochs: &[Epoch], wanted: usize, rng: &mut ChaCha8Rng) -> Vec<CrashState> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let weights: Vec<usize> = epochs.iter().map(|e| e.writes.len()).collect();
    let total: usize = weights.iter().sum();
    let mut attempts = 0usize;
    while out.len() < wanted && total > 0 && attempts < wanted.saturating_mul(20) {
        attempts += 1;
        let mut pick = rng.random_range(0..total);
        let ei = weights
            .iter()
            .position(|&w| {
                if pick < w {
                    true
                } else {
                    pick -= w;
                    false
                }
            })
            .expect("pick < total");
        let e = &epochs[ei];
        let kept: Vec<u32> = (0..e.writes.len() as u32)
            .filter(|_| rng.random_bool(0.5))
            .collect();
        let tearable: Vec<u32> = kept
            .iter()
            .copied()
            .filter(|&i| e.writes[i as usize].sectors > 1)
            .collect();
        let torn = (!tearable.is_empty() && rng.random_bool(0.5)).then(|| {
            let write = tearable[rng.random_range(0..tearable.len())];
            let sectors = rng.random_range(1..e.writes[write as usize].sectors);
            Torn { write, sectors }
        });
        let kind = if torn.is_some() {
            StateKind::Torn
        } else {
            StateKind::Subset
        };
        let s = CrashState {
            epoch: ei as u32,
            kept,
            torn,
            kind,
        };
        if seen.insert((s.epoch, s.kept.clone(), s.torn)) {
            out.push(s);
        }
    }
    out
}

/// Fisher–Yates from the seeded generator.
pub(super) fn shuffle<T>(v: &mut [T], rng: &mut ChaCha8Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.random_range(0..=i);
        v.swap(i, j);
    }
}

/// In epoch order, so that the durable image only ever moves forward while checking.
fn sorted(mut states: Vec<CrashState>) -> Vec<CrashState> {
    states.sort_by_key(|s| s.epoch);
    states
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(sectors: usize) -> LogOp {
        LogOp::Write {
            offset_bytes: 0,
            data: vec![1u8; sectors * 512],
        }
    }

    fn log() -> Vec<LogOp> {
        vec![
            LogOp::Mark(Mark::Begun(1)),
            w(8),
            w(1),
            LogOp::Flush,
            w(1),
            LogOp::Flush,
            LogOp::Mark(Mark::Acknowledged(1)),
            LogOp::Mark(Mark::Begun(2)),
            w(2),
            w(1),
            w(1),
        ]
    }

    #[test]
    fn epochs_split_at_flushes_and_count_marks() {
        let e = epochs(&log());
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].writes.len(), 2);
        assert_eq!((e[0].acked_at_end, e[0].begun_at_start), (0, 1));
        assert_eq!(e[1].flush_op, Some(5));
        assert_eq!((e[2].acked_at_end, e[2].begun_at_start), (1, 2));
        assert_eq!(e[2].flush_op, None);
    }

    #[test]
    fn a_small_window_is_explored_exhaustively() {
        let e = epochs(&log());
        let p = plan(&e, 10_000, 1);
        assert!(p.exhaustive);
        // Subsets 4 + 2 + 8, tears 7×2 + 0 + 1×2.
        assert_eq!(p.states.len(), 4 + 2 + 8 + 14 + 2);
        assert!(p.states.windows(2).all(|w| w[0].epoch <= w[1].epoch));
    }

    #[test]
    fn a_tight_budget_keeps_flush_boundaries_first_and_never_repeats() {
        let e = epochs(&log());
        let p = plan(&e, 5, 1);
        assert!(!p.exhaustive);
        assert_eq!(p.states.len(), 5);
        let boundaries = p
            .states
            .iter()
            .filter(|s| s.kind == StateKind::FlushBoundary)
            .count();
        assert_eq!(boundaries, 3);
        let mut seen = HashSet::new();
        assert!(
            p.states
                .iter()
                .all(|s| seen.insert((s.epoch, s.kept.clone(), s.torn)))
        );
        assert_eq!(plan(&e, 5, 1), p, "the same seed gives the same plan");
    }

    #[test]
    fn a_budget_below_the_space_is_met_exactly() {
        // 40 epochs of one 8-sector write and one 24-write epoch: too big to enumerate.
        let mut ops = Vec::new();
        for _ in 0..40 {
            ops.extend([w(8), LogOp::Flush]);
        }
        ops.extend((0..24).map(|_| w(1)));
        let e = epochs(&ops);
        for budget in [100, 500, 700] {
            let p = plan(&e, budget, 3);
            assert!(!p.exhaustive);
            assert_eq!(p.states.len(), budget);
        }
    }

    #[test]
    fn bounds_are_the_strictest_reading() {
        let e = epochs(&log());
        let s = CrashState {
            epoch: 2,
            kept: vec![0],
            torn: None,
            kind: StateKind::Prefix,
        };
        assert_eq!(s.bounds(&e), (1, 2));
        assert!(s.describe(&e).contains("dropped records [9, 10]"));
    }
}
