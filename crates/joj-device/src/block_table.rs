//! The block bookkeeping both transactional FTLs keep — `Ftl` (X-FTL's home) and `IFtl` — and
//! the garbage-collection loop they share. Each FTL keeps only what differs: where its map
//! lives, what a commit writes, and what GC must keep of a victim (the [`Relocate`] hooks).
//!
//! # What it keeps true
//! - A block is `Free` (erased, on its unit's free list, counted in `free_count`), `Open` (a
//!   write frontier or a log block being programmed) or `Full` (closed: a GC candidate).
//! - A block's `valid_pages` is what its FTL counts live in it (checked against the FTL's map by
//!   [`BlockTable::check`]); the greedy index holds every `Full` block in the bucket of its
//!   count, so [`GreedyIndex::choose`] makes exactly `choose_greedy`'s decision.
//! - `seq` strictly increases over the device's life: every program (and every X-FTL commit)
//!   takes the next one, so "highest valid seq wins" finds the newest copy on flash.
//! - The *program horizon* is when every program issued so far completes; an erase never starts
//!   before it (the FTL's [`Relocate::erase_at`]), so a page's old copy outlives the program of
//!   its replacement.

use crate::addr::{BlockId, Lpn, Oob, Ppn, page_checksum};
use crate::config::{DataMode, GcPolicy, MAX_SLOTS_PER_PAGE};
use crate::error::FtlError;
use crate::gc::{BlockState, BlockView, GreedyIndex, choose_victim};
use crate::medium::{Medium, PageState};

/// Blocks, their free lists and write frontiers, the sequence counter and the program horizon.
#[derive(Debug, Clone)]
pub(crate) struct BlockTable {
    /// Slots (mapping units) per block.
    ppb: u32,
    /// Slots per NAND page: units a program may carry.
    spp: u32,
    /// Parallel units (a block's unit is `block % units`).
    units: u32,
    blocks: Vec<BlockView>,
    /// The `Full` blocks of `blocks` by valid count, for the greedy policy.
    greedy: GreedyIndex,
    /// Free blocks per unit; the last pushed is taken first.
    free: Vec<Vec<u32>>,
    free_count: u32,
    /// The open data frontier of each unit's slot.
    open: Vec<Option<u32>>,
    /// The frontier slot the next program tries first (round robin).
    cursor: usize,
    seq: u64,
    program_horizon_ns: u64,
    in_gc: bool,
    /// A page's worth of unit buffers for GC's copies (empty when the medium keeps no data).
    scratch: Vec<u8>,
}

impl BlockTable {
    /// Every block `Free` but none on a free list yet: the FTL pushes the erased ones
    /// ([`BlockTable::push_free`]) and closes the programmed ones it recovers.
    pub(crate) fn new<M: Medium>(medium: &M) -> BlockTable {
        let g = medium.geometry();
        let ppb = medium.slots_per_block();
        let spp = medium.slots_per_page();
        let blocks = g.blocks() as usize;
        let units = g.units();
        let unit_data_bytes = if medium.data_mode() == DataMode::Full {
            medium.slot_bytes() as usize
        } else {
            0
        };
        BlockTable {
            ppb,
            spp,
            units,
            blocks: vec![
                BlockView {
                    state: BlockState::Free,
                    valid_pages: 0,
                    last_write_seq: 0
                };
                blocks
            ],
            greedy: GreedyIndex::new(blocks, ppb),
            free: vec![Vec::new(); units as usize],
            free_count: 0,
            open: vec![None; units as usize],
            cursor: 0,
            seq: 0,
            program_horizon_ns: 0,
            in_gc: false,
            scratch: vec![0; unit_data_bytes * spp as usize],
        }
    }

    /// Blocks of the device.
    pub(crate) fn len(&self) -> usize {
        self.blocks.len()
    }

    pub(crate) fn view(&self, block: u32) -> BlockView {
        self.blocks[block as usize]
    }

