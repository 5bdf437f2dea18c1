//! Page-mapping flash translation layer over any `Medium`.
//!
//! # What it keeps true
//! - The mapping unit is the medium's slot: the NAND page, or a sub-page unit when the profile
//!   declares one (`docs/device-model.md`, "Mapping unit"); "page" below means that unit, a
//!   `Ppn` a slot. A NAND page is programmed once, with up to `slots_per_page` units written
//!   together (the rest padding).
//! - `l2p[lpn]` is the only valid copy of `lpn`; a block's `valid_pages` counts the pages that
//!   `l2p` points into it. GC copies exactly those pages, then erases.
//! - Every program carries `(lpn, seq, checksum)` in its OOB area, `seq` strictly increasing
//!   over the device's life (GC copies get a new `seq` too), so "highest valid seq wins"
//!   identifies the newest copy of a page on flash.
//! - An erase never starts before every program issued so far has completed (the *program
//!   horizon*): a page's old copy outlives the program of its replacement, so a power loss can
//!   tear a new copy but never leaves a page with no complete copy.
//! - A mapping checkpoint with sequence `S` starts after the program horizon, so it only points
//!   at complete pages, and it reflects every program with `seq ≤ S`.
//!
//! # Recovery
//! Load the checkpoint (`S`), then scan the OOB areas of what was programmed after it: "highest
//! valid seq wins" over the checkpoint's copy and the newer ones, and the recovered mapping is
//! checkpointed before the device accepts commands. The phases, each with its reason, are in
//! `xftl/recover.rs`: recovery also loads X-FTL's commit table.
//!
//! X-FTL's transactions on this FTL (the X-L2P table, `begin` / `commit` / `abort`) are in
//! `crate::xftl`, which reaches the fields it shares with the plain FTL through `pub(crate)`.

use serde::{Deserialize, Serialize};

use crate::addr::{BlockId, Lpn, NO_LPN, Ppn};
use crate::block_table::{self, BlockTable, Relocate, check_lpn, collect_garbage};
use crate::config::{DataMode, FtlConfig, GcPolicy};
use crate::error::FtlError;
use crate::medium::Medium;
use crate::xftl::TXN_BIT;
use crate::xftl::xl2p::XTable;

/// Work the FTL asked of the medium.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FtlStats {
    /// Pages programmed for the host (cache destage, write-through, FUA).
    pub host_programs: u64,
    /// Valid pages copied by garbage collection.
    pub gc_copies: u64,
    /// Page reads (host reads, read-modify-write, GC copies).
    pub nand_reads: u64,
    pub erases: u64,
    /// Pages programmed to the map area by checkpoints.
    pub map_programs: u64,
    pub checkpoints: u64,
    pub trims: u64,
    pub gc_runs: u64,
    /// Transactions committed (X-FTL `commit(t)`).
    #[serde(default)]
    pub commits: u64,
    #[serde(default)]
    pub aborts: u64,
    /// Pages programmed to the X-L2P area by commits (the commit tables).
    #[serde(default)]
    pub commit_table_programs: u64,
    /// Map-area blocks erased (the map log's ring); `erases` counts the data blocks.
    #[serde(default)]
    pub map_erases: u64,
    /// NAND page programs of data (host and GC; one per `host_programs + gc_copies` unless the
    /// mapping unit is smaller than the page, when several units share a program).
    #[serde(default)]
    pub page_programs: u64,
    /// Slots programmed empty: pages programmed with fewer units than they hold.
    #[serde(default)]
    pub padding_slots: u64,
}

impl FtlStats {
    /// Flash pages programmed for mapping (checkpoints and X-FTL commit tables) per page
    /// programmed for the host: i-FTL's counterpart is `IftlStats::mapping_programs_per_host_page`.
    pub fn mapping_programs_per_host_page(&self) -> f64 {
        (self.map_programs + self.commit_table_programs) as f64 / self.host_programs.max(1) as f64
    }
}

/// Erase-count statistics over all blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WearStats {
    pub min_erases: u32,
    pub max_erases: u32,
    pub mean_erases: f64,
}

