//! Lazy garbage collection (paper Fig. 5): a victim's valid pages are copied to a data
//! frontier, and its *retained* pages — invalid, but the old copy an open transaction's logFTL
//! entry names — to a reserved log block, the entry following the copy; only then is the
//! victim erased. The loop and the victim choice (greedy over live pages) are the block
//! table's (`crate::block_table::collect_garbage`); this is i-FTL's part of it.

use super::RETAINED_GC_SPANS;
use super::layout::Loc;
use super::{IFtl, IftlCanary};
use crate::addr::BlockId;
use crate::block_table::{BlockTable, Relocate};
use crate::config::GcPolicy;
use crate::error::FtlError;
use crate::medium::Medium;

impl<M: Medium> Relocate for IFtl<M> {
    type Medium = M;
    /// Where the run's work began, if the victim held retained pages.
    type Kept = Option<u64>;

    fn table(&self) -> &BlockTable {
        &self.table
    }

    fn parts(&mut self) -> (&mut BlockTable, &mut M) {
        (&mut self.table, &mut self.medium)
    }

    /// The GC reserve plus the log blocks not yet taken.
    fn gc_threshold_blocks(&self) -> u32 {
        IFtl::gc_threshold_blocks(self)
    }

    fn gc_policy(&self) -> GcPolicy {
        GcPolicy::Greedy
    }

    fn relocate(&mut self, victim: u32, issue_ns: u64) -> Result<Option<u64>, FtlError> {
        self.stats.gc_runs += 1;
        // Not before the previous victim's programs and stores are done (a later start than
        // this victim's first read may have: spans stay inside its work).
        let span_from = issue_ns.max(self.horizon_ns());
        let n = self.medium.programmed_pages(BlockId(victim));
        let mut buf = self.table.take_scratch();
        let r = self.relocate_pages(victim, n, &mut buf, issue_ns);
        self.table.put_scratch(buf);
        Ok(r?.then_some(span_from))
    }

    /// After every copy's program and every NVM store that moved a page away.
    fn erase_at(&self, issue_ns: u64) -> u64 {
        issue_ns.max(self.horizon_ns())
    }

    fn erased(&mut self, victim: u32, span_from: Option<u64>, erased_ns: u64) {
        self.stats.erases += 1;
        if self.log_role[victim as usize] {
            self.log_role[victim as usize] = false;
            self.log_blocks_used -= 1;
        }
        if let Some(span_from) = span_from {
            if self.retained_gc_spans.len() == RETAINED_GC_SPANS {
                self.retained_gc_spans.pop_front();
            }
            self.retained_gc_spans.push_back((span_from, erased_ns));
        }
    }
}

impl<M: Medium> IFtl<M> {
    /// Copy the victim's live pages away; whether it held retained pages.
    fn relocate_pages(
        &mut self,
        victim: u32,
        n: u32,
        buf: &mut [u8],
        issue_ns: u64,
    ) -> Result<bool, FtlError> {
        let mut met_retained = false;
        for page in 0..n {
            let ppn = victim * self.ppb + page;
            let Some(oob) = self.medium.peek_oob(crate::addr::Ppn(ppn)) else {
                break;
            };
            let lpn = oob.lpn;
            if lpn >= self.layout.logical_pages {
                continue;
            }
            if self.map_get(lpn)? == Loc::Flash(ppn) {
                let read_done = self.read_verified(ppn, lpn, buf, issue_ns)?;
                let (q, done) = self.program_data(lpn, buf, read_done)?;
                self.map_set(lpn, Loc::Flash(q), done)?;
                self.invalidate(ppn);
                self.stats.gc_copies += 1;
            } else if self.retained.get(&ppn) == Some(&lpn) {
                met_retained = true;
                if self.canary == IftlCanary::EagerGc {
                    // The canary: a traditional GC drops the invalid page.
                    self.unretain(ppn);
                    self.invalidate(ppn);
                    continue;
                }
                let read_done = self.read_verified(ppn, lpn, buf, issue_ns)?;
                let (q, done) = self.program_log(lpn, buf, read_done)?;
                self.move_retained(lpn, ppn, q, done)?;
                self.invalidate(ppn);
                self.stats.lazy_gc_copies += 1;
            }
        }
        Ok(met_retained)
    }

    /// Program a retained page's copy into the open log block, taking a reserved one if needed.
    fn program_log(
        &mut self,
        lpn: u32,
        data: &[u8],
        issue_ns: u64,
    ) -> Result<(u32, u64), FtlError> {
        let block = match self.log_open {
            Some(b) => b,
            None => {
                if self.log_blocks_used >= self.cfg.log_blocks {
                    return Err(FtlError::LogBlocksFull {
                        blocks: self.cfg.log_blocks,
                    });
                }
                let b = self
                    .table
                    .take_free_block(0)
                    .ok_or(FtlError::NoFreeBlocks)?;
                self.log_role[b as usize] = true;
                self.log_blocks_used += 1;
                self.log_open = Some(b);
                b
            }
        };
        let mut placed = [(0u32, 0u64)];
        let (done, filled) = self.table.program(
            &mut self.medium,
            block,
            &[lpn],
            &[data],
            issue_ns,
            &mut placed,
        )?;
        if filled {
            self.log_open = None;
        }
        Ok((placed[0].0, done))
    }
}