    /// Blocks currently free.
    pub(crate) fn free_count(&self) -> u32 {
        self.free_count
    }

    /// The highest sequence number taken.
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// Take the next sequence number.
    pub(crate) fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// When every program issued so far is complete.
    pub(crate) fn horizon_ns(&self) -> u64 {
        self.program_horizon_ns
    }

    /// GC's page buffer, lent out for one victim and given back with [`BlockTable::put_scratch`].
    pub(crate) fn take_scratch(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.scratch)
    }

    pub(crate) fn put_scratch(&mut self, scratch: Vec<u8>) {
        self.scratch = scratch;
    }

    /// Heap bytes of the table (views and the greedy index).
    pub(crate) fn heap_bytes(&self) -> u64 {
        (self.blocks.len() * std::mem::size_of::<BlockView>()) as u64 + self.greedy.heap_bytes()
    }

    /// Erased `block` joins its unit's free list.
    pub(crate) fn push_free(&mut self, block: u32) {
        let unit = (block % self.units) as usize;
        let old = self.blocks[block as usize];
        assert_eq!(
            old.valid_pages, 0,
            "a block joins the free list with no valid page: block {block} has {} ({:?})",
            old.valid_pages, old.state
        );
        if old.state == BlockState::Full {
            self.greedy.remove(block, old.valid_pages);
        }
        self.blocks[block as usize] = BlockView {
            state: BlockState::Free,
            valid_pages: 0,
            last_write_seq: 0,
        };
        self.free[unit].push(block);
        self.free_count += 1;
    }

    /// A free block, now `Open`: of `prefer_unit` if it has one, else of the unit with most.
    pub(crate) fn take_free_block(&mut self, prefer_unit: usize) -> Option<u32> {
        let unit = if self.free[prefer_unit].is_empty() {
            (0..self.free.len()).max_by_key(|&u| (self.free[u].len(), std::cmp::Reverse(u)))?
        } else {
            prefer_unit
        };
        let b = self.free[unit].pop()?;
        let bv = self.blocks[b as usize];
        assert!(
            bv.state == BlockState::Free && bv.valid_pages == 0,
            "a free-listed block is free and empty: block {b} is {:?} with {} valid pages",
            bv.state,
            bv.valid_pages
        );
        assert!(
            self.free_count > 0,
            "free count 0 with block {b} on a free list"
        );
        self.free_count -= 1;
        self.blocks[b as usize].state = BlockState::Open;
        Some(b)
    }

    /// The next data frontier, round robin over the units' slots: a slot's open block, or a new
    /// one while GC runs or more than `reserve` blocks are free. `(slot, block)`.
    fn next_frontier(&mut self, reserve: u32) -> Option<(usize, u32)> {
        let slots = self.open.len();
        for _ in 0..slots {
            let slot = self.cursor;
            self.cursor = (self.cursor + 1) % slots;
            if self.open[slot].is_none() && (self.in_gc || self.free_count > reserve) {
                self.open[slot] = self.take_free_block(slot);
            }
            if let Some(b) = self.open[slot] {
                return Some((slot, b));
            }
        }
        None
    }

    /// Program the units `data[i]` (OOB `oob_lpns[i]`), at most a page's worth, as one page at
    /// the next data frontier (see [`BlockTable::next_frontier`]), padding the slots left;
    /// count them valid (the caller maps them). `placed[i]` gets each unit's `(ppn, seq)`.
    /// Returns when the program completes.
    pub(crate) fn program_frontier<M: Medium>(
        &mut self,
        medium: &mut M,
        reserve: u32,
        oob_lpns: &[u32],
        data: &[&[u8]],
        issue_ns: u64,
        placed: &mut [(u32, u64)],
    ) -> Result<u64, FtlError> {
        let (slot, b) = self.next_frontier(reserve).ok_or(FtlError::NoFreeBlocks)?;
        let (done, filled) = self.program(medium, b, oob_lpns, data, issue_ns, placed)?;
        if filled {
            self.open[slot] = None;
        }
        Ok(done)
    }

    /// [`BlockTable::program_frontier`]'s program into open `block`. Returns its completion
    /// and whether it filled the block (now `Full`, a GC candidate).
    pub(crate) fn program<M: Medium>(
        &mut self,
        medium: &mut M,
        block: u32,
        oob_lpns: &[u32],
        data: &[&[u8]],
        issue_ns: u64,
        placed: &mut [(u32, u64)],
    ) -> Result<(u64, bool), FtlError> {
        let n = oob_lpns.len();
        // The checks of a page program and of an invalidation run for every host unit and every
        // GC copy (about 8 per host write at steady state): as `assert!` they cost the model ~5 %
        // of its speed (docs/device-model.md, "Speed of the model"), so they are debug checks,
        // and `check_invariants` and the per-victim and per-block checks below hold in release.
        debug_assert!(
            n >= 1 && n <= self.spp as usize && data.len() == n && placed.len() >= n,
            "a program carries 1..={} units with their data and places: {n} lpns, {} data, {} places",
            self.spp,
            data.len(),
            placed.len()
        );
        let page = medium.programmed_pages(BlockId(block));
        debug_assert!(
            page < self.ppb && page.is_multiple_of(self.spp),
            "a program goes to the next erased page of its block: block {block} has {page} of {} slots programmed (page of {})",
            self.ppb,
            self.spp
        );
        debug_assert!(
            self.blocks[block as usize].state == BlockState::Open,
            "programs go to an open block: block {block} is {:?}",
            self.blocks[block as usize].state
        );
        let ppn = block * self.ppb + page;
        let mut oobs = [Oob::EMPTY; MAX_SLOTS_PER_PAGE as usize];
        for (i, (&lpn, d)) in oob_lpns.iter().zip(data).enumerate() {
            let seq = self.next_seq();
            oobs[i] = Oob {
                lpn,
                checksum: page_checksum(d, lpn, seq),
                seq,
            };
            placed[i] = (ppn + i as u32, seq);
        }
        let done = medium.program_page(Ppn(ppn), data, &oobs[..n], issue_ns)?;
        let bv = &mut self.blocks[block as usize];
        bv.valid_pages += n as u32;
        debug_assert!(
            bv.valid_pages <= page + n as u32,
            "a block's valid pages are at most its programmed units: block {block} counts {} valid after programming {} slots",
            bv.valid_pages,
            page + n as u32
        );
        bv.last_write_seq = self.seq;
        let filled = page + self.spp == self.ppb;
        if filled {
            bv.state = BlockState::Full;
            let valid = bv.valid_pages;
            self.greedy.insert(block, valid);
        }
        self.program_horizon_ns = self.program_horizon_ns.max(done);
        Ok((done, filled))
    }

    /// The copy at `ppn` is no longer valid.
    pub(crate) fn invalidate(&mut self, ppn: u32) {
        let block = ppn / self.ppb;
        let bv = &mut self.blocks[block as usize];
        debug_assert!(
            bv.valid_pages > 0 && bv.state != BlockState::Free,
            "only a live page is invalidated: ppn {ppn} in block {block} ({:?}, {} valid pages)",
            bv.state,
            bv.valid_pages
        );
        let valid = bv.valid_pages;
        bv.valid_pages -= 1;
        if bv.state == BlockState::Full {
            self.greedy.invalidate_one(block, valid);
        }
    }

    /// The copy at `ppn` counts valid again, unless its block is free (only an FTL canary that
    /// dropped a page it still needed does this).
    pub(crate) fn revalidate(&mut self, ppn: u32) {
        let block = ppn / self.ppb;
        let bv = &mut self.blocks[block as usize];
        match bv.state {
            BlockState::Free => {}
            BlockState::Open => bv.valid_pages += 1,
            BlockState::Full => {
                let valid = bv.valid_pages;
                bv.valid_pages += 1;
                self.greedy.remove(block, valid);
                self.greedy.insert(block, valid + 1);
            }
        }
    }

    /// Recovery: programmed `block` is closed, with `valid` pages and its newest sequence.
    /// The greedy index follows at [`BlockTable::recovered`].
    pub(crate) fn close_recovered(&mut self, block: u32, valid: u32, last_write_seq: u64) {
        assert!(
            valid <= self.ppb,
            "a recovered block holds at most its slots valid: block {block} valid {valid} of {}",
            self.ppb
        );
        self.blocks[block as usize] = BlockView {
            state: BlockState::Full,
            valid_pages: valid,
            last_write_seq,
        };
    }

    /// Recovery: the recovered mapping points at `ppn`.
    pub(crate) fn count_recovered(&mut self, ppn: u32) {
        let bv = &mut self.blocks[(ppn / self.ppb) as usize];
        bv.valid_pages += 1;
        assert!(
            bv.valid_pages <= self.ppb,
            "recovery counts at most a block's slots valid: ppn {ppn} makes {} of {}",
            bv.valid_pages,
            self.ppb
        );
    }

    /// Recovery has counted every block: the greedy index from the table, and the device's
    /// sequence continues from `seq`.
    pub(crate) fn recovered(&mut self, seq: u64) {
        assert!(
            seq >= self.seq,
            "the sequence never goes back: recovery continues from {seq}, table at {}",
            self.seq
        );
        self.greedy = GreedyIndex::from_table(&self.blocks, self.ppb);
        self.seq = seq;
    }

    /// Recovery: nothing programmed from now on starts before `ns` (every read of recovery done).
    pub(crate) fn start_programs_at(&mut self, ns: u64) {
        self.program_horizon_ns = ns;
    }

    /// The victim under `policy` (greedy from the index; others over the table).
    fn choose_victim(&self, policy: GcPolicy) -> Option<u32> {
        let v = match policy {
            GcPolicy::Greedy => self.greedy.choose(),
            policy => choose_victim(policy, &self.blocks, self.ppb, self.seq),
        };
        v.map(|b| b as u32)
    }

    /// The block part of an FTL's invariants: `valid[b]` is what its map counts live in block
    /// `b`. Panics on a bug.
    pub(crate) fn check<M: Medium>(&self, valid: &[u32], medium: &M) {
        let mut free = 0;
        for (b, v) in self.blocks.iter().enumerate() {
            assert_eq!(v.valid_pages, valid[b], "block {b} valid count");
            if v.state == BlockState::Free {
                free += 1;
                assert_eq!(
                    medium.programmed_pages(BlockId(b as u32)),
                    0,
                    "free block {b} is programmed"
                );
            }
        }
        assert_eq!(free, self.free_count, "free block count");
        let free_listed: usize = self.free.iter().map(Vec::len).sum();
        assert_eq!(free_listed, free as usize, "free lists");
        assert_eq!(
            self.greedy.choose(),
            crate::gc::choose_greedy(&self.blocks, self.ppb),
            "greedy index out of step with the block table"
        );
    }
}