/// What recovery found and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecoveryReport {
    /// Modeled time from power-on to a usable mapping.
    pub modeled_ns: u64,
    pub checkpoint_seq: u64,
    /// Pages whose OOB area was read.
    pub oob_reads: u64,
    /// Map-area pages read to load the checkpoint.
    pub map_page_reads: u64,
    /// Map-area pages written by the checkpoint that persists the recovered mapping.
    pub map_page_writes: u64,
    /// Logical pages whose mapping came from the scan rather than the checkpoint.
    pub mapped_from_scan: u64,
    /// Pages whose program a power loss interrupted: programmed, but failing their checksum.
    /// Never shown to the host; the page's previous copy is used. Tears stay on flash until GC
    /// erases their block, so a later recovery counts them again.
    pub torn_pages: u64,
    /// Blocks whose erase the power loss interrupted: every page fails its checksum until the
    /// block is erased again (their pages are not counted in `torn_pages`).
    pub torn_erase_blocks: u64,
    /// Commit-table entries (X-FTL) whose page recovery made the device's version.
    #[serde(default)]
    pub xl2p_entries_applied: u64,
    /// Commit-table entries newer than the checkpoint whose page no longer matches (moved by GC,
    /// a newer copy wins) or that a newer version superseded.
    #[serde(default)]
    pub xl2p_entries_stale: u64,
    /// Pages of transactions that had not committed (tagged, named by no commit record),
    /// programmed after the checkpoint: never shown.
    #[serde(default)]
    pub uncommitted_pages_dropped: u64,
    /// Commit-table pages (X-FTL) read.
    #[serde(default)]
    pub xl2p_table_pages: u64,
    /// Modeled time to load the commit table, the part of recovery X-FTL adds to the FTL's own
    /// (read first, on idle units; `modeled_ns` includes it).
    #[serde(default)]
    pub xl2p_load_ns: u64,
}

/// Page-mapping FTL.
#[derive(Debug)]
pub struct Ftl<M: Medium> {
    pub(crate) medium: M,
    pub(crate) cfg: FtlConfig,
    /// Slots (mapping units) per block.
    pub(crate) ppb: u32,
    /// Slots per NAND page: units a program may carry.
    spp: u32,
    /// Bytes of one unit with data stored, 0 without.
    unit_data_bytes: usize,
    pub(crate) logical_pages: u64,
    pub(crate) l2p: Vec<u32>,
    /// Blocks, free lists, frontiers, sequence and program horizon (shared with i-FTL).
    pub(crate) table: BlockTable,
    /// Scratch of `relocate`: `(ppn, lpn)` of the victim's valid pages.
    victim_pages: Vec<(u32, u32)>,
    pub(crate) entries_per_map_page: u64,
    map_dirty: Vec<bool>,
    pub(crate) dirty_map_pages: Vec<u32>,
    pub(crate) programs_since_checkpoint: u64,
    /// Completion of the last checkpoint written; a flush waits for it even with nothing new.
    pub(crate) checkpoint_done_ns: u64,
    pub(crate) stats: FtlStats,
    /// X-FTL's transactional mapping (`xl2p`).
    pub(crate) xl2p: XTable,
    /// Canary for the crash tests: erase GC victims without waiting for the program horizon.
    #[cfg(test)]
    canary_no_erase_barrier: bool,
}

impl<M: Medium> Ftl<M> {
    pub(crate) fn empty(
        mut medium: M,
        cfg: FtlConfig,
        logical_pages: u64,
    ) -> Result<Ftl<M>, FtlError> {
        medium.set_map_erases(cfg.erase_map_blocks);
        let g = medium.geometry().clone();
        let ppb = medium.slots_per_block();
        let spp = medium.slots_per_page();
        let units = g.units();
        let blocks = g.blocks();
        let table = BlockTable::new(&medium);
        let user_blocks = logical_pages.div_ceil(u64::from(ppb));
        let reserve = u64::from(units) + u64::from(cfg.gc_free_blocks) + 2;
        if u64::from(blocks) < user_blocks + reserve {
            return Err(FtlError::GeometryTooSmall {
                reason: format!(
                    "{blocks} blocks cannot hold {user_blocks} blocks of logical pages plus {reserve} spare \
                     ({units} frontiers + {} GC reserve + 2); raise over-provisioning or blocks",
                    cfg.gc_free_blocks
                ),
            });
        }
        if logical_pages == 0 || logical_pages >= u64::from(NO_LPN) {
            return Err(FtlError::GeometryTooSmall {
                reason: format!("{logical_pages} logical pages"),
            });
        }
        let page_bytes = g.page_bytes as usize;
        let entries_per_map_page = (page_bytes / 4) as u64;
        let map_pages = logical_pages.div_ceil(entries_per_map_page) as usize;
        let data_mode = medium.data_mode();
        let unit_data_bytes = if data_mode == DataMode::Full {
            medium.slot_bytes() as usize
        } else {
            0
        };
        Ok(Ftl {
            ppb,
            spp,
            unit_data_bytes,
            logical_pages,
            l2p: vec![NO_LPN; logical_pages as usize],
            table,
            victim_pages: Vec::with_capacity(ppb as usize),
            entries_per_map_page,
            map_dirty: vec![false; map_pages],
            dirty_map_pages: Vec::new(),
            programs_since_checkpoint: 0,
            checkpoint_done_ns: 0,
            stats: FtlStats::default(),
            xl2p: XTable::new(cfg.xl2p_entries as usize),
            #[cfg(test)]
            canary_no_erase_barrier: false,
            medium,
            cfg,
        })
    }

