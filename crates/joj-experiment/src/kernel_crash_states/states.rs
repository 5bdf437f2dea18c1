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
//! of every write on top of its in-order prefix and of all other writes) when that fits.
//! Otherwise the budget is split by kind ([`Shares`], a pure policy): at least half goes to
//! states *in flight* — a subset of an epoch's writes that is not an in-order prefix, or one
//! with a torn write — drawn at random (an epoch by its writes, each write kept with
//! probability 1/2, a kept write torn half of the time), then from the enumerable epochs; a
//! quarter to the boundary states (an epoch fully written, the flush not yet done; and right
//! after a flush), sampled when there are more; the rest to in-order prefixes, sampled too.
//! What one kind cannot use goes to the others. All drawn from `seed`. Invariant: no state
//! appears twice; each state's kind says which of these it is.
//!
//! A plan holds each state in a few bytes ([`PlannedState`], its writes a [`Kept`]) and lists
//! a state's writes only when it is built ([`Plan::state`]): planning takes memory in
//! proportion to the epochs, the writes and the states planned, never their product. A log
//! of more than [`MAX_EPOCHS`] epochs is refused before any is built.

use joj_linux::record::{LogOp, Mark, SECTOR_BYTES};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::error::CrashFsError;
use super::kept::{Draws, Kept, Seen, draw, fingerprint};

#[cfg(test)]
mod reference;

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

/// Most epochs a log may split into to be planned: each is held in memory with its writes, its
/// boundary states and its line of the report's coverage, a few hundred bytes in all, whatever
/// `--states` is. The measured runs flush 2–8 times per transaction, and a run has at most
/// `MAX_TRANSACTIONS` (100,000); this allows 10 per transaction (checked where that bound is).
pub const MAX_EPOCHS: usize = 1 << 20;

/// The epochs `ops` split into (one per flush, and the tail), counted without building them;
/// more than [`MAX_EPOCHS`] are refused.
pub fn count_epochs(ops: &[LogOp]) -> Result<usize, CrashFsError> {
    let epochs = 1 + ops.iter().filter(|op| matches!(op, LogOp::Flush)).count();
    if epochs > MAX_EPOCHS {
        return Err(CrashFsError::TooManyEpochs {
            epochs,
            max: MAX_EPOCHS,
        });
    }
    Ok(epochs)
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
    let writes = ops
        .iter()
        .filter(|op| matches!(op, LogOp::Write { .. }))
        .count();
    let flushes = ops.iter().filter(|op| matches!(op, LogOp::Flush)).count();
    assert!(
        out.iter().map(|e| e.writes.len()).sum::<usize>() == writes
            && out.len() == flushes + 1
            && out
                .windows(2)
                .all(|p| p[0].acked_at_end <= p[1].acked_at_end)
            && u32::try_from(out.len()).is_ok()
            && u32::try_from(writes).is_ok(),
        "epochs hold every logged write once, one epoch per flush plus the tail, acknowledgements never going back, \
         and states number them as u32: {writes} writes, {flushes} flushes, {} epochs",
        out.len()
    );
    out
}

/// Why a state was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Torn {
    /// Index within the epoch's writes; also in `kept`.
    pub write: u32,
    pub sectors: u32,
}

/// One crash state.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CrashState {
    pub epoch: u32,
    /// Indices within the epoch's writes that landed, increasing.
    pub kept: Vec<u32>,
    pub torn: Option<Torn>,
    pub kind: StateKind,
}

