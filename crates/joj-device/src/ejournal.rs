//! The eMMC-features paper's optimized filesystem journal ("journal coalition") as a trace
//! transformation and a replay mode: each ext4 (jbd2) journal transaction of a classified block
//! trace is issued instead as one packed command of reliable writes to a journal region,
//! acknowledged without a flush; the metadata's home-location writes are deferred and written
//! back (checkpointed) when the region is full, and once at the end of the trace.
//!
//! Design, and which flushes are dropped and why: `docs/device-model.md`, "The optimized
//! journal (eMMC journal coalition)". The rules are [`rules::decide`], shared with the crash
//! states of a recorded log; `transform` is their adapter to a trace and adds the journal
//! region and checkpoints. It is pure (records in, steps out);
//! `ejournal_replay::replay_ejournal` runs the steps through the device model.

pub mod rules;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use joj_trace::{BlockClass, Op, SECTOR_BYTES, TraceRecord};

use crate::error::ReplayError;
use rules::{Decision, Event, decide};

/// Default journal region: the paper's default case (256 MB).
pub const DEFAULT_REGION_MIB: u64 = 256;

/// Errors of the optimized-journal transformation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EjournalError {
    #[error(
        "a journal region of {region_mib} MiB cannot hold one transaction of {txn_pages} pages \
         ({page_bytes}-byte pages); fix: give a larger `--journal-region-mib`"
    )]
    TransactionLargerThanRegion {
        region_mib: u64,
        txn_pages: u64,
        page_bytes: u64,
    },
    #[error(
        "the journal region must hold at least one page (got {region_mib} MiB); fix: \
         `--journal-region-mib` of 1 or more"
    )]
    RegionTooSmall { region_mib: u64 },
    #[error(
        "the optimized journal replays a trace of one device, and this one has several \
         ({devices}); fix: choose the filesystem's device with `--dev major:minor`, or trace an \
         internal-journal filesystem (`--fs ext4`)"
    )]
    SeveralDevices { devices: String },
    #[error(
        "the journal region ({region_mib} MiB above byte {start_bytes}) ends beyond the device's \
         {capacity_bytes} bytes; fix: a smaller `--journal-region-mib` or a larger profile"
    )]
    RegionBeyondDevice {
        region_mib: u64,
        start_bytes: u64,
        capacity_bytes: u64,
    },
    /// Found before any trace is read or run ([`check_region_fits`]).
    #[error(
        "a journal region of {region_mib} MiB is larger than the whole device ({capacity_bytes} \
         bytes, {} MiB), and it goes above the filesystem's blocks on it; fix: a \
         `--journal-region-mib` well below {} (the paper used 32–512), or a larger profile",
        .capacity_bytes >> 20, .capacity_bytes >> 20
    )]
    RegionLargerThanDevice {
        region_mib: u64,
        capacity_bytes: u64,
    },
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

/// One step of the transformed trace.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A request of the original trace, unchanged: its index in the original trace (the
    /// record is not copied: a trace at the bound was held three times over).
    Keep(usize),
    /// A cache flush the design keeps in front of a commit: writes other than the journal's
    /// were issued since the last flush (ordered mode's data).
    OrderingFlush,
    /// One journal transaction: a packed command of reliable writes, `(offset, bytes)` each,
    /// in the journal region; `from` lists the original records it replaces.
    Packed {
        extents: Vec<(u64, u64)>,
        from: Vec<usize>,
    },
    /// Deferred metadata written to its home locations (`(offset, bytes)`, whole pages), then a
    /// flush so the region can be reused. `forced`: the region was full and the commit waits.
    Checkpoint {
        writes: Vec<(u64, u64)>,
        forced: bool,
    },
}