    /// A new, empty FTL: every block that holds anything is erased and the checkpoint reset.
    pub fn format(medium: M, cfg: FtlConfig, logical_pages: u64) -> Result<Ftl<M>, FtlError> {
        let mut ftl = Self::empty(medium, cfg, logical_pages)?;
        let blocks = ftl.table.len() as u32;
        for b in 0..blocks {
            if ftl.medium.programmed_pages(BlockId(b)) > 0 {
                ftl.medium.erase(BlockId(b), 0)?;
            }
        }
        ftl.medium.reset_checkpoint(logical_pages);
        for b in (0..blocks).rev() {
            ftl.table.push_free(b);
        }
        Ok(ftl)
    }

    /// Logical pages exported.
    pub fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    pub fn medium(&self) -> &M {
        &self.medium
    }

    pub fn medium_mut(&mut self) -> &mut M {
        &mut self.medium
    }

    /// Give the medium back (power loss, image save).
    pub fn into_medium(self) -> M {
        self.medium
    }

    pub fn stats(&self) -> &FtlStats {
        &self.stats
    }

    /// When every program issued so far is complete.
    pub fn program_horizon_ns(&self) -> u64 {
        self.table.horizon_ns()
    }

    /// Whether `lpn` has a copy on flash.
    pub fn is_mapped(&self, lpn: Lpn) -> bool {
        self.l2p.get(lpn.0 as usize).is_some_and(|&p| p != NO_LPN)
    }

    /// Blocks currently free.
    pub fn free_blocks(&self) -> u32 {
        self.table.free_count()
    }

    /// Bytes of mapping state held per logical page (L2P entry plus the checkpoint copy).
    pub fn heap_bytes(&self) -> u64 {
        (self.l2p.len() * 4
            + self.map_dirty.len()
            + self.dirty_map_pages.capacity() * 4
            + self.victim_pages.capacity() * 8) as u64
            + self.table.heap_bytes()
    }

    pub fn wear(&self) -> WearStats {
        let n = self.table.len() as u32;
        let counts: Vec<u32> = (0..n)
            .map(|b| self.medium.erase_count(BlockId(b)))
            .collect();
        WearStats {
            min_erases: counts.iter().copied().min().unwrap_or(0),
            max_erases: counts.iter().copied().max().unwrap_or(0),
            mean_erases: counts.iter().map(|&c| f64::from(c)).sum::<f64>() / f64::from(n.max(1)),
        }
    }

    pub(crate) fn mark_dirty(&mut self, lpn: u32) {
        let m = (u64::from(lpn) / self.entries_per_map_page) as usize;
        if !self.map_dirty[m] {
            self.map_dirty[m] = true;
            self.dirty_map_pages.push(m as u32);
        }
    }

    /// The copy at `ppn` is no longer valid.
    pub(crate) fn invalidate(&mut self, ppn: u32) {
        self.table.invalidate(ppn);
    }

    /// Program `data` at the next frontier with `oob_lpn` in its OOB area (a logical page, or one
    /// tagged with `TXN_BIT`) and count it valid; the caller maps it. Returns `(ppn, seq, done)`.
    pub(crate) fn program_raw(
        &mut self,
        oob_lpn: u32,
        data: &[u8],
        issue_ns: u64,
    ) -> Result<(u32, u64, u64), FtlError> {
        let mut placed = [(0u32, 0u64)];
        let done = self.program_group(&[oob_lpn], &[data], issue_ns, &mut placed)?;
        Ok((placed[0].0, placed[0].1, done))
    }