impl CrashState {
    /// Panics unless the state is one of `epochs`: its kept writes are indices of its epoch's
    /// writes, increasing, and a torn write is one of them, cut inside it.
    pub fn assert_within(&self, epochs: &[Epoch]) {
        let e = epochs.get(self.epoch as usize).unwrap_or_else(|| {
            panic!(
                "a crash state's epoch {} is one of the log's {}",
                self.epoch,
                epochs.len()
            )
        });
        let n = e.writes.len();
        assert!(
            self.kept.windows(2).all(|w| w[0] < w[1])
                && self.kept.last().is_none_or(|&i| (i as usize) < n),
            "a crash state keeps a subset of its epoch's writes in increasing order: epoch {} has {n} writes, kept {:?}",
            self.epoch,
            self.kept
        );
        if let Some(t) = self.torn {
            let w = e.writes.get(t.write as usize);
            assert!(
                self.kept.contains(&t.write) && w.is_some_and(|w| t.sectors < w.sectors),
                "a torn write is a kept write cut inside it: epoch {} torn {t:?}, write of {:?} sectors, kept {:?}",
                self.epoch,
                w.map(|w| w.sectors),
                self.kept
            );
        }
    }

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
        // `kept` is increasing: a search, not a scan, per write (an epoch may hold millions).
        let dropped: Vec<String> = (0..n as u32)
            .filter(|i| self.kept.binary_search(i).is_err())
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

/// A crash state as a plan holds it: its kept writes in a few bytes ([`Kept`]), whatever the
/// size of its epoch; [`Plan::state`] builds the [`CrashState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedState {
    pub epoch: u32,
    pub kept: Kept,
    pub torn: Option<Torn>,
    pub kind: StateKind,
}

/// The states to check, and whether they are every state there is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// In epoch order.
    pub states: Vec<PlannedState>,
    pub exhaustive: bool,
    /// The generator the drawn states are drawn again from.
    pub draws: Draws,
}

impl Plan {
    /// State `i`, built: its kept writes listed.
    pub fn state(&self, i: usize, epochs: &[Epoch]) -> CrashState {
        let s = self.states[i];
        let writes = epochs[s.epoch as usize].writes.len();
        CrashState {
            epoch: s.epoch,
            kept: self.draws.indices(s.kept, writes),
            torn: s.torn,
            kind: s.kind,
        }
    }
}

/// Largest epoch whose subsets are enumerated.
const MAX_ENUMERATED_WRITES: usize = 20;

/// How many states [`all_states`] gives of an epoch (counting the torn write on its in-order
/// prefix and on all writes twice when they are the same), if its subsets are enumerated.
fn all_states_count(e: &Epoch) -> Option<usize> {
    let w = e.writes.len();
    (w <= MAX_ENUMERATED_WRITES).then(|| {
        let tears: usize = e
            .writes
            .iter()
            .map(|x| x.sectors.saturating_sub(1) as usize)
            .sum();
        (1 << w) + 2 * tears
    })
}

/// Every state of one epoch of at most [`MAX_ENUMERATED_WRITES`] writes, one at a time: each
/// subset (as a mask, in increasing order), then each write torn at each sector boundary on its
/// in-order prefix and on all the writes.
fn all_states(epoch: u32, e: &Epoch) -> impl Iterator<Item = PlannedState> + '_ {
    let w = e.writes.len();
    assert!(
        w <= MAX_ENUMERATED_WRITES,
        "only epochs of at most {MAX_ENUMERATED_WRITES} writes are enumerated: {w}"
    );
    let all = (1u64 << w) - 1;
    let subsets = (0u64..1 << w).map(move |mask| {
        let kept: Vec<u32> = (0..w as u32).filter(|i| mask >> i & 1 == 1).collect();
        PlannedState {
            epoch,
            kept: Kept::Mask(mask),
            torn: None,
            kind: kind_of(&kept, None, w),
        }
    });
    let torn = e.writes.iter().enumerate().flat_map(move |(i, wr)| {
        (1..wr.sectors).flat_map(move |t| {
            [(1u64 << (i + 1)) - 1, all].map(|mask| PlannedState {
                epoch,
                kept: Kept::Mask(mask),
                torn: Some(Torn {
                    write: i as u32,
                    sectors: t,
                }),
                kind: StateKind::Torn,
            })
        })
    });
    subsets.chain(torn)
}

