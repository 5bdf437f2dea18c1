//! i-FTL (Xu & Hou): a transactional page-mapping FTL whose mapping tables live in NVM.
//!
//! `dataFTL` (the L2P table) and the append-only `logFTL` (per page an uncommitted transaction
//! overwrote: TX-ID, TX-state, logical page, old location) are NVM stores, never flash page
//! programs. Transactions interleave (paper Fig. 3); `commit` is one 8-byte NVM store; `abort`
//! and recovery follow the paper's Algorithm 1; GC is *lazy* (Fig. 5): before a victim is
//! erased, every invalid page an open transaction may still need is copied to a reserved log
//! block and its logFTL entry follows it. Writes carry a data tag: metadata goes to NVM slots,
//! data to flash. Format, ordering of every persistent step and the crash argument:
//! `docs/formats/iftl.md`.
//!
//! Invariants kept (checked by `IFtl::check_invariants`):
//! - a block's live count = pages `dataFTL` points into it + retained pages in it;
//! - every retained page is the `old` of exactly one live logFTL entry of an open transaction,
//!   and is never erased while it is;
//! - at most one open transaction holds a logical page; its entry is live in `[head, tail)`;
//! - every NVM store that names a flash page is issued at or after that page's program
//!   completed, and every erase after the last NVM store that moved a page out of its block.

mod check;
mod layout;
mod lazy_gc;
mod recover;
mod txn;

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};

use crate::addr::{BlockId, Lpn};
use crate::block_table::{self, BlockTable, check_lpn};
use crate::config::{DataMode, FtlConfig, IftlConfig};
use crate::error::FtlError;
use crate::medium::Medium;
use crate::nvm::{Nvm, NvmStats};
use crate::xftl::Tid;
use layout::{Layout, Loc, OFF_MAGIC};

pub use crate::block::WriteKind;

/// How many GC runs that met retained pages `IFtl::retained_gc_spans` remembers.
const RETAINED_GC_SPANS: usize = 64;

/// Deliberately broken variants the crash tests must catch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IftlCanary {
    #[default]
    None,
    /// Drop the old page at a transaction's write, before commit: no logFTL entry.
    NoLogFtl,
    /// GC erases the old pages of open transactions (traditional, not lazy, GC).
    EagerGc,
}

/// What the i-FTL did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IftlStats {
    /// Logical pages written by the host (both kinds).
    pub host_pages_written: u64,
    pub data_bytes_to_flash: u64,
    pub metadata_bytes_to_nvm: u64,
    /// Pages programmed for host data.
    pub host_programs: u64,
    /// Valid pages copied by GC.
    pub gc_copies: u64,
    /// Retained (invalid, still needed) pages lazy GC copied to log blocks.
    pub lazy_gc_copies: u64,
    pub gc_runs: u64,
    pub erases: u64,
    pub nand_reads: u64,
    pub commits: u64,
    pub aborts: u64,
    pub log_entries_appended: u64,
    /// Flash pages programmed to persist mapping tables: 0 by construction (they are in NVM).
    pub mapping_flash_programs: u64,
}

impl IftlStats {
    /// What happened since `base` (an earlier copy of the same counters).
    pub fn since(&self, base: &IftlStats) -> IftlStats {
        IftlStats {
            host_pages_written: self.host_pages_written - base.host_pages_written,
            data_bytes_to_flash: self.data_bytes_to_flash - base.data_bytes_to_flash,
            metadata_bytes_to_nvm: self.metadata_bytes_to_nvm - base.metadata_bytes_to_nvm,
            host_programs: self.host_programs - base.host_programs,
            gc_copies: self.gc_copies - base.gc_copies,
            lazy_gc_copies: self.lazy_gc_copies - base.lazy_gc_copies,
            gc_runs: self.gc_runs - base.gc_runs,
            erases: self.erases - base.erases,
            nand_reads: self.nand_reads - base.nand_reads,
            commits: self.commits - base.commits,
            aborts: self.aborts - base.aborts,
            log_entries_appended: self.log_entries_appended - base.log_entries_appended,
            mapping_flash_programs: self.mapping_flash_programs - base.mapping_flash_programs,
        }
    }