    /// Program the units `data[i]` (OOB `oob_lpns[i]`), at most a page's worth, as one page at
    /// the next frontier, padding the slots left; count them valid (the caller maps them).
    /// `placed[i]` gets each unit's `(ppn, seq)`. Returns when the program completes.
    fn program_group(
        &mut self,
        oob_lpns: &[u32],
        data: &[&[u8]],
        issue_ns: u64,
        placed: &mut [(u32, u64)],
    ) -> Result<u64, FtlError> {
        let n = oob_lpns.len();
        // The data length is the medium's to refuse (a host error); the logical page is ours.
        for &lpn in oob_lpns {
            debug_assert!(
                u64::from(lpn & !TXN_BIT) < self.logical_pages,
                "a programmed unit names a logical page in range: lpn {} of {}",
                lpn & !TXN_BIT,
                self.logical_pages
            );
        }
        let done =
            self.table
                .program_frontier(&mut self.medium, 0, oob_lpns, data, issue_ns, placed)?;
        self.stats.page_programs += 1;
        self.stats.padding_slots += u64::from(self.spp) - n as u64;
        self.programs_since_checkpoint += n as u64;
        Ok(done)
    }

    /// Program `data[i]` as the new copy of `lpns[i]` (plain copies, or with `active[i]` an
    /// active transaction's copy that GC moves), one page at the next frontier; returns
    /// completion time.
    fn program_copies(
        &mut self,
        lpns: &[u32],
        active: &[bool],
        data: &[&[u8]],
        issue_ns: u64,
    ) -> Result<u64, FtlError> {
        let mut oob_lpns = [0u32; crate::config::MAX_SLOTS_PER_PAGE as usize];
        for (i, (&lpn, &a)) in lpns.iter().zip(active).enumerate() {
            oob_lpns[i] = if a { lpn | TXN_BIT } else { lpn };
        }
        let n = lpns.len();
        let mut placed = [(0u32, 0u64); crate::config::MAX_SLOTS_PER_PAGE as usize];
        let done = self.program_group(&oob_lpns[..n], data, issue_ns, &mut placed)?;
        for i in 0..n {
            let (lpn, (ppn, seq)) = (lpns[i], placed[i]);
            if active[i] {
                self.moved_active(lpn, ppn, seq, done);
                continue;
            }
            let old = self.l2p[lpn as usize];
            debug_assert_ne!(
                old, ppn,
                "a new copy of lpn {lpn} goes to a fresh page, not its mapped ppn {old}"
            );
            if old != NO_LPN {
                self.invalidate(old);
            }
            self.l2p[lpn as usize] = ppn;
            self.mark_dirty(lpn);
        }
        Ok(done)
    }

    /// Write one whole logical page (`data` is a page, or empty in `OobOnly` mode). Runs GC
    /// first if free blocks are short, and a periodic checkpoint after. Returns when the page
    /// program completes.
    pub fn write(&mut self, lpn: Lpn, data: &[u8], issue_ns: u64) -> Result<u64, FtlError> {
        self.write_many(&[lpn], &[data], issue_ns)
    }

    /// Write whole logical pages `lpns[i]` with `data[i]` (each a mapping unit, or empty in
    /// `OobOnly` mode), a page's worth of units per NAND program: GC first if free blocks are
    /// short, and a periodic checkpoint after, around each program. Returns when the last
    /// program completes.
    pub fn write_many(
        &mut self,
        lpns: &[Lpn],
        data: &[&[u8]],
        issue_ns: u64,
    ) -> Result<u64, FtlError> {
        for &lpn in lpns {
            check_lpn(lpn, self.logical_pages)?;
            self.xl2p.check_plain(lpn)?;
        }
        let spp = self.spp as usize;
        let plain = [false; crate::config::MAX_SLOTS_PER_PAGE as usize];
        let mut done = issue_ns;
        for (group, bytes) in lpns.chunks(spp).zip(data.chunks(spp)) {
            collect_garbage(self, issue_ns)?;
            let mut raw = [0u32; crate::config::MAX_SLOTS_PER_PAGE as usize];
            for (r, l) in raw.iter_mut().zip(group) {
                *r = l.0;
            }
            let n = group.len();
            done = done.max(self.program_copies(&raw[..n], &plain[..n], bytes, issue_ns)?);
            self.stats.host_programs += n as u64;
            if self.programs_since_checkpoint >= self.cfg.checkpoint_interval_programs {
                self.checkpoint(issue_ns)?;
            }
        }
        Ok(done)
    }