/// How a budget that cannot hold every state is split among the kinds (a pure policy): at
/// least half for states in flight, a quarter for boundary states, the rest for in-order
/// prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shares {
    pub boundary: usize,
    pub prefix: usize,
    pub in_flight: usize,
}

impl Shares {
    /// The stated split of `budget`.
    pub fn of(budget: usize) -> Shares {
        let in_flight = budget.div_ceil(2);
        let boundary = budget / 4;
        Shares {
            boundary,
            prefix: budget - in_flight - boundary,
            in_flight,
        }
    }
}

/// Whether `kept` (increasing) is the first `kept.len()` writes.
fn is_prefix(kept: &[u32]) -> bool {
    kept.iter().enumerate().all(|(j, &i)| j as u32 == i)
}

impl StateKind {
    /// Whether a state of this kind has writes in flight in the sense of the split: a torn
    /// write, or a kept set that is not an in-order prefix (nor all the writes, nor none).
    pub fn in_flight(self) -> bool {
        matches!(self, StateKind::Subset | StateKind::Torn)
    }
}

/// The crash states of `epochs` to check within `budget`, chosen from `seed`.
///
/// Memory: a few bytes per epoch, per write (the prefixes are shuffled as pairs of numbers)
/// and per state planned; the writes a state keeps are listed only when it is built.
pub fn plan(epochs: &[Epoch], budget: usize, seed: u64) -> Plan {
    let draws = Draws::new(seed ^ 0xc4a5_5a7e);
    // Exhaustive when every epoch's space is small and the total fits.
    if let Some(all) = exhaustive(epochs, budget, draws) {
        let plan = Plan {
            states: sorted(all),
            exhaustive: true,
            draws,
        };
        assert_planned(&plan, epochs, budget);
        return plan;
    }
    let mut rng = draws.rng();
    // (epoch, writes kept, kind) of every boundary state; (epoch, writes kept) of every prefix.
    let mut boundary: Vec<(u32, u32, StateKind)> = (epochs.iter().enumerate())
        .map(|(i, e)| (i as u32, e.writes.len() as u32, StateKind::FlushBoundary))
        .chain(
            (epochs.iter().enumerate())
                .filter(|(_, e)| !e.writes.is_empty())
                .map(|(i, _)| (i as u32, 0, StateKind::AfterFlush)),
        )
        .collect();
    let mut prefixes: Vec<(u32, u32)> = (epochs.iter().enumerate())
        .flat_map(|(i, e)| (1..e.writes.len() as u32).map(move |j| (i as u32, j)))
        .collect();
    let shares = Shares::of(budget);
    let boundary_share = boundary.len().min(shares.boundary);
    let prefix_share = prefixes.len().min(shares.prefix);
    // The in-flight states get their share and whatever the other kinds cannot use.
    let flying = in_flight_states(
        epochs,
        budget - boundary_share - prefix_share,
        &mut rng,
        draws,
    );
    // What the in-flight states could not use goes back to the boundaries, then the prefixes.
    let unused = budget - boundary_share - prefix_share - flying.len();
    let boundary_take = boundary.len().min(boundary_share + unused);
    let unused = unused - (boundary_take - boundary_share);
    let prefix_take = prefixes.len().min(prefix_share + unused);
    shuffle(&mut boundary, &mut rng);
    shuffle(&mut prefixes, &mut rng);
    let first = |epoch, n, kind| PlannedState {
        epoch,
        kept: Kept::First(n),
        torn: None,
        kind,
    };
    let mut states: Vec<PlannedState> = (boundary.into_iter().take(boundary_take))
        .map(|(e, n, kind)| first(e, n, kind))
        .chain(
            (prefixes.into_iter().take(prefix_take)).map(|(e, j)| first(e, j, StateKind::Prefix)),
        )
        .collect();
    states.extend(flying);
    let plan = Plan {
        states: sorted(states),
        exhaustive: false,
        draws,
    };
    assert_planned(&plan, epochs, budget);
    plan
}