    /// Flash pages programmed for mapping per host page written (X-FTL's counterpart:
    /// `FtlStats::mapping_programs_per_host_page`).
    pub fn mapping_programs_per_host_page(&self) -> f64 {
        self.mapping_flash_programs as f64 / self.host_pages_written.max(1) as f64
    }
}

/// What i-FTL's recovery found and what it cost (X-FTL's counterpart: `RecoveryReport`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IftlRecoveryReport {
    /// Modeled time from power-on to a usable mapping: NVM reads and stores only, no flash.
    pub modeled_ns: u64,
    /// Of `modeled_ns`, Algorithm 1: the header, the transaction table, the logFTL scan, the
    /// restores and the stores that empty the log. The rest reads `dataFTL` whole to rebuild
    /// the block table (valid pages per block), as any page-mapping FTL rebuilds it at mount.
    #[serde(default)]
    pub algorithm1_ns: u64,
    pub nvm_bytes_read: u64,
    pub nvm_bytes_written: u64,
    /// Live logFTL entries scanned.
    pub log_entries_scanned: u64,
    /// `dataFTL` entries restored to an old location (uncommitted writes undone).
    pub entries_restored: u64,
    /// Transactions found open (not committed) and rolled back.
    pub txns_rolled_back: u64,
}

/// A logical page an open transaction wrote: the transaction, its logFTL entry (free-running
/// counter) and the old location that entry names.
#[derive(Debug, Clone, Copy)]
struct Held {
    tid: u32,
    /// `None` only under `IftlCanary::NoLogFtl`.
    entry: Option<u32>,
    old: Loc,
}

/// An open transaction.
#[derive(Debug, Default, Clone)]
struct ITxn {
    slot: u32,
    /// Logical pages in first-write order.
    lpns: Vec<u32>,
}

/// The i-FTL over a medium and an NVM region.
#[derive(Debug, Clone)]
pub struct IFtl<M: Medium> {
    medium: M,
    nvm: Nvm,
    cfg: IftlConfig,
    gc_free_blocks: u32,
    layout: Layout,
    ppb: u32,
    /// Blocks, free lists, data frontiers, sequence and program horizon (shared with X-FTL).
    table: BlockTable,
    log_role: Vec<bool>,
    log_open: Option<u32>,
    log_blocks_used: u32,
    free_slots: Vec<u32>,
    tx_slot_used: Vec<bool>,
    txns: HashMap<u32, ITxn>,
    held: HashMap<u32, Held>,
    /// Retained flash pages: ppn → logical page of the entry that names it.
    retained: HashMap<u32, u32>,
    /// Retained pages per block.
    retained_in: Vec<u32>,
    head: u32,
    tail: u32,
    next_tid: u32,
    /// The last `RETAINED_GC_SPANS` GC runs that met retained pages: (issued, done) in ns.
    retained_gc_spans: VecDeque<(u64, u64)>,
    canary: IftlCanary,
    stats: IftlStats,
}