    /// Read `lpn` into `buf`. An unmapped page reads as zeros without touching the medium
    /// (`Ok(None)`); otherwise returns when the data is in the controller.
    pub fn read(
        &mut self,
        lpn: Lpn,
        buf: &mut [u8],
        issue_ns: u64,
    ) -> Result<Option<u64>, FtlError> {
        let i = check_lpn(lpn, self.logical_pages)? as usize;
        let ppn = self.l2p[i];
        if ppn == NO_LPN {
            buf.fill(0);
            return Ok(None);
        }
        let done = self.read_verified(ppn, lpn.0, buf, issue_ns)?;
        Ok(Some(done))
    }

    /// Read `ppn` into `buf` and check it is a complete copy of `lpn` (tagged or not).
    pub(crate) fn read_verified(
        &mut self,
        ppn: u32,
        lpn: u32,
        buf: &mut [u8],
        issue_ns: u64,
    ) -> Result<u64, FtlError> {
        let reads = &mut self.stats.nand_reads;
        block_table::read_verified(&mut self.medium, reads, !TXN_BIT, (ppn, lpn), buf, issue_ns)
    }

    /// Drop `lpn`'s mapping: it reads as zeros until written again. Durable at the next
    /// checkpoint.
    pub fn trim(&mut self, lpn: Lpn) -> Result<(), FtlError> {
        let i = check_lpn(lpn, self.logical_pages)? as usize;
        self.xl2p.check_plain(lpn)?;
        let old = self.l2p[i];
        if old != NO_LPN {
            self.invalidate(old);
            self.l2p[i] = NO_LPN;
            self.mark_dirty(lpn.0);
            self.stats.trims += 1;
        }
        Ok(())
    }

    /// Persist the mapping: the dirty map pages plus a root page, after every program issued so
    /// far. Returns completion (with nothing changed, completion of the last checkpoint).
    pub fn checkpoint(&mut self, issue_ns: u64) -> Result<u64, FtlError> {
        self.checkpoint_at_least(issue_ns, 0)
    }

    /// The checkpoint of a host flush: at least `flush_meta_pages` pages of metadata (see
    /// `FtlConfig`), written even when nothing changed, as a firmware that logs its whole map on
    /// every flush does. With `flush_meta_pages == 0`, `checkpoint`.
    pub fn flush_checkpoint(&mut self, issue_ns: u64) -> Result<u64, FtlError> {
        self.checkpoint_at_least(issue_ns, u64::from(self.cfg.flush_meta_pages))
    }

    fn checkpoint_at_least(&mut self, issue_ns: u64, min_pages: u64) -> Result<u64, FtlError> {
        if self.dirty_map_pages.is_empty() && min_pages == 0 {
            // A periodic checkpoint may still be under way: the mapping is persisted only once
            // it completes.
            return Ok(issue_ns.max(self.checkpoint_done_ns));
        }
        self.dirty_map_pages.sort_unstable();
        let mut ranges: Vec<(u32, u32)> = Vec::with_capacity(self.dirty_map_pages.len());
        for &m in &self.dirty_map_pages {
            let lo = u64::from(m) * self.entries_per_map_page;
            let hi = (lo + self.entries_per_map_page).min(self.logical_pages);
            match ranges.last_mut() {
                Some((first, n)) if u64::from(*first) + u64::from(*n) == lo => {
                    *n += (hi - lo) as u32
                }
                _ => ranges.push((lo as u32, (hi - lo) as u32)),
            }
        }
        let entries: u64 = ranges.iter().map(|&(_, n)| u64::from(n)).sum();
        assert!(
            entries <= self.logical_pages
                && ranges
                    .last()
                    .is_none_or(|&(f, n)| u64::from(f) + u64::from(n) <= self.logical_pages),
            "a checkpoint writes map entries within the device: {entries} entries, last range {:?}, {} logical pages",
            ranges.last(),
            self.logical_pages
        );
        let pages = (self.dirty_map_pages.len() as u64 + 1).max(min_pages);
        for m in self.dirty_map_pages.drain(..) {
            self.map_dirty[m as usize] = false;
        }
        let start = issue_ns.max(self.table.horizon_ns());
        let erased = self.medium.map_erases();
        let done =
            self.medium
                .write_checkpoint(&ranges, &self.l2p, self.table.seq(), pages, start)?;
        self.stats.map_erases += self.medium.map_erases() - erased;
        self.checkpoint_done_ns = done;
        // Every committed transaction is in `l2p` now: the checkpoint covers its entries.
        self.xl2p.checkpointed();
        self.stats.map_programs += pages;
        self.stats.checkpoints += 1;
        self.programs_since_checkpoint = 0;
        Ok(done)
    }

