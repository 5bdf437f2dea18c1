//! A recorded ext4 run read as the eMMC paper's optimized journal would have issued it ("journal
//! coalition"), and its crash states: every jbd2 transaction one *group* — a packed command of
//! reliable writes, durable on return, all-or-nothing — with the flushes the design drops
//! dropped. The rules are `joj_device::ejournal::rules` (shared with the replay mode), and they
//! and the fault model are `docs/device-model.md`, "The optimized journal (eMMC journal
//! coalition)"; this module is the log's adapter to them and the crash states: [`coalesce`]
//! (log → epochs of writes and groups), [`plan`] (states within a budget, from a seed) and
//! [`Images`] (a state's image).
//!
//! Invariants: everything here is a pure function of the log, the journal's place, the budget
//! and the seed; a state's image holds every write of earlier epochs, the epoch's first `groups`
//! groups whole, and only writes received before the next group; no state appears twice.

use std::collections::HashSet;

use joj_device::ejournal::rules::{Decision, Event, decide};
use joj_linux::record::{BLOCK_BYTES, LogOp, Mark, SECTOR_BYTES, SparseImage};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::check::apply;
use super::jbd2::{self, JBD2_COMMIT, Journal};
use super::states::{StateKind, Torn, shuffle};

/// Sectors of a 4 KiB page: a per-page reliable write tears only between pages.
const PAGE_SECTORS: u32 = (BLOCK_BYTES / SECTOR_BYTES) as u32;

/// What one item of an epoch is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemKind {
    /// An ordinary cached write (the log op's index).
    Write(usize),
    /// One journal transaction as one packed reliable command: its writes' op indices.
    Group(Vec<usize>),
}

/// One item with the marks before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub kind: ItemKind,
    /// Transactions begun before the item was received.
    pub begun_before: u64,
    /// Transactions acknowledged before the item was received.
    pub acked_before: u64,
}

/// The items between two flushes that stay (or after the last one).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Epoch {
    pub items: Vec<Item>,
    /// Indices in `items` of the groups, in order.
    pub groups: Vec<usize>,
    pub begun_at_start: u64,
    /// Transactions acknowledged before the flush that ends the epoch (or the log's end).
    pub acked_at_end: u64,
    /// The flush that ends it: a logged one (its op), one put before a group, or the log's end.
    pub ends_with: Ending,
}

/// How an epoch ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "op")]
pub enum Ending {
    Flush(usize),
    /// The ordering flush the design puts before the group at this op (the commit).
    OrderingFlush(usize),
    #[default]
    LogEnd,
}

/// What the reading did to the log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoalitionStats {
    /// Journal transactions issued as one group each.
    pub groups: u64,
    /// Journal writes inside groups.
    pub group_writes: u64,
    /// Flushes between a transaction's first journal write and its commit, dropped.
    pub preflushes_dropped: u64,
    /// Flushes right after a commit (its FUA emulation), dropped.
    pub post_commit_flushes_dropped: u64,
    /// Flushes put before a group to order the data written since the last flush.
    pub ordering_flushes: u64,
    /// Flushes of the log that stay.
    pub flushes_kept: u64,
    /// Journal writes after the log's last commit, left ordinary.
    pub unfinished_journal_writes: u64,
}

/// The log read as the optimized journal: its epochs and what changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coalesced {
    pub epochs: Vec<Epoch>,
    pub stats: CoalitionStats,
}

/// Whether write `data` at `offset` is a journal block other than the journal superblock, and
/// whether it holds a commit block.
fn journal_write(journal: &Journal, offset: u64, data: &[u8]) -> Option<bool> {
    let first = journal.block_at(offset)?;
    if first == 0 {
        return None;
    }
    // jbd2 writes whole, aligned 4 KiB blocks; a commit block is one of them.
    let commit = offset.is_multiple_of(BLOCK_BYTES)
        && data
            .chunks(BLOCK_BYTES as usize)
            .any(|b| jbd2::block_type(b) == Some(JBD2_COMMIT));
    Some(commit)
}