impl<M: Medium> IFtl<M> {
    /// A new, empty i-FTL: every programmed block erased, the NVM region laid out and its
    /// magic stored last.
    pub fn format(
        mut medium: M,
        cfg: IftlConfig,
        ftl: &FtlConfig,
        logical_pages: u64,
    ) -> Result<IFtl<M>, FtlError> {
        let g = medium.geometry().clone();
        if medium.slots_per_page() != 1 {
            return Err(FtlError::IftlNeedsPageMapping {
                unit_bytes: medium.slot_bytes(),
                page_bytes: g.page_bytes,
            });
        }
        let reserve = u64::from(g.units()) + u64::from(ftl.gc_free_blocks) + 2;
        let user_blocks = logical_pages.div_ceil(u64::from(g.pages_per_block));
        if u64::from(g.blocks()) < user_blocks + reserve + u64::from(cfg.log_blocks)
            || logical_pages == 0
            || logical_pages >= u64::from(layout::META_BIT)
        {
            return Err(FtlError::GeometryTooSmall {
                reason: format!(
                    "{} blocks cannot hold {user_blocks} blocks of {logical_pages} logical pages plus \
                     {reserve} spare and {} log blocks",
                    g.blocks(),
                    cfg.log_blocks
                ),
            });
        }
        let layout = Layout::plan(
            g.page_bytes,
            logical_pages as u32,
            cfg.tx_slots,
            cfg.log_entries,
            cfg.metadata_slots,
            cfg.nvm_bytes,
        )?;
        for b in 0..g.blocks() {
            if medium.programmed_pages(BlockId(b)) > 0 {
                medium.erase(BlockId(b), 0)?;
            }
        }
        let mut nvm = Nvm::new(cfg.nvm_bytes, cfg.nvm.clone());
        let map = vec![0xFFu8; layout.map_bytes() as usize];
        let t = nvm.store(layout.map_off, &map, 0)?;
        let t = nvm.store(0, &layout.header(), t)?;
        let t = nvm.store_u64(OFF_MAGIC, layout::MAGIC, t)?;
        nvm.retire(t);
        Self::rebuild(medium, nvm, cfg, ftl.gc_free_blocks, layout)
    }

    /// The volatile state from a formatted (and, after a cut, recovered) region: live counts
    /// from `dataFTL`, free blocks = blocks with nothing programmed, every other block closed.
    fn rebuild(
        medium: M,
        nvm: Nvm,
        cfg: IftlConfig,
        gc_free_blocks: u32,
        layout: Layout,
    ) -> Result<IFtl<M>, FtlError> {
        let g = medium.geometry().clone();
        let ppb = g.pages_per_block;
        let nblocks = g.blocks() as usize;
        let mut valid = vec![0u32; nblocks];
        let mut slot_used = vec![false; layout.meta_slots as usize];
        for lpn in 0..layout.logical_pages {
            match Loc::from_word(nvm.peek_u32(layout.map(lpn))?) {
                Loc::Unmapped => {}
                Loc::Flash(p) if u64::from(p) < g.physical_pages() => {
                    valid[(p / ppb) as usize] += 1
                }
                Loc::Meta(s) if s < layout.meta_slots => slot_used[s as usize] = true,
                other => {
                    return Err(FtlError::NvmCorrupt {
                        reason: format!("dataFTL[{lpn}] = {other:?} is beyond the device"),
                    });
                }
            }
        }
        let (head, tail) = layout::unpack_cursor(nvm.peek_u64(layout::OFF_CURSOR)?);
        let next_tid = nvm.peek_u64(layout::OFF_NEXT_TID)?.max(1) as u32;
        let mut table = BlockTable::new(&medium);
        for b in (0..nblocks as u32).rev() {
            if medium.programmed_pages(BlockId(b)) == 0 {
                if valid[b as usize] != 0 {
                    return Err(FtlError::NvmCorrupt {
                        reason: format!("dataFTL points into erased block {b}"),
                    });
                }
                table.push_free(b);
            } else {
                table.close_recovered(b, valid[b as usize], 0);
            }
        }
        table.recovered(0);
        Ok(IFtl {
            ppb,
            table,
            log_role: vec![false; nblocks],
            log_open: None,
            log_blocks_used: 0,
            free_slots: (0..layout.meta_slots)
                .rev()
                .filter(|&s| !slot_used[s as usize])
                .collect(),
            tx_slot_used: vec![false; layout.tx_slots as usize],
            txns: HashMap::new(),
            held: HashMap::new(),
            retained: HashMap::new(),
            retained_in: vec![0; nblocks],
            head,
            tail,
            next_tid,
            retained_gc_spans: VecDeque::new(),
            canary: IftlCanary::None,
            stats: IftlStats::default(),
            medium,
            nvm,
            cfg,
            gc_free_blocks,
            layout,
        })
    }