/// What the transformation did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EjournalStats {
    pub region_mib: u64,
    /// Journal transactions recognised (each ends with a FUA journal write, the commit block).
    pub transactions: u64,
    /// Packed commands issued (one per transaction).
    pub packed_commands: u64,
    /// Journal-region pages written by the packed commands.
    pub packed_pages: u64,
    /// Journal writes of the original trace the packed commands replace.
    pub journal_writes_coalesced: u64,
    /// Metadata home-location writes of the original trace, deferred to checkpoints.
    pub metadata_writes_deferred: u64,
    /// Checkpoints: forced (region full), and the one at the end of the trace.
    pub checkpoints_forced: u64,
    pub checkpoints_final: u64,
    /// Home-location write requests and pages the checkpoints issued.
    pub checkpoint_writes: u64,
    pub checkpoint_pages: u64,
    /// Flushes of the original trace dropped: preflushes of commits with no other write to
    /// order before them (a flag, or a flush request among the transaction's journal writes).
    pub flushes_dropped: u64,
    /// Flush requests right after a commit written without FUA (the block layer's emulation of
    /// FUA on a device without it), dropped: the packed reliable write is durable on return.
    pub postflushes_dropped: u64,
    /// Preflushes kept as an ordering flush (data written since the last flush).
    pub flushes_kept_for_ordering: u64,
    /// FUA commit writes replaced by the packed reliable write.
    pub fua_replaced: u64,
    /// Flushes added: one per checkpoint.
    pub flushes_added: u64,
    /// Journal writes after the last commit (no FUA block ends them), replayed unchanged.
    pub unterminated_journal_writes: u64,
}

impl EjournalStats {
    /// Mean journal-region pages per packed command.
    pub fn pages_per_command(&self) -> f64 {
        if self.packed_commands == 0 {
            0.0
        } else {
            self.packed_pages as f64 / self.packed_commands as f64
        }
    }
}

/// The checkpoint policy: a transaction of `txn_pages` finds the region with `used_pages` of
/// `region_pages` written since the last checkpoint; a checkpoint is due when it would not fit.
pub fn checkpoint_due(used_pages: u64, txn_pages: u64, region_pages: u64) -> bool {
    used_pages + txn_pages > region_pages
}

/// Whether `r` is a write of the filesystem journal (a jbd2 block).
fn is_journal_write(r: &TraceRecord) -> bool {
    r.op == Op::Write && r.class == BlockClass::FsJournal
}

/// Whether `r` is a metadata write to its home location, which the design defers to a
/// checkpoint.
fn is_deferred(r: &TraceRecord) -> bool {
    r.op == Op::Write && r.class == BlockClass::Metadata && !r.fua && !r.preflush
}

/// The trace as the rules' events: journal writes (commits recognised by `is_commit`), flush
/// requests, and every other request (a deferred metadata write caches nothing on the device
/// until its checkpoint).
fn events(records: &[TraceRecord]) -> Vec<Event> {
    let mut since_commit = 0u64;
    let mut events = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        events.push(if is_journal_write(r) {
            let commit = is_commit(records, i, since_commit > 0);
            since_commit = if commit { 0 } else { since_commit + 1 };
            Event::Journal { commit, fua: r.fua }
        } else if r.op == Op::Flush {
            Event::Flush
        } else {
            Event::Request {
                preflush: r.preflush,
                cached: r.op == Op::Write && !r.fua && !is_deferred(r),
            }
        });
    }
    events
}

/// Whether journal write `i` is a transaction's commit block: a FUA write (`REQ_PREFLUSH |
/// REQ_FUA`, as jbd2 issues it), or — on a device without FUA, where the block layer issues the
/// commit as flush, plain write, flush — a journal write between two flushes that follows other
/// journal writes of its transaction (`earlier_writes`).
fn is_commit(records: &[TraceRecord], i: usize, earlier_writes: bool) -> bool {
    records[i].fua || (earlier_writes && flush_write_flush(records, i))
}