/// The log's requests as the optimized journal's events (`joj_device::ejournal::rules`), each
/// with its op's index: a journal write (a commit if it holds a commit block; the log has no
/// FUA, a commit is followed by a flush), a flush, or any other write, which the device caches.
/// Marks are not requests.
fn events(ops: &[LogOp], journal: &Journal) -> (Vec<Event>, Vec<usize>) {
    let mut events = Vec::with_capacity(ops.len());
    let mut at = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let event = match op {
            LogOp::Write { offset_bytes, data } => {
                match journal_write(journal, *offset_bytes, data) {
                    Some(commit) => Event::Journal { commit, fua: false },
                    None => Event::Request {
                        preflush: false,
                        cached: true,
                    },
                }
            }
            LogOp::Flush => Event::Flush,
            LogOp::Mark(_) => continue,
        };
        events.push(event);
        at.push(i);
    }
    (events, at)
}

/// Reads `ops` as the optimized journal issues them: the rules (`rules::decide`) say which
/// writes form each group and which flushes go; this cuts the log into epochs at the flushes
/// that stay (or are put before a group) and counts the marks.
pub fn coalesce(ops: &[LogOp], journal: &Journal) -> Coalesced {
    let (events, at) = events(ops, journal);
    let decisions = decide(&events);
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (&d, &op) in decisions.iter().zip(&at) {
        if let Decision::Member { txn } | Decision::Commit { txn, .. } = d {
            groups.resize_with(groups.len().max(txn + 1), Vec::new);
            groups[txn].push(op);
        }
    }
    let mut stats = CoalitionStats {
        groups: groups.len() as u64,
        group_writes: groups.iter().map(|g| g.len() as u64).sum(),
        ..CoalitionStats::default()
    };
    let mut b = Builder::default();
    let mut next = decisions.iter().copied();
    for (i, op) in ops.iter().enumerate() {
        let d = match op {
            LogOp::Mark(Mark::Begun(_)) => {
                b.begun += 1;
                continue;
            }
            LogOp::Mark(Mark::Acknowledged(_)) => {
                b.acked += 1;
                continue;
            }
            _ => next.next().unwrap_or(Decision::Keep),
        };
        match d {
            Decision::Commit {
                txn,
                ordering_flush,
            } => {
                if ordering_flush {
                    stats.ordering_flushes += 1;
                    b.end_epoch(Ending::OrderingFlush(i));
                }
                b.push(ItemKind::Group(std::mem::take(&mut groups[txn])));
            }
            Decision::Member { .. } => {}
            Decision::DropPreflush => stats.preflushes_dropped += 1,
            Decision::DropPostflush => stats.post_commit_flushes_dropped += 1,
            Decision::Unfinished => {
                stats.unfinished_journal_writes += 1;
                b.push(ItemKind::Write(i));
            }
            Decision::Keep if matches!(op, LogOp::Flush) => {
                stats.flushes_kept += 1;
                b.end_epoch(Ending::Flush(i));
            }
            Decision::Keep => b.push(ItemKind::Write(i)),
        }
    }
    b.end_epoch(Ending::LogEnd);
    Coalesced {
        epochs: b.epochs,
        stats,
    }
}

/// Collects items into epochs, counting marks.
#[derive(Default)]
struct Builder {
    epochs: Vec<Epoch>,
    cur: Epoch,
    begun: u64,
    acked: u64,
    started: bool,
}

impl Builder {
    fn push(&mut self, kind: ItemKind) {
        if !self.started {
            self.cur.begun_at_start = self.begun;
            self.started = true;
        }
        self.cur.items.push(Item {
            kind,
            begun_before: self.begun,
            acked_before: self.acked,
        });
    }