    pub fn logical_pages(&self) -> u64 {
        u64::from(self.layout.logical_pages)
    }

    pub fn page_bytes(&self) -> u32 {
        self.layout.page_bytes
    }

    pub fn stats(&self) -> &IftlStats {
        &self.stats
    }

    pub fn nvm_stats(&self) -> &NvmStats {
        self.nvm.stats()
    }

    pub fn medium(&self) -> &M {
        &self.medium
    }

    pub fn medium_mut(&mut self) -> &mut M {
        &mut self.medium
    }

    pub fn nvm(&self) -> &Nvm {
        &self.nvm
    }

    pub fn nvm_mut(&mut self) -> &mut Nvm {
        &mut self.nvm
    }

    /// Give the medium and the NVM back (power loss).
    pub fn into_parts(self) -> (M, Nvm) {
        (self.medium, self.nvm)
    }

    /// Forget the undo records of NAND commands and NVM stores complete by `now_ns`.
    pub fn retire(&mut self, now_ns: u64) {
        self.medium.retire(now_ns);
        self.nvm.retire(now_ns);
    }

    /// The last GC runs that met pages of open transactions (lazy GC, or their drop under
    /// `IftlCanary::EagerGc`), oldest first: from when the run's work began (not before the
    /// previous run's was done) to when its victim's erase completed, in ns. A crash harness
    /// aims cuts inside them. At most the last 64 are kept.
    pub fn retained_gc_spans(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.retained_gc_spans.iter().copied()
    }

    /// When every program and NVM store issued so far is complete.
    pub fn horizon_ns(&self) -> u64 {
        self.table.horizon_ns().max(self.nvm.free_ns())
    }

    /// Metadata slots in NVM, and how many are free.
    pub fn metadata_slots(&self) -> (u32, usize) {
        (self.layout.meta_slots, self.free_slots.len())
    }

    /// Switch on a deliberately broken variant (crash-test canaries).
    pub fn set_canary(&mut self, canary: IftlCanary) {
        self.canary = canary;
    }

    /// Live logFTL entries (`tail - head`, discarded ones at the front excepted).
    pub fn log_len(&self) -> u32 {
        self.tail.wrapping_sub(self.head)
    }

    /// `dataFTL[lpn]`, untimed (bookkeeping; the timed paths charge their reads).
    fn map_get(&self, lpn: u32) -> Result<Loc, FtlError> {
        Ok(Loc::from_word(self.nvm.peek_u32(self.layout.map(lpn))?))
    }

    fn map_set(&mut self, lpn: u32, loc: Loc, issue_ns: u64) -> Result<u64, FtlError> {
        assert!(
            lpn < self.layout.logical_pages,
            "dataFTL entries name logical pages in range: lpn {lpn} of {}",
            self.layout.logical_pages
        );
        let at = self.layout.map(lpn);
        let done = self.nvm.store_u32(at, loc.word(), issue_ns)?;
        // Read back what the NVM now holds (untimed: the controller's own bookkeeping).
        assert_eq!(
            self.map_get(lpn)?,
            loc,
            "dataFTL[{lpn}] reads back as written at NVM offset {at}"
        );
        Ok(done)
    }

    /// Free (erased) blocks.
    pub fn free_blocks(&self) -> u32 {
        self.table.free_count()
    }

    /// Free blocks at or below which GC runs: the GC reserve plus the log blocks not yet taken.
    pub fn gc_threshold_blocks(&self) -> u32 {
        self.gc_free_blocks + self.log_reserve()
    }

    /// Log blocks not yet taken: kept free for lazy GC.
    fn log_reserve(&self) -> u32 {
        self.cfg.log_blocks - self.log_blocks_used
    }