/// Whether record `j` is a journal write with a pure flush right before and right after it.
fn flush_write_flush(records: &[TraceRecord], j: usize) -> bool {
    let flush = |k: usize| records.get(k).is_some_and(|r| r.op == Op::Flush);
    records.get(j).is_some_and(is_journal_write) && j >= 1 && flush(j - 1) && flush(j + 1)
}

/// Pages `[first, last]` a request covers.
fn page_span(r: &TraceRecord, page_bytes: u64) -> (u64, u64) {
    // The replay refuses a request beyond the device before this runs; saturating all the same.
    let start = r.sector.saturating_mul(SECTOR_BYTES);
    let end = start.saturating_add(r.bytes().max(1));
    (start / page_bytes, (end - 1) / page_bytes)
}

/// The most one checkpoint write carries: what one replayed request may (`replay`'s
/// `MAX_REQUEST_BYTES`, which `ejournal_replay`'s tests check it equals; not imported, since
/// `replay` imports this module).
pub(crate) const CHECKPOINT_WRITE_BYTES: u64 = 64 << 20;

/// Transformation state over one pass of the trace.
struct State {
    page_bytes: u64,
    region_start_page: u64,
    region_pages: u64,
    used_pages: u64,
    /// The journal writes of the transaction under way.
    pending: Vec<usize>,
    /// Its preflush requests the rules dropped.
    preflushes: u64,
    deferred: BTreeSet<u64>,
    stats: EjournalStats,
    steps: Vec<Step>,
}

impl State {
    fn checkpoint(&mut self, forced: bool) {
        let pages: Vec<u64> = std::mem::take(&mut self.deferred).into_iter().collect();
        self.used_pages = 0;
        if pages.is_empty() && !forced {
            return;
        }
        // A run of consecutive pages is one write of at most what one request may carry: a
        // checkpoint of 78 MiB of adjacent metadata used to be one write the replay refused.
        let most = (CHECKPOINT_WRITE_BYTES / self.page_bytes).max(1) as usize;
        let mut writes = Vec::new();
        let mut i = 0;
        while i < pages.len() {
            let mut n = 1;
            while n < most && i + n < pages.len() && pages[i + n] == pages[i] + n as u64 {
                n += 1;
            }
            writes.push((pages[i] * self.page_bytes, n as u64 * self.page_bytes));
            i += n;
        }
        self.stats.checkpoint_writes += writes.len() as u64;
        self.stats.checkpoint_pages += pages.len() as u64;
        self.stats.flushes_added += 1;
        if forced {
            self.stats.checkpoints_forced += 1;
        } else {
            self.stats.checkpoints_final += 1;
        }
        self.steps.push(Step::Checkpoint { writes, forced });
    }

    /// The transaction of `pending` as one packed command, after an ordering flush if the
    /// rules put one.
    fn commit(
        &mut self,
        records: &[TraceRecord],
        ordering_flush: bool,
    ) -> Result<(), EjournalError> {
        let from = std::mem::take(&mut self.pending);
        let mut preflushes = std::mem::take(&mut self.preflushes);
        let mut bytes = 0;
        for &i in &from {
            bytes += records[i].bytes();
            preflushes += u64::from(records[i].preflush);
        }
        // The transaction's blocks lie back to back in the region, from a page boundary.
        let pages = bytes.div_ceil(self.page_bytes).max(1);
        if pages > self.region_pages {
            return Err(EjournalError::TransactionLargerThanRegion {
                region_mib: (self.region_pages * self.page_bytes) >> 20,
                txn_pages: pages,
                page_bytes: self.page_bytes,
            });
        }
        if checkpoint_due(self.used_pages, pages, self.region_pages) {
            self.checkpoint(true);
        }
        if ordering_flush {
            self.steps.push(Step::OrderingFlush);
            self.stats.flushes_kept_for_ordering += 1;
            self.stats.flushes_dropped += preflushes.saturating_sub(1);
        } else {
            self.stats.flushes_dropped += preflushes;
        }
        let offset = (self.region_start_page + self.used_pages) * self.page_bytes;
        self.used_pages += pages;
        self.stats.transactions += 1;
        self.stats.packed_commands += 1;
        self.stats.packed_pages += pages;
        self.stats.journal_writes_coalesced += from.len() as u64;
        self.stats.fua_replaced += from.last().map_or(0, |&i| u64::from(records[i].fua));
        // The region is written as one contiguous run; the command carries it as one entry.
        self.steps.push(Step::Packed {
            extents: vec![(offset, pages * self.page_bytes)],
            from,
        });
        Ok(())
    }
}