    fn end_epoch(&mut self, ending: Ending) {
        if !self.started {
            self.cur.begun_at_start = self.begun;
        }
        self.cur.acked_at_end = self.acked;
        self.cur.ends_with = ending;
        self.cur.groups = (self.cur.items.iter().enumerate())
            .filter(|(_, it)| matches!(it.kind, ItemKind::Group(_)))
            .map(|(i, _)| i)
            .collect();
        self.epochs.push(std::mem::take(&mut self.cur));
        self.started = false;
    }
}

/// The canary's part of the group in flight: some of its writes, one maybe torn at a page.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Partial {
    /// Indices within the group's writes, increasing.
    pub kept: Vec<u32>,
    /// One of `kept` torn (`Torn::write` is an index within the group's writes).
    pub torn: Option<Torn>,
}

/// One crash state of the coalesced log.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CutState {
    pub epoch: u32,
    /// Groups of the epoch that completed.
    pub groups: u32,
    /// Items (ordinary writes) of the epoch that landed, increasing; all received before the
    /// next group.
    pub kept: Vec<u32>,
    /// One of `kept` torn (`Torn::write` is an item index of the epoch).
    pub torn: Option<Torn>,
    /// Only under the per-page canary: part of the next group.
    pub partial: Option<Partial>,
}

impl CutState {
    /// Which kind of state this is, as [`super::planned::Planned::kinds`] counts them.
    pub fn kind(&self, epochs: &[Epoch]) -> StateKind {
        let cands = epochs[self.epoch as usize].candidates(self.groups as usize);
        let partial_torn = self.partial.as_ref().is_some_and(|p| p.torn.is_some());
        if self.torn.is_some() || partial_torn {
            StateKind::Torn
        } else if self.partial.is_some() {
            StateKind::Subset
        } else if self.kept == cands {
            StateKind::FlushBoundary
        } else if self.kept.is_empty() {
            StateKind::AfterFlush
        } else if cands.starts_with(&self.kept) {
            StateKind::Prefix
        } else {
            StateKind::Subset
        }
    }
}

impl Epoch {
    /// Item indices of the epoch's groups.
    fn group_items(&self) -> &[usize] {
        &self.groups
    }

    /// Items that may land with `g` groups complete: ordinary writes before group `g + 1`.
    fn candidates(&self, g: usize) -> Vec<u32> {
        let end = self
            .group_items()
            .get(g)
            .copied()
            .unwrap_or(self.items.len());
        (0..end)
            .filter(|&i| matches!(self.items[i].kind, ItemKind::Write(_)))
            .map(|i| i as u32)
            .collect()
    }
}

impl CutState {
    /// Transactions acknowledged and begun that the state is judged against.
    pub fn bounds(&self, epochs: &[Epoch]) -> (u64, u64) {
        let e = &epochs[self.epoch as usize];
        let groups = e.group_items();
        let next = groups.get(self.groups as usize).map(|&i| &e.items[i]);
        let acked = next.map_or(e.acked_at_end, |n| n.acked_before);
        let mut begun = e.begun_at_start;
        if self.groups > 0 {
            begun = begun.max(e.items[groups[self.groups as usize - 1]].begun_before);
        }
        if let Some(&last) = self.kept.last() {
            begun = begun.max(e.items[last as usize].begun_before);
        }
        if let (Some(_), Some(n)) = (&self.partial, next) {
            begun = begun.max(n.begun_before);
        }
        (acked, begun)
    }

    /// One line: where the cut is and what landed.
    pub fn describe(&self, epochs: &[Epoch]) -> String {
        let e = &epochs[self.epoch as usize];
        let total = e.group_items().len();
        let cands = e.candidates(self.groups as usize).len();
        format!(
            "epoch {} (ends with {:?}): {} of its {total} groups complete, {} of {cands} writes \
             received before the next group landed{}{}",
            self.epoch,
            e.ends_with,
            self.groups,
            self.kept.len(),
            self.torn.map_or(String::new(), |t| format!(
                ", item {} torn after {} sectors",
                t.write, t.sectors
            )),
            self.partial.as_ref().map_or(String::new(), |p| format!(
                ", and writes {:?} of the next group (canary){}",
                p.kept,
                p.torn.map_or(String::new(), |t| format!(
                    ", write {} torn after {} sectors",
                    t.write, t.sectors
                ))
            )),
        )
    }
}