/// Every state of `epochs`, each once, if every epoch is enumerated and they fit `budget`
/// (counted before any is made).
fn exhaustive(epochs: &[Epoch], budget: usize, draws: Draws) -> Option<Vec<PlannedState>> {
    let mut total = 0usize;
    for e in epochs {
        total = total.checked_add(all_states_count(e)?)?;
        if total > budget {
            return None;
        }
    }
    let mut seen = Seen::default();
    let mut all = Vec::with_capacity(total);
    for (i, e) in epochs.iter().enumerate() {
        let w = e.writes.len();
        for s in all_states(i as u32, e) {
            let fp = fingerprint(&draws.indices(s.kept, w));
            if seen.insert((s.epoch, s.torn), fp, s.kept, |a, b| draws.same(a, b, w)) {
                all.push(s);
            }
        }
    }
    Some(all)
}

/// Up to `wanted` states in flight, none twice: random draws until they stall, then every
/// in-flight state of the enumerable epochs, the epochs in an order drawn from the seed.
fn in_flight_states(
    epochs: &[Epoch],
    wanted: usize,
    rng: &mut ChaCha8Rng,
    draws: Draws,
) -> Vec<PlannedState> {
    let mut seen = Seen::default();
    let mut out = Vec::new();
    let mut push = |s: PlannedState, fp: u64, out: &mut Vec<PlannedState>| {
        let w = epochs[s.epoch as usize].writes.len();
        if out.len() < wanted
            && s.kind.in_flight()
            && seen.insert((s.epoch, s.torn), fp, s.kept, |a, b| draws.same(a, b, w))
        {
            out.push(s);
        }
    };
    // Writes up to and including each epoch: an epoch is drawn by its writes.
    let upto: Vec<usize> = (epochs.iter())
        .scan(0usize, |sum, e| {
            *sum += e.writes.len();
            Some(*sum)
        })
        .collect();
    loop {
        let before = out.len();
        for (s, fp) in random_states(epochs, &upto, wanted.saturating_sub(before), rng, draws) {
            push(s, fp, &mut out);
        }
        if out.len() == before || out.len() >= wanted {
            break;
        }
    }
    let mut order: Vec<usize> = (0..epochs.len()).collect();
    shuffle(&mut order, rng);
    for i in order {
        if out.len() >= wanted {
            break;
        }
        let (e, w) = (&epochs[i], epochs[i].writes.len());
        if w > MAX_ENUMERATED_WRITES {
            continue;
        }
        for s in all_states(i as u32, e) {
            if out.len() >= wanted {
                break;
            }
            push(s, fingerprint(&draws.indices(s.kept, w)), &mut out);
        }
    }
    out
}

/// Up to `wanted` random states, each with the fingerprint of its kept writes: an epoch drawn
/// by its writes (`upto`: the writes up to and including each epoch), each write kept with
/// probability 1/2, one kept write torn half of the time; none twice. Each gets the kind its
/// writes make it (a draw may be a boundary or a prefix). A draw's writes are held as the
/// generator's word it was drawn from ([`Kept::drawn`]).
fn random_states(
    epochs: &[Epoch],
    upto: &[usize],
    wanted: usize,
    rng: &mut ChaCha8Rng,
    draws: Draws,
) -> Vec<(PlannedState, u64)> {
    let mut out = Vec::new();
    let mut seen = Seen::default();
    let total = upto.last().copied().unwrap_or(0);
    let mut attempts = 0usize;
    while out.len() < wanted && total > 0 && attempts < wanted.saturating_mul(20) {
        attempts += 1;
        let pick = rng.random_range(0..total);
        // The first epoch whose writes reach past `pick`.
        let ei = upto.partition_point(|&u| u <= pick);
        let e = &epochs[ei];
        let w = e.writes.len();
        let at = rng.get_word_pos();
        let kept = draw(rng, w);
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
        let s = PlannedState {
            epoch: ei as u32,
            kept: Kept::drawn(at, &kept, w),
            torn,
            kind: kind_of(&kept, torn, w),
        };
        let fp = fingerprint(&kept);
        if seen.insert((s.epoch, s.torn), fp, s.kept, |a, b| draws.same(a, b, w)) {
            out.push((s, fp));
        }
    }
    out
}