    /// GC's copies of `valid` (`(ppn, oob lpn)` of a victim's valid pages), a page's worth of
    /// units per program, each read first into `buf` (a page's worth of unit buffers). A
    /// committed page is copied untagged (ordinary data from now on); a page of an active
    /// transaction stays tagged and its X-L2P entry follows it.
    fn copy_valid(
        &mut self,
        valid: &[(u32, u32)],
        buf: &mut [u8],
        issue_ns: u64,
    ) -> Result<(), FtlError> {
        let ub = self.unit_data_bytes;
        for group in valid.chunks(self.spp as usize) {
            let mut lpns = [0u32; crate::config::MAX_SLOTS_PER_PAGE as usize];
            let mut active = [false; crate::config::MAX_SLOTS_PER_PAGE as usize];
            let mut ready = issue_ns;
            for (i, &(ppn, oob_lpn)) in group.iter().enumerate() {
                let lpn = oob_lpn & !TXN_BIT;
                let read_done =
                    self.read_verified(ppn, lpn, &mut buf[i * ub..(i + 1) * ub], issue_ns)?;
                ready = ready.max(read_done);
                lpns[i] = lpn;
                active[i] = self.l2p[lpn as usize] != ppn;
            }
            let n = group.len();
            let mut data: [&[u8]; crate::config::MAX_SLOTS_PER_PAGE as usize] =
                [&[]; crate::config::MAX_SLOTS_PER_PAGE as usize];
            for (i, d) in data.iter_mut().take(n).enumerate() {
                *d = &buf[i * ub..(i + 1) * ub];
            }
            self.program_copies(&lpns[..n], &active[..n], &data[..n], ready)?;
            self.stats.gc_copies += n as u64;
        }
        Ok(())
    }

    /// Check the FTL's bookkeeping against the medium (tests, recovery). Panics on a bug.
    pub fn check_invariants(&self) {
        let mut valid = vec![0u32; self.table.len()];
        for (lpn, &p) in self.l2p.iter().enumerate() {
            if p == NO_LPN {
                continue;
            }
            valid[(p / self.ppb) as usize] += 1;
            let oob = self.medium.peek_oob(Ppn(p));
            assert_eq!(
                oob.map(|o| o.lpn & !TXN_BIT),
                Some(lpn as u32),
                "l2p[{lpn}] = {p} but OOB says {oob:?}"
            );
        }
        for (lpn, p) in self.xl2p.active_pages() {
            valid[(p / self.ppb) as usize] += 1;
            let oob = self.medium.peek_oob(Ppn(p));
            assert_eq!(
                oob.map(|o| o.lpn),
                Some(lpn | TXN_BIT),
                "active entry of {lpn} = {p} but OOB says {oob:?}"
            );
        }
        self.table.check(&valid, &self.medium);
    }
}

/// X-FTL's part of garbage collection: a victim's valid pages are those `l2p` or an active
/// transaction's X-L2P entry points at; the erase waits for the program horizon.
impl<M: Medium> Relocate for Ftl<M> {
    type Medium = M;
    type Kept = ();

    fn table(&self) -> &BlockTable {
        &self.table
    }

    fn parts(&mut self) -> (&mut BlockTable, &mut M) {
        (&mut self.table, &mut self.medium)
    }

    fn gc_threshold_blocks(&self) -> u32 {
        self.cfg.gc_free_blocks
    }

    fn gc_policy(&self) -> GcPolicy {
        self.cfg.gc_policy
    }