fn sectors(ops: &[LogOp], op: usize) -> u32 {
    match &ops[op] {
        LogOp::Write { data, .. } => (data.len() as u64 / SECTOR_BYTES) as u32,
        _ => 0,
    }
}

/// Up to `budget` states, drawn from `seed`: for every epoch and every count of completed
/// groups, all candidate writes landed and none landed (and, under the canary, the next group
/// without its last write and with only its last write); then random states. Sorted by epoch.
pub fn plan(
    ops: &[LogOp],
    epochs: &[Epoch],
    budget: usize,
    seed: u64,
    per_page: bool,
) -> Vec<CutState> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xc0a1_1710);
    let mut seen = HashSet::new();
    let mut anchors = Vec::new();
    for (ei, e) in epochs.iter().enumerate() {
        let groups = e.group_items();
        for g in 0..=groups.len() {
            let cands = e.candidates(g);
            let base = CutState {
                epoch: ei as u32,
                groups: g as u32,
                kept: cands.clone(),
                torn: None,
                partial: None,
            };
            anchors.push(CutState {
                kept: Vec::new(),
                ..base.clone()
            });
            if let (true, Some(&gi)) = (per_page, groups.get(g)) {
                let n = group_len(e, gi) as u32;
                for kept in [(0..n - 1).collect(), vec![n - 1]] {
                    anchors.push(CutState {
                        partial: Some(Partial { kept, torn: None }),
                        ..base.clone()
                    });
                }
            }
            anchors.push(base);
        }
    }
    shuffle(&mut anchors, &mut rng);
    let mut states: Vec<CutState> = anchors
        .into_iter()
        .filter(|s| seen.insert(s.clone()))
        .take(budget)
        .collect();
    let mut misses = 0usize;
    while states.len() < budget && misses < budget.saturating_mul(20).max(100) {
        let s = random_state(ops, epochs, per_page, &mut rng);
        if seen.insert(s.clone()) {
            states.push(s);
        } else {
            misses += 1;
        }
    }
    states.sort_by_key(|s| (s.epoch, s.groups));
    states
}

fn group_len(e: &Epoch, item: usize) -> usize {
    match &e.items[item].kind {
        ItemKind::Group(w) => w.len(),
        ItemKind::Write(_) => 0,
    }
}

/// A random state: an epoch, a count of complete groups, each candidate kept with probability
/// 1/2 and one torn half of the time; under the canary, half of the time part of the next group.
fn random_state(ops: &[LogOp], epochs: &[Epoch], per_page: bool, rng: &mut ChaCha8Rng) -> CutState {
    let ei = rng.random_range(0..epochs.len());
    let e = &epochs[ei];
    let groups = e.group_items();
    let g = rng.random_range(0..=groups.len());
    let kept: Vec<u32> = (e.candidates(g).into_iter())
        .filter(|_| rng.random_bool(0.5))
        .collect();
    let op_of = |item: u32| match e.items[item as usize].kind {
        ItemKind::Write(op) => op,
        ItemKind::Group(_) => unreachable!("candidates are writes"),
    };
    let torn = tear(&kept, |i| sectors(ops, op_of(i)), 1, rng);
    let partial = match (per_page && rng.random_bool(0.5), groups.get(g)) {
        (true, Some(&gi)) => {
            let ItemKind::Group(writes) = &e.items[gi].kind else {
                unreachable!("group item")
            };
            let kept: Vec<u32> = (0..writes.len() as u32)
                .filter(|_| rng.random_bool(0.5))
                .collect();
            let torn = tear(
                &kept,
                |i| sectors(ops, writes[i as usize]),
                PAGE_SECTORS,
                rng,
            );
            Some(Partial { kept, torn })
        }
        _ => None,
    };
    CutState {
        epoch: ei as u32,
        groups: g as u32,
        kept,
        torn,
        partial,
    }
}