impl State {
    /// A request the rules keep: a metadata write is deferred to a checkpoint (and a discard
    /// forgets the deferred pages it covers); the rest is replayed unchanged.
    fn keep(&mut self, i: usize, r: &TraceRecord) {
        if is_deferred(r) {
            let (a, b) = page_span(r, self.page_bytes);
            self.deferred.extend(a..=b);
            self.stats.metadata_writes_deferred += 1;
            return;
        }
        if r.op == Op::Discard {
            // Only the pages it covers are visited (a `retain` over every deferred page made a
            // trace of many small discards take 3.7 ms each).
            let (a, b) = page_span(r, self.page_bytes);
            let covered: Vec<u64> = self.deferred.range(a..=b).copied().collect();
            for p in covered {
                self.deferred.remove(&p);
            }
        }
        self.steps.push(Step::Keep(i));
    }
}

/// Where the journal region lies on the device, in bytes (whole pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub start_bytes: u64,
    pub bytes: u64,
}

impl Region {
    /// `mib` MiB from the first MiB boundary at or above `top_bytes`.
    pub fn above(top_bytes: u64, mib: u64) -> Region {
        Region {
            start_bytes: top_bytes.div_ceil(1 << 20) * (1 << 20),
            bytes: mib.saturating_mul(1 << 20),
        }
    }
}

/// Refuses a region of `region_mib` MiB that no trace leaves room for on a device of
/// `capacity_bytes`: the region goes above the trace's highest byte, so one larger than the
/// whole device never fits. Checked before a run or a replay, so that the work is not done
/// first and refused after ([`EjournalError::RegionBeyondDevice`] is the exact check, which
/// needs the trace).
pub fn check_region_fits(region_mib: u64, capacity_bytes: u64) -> Result<(), EjournalError> {
    if Region::above(0, region_mib).bytes > capacity_bytes {
        return Err(EjournalError::RegionLargerThanDevice {
            region_mib,
            capacity_bytes,
        });
    }
    Ok(())
}