    /// The page at `ppn` is no longer live.
    fn invalidate(&mut self, ppn: u32) {
        self.table.invalidate(ppn);
    }

    /// Flash page `ppn` becomes retained for logical page `lpn`.
    fn retain(&mut self, ppn: u32, lpn: u32) {
        self.retained.insert(ppn, lpn);
        self.retained_in[(ppn / self.ppb) as usize] += 1;
    }

    /// Flash page `ppn` is retained no more. A log block left with no retained page and no
    /// room is an ordinary block from now on: it no longer counts against `log_blocks`.
    /// Returns whether it was.
    fn unretain(&mut self, ppn: u32) -> bool {
        if self.retained.remove(&ppn).is_none() {
            return false;
        }
        let b = ppn / self.ppb;
        self.retained_in[b as usize] -= 1;
        if self.retained_in[b as usize] == 0
            && self.log_role[b as usize]
            && self.log_open != Some(b)
        {
            self.log_role[b as usize] = false;
            self.log_blocks_used -= 1;
        }
        true
    }

    /// A location the host no longer reaches and no entry names: free it.
    fn release(&mut self, loc: Loc) {
        match loc {
            Loc::Unmapped => {}
            Loc::Flash(p) => self.invalidate(p),
            Loc::Meta(s) => self.free_slots.push(s),
        }
    }

    /// Program `data` for `lpn` at the next data frontier (round robin over the units; a new
    /// block only while GC runs or more than the log reserve is free). Returns `(ppn, done)`.
    fn program_data(
        &mut self,
        lpn: u32,
        data: &[u8],
        issue_ns: u64,
    ) -> Result<(u32, u64), FtlError> {
        let reserve = self.log_reserve();
        let mut placed = [(0u32, 0u64)];
        let done = self.table.program_frontier(
            &mut self.medium,
            reserve,
            &[lpn],
            &[data],
            issue_ns,
            &mut placed,
        )?;
        Ok((placed[0].0, done))
    }

    /// Read `ppn` into `buf` and check it is a complete copy of `lpn`.
    fn read_verified(
        &mut self,
        ppn: u32,
        lpn: u32,
        buf: &mut [u8],
        issue_ns: u64,
    ) -> Result<u64, FtlError> {
        let reads = &mut self.stats.nand_reads;
        block_table::read_verified(&mut self.medium, reads, u32::MAX, (ppn, lpn), buf, issue_ns)
    }

    /// Read `lpn` as `tid` sees it (its own copy if it wrote one; everyone else the committed
    /// version). Unmapped pages read as zeros. Returns when the data is in the controller.
    pub fn read(
        &mut self,
        tid: Option<Tid>,
        lpn: Lpn,
        buf: &mut [u8],
        issue_ns: u64,
    ) -> Result<u64, FtlError> {
        let l = check_lpn(lpn, self.logical_pages())?;
        let loc = match self.held.get(&l) {
            Some(h) if Some(h.tid) != tid.map(|t| t.0) => h.old,
            _ => {
                let t = self.nvm.charge_read(self.layout.map(l), 4, issue_ns)?;
                let loc = self.map_get(l)?;
                return self.read_loc(l, loc, buf, t);
            }
        };
        self.read_loc(l, loc, buf, issue_ns)
    }

    fn read_loc(&mut self, lpn: u32, loc: Loc, buf: &mut [u8], t: u64) -> Result<u64, FtlError> {
        match loc {
            Loc::Unmapped => {
                buf.fill(0);
                Ok(t)
            }
            Loc::Flash(p) if self.medium.data_mode() == DataMode::OobOnly => {
                // The medium keeps no data: timing and checks as in `Full`, zeros returned.
                buf.fill(0);
                self.read_verified(p, lpn, &mut [], t)
            }
            Loc::Flash(p) => self.read_verified(p, lpn, buf, t),
            Loc::Meta(s) => Ok(self.nvm.read(self.layout.meta(s), buf, t)?),
        }
    }
}