/// Half of the time, one of `kept` torn after a multiple of `unit` sectors (if one is longer).
fn tear(
    kept: &[u32],
    sectors_of: impl Fn(u32) -> u32,
    unit: u32,
    rng: &mut ChaCha8Rng,
) -> Option<Torn> {
    let tearable: Vec<u32> = kept
        .iter()
        .copied()
        .filter(|&i| sectors_of(i) > unit)
        .collect();
    if tearable.is_empty() || !rng.random_bool(0.5) {
        return None;
    }
    let write = tearable[rng.random_range(0..tearable.len())];
    let units = sectors_of(write).div_ceil(unit);
    Some(Torn {
        write,
        sectors: rng.random_range(1..units) * unit,
    })
}

/// Builds the images of states that come in epoch order.
pub struct Images<'a> {
    ops: &'a [LogOp],
    epochs: &'a [Epoch],
    durable: SparseImage,
    next_epoch: usize,
}

impl<'a> Images<'a> {
    pub fn new(base: &SparseImage, ops: &'a [LogOp], epochs: &'a [Epoch]) -> Self {
        Images {
            ops,
            epochs,
            durable: base.clone(),
            next_epoch: 0,
        }
    }

    /// The image `s` leaves.
    pub fn image(&mut self, s: &CutState) -> SparseImage {
        let epoch = s.epoch as usize;
        assert!(epoch + 1 >= self.next_epoch, "states out of epoch order");
        while self.next_epoch < epoch {
            let mut all: Vec<usize> = Vec::new();
            for it in &self.epochs[self.next_epoch].items {
                match &it.kind {
                    ItemKind::Write(op) => all.push(*op),
                    ItemKind::Group(w) => all.extend(w),
                }
            }
            all.sort_unstable();
            for op in all {
                apply(&mut self.durable, &self.ops[op], None);
            }
            self.next_epoch += 1;
        }
        let e = &self.epochs[epoch];
        let groups = e.group_items();
        let mut landed: Vec<(usize, Option<u32>)> = Vec::new();
        for &gi in &groups[..s.groups as usize] {
            if let ItemKind::Group(w) = &e.items[gi].kind {
                landed.extend(w.iter().map(|&op| (op, None)));
            }
        }
        for &k in &s.kept {
            if let ItemKind::Write(op) = e.items[k as usize].kind {
                let torn = s.torn.filter(|t| t.write == k).map(|t| t.sectors);
                landed.push((op, torn));
            }
        }
        if let (Some(p), Some(&gi)) = (&s.partial, groups.get(s.groups as usize))
            && let ItemKind::Group(w) = &e.items[gi].kind
        {
            for &k in &p.kept {
                let torn = p.torn.filter(|t| t.write == k).map(|t| t.sectors);
                landed.push((w[k as usize], torn));
            }
        }
        landed.sort_unstable_by_key(|&(op, _)| op);
        let mut image = self.durable.clone();
        for (op, torn) in landed {
            apply(&mut image, &self.ops[op], torn);
        }
        image
    }
}

#[cfg(test)]
mod tests {
    use super::jbd2::{JBD2_DESCRIPTOR, JBD2_MAGIC, Run};
    use super::*;

    const J: u64 = 100;

    fn journal() -> Journal {
        Journal {
            runs: vec![Run {
                logical: 0,
                physical: J,
                blocks: 64,
            }],
        }
    }