    fn relocate(&mut self, victim: u32, issue_ns: u64) -> Result<(), FtlError> {
        self.stats.gc_runs += 1;
        let n = self.medium.programmed_pages(BlockId(victim));
        // First find the valid pages, then copy them: the mapping lookups of the first pass are
        // independent of each other, so the processor overlaps their cache misses, which a
        // lookup-copy-lookup loop serializes. Copying one page changes no other page's
        // validity, so the list stays right during the second pass.
        let mut valid = std::mem::take(&mut self.victim_pages);
        valid.clear();
        for p in 0..n {
            let ppn = victim * self.ppb + p;
            let Some(oob) = self.medium.peek_oob(Ppn(ppn)) else {
                break;
            };
            let lpn = oob.lpn & !TXN_BIT;
            if u64::from(lpn) < self.logical_pages
                && (self.l2p[lpn as usize] == ppn || self.xl2p.active_ppn(lpn) == Some(ppn))
            {
                valid.push((ppn, oob.lpn));
            }
        }
        let counted = self.table.view(victim).valid_pages;
        assert_eq!(
            valid.len(),
            counted as usize,
            "GC finds as many valid pages in victim {victim} as its block counts"
        );
        let copies = self.stats.gc_copies;
        let mut buf = self.table.take_scratch();
        let r = self.copy_valid(&valid, &mut buf, issue_ns);
        self.table.put_scratch(buf);
        r?;
        assert_eq!(
            self.stats.gc_copies - copies,
            u64::from(counted),
            "GC moves every valid page of victim {victim}"
        );
        self.victim_pages = valid;
        Ok(())
    }

    /// The barrier: the victim's pages stay readable until every program issued so far,
    /// including the copies just made, has completed.
    fn erase_at(&self, issue_ns: u64) -> u64 {
        let erase_at = issue_ns.max(self.table.horizon_ns());
        #[cfg(test)]
        let erase_at = if self.canary_no_erase_barrier {
            issue_ns
        } else {
            erase_at
        };
        erase_at
    }

    fn erased(&mut self, _victim: u32, _kept: (), _erased_ns: u64) {
        self.stats.erases += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Geometry, Timing};
    use crate::nand::NandMedium;

    fn geometry() -> Geometry {
        Geometry {
            page_bytes: 512,
            pages_per_block: 8,
            blocks_per_plane: 16,
            planes_per_die: 1,
            dies_per_channel: 1,
            channels: 2,
            sector_bytes: 512,
        }
    }

    fn ftl(logical: u64) -> Ftl<NandMedium> {
        ftl_with_slots(logical, 512)
    }

    /// The test FTL on 512-byte pages of `slot_bytes` slots (512: a slot is the page).
    fn ftl_with_slots(logical: u64, slot_bytes: u32) -> Ftl<NandMedium> {
        let m = NandMedium::with_slots(geometry(), Timing::default(), DataMode::Full, slot_bytes);
        let cfg = FtlConfig {
            gc_free_blocks: 2,
            checkpoint_interval_programs: 50,
            ..FtlConfig::default()
        };
        Ftl::format(m, cfg, logical).unwrap()
    }

    fn page(v: u8) -> Vec<u8> {
        vec![v; 512]
    }

    #[test]
    fn overwrites_under_gc_keep_every_page() {
        let mut f = ftl(200);
        let mut now = 0;
        for round in 0..20u32 {
            for lpn in 0..200u32 {
                let v = (lpn.wrapping_mul(7) + round) as u8;
                now = f.write(Lpn(lpn), &page(v), now).unwrap();
            }
        }
        assert!(f.stats().gc_copies > 0 || f.stats().erases > 0);
        f.check_invariants();
        let mut buf = page(0);
        for lpn in 0..200u32 {
            f.read(Lpn(lpn), &mut buf, now).unwrap();
            assert_eq!(buf, page((lpn.wrapping_mul(7) + 19) as u8));
        }
    }

    #[test]
    fn too_little_spare_is_refused() {
        let m = NandMedium::new(geometry(), Timing::default(), DataMode::Full);
        let e = Ftl::format(m, FtlConfig::default(), 250).unwrap_err();
        assert!(matches!(e, FtlError::GeometryTooSmall { .. }));
    }

    #[test]
    fn trim_unmaps_and_reads_zero() {
        let mut f = ftl(100);
        f.write(Lpn(3), &page(9), 0).unwrap();
        f.trim(Lpn(3)).unwrap();
        let mut buf = page(1);
        assert_eq!(f.read(Lpn(3), &mut buf, 0).unwrap(), None);
        assert_eq!(buf, page(0));
        f.check_invariants();
    }