/// `lpn` as an index of a map of `logical_pages`, or the error naming it.
pub(crate) fn check_lpn(lpn: Lpn, logical_pages: u64) -> Result<u32, FtlError> {
    if u64::from(lpn.0) >= logical_pages {
        return Err(FtlError::LpnOutOfRange {
            lpn: lpn.0,
            logical_pages,
        });
    }
    Ok(lpn.0)
}

/// Read slot `ppn` into `buf` and check it is a complete copy of `lpn` (its OOB logical page,
/// with `oob_lpn_mask` clearing the bits the FTL tags pages with, is `lpn`, and its checksum
/// holds). Counts the read in `reads`; returns when the data is in the controller.
pub(crate) fn read_verified<M: Medium>(
    medium: &mut M,
    reads: &mut u64,
    oob_lpn_mask: u32,
    (ppn, lpn): (u32, u32),
    buf: &mut [u8],
    issue_ns: u64,
) -> Result<u64, FtlError> {
    let r = medium.read(Ppn(ppn), buf, issue_ns)?;
    *reads += 1;
    let found = page_checksum(buf, r.oob.lpn, r.oob.seq);
    if r.state != PageState::Programmed
        || r.oob.lpn & oob_lpn_mask != lpn
        || found != r.oob.checksum
    {
        return Err(FtlError::ChecksumMismatch {
            ppn,
            expected: r.oob.checksum,
            found,
        });
    }
    Ok(r.done_ns)
}