/// The kind of a state that keeps `kept` (increasing) of an epoch's `writes`, `torn` or not.
fn kind_of(kept: &[u32], torn: Option<Torn>, writes: usize) -> StateKind {
    if torn.is_some() {
        StateKind::Torn
    } else if kept.len() == writes {
        StateKind::FlushBoundary
    } else if kept.is_empty() {
        StateKind::AfterFlush
    } else if is_prefix(kept) {
        StateKind::Prefix
    } else {
        StateKind::Subset
    }
}

/// How many states of each kind a plan holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindCounts {
    pub flush_boundary: u64,
    pub after_flush: u64,
    pub prefix: u64,
    pub subset: u64,
    pub torn: u64,
}

impl KindCounts {
    pub fn add(&mut self, kind: StateKind) {
        *match kind {
            StateKind::FlushBoundary => &mut self.flush_boundary,
            StateKind::AfterFlush => &mut self.after_flush,
            StateKind::Prefix => &mut self.prefix,
            StateKind::Subset => &mut self.subset,
            StateKind::Torn => &mut self.torn,
        } += 1;
    }

    /// States with writes in flight: subsets and torn writes.
    pub fn in_flight(&self) -> u64 {
        self.subset + self.torn
    }

    pub fn total(&self) -> u64 {
        self.flush_boundary + self.after_flush + self.prefix + self.subset + self.torn
    }
}

/// The states a plan checks of one epoch, against all the fault model allows there.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EpochCoverage {
    pub epoch: u32,
    pub writes: u32,
    pub states: u64,
    /// Of them, subsets and torn writes.
    pub in_flight_states: u64,
    /// Every state the fault model allows in the epoch: each subset of its writes, and each
    /// subset with one of its writes torn at each sector boundary (`2^w + Σ (sectors − 1) ·
    /// 2^(w−1)`; infinite beyond what an `f64` holds).
    pub fault_model_states: f64,
    /// `states / fault_model_states`.
    pub share: f64,
}