    #[test]
    fn recovery_from_checkpoint_plus_scan_finds_every_completed_page() {
        let mut f = ftl(100);
        let mut now = 0;
        for lpn in 0..100u32 {
            now = f.write(Lpn(lpn), &page(lpn as u8), now).unwrap();
        }
        now = f.checkpoint(now).unwrap();
        for lpn in 0..30u32 {
            now = f.write(Lpn(lpn), &page(200), now).unwrap();
        }
        f.trim(Lpn(99)).unwrap();
        let mut m = f.into_medium();
        m.power_loss(now, 1);
        let (mut g, report) = Ftl::recover(m, FtlConfig::default(), 100, now).unwrap();
        assert!(report.modeled_ns > 0);
        assert!(report.mapped_from_scan >= 30);
        let mut buf = page(0);
        for lpn in 0..100u32 {
            g.read(Lpn(lpn), &mut buf, 0).unwrap();
            let want = if lpn < 30 { 200 } else { lpn as u8 };
            assert_eq!(buf, page(want), "lpn {lpn}");
        }
    }

    /// Crash trial: every page written and checkpointed, then overwritten at a pace the medium
    /// cannot follow (programs queue up), then power cut while GC is under way. Returns the
    /// pages that read back neither their durable content nor a later one. With `slot_bytes`
    /// below the page (sub-page mapping) units are written two at a time, sharing a program.
    fn crash_trial(seed: u64, canary: bool, slot_bytes: u32) -> Vec<u32> {
        let mut f = ftl_with_slots(200, slot_bytes);
        f.canary_no_erase_barrier = canary;
        let unit = |v: u8| vec![v; slot_bytes as usize];
        let mut now = 0;
        for lpn in 0..200u32 {
            now = f.write(Lpn(lpn), &unit(0), now).unwrap();
        }
        now = f.checkpoint(now).unwrap();
        let mut rng = crate::rng::SimRng::new(seed);
        let mut allowed: Vec<Vec<u8>> = vec![vec![0]; 200];
        for i in 0..300u32 {
            let lpn = rng.below(200) as u32;
            let v = (i % 250 + 1) as u8;
            if slot_bytes < 512 {
                let other = (lpn + 1 + rng.below(199) as u32) % 200;
                let d = unit(v);
                f.write_many(&[Lpn(lpn), Lpn(other)], &[&d, &d], now)
                    .unwrap();
                allowed[other as usize].push(v);
            } else {
                f.write(Lpn(lpn), &unit(v), now).unwrap();
            }
            allowed[lpn as usize].push(v);
            now += 20_000;
            f.medium_mut().retire(now);
        }
        // Anywhere in the window where programs and erases are still under way.
        let at = now + rng.below(f.program_horizon_ns().saturating_sub(now) + 1);
        let mut m = f.into_medium();
        m.power_loss(at, seed);
        let cfg = FtlConfig {
            gc_free_blocks: 2,
            checkpoint_interval_programs: 50,
            ..FtlConfig::default()
        };
        let (mut g, _) = Ftl::recover(m, cfg, 200, at).unwrap();
        let mut buf = unit(0);
        let mut bad = Vec::new();
        for lpn in 0..200u32 {
            g.read(Lpn(lpn), &mut buf, 0).unwrap();
            let ok = buf.iter().all(|&b| b == buf[0])
                && allowed[lpn as usize].contains(&buf[0])
                && g.is_mapped(Lpn(lpn));
            if !ok {
                bad.push(lpn);
            }
        }
        bad
    }

    #[test]
    fn power_cut_during_gc_loses_no_durable_page() {
        for seed in 0..60 {
            assert_eq!(
                crash_trial(seed, false, 512),
                Vec::<u32>::new(),
                "seed {seed}"
            );
        }
    }

    #[test]
    fn power_cut_during_gc_with_sub_page_units_loses_no_durable_page() {
        for slot_bytes in [256, 128] {
            for seed in 0..60 {
                assert_eq!(
                    crash_trial(seed, false, slot_bytes),
                    Vec::<u32>::new(),
                    "seed {seed}, {slot_bytes}-byte units"
                );
            }
        }
    }

    #[test]
    fn canary_erasing_before_copies_complete_is_caught() {
        let caught = (0..60)
            .filter(|&seed| !crash_trial(seed, true, 512).is_empty())
            .count();
        assert!(
            caught > 0,
            "the crash trial cannot tell a GC that erases too early"
        );
    }

    #[test]
    fn canary_erasing_before_copies_complete_is_caught_with_sub_page_units() {
        let caught = (0..60)
            .filter(|&seed| !crash_trial(seed, true, 256).is_empty())
            .count();
        assert!(
            caught > 0,
            "the crash trial with sub-page units cannot tell a GC that erases too early"
        );
    }
}