/// What garbage collection asks of an FTL: the shared loop ([`collect_garbage`]) chooses
/// victims and erases them; the FTL says when GC is due and copies what a victim holds that
/// must outlive its erase.
pub(crate) trait Relocate {
    type Medium: Medium;
    /// What [`Relocate::relocate`] hands to [`Relocate::erased`].
    type Kept;
    fn table(&self) -> &BlockTable;
    fn parts(&mut self) -> (&mut BlockTable, &mut Self::Medium);
    /// Free blocks at or below which GC runs.
    fn gc_threshold_blocks(&self) -> u32;
    fn gc_policy(&self) -> GcPolicy;
    /// Copy every page of `victim` that must outlive its erase, counting it invalid there:
    /// the victim is left with no valid page.
    fn relocate(&mut self, victim: u32, issue_ns: u64) -> Result<Self::Kept, FtlError>;
    /// When the victim's erase may start: after every program (and store) issued so far.
    fn erase_at(&self, issue_ns: u64) -> u64;
    /// The victim's erase completes at `erased_ns`; the table has it free again.
    fn erased(&mut self, victim: u32, kept: Self::Kept, erased_ns: u64);
}

/// Run GC while free blocks are at or below the FTL's threshold (and a victim with an invalid
/// page exists). Not reentrant: the copies GC programs do not start another run.
pub(crate) fn collect_garbage<F: Relocate>(ftl: &mut F, issue_ns: u64) -> Result<(), FtlError> {
    if ftl.table().in_gc {
        return Ok(());
    }
    ftl.parts().0.in_gc = true;
    let mut result = Ok(());
    while ftl.table().free_count <= ftl.gc_threshold_blocks() {
        let Some(victim) = ftl.table().choose_victim(ftl.gc_policy()) else {
            break;
        };
        result = relocate_and_erase(ftl, victim, issue_ns);
        if result.is_err() {
            break;
        }
    }
    ftl.parts().0.in_gc = false;
    result
}

fn relocate_and_erase<F: Relocate>(
    ftl: &mut F,
    victim: u32,
    issue_ns: u64,
) -> Result<(), FtlError> {
    let before = ftl.table().blocks[victim as usize];
    assert!(
        before.state == BlockState::Full && before.valid_pages < ftl.table().ppb,
        "a GC victim is a full block with an invalid page: block {victim} is {:?} with {} of {} valid",
        before.state,
        before.valid_pages,
        ftl.table().ppb
    );
    let kept = ftl.relocate(victim, issue_ns)?;
    assert_eq!(
        ftl.table().blocks[victim as usize].valid_pages,
        0,
        "GC left a valid page in block {victim}"
    );
    let erase_at = ftl.erase_at(issue_ns);
    let (table, medium) = ftl.parts();
    let erased = medium.erase(BlockId(victim), erase_at)?;
    assert_eq!(
        medium.programmed_pages(BlockId(victim)),
        0,
        "an erased block {victim} has no programmed page"
    );
    table.push_free(victim);
    ftl.erased(victim, kept, erased);
    Ok(())
}