/// The share of each epoch's states that `plan` checks.
pub fn coverage(epochs: &[Epoch], plan: &Plan) -> Vec<EpochCoverage> {
    let mut out: Vec<EpochCoverage> = epochs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let w = e.writes.len() as i32;
            let tears: f64 = e.writes.iter().map(|x| f64::from(x.sectors - 1)).sum();
            EpochCoverage {
                epoch: i as u32,
                writes: w as u32,
                states: 0,
                in_flight_states: 0,
                fault_model_states: 2f64.powi(w) + tears * 2f64.powi(w - 1),
                share: 0.0,
            }
        })
        .collect();
    for s in &plan.states {
        let c = &mut out[s.epoch as usize];
        c.states += 1;
        c.in_flight_states += u64::from(s.kind.in_flight());
    }
    for c in &mut out {
        c.share = c.states as f64 / c.fault_model_states;
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
fn sorted(mut states: Vec<PlannedState>) -> Vec<PlannedState> {
    states.sort_by_key(|s| s.epoch);
    states
}

/// Panics unless every state of `plan` is a state of `epochs`, at most `budget` of them, in
/// epoch order (each is checked whole, its writes listed, when it is built: [`Plan::state`],
/// [`CrashState::assert_within`]).
fn assert_planned(plan: &Plan, epochs: &[Epoch], budget: usize) {
    assert!(
        plan.states.len() <= budget,
        "a plan holds at most its budget: {} states for {budget}",
        plan.states.len()
    );
    assert!(
        plan.states.windows(2).all(|p| p[0].epoch <= p[1].epoch),
        "a plan's states come in epoch order"
    );
    for s in &plan.states {
        let e = epochs.get(s.epoch as usize).unwrap_or_else(|| {
            panic!(
                "a planned state's epoch {} is one of the log's {}",
                s.epoch,
                epochs.len()
            )
        });
        let torn_within = s.torn.is_none_or(|t| {
            (e.writes.get(t.write as usize)).is_some_and(|w| t.sectors > 0 && t.sectors < w.sectors)
        });
        assert!(
            s.kept.within(e.writes.len()) && torn_within,
            "a planned state keeps writes of its epoch and tears one inside it: epoch {} of {} \
             writes, {s:?}",
            s.epoch,
            e.writes.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

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

    fn built(p: &Plan, e: &[Epoch]) -> Vec<CrashState> {
        (0..p.states.len()).map(|i| p.state(i, e)).collect()
    }

    fn count(p: &Plan, kinds: &[StateKind]) -> usize {
        p.states.iter().filter(|s| kinds.contains(&s.kind)).count()
    }

    #[test]
    fn a_tight_budget_is_split_by_kind_and_never_repeats() {
        let e = epochs(&log());
        let p = plan(&e, 6, 1);
        assert!(!p.exhaustive);
        assert_eq!(p.states.len(), 6);
        // Half in flight, a quarter (rounded down) boundaries, the rest prefixes.
        assert_eq!(count(&p, &[StateKind::Subset, StateKind::Torn]), 3, "{p:?}");
        assert_eq!(
            count(&p, &[StateKind::FlushBoundary, StateKind::AfterFlush]),
            1,
            "{p:?}"
        );
        assert_eq!(count(&p, &[StateKind::Prefix]), 2, "{p:?}");
        let built = built(&p, &e);
        for s in &built {
            let w = e[s.epoch as usize].writes.len();
            assert_eq!(s.kind, kind_of(&s.kept, s.torn, w), "{s:?}");
        }
        let mut seen = std::collections::HashSet::new();
        assert!(
            built
                .iter()
                .all(|s| seen.insert((s.epoch, s.kept.clone(), s.torn)))
        );
        assert_eq!(plan(&e, 6, 1), p, "the same seed gives the same plan");
    }

    /// Regression (issue 32): with as many flushes as half the budget, the flush-boundary
    /// states used to take the whole budget, so no subset and no torn write was ever checked.
    #[test]
    fn many_flushes_still_leave_half_the_budget_to_writes_in_flight() {
        // 1,200 epochs of three 8-sector writes, as btrfs's delete rows log.
        let mut ops = Vec::new();
        for _ in 0..1200 {
            ops.extend([w(8), w(8), w(8), LogOp::Flush]);
        }
        let e = epochs(&ops);
        let p = plan(&e, 2000, 42);
        assert_eq!(p.states.len(), 2000);
        assert!(count(&p, &[StateKind::Torn]) > 0, "no torn write");
        assert!(count(&p, &[StateKind::Subset]) > 0, "no subset");
        assert!(
            count(&p, &[StateKind::Subset, StateKind::Torn]) >= 1000,
            "in flight: {}",
            count(&p, &[StateKind::Subset, StateKind::Torn])
        );
        // 2,401 boundary states sampled down to their quarter.
        assert_eq!(
            count(&p, &[StateKind::FlushBoundary, StateKind::AfterFlush]),
            500
        );
    }

    #[test]
    fn a_kind_that_cannot_use_its_share_gives_it_to_the_others() {
        // One-sector writes cannot tear, and one write per epoch has no subset in flight: of
        // 204 states, one is in flight (the second write of the last epoch alone) and one a
        // prefix; the boundaries take what those two cannot use.
        let mut ops = Vec::new();
        for _ in 0..100 {
            ops.extend([w(1), LogOp::Flush]);
        }
        ops.extend([w(1), w(1)]);
        let e = epochs(&ops);
        let p = plan(&e, 150, 5);
        assert!(!p.exhaustive);
        assert_eq!(count(&p, &[StateKind::Subset, StateKind::Torn]), 1);
        assert_eq!(count(&p, &[StateKind::Prefix]), 1);
        assert_eq!(
            count(&p, &[StateKind::FlushBoundary, StateKind::AfterFlush]),
            148
        );
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
    fn coverage_counts_each_epochs_states_against_its_fault_model() {
        let e = epochs(&log());
        let p = plan(&e, 10_000, 1);
        let c = coverage(&e, &p);
        // Epoch 1: one 1-sector write: 2 states, both checked.
        assert_eq!(
            (c[1].states, c[1].fault_model_states, c[1].share),
            (2, 2.0, 1.0)
        );
        // Epoch 0: an 8-sector and a 1-sector write: 4 subsets + 7 tear points × the 2
        // subsets holding the 8-sector write, all of them checked.
        assert_eq!((c[0].states, c[0].fault_model_states), (18, 18.0));
        // Epoch 2: writes of 2, 1 and 1 sectors: 8 subsets + 1 tear point × the 4 subsets
        // holding the first; the exhaustive plan tears it on its prefix and on all three.
        assert_eq!((c[2].states, c[2].fault_model_states), (10, 12.0));
        assert_eq!(
            c.iter().map(|x| x.states).sum::<u64>(),
            p.states.len() as u64
        );
    }

    /// Epochs of the given write counts, each write of 1 to 9 sectors as `seed` draws them.
    fn shaped(writes_per_epoch: &[usize], seed: u64) -> Vec<Epoch> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut ops = vec![LogOp::Mark(Mark::Begun(1))];
        for (i, &n) in writes_per_epoch.iter().enumerate() {
            for _ in 0..n {
                ops.push(w(rng.random_range(1..10)));
            }
            if i + 1 < writes_per_epoch.len() {
                ops.push(LogOp::Flush);
            }
        }
        epochs(&ops)
    }

    /// The plan holds its states compactly, and chooses exactly the states the generator chose
    /// when it listed every state's writes (`reference`, the code before 2026-11-28): the same
    /// log, budget and seed give the same states, in the same order, of the same kinds.
    #[test]
    fn a_plan_chooses_exactly_the_states_of_the_reference_generator() {
        let mut shapes: Vec<Vec<Epoch>> = vec![
            epochs(&log()),
            shaped(&[3; 300], 1),
            shaped(&[1; 100], 2),
            shaped(&[2, 2, 2, 2, 2], 3),
            shaped(&[0, 0, 21, 0, 25, 1], 4),
            shaped(&[70, 3, 150, 0, 65, 64, 63], 5),
            shaped(&[200], 6),
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(99);
        for _ in 0..40 {
            let epochs: Vec<usize> = (0..rng.random_range(1..25))
                // Enumerable epochs are kept small: the reference lists all 2^w states of one.
                .map(|_| match rng.random_range(0..5) {
                    0 => rng.random_range(0..6),
                    1 => rng.random_range(10..14),
                    2 => rng.random_range(21..26),
                    3 => rng.random_range(60..70),
                    _ => rng.random_range(100..160),
                })
                .collect();
            shapes.push(shaped(&epochs, rng.random()));
        }
        for (n, e) in shapes.iter().enumerate() {
            for budget in [1, 2, 7, 50, 300, 2000] {
                for seed in [1, 42] {
                    let p = plan(e, budget, seed);
                    let (states, exhaustive) = reference::plan(e, budget, seed);
                    assert_eq!(p.exhaustive, exhaustive, "shape {n}, budget {budget}");
                    assert!(
                        built(&p, e) == states,
                        "shape {n}, budget {budget}, seed {seed}: the plan's {} states differ \
                         from the reference's {}",
                        p.states.len(),
                        states.len()
                    );
                }
            }
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