/// Transform a classified trace of one device: journal transactions become packed reliable
/// commands in `region` (written circularly from its start); metadata writes are deferred to
/// checkpoints. Pure.
pub fn transform(
    records: &[TraceRecord],
    page_bytes: u64,
    region: Region,
) -> Result<(Vec<Step>, EjournalStats), EjournalError> {
    let region_mib = region.bytes >> 20;
    if region.bytes < page_bytes {
        return Err(EjournalError::RegionTooSmall { region_mib });
    }
    let mut st = State {
        page_bytes,
        region_start_page: region.start_bytes / page_bytes,
        region_pages: region.bytes / page_bytes,
        used_pages: 0,
        pending: Vec::new(),
        preflushes: 0,
        deferred: BTreeSet::new(),
        stats: EjournalStats {
            region_mib,
            ..EjournalStats::default()
        },
        steps: Vec::new(),
    };
    let mut unfinished = Vec::new();
    for (i, (r, d)) in records.iter().zip(decide(&events(records))).enumerate() {
        match d {
            Decision::Member { .. } => st.pending.push(i),
            Decision::Commit { ordering_flush, .. } => {
                st.pending.push(i);
                st.commit(records, ordering_flush)?;
            }
            Decision::DropPreflush => st.preflushes += 1,
            Decision::DropPostflush => st.stats.postflushes_dropped += 1,
            Decision::Unfinished => unfinished.push(i),
            Decision::Keep => st.keep(i, r),
        }
    }
    // Journal writes no commit block ended: replayed as they were, after the rest.
    for i in unfinished {
        st.stats.unterminated_journal_writes += 1;
        st.steps.push(Step::Keep(i));
    }
    st.checkpoint(false);
    Ok((st.steps, st.stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: u64 = 4096;

    fn w(sector: u64, sectors: u64, class: BlockClass) -> TraceRecord {
        let mut r = TraceRecord::new(0, "7:0", Op::Write, sector, sectors);
        r.class = class;
        r
    }

    fn commit(sector: u64) -> TraceRecord {
        let mut r = w(sector, 8, BlockClass::FsJournal);
        r.preflush = true;
        r.fua = true;
        r
    }

    /// Two ordered-mode transactions (the first after a data write, the second after none),
    /// metadata home writes between them, a pure flush at the end.
    fn trace() -> Vec<TraceRecord> {
        vec![
            w(1000, 8, BlockClass::Data),                // 0 data, cached
            w(5000, 8, BlockClass::FsJournal),           // 1 descriptor
            w(5008, 16, BlockClass::FsJournal),          // 2 two metadata blocks
            commit(5024),                                // 3 commit: preflush + FUA
            w(64, 8, BlockClass::Metadata),              // 4 inode table, home
            w(72, 8, BlockClass::Metadata),              // 5 next page, home
            w(64, 8, BlockClass::Metadata),              // 6 the same inode page again
            w(5032, 8, BlockClass::FsJournal),           // 7 descriptor
            commit(5040),                                // 8 commit, nothing to order
            TraceRecord::new(0, "7:0", Op::Flush, 0, 0), // 9
        ]
    }

    fn region() -> Region {
        Region {
            start_bytes: 1 << 20,
            bytes: 1 << 20,
        }
    }

    #[test]
    fn every_journal_block_of_a_transaction_ends_in_exactly_one_packed_command() {
        let recs = trace();
        let (steps, stats) = transform(&recs, PAGE, region()).unwrap();
        let packed: Vec<&Vec<usize>> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Packed { from, .. } => Some(from),
                _ => None,
            })
            .collect();
        assert_eq!(packed, vec![&vec![1, 2, 3], &vec![7, 8]]);
        for (i, r) in recs.iter().enumerate() {
            let n = packed.iter().filter(|f| f.contains(&i)).count();
            let kept = steps.iter().any(|s| matches!(s, Step::Keep(j) if *j == i));
            if r.class == BlockClass::FsJournal {
                assert_eq!((n, kept), (1, false), "journal record {i}");
            } else {
                assert_eq!(n, 0, "record {i} is not the journal's");
            }
        }
        assert_eq!(stats.transactions, 2);
        assert_eq!(stats.packed_commands, 2);
        assert_eq!(stats.packed_pages, 4 + 2);
        assert_eq!(stats.fua_replaced, 2);
        // The commands are consecutive runs of the region.
        let extents: Vec<Vec<(u64, u64)>> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Packed { extents, .. } => Some(extents.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            extents,
            vec![
                vec![(1 << 20, 4 * PAGE)],
                vec![((1 << 20) + 4 * PAGE, 2 * PAGE)]
            ]
        );
    }

    #[test]
    fn only_the_preflushes_with_nothing_to_order_are_dropped() {
        let recs = trace();
        let (steps, stats) = transform(&recs, PAGE, region()).unwrap();
        // The first commit follows a cached data write: its preflush stays, as a flush right
        // before the packed command. The second has nothing to order: dropped.
        let shape: Vec<&str> = steps
            .iter()
            .map(|s| match s {
                Step::Keep(i) if recs[*i].op == Op::Flush => "flush",
                Step::Keep(..) => "keep",
                Step::OrderingFlush => "ordering",
                Step::Packed { .. } => "packed",
                Step::Checkpoint { .. } => "checkpoint",
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                "keep",
                "ordering",
                "packed",
                "packed",
                "flush",
                "checkpoint"
            ]
        );
        assert_eq!(stats.flushes_kept_for_ordering, 1);
        assert_eq!(stats.flushes_dropped, 1);
        assert_eq!(stats.flushes_added, 1);
    }

    #[test]
    fn checkpoints_write_each_deferred_metadata_page_home_once() {
        let (steps, stats) = transform(&trace(), PAGE, region()).unwrap();
        assert_eq!(stats.metadata_writes_deferred, 3);
        let cp: Vec<&Step> = steps
            .iter()
            .filter(|s| matches!(s, Step::Checkpoint { .. }))
            .collect();
        assert_eq!(
            cp,
            vec![&Step::Checkpoint {
                writes: vec![(64 * 512, 2 * PAGE)],
                forced: false
            }]
        );
        assert_eq!((stats.checkpoint_writes, stats.checkpoint_pages), (1, 2));
    }

    /// Every checkpoint's writes home, `(offset, bytes)`, in order.
    fn checkpoint_writes(steps: &[Step]) -> Vec<(u64, u64)> {
        steps
            .iter()
            .filter_map(|s| match s {
                Step::Checkpoint { writes, .. } => Some(writes.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// 20,000 adjacent metadata pages (78 MiB) are written home in writes of at most what one
    /// request may carry: one write of them all was refused by the replay, naming record 0.
    #[test]
    fn a_checkpoint_of_many_adjacent_pages_writes_them_in_requests_a_replay_takes() {
        let recs: Vec<TraceRecord> = (0..20_000u64)
            .map(|i| w(i * 8, 8, BlockClass::Metadata))
            .collect();
        let (steps, stats) = transform(&recs, PAGE, region()).unwrap();
        let writes = checkpoint_writes(&steps);
        let most = CHECKPOINT_WRITE_BYTES;
        assert!(writes.iter().all(|(_, bytes)| *bytes <= most), "{writes:?}");
        assert_eq!(writes.iter().map(|(_, b)| b).sum::<u64>(), 20_000 * 4096);
        // Back to back, each starting where the one before ended.
        assert!(writes.windows(2).all(|p| p[0].0 + p[0].1 == p[1].0));
        assert_eq!(stats.checkpoint_writes, writes.len() as u64);
        assert_eq!(stats.checkpoint_pages * PAGE, 20_000 * 4096);
    }

    /// A discard forgets the deferred pages it covers and no others.
    #[test]
    fn a_discard_forgets_only_the_deferred_pages_it_covers() {
        let mut recs: Vec<TraceRecord> = (0..8u64)
            .map(|i| w(i * 8, 8, BlockClass::Metadata))
            .collect();
        recs.push(TraceRecord::new(9, "7:0", Op::Discard, 16, 16));
        let (steps, stats) = transform(&recs, PAGE, region()).unwrap();
        let home = checkpoint_writes(&steps);
        assert_eq!(home, [(0, 2 * 4096), (32 * 512, 4 * 4096)]);
        assert_eq!(stats.checkpoint_pages * PAGE, 6 * 4096);
    }

    #[test]
    fn a_full_region_forces_a_checkpoint_before_the_commit() {
        // Five pages: the first transaction (4) fits, the second (2) does not.
        let small = Region {
            start_bytes: 1 << 20,
            bytes: 5 * PAGE,
        };
        let (steps, stats) = transform(&trace(), PAGE, small).unwrap();
        assert_eq!(stats.checkpoints_forced, 1);
        let i_cp = steps
            .iter()
            .position(|s| matches!(s, Step::Checkpoint { forced: true, .. }))
            .unwrap();
        assert!(matches!(&steps[i_cp + 1], Step::Packed { from, extents }
            if from == &vec![7, 8] && extents == &vec![(1 << 20, 2 * PAGE)]));
        assert!(checkpoint_due(4, 2, 5) && !checkpoint_due(3, 2, 5));
    }

    /// A loop device has no FUA: the block layer sends jbd2's commit as flush, write, flush.
    #[test]
    fn a_commit_without_fua_is_found_by_its_flushes_and_both_are_handled() {
        let f = || TraceRecord::new(0, "7:0", Op::Flush, 0, 0);
        let recs = vec![
            w(1000, 8, BlockClass::Data),       // 0 data
            w(5000, 32, BlockClass::FsJournal), // 1 descriptor + 3 blocks
            f(),                                // 2 commit's preflush: orders data 0, kept
            w(5032, 8, BlockClass::FsJournal),  // 3 commit block
            f(),                                // 4 FUA emulation: dropped
            w(5040, 32, BlockClass::FsJournal), // 5 next transaction, no data before it
            f(),                                // 6 preflush with nothing to order: dropped
            w(5072, 8, BlockClass::FsJournal),  // 7 commit
            f(),                                // 8 dropped
            w(1008, 8, BlockClass::Data),       // 9
            f(),                                // 10 an fsync's own flush: kept
        ];
        let (steps, stats) = transform(&recs, PAGE, region()).unwrap();
        let from: Vec<Vec<usize>> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Packed { from, .. } => Some(from.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(from, vec![vec![1, 3], vec![5, 7]]);
        assert_eq!(stats.packed_pages, 10);
        assert_eq!(
            (
                stats.flushes_kept_for_ordering,
                stats.flushes_dropped,
                stats.postflushes_dropped
            ),
            (1, 1, 2)
        );
        assert_eq!(stats.fua_replaced, 0);
        let kept: Vec<usize> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Keep(i) => Some(*i),
                _ => None,
            })
            .collect();
        assert_eq!(kept, vec![0, 9, 10]);
    }

    /// An `fdatasync` that needs no commit flushes on its own while a journal write is pending:
    /// that flush is not the commit's and stays where it was.
    #[test]
    fn a_flush_that_is_not_a_commits_stays_in_place() {
        let f = || TraceRecord::new(0, "7:0", Op::Flush, 0, 0);
        let recs = vec![
            w(5000, 32, BlockClass::FsJournal), // 0 descriptor, commit comes later
            w(1000, 8, BlockClass::Data),       // 1
            f(),                                // 2 fdatasync's own flush: kept
            w(1008, 8, BlockClass::Data),       // 3
            f(),                                // 4 commit's preflush: orders 3, kept
            w(5032, 8, BlockClass::FsJournal),  // 5 commit
            f(),                                // 6 dropped
        ];
        let (steps, stats) = transform(&recs, PAGE, region()).unwrap();
        let shape: Vec<String> = steps
            .iter()
            .map(|s| match s {
                Step::Keep(i) => format!("keep {i}"),
                Step::OrderingFlush => "ordering".into(),
                Step::Packed { from, .. } => format!("packed {from:?}"),
                Step::Checkpoint { .. } => "checkpoint".into(),
            })
            .collect();
        assert_eq!(
            shape,
            vec!["keep 1", "keep 2", "keep 3", "ordering", "packed [0, 5]"]
        );
        assert_eq!(
            (
                stats.flushes_kept_for_ordering,
                stats.flushes_dropped,
                stats.postflushes_dropped
            ),
            (1, 0, 1)
        );
    }

    #[test]
    fn a_transaction_larger_than_the_region_is_a_clear_error() {
        let tiny = Region {
            start_bytes: 1 << 20,
            bytes: 2 * PAGE,
        };
        let e = transform(&trace(), PAGE, tiny).unwrap_err();
        assert!(e.to_string().contains("--journal-region-mib"), "{e}");
    }
}