    fn jblock(kind: u32) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK_BYTES as usize];
        b[0..4].copy_from_slice(&JBD2_MAGIC.to_be_bytes());
        b[4..8].copy_from_slice(&kind.to_be_bytes());
        b
    }

    fn w(block: u64, data: Vec<u8>) -> LogOp {
        LogOp::Write {
            offset_bytes: block * BLOCK_BYTES,
            data,
        }
    }

    /// An ext4 ordered-mode fsync on a device without FUA: data, descriptor and metadata,
    /// preflush, commit, post-flush; then the acknowledgement.
    fn one_fsync(jstart: u64, n: u64) -> Vec<LogOp> {
        let mut desc = jblock(JBD2_DESCRIPTOR);
        desc.extend(vec![7u8; BLOCK_BYTES as usize]);
        vec![
            LogOp::Mark(Mark::Begun(n)),
            w(10 + n, vec![1u8; 4096]),
            w(J + jstart, desc),
            LogOp::Flush,
            w(J + jstart + 2, jblock(JBD2_COMMIT)),
            LogOp::Flush,
            LogOp::Mark(Mark::Acknowledged(n)),
        ]
    }

    #[test]
    fn a_transaction_becomes_one_group_after_an_ordering_flush() {
        let mut ops = one_fsync(1, 1);
        ops.extend(one_fsync(4, 2));
        let c = coalesce(&ops, &journal());
        assert_eq!(c.stats.groups, 2);
        assert_eq!(c.stats.group_writes, 4);
        assert_eq!(c.stats.preflushes_dropped, 2);
        assert_eq!(c.stats.post_commit_flushes_dropped, 2);
        assert_eq!(c.stats.ordering_flushes, 2);
        assert_eq!(c.stats.flushes_kept, 0);
        // [data] | [group, data] | [group]
        assert_eq!(c.epochs.len(), 3);
        assert_eq!(c.epochs[1].items.len(), 2);
        assert_eq!(c.epochs[1].items[0].kind, ItemKind::Group(vec![2, 4]));
        assert_eq!(c.epochs[2].acked_at_end, 2);
    }

    #[test]
    fn a_cut_after_a_group_keeps_it_and_is_held_to_its_acknowledgement() {
        let mut ops = one_fsync(1, 1);
        ops.extend(one_fsync(4, 2));
        let c = coalesce(&ops, &journal());
        // Epoch 1: the first group complete, the second transaction's data write lost.
        let s = CutState {
            epoch: 1,
            groups: 1,
            kept: vec![],
            torn: None,
            partial: None,
        };
        assert_eq!(s.bounds(&c.epochs), (1, 1));
        let base = SparseImage::zeroed(1 << 20);
        let img = Images::new(&base, &ops, &c.epochs).image(&s);
        let mut commit = vec![0u8; 4096];
        img.read((J + 3) * BLOCK_BYTES, &mut commit);
        assert_eq!(jbd2::block_type(&commit), Some(JBD2_COMMIT));
        let mut data2 = vec![0u8; 4096];
        img.read(12 * BLOCK_BYTES, &mut data2);
        assert!(data2.iter().all(|&b| b == 0));
    }

    #[test]
    fn the_plan_is_a_function_of_its_seed_and_never_repeats() {
        let mut ops = Vec::new();
        for n in 1..=5 {
            ops.extend(one_fsync(1 + 3 * (n - 1), n));
        }
        let c = coalesce(&ops, &journal());
        let a = plan(&ops, &c.epochs, 40, 3, true);
        assert_eq!(a, plan(&ops, &c.epochs, 40, 3, true));
        assert_eq!(a.len(), a.iter().collect::<HashSet<_>>().len());
        assert!(a.iter().any(|s| s.partial.is_some()));
        assert!(
            plan(&ops, &c.epochs, 40, 3, false)
                .iter()
                .all(|s| s.partial.is_none())
        );
    }

    #[test]
    fn journal_writes_without_a_commit_stay_ordinary() {
        let ops = vec![w(J + 1, jblock(JBD2_DESCRIPTOR)), LogOp::Flush];
        let c = coalesce(&ops, &journal());
        assert_eq!(c.stats.groups, 0);
        assert_eq!(c.stats.unfinished_journal_writes, 1);
        assert_eq!(c.stats.flushes_kept, 1);
    }
}
