//! Lazy garbage collection (paper Fig. 5): a victim's valid pages are copied to a data
//! frontier, and its *retained* pages — invalid, but the old copy an open transaction's logFTL
//! entry names — to a reserved log block, the entry following the copy; only then is the
//! victim erased. The victim choice is the greedy policy of `crate::gc` over live pages.

use super::RETAINED_GC_SPANS;
use super::layout::Loc;
use super::{IFtl, IftlCanary};
use crate::addr::BlockId;
use crate::error::FtlError;
use crate::gc::{BlockState, choose_greedy};
use crate::medium::Medium;

impl<M: Medium> IFtl<M> {
    /// Run GC while free blocks are at or below the threshold (the GC reserve plus the log
    /// blocks not yet taken).
    pub(super) fn collect_garbage(&mut self, issue_ns: u64) -> Result<(), FtlError> {
        if self.in_gc {
            return Ok(());
        }
        self.in_gc = true;
        let mut result = Ok(());
        while self.free_count <= self.gc_threshold_blocks() {
            let Some(victim) = choose_greedy(&self.blocks, self.ppb) else {
                break;
            };
            result = self.relocate_and_erase(victim as u32, issue_ns);
            if result.is_err() {
                break;
            }
        }
        self.in_gc = false;
        result
    }

    fn relocate_and_erase(&mut self, victim: u32, issue_ns: u64) -> Result<(), FtlError> {
        self.stats.gc_runs += 1;
        // Not before the previous victim's programs and stores are done (a later start than
        // this victim's first read may have: spans stay inside its work).
        let span_from = issue_ns.max(self.horizon_ns());
        let n = self.medium.programmed_pages(BlockId(victim));
        let mut buf = std::mem::take(&mut self.scratch);
        let r = self.relocate_pages(victim, n, &mut buf, issue_ns);
        self.scratch = buf;
        let met_retained = r?;
        assert_eq!(
            self.blocks[victim as usize].valid_pages, 0,
            "lazy GC left a live page in block {victim}"
        );
        // After every copy's program and every NVM store that moved a page away.
        let erase_at = issue_ns.max(self.horizon_ns());
        let erased = self.medium.erase(BlockId(victim), erase_at)?;
        self.stats.erases += 1;
        self.push_free(victim);
        if met_retained {
            if self.retained_gc_spans.len() == RETAINED_GC_SPANS {
                self.retained_gc_spans.pop_front();
            }
            self.retained_gc_spans.push_back((span_from, erased));
        }
        Ok(())
    }

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
                let b = self.take_free_block(0).ok_or(FtlError::NoFreeBlocks)?;
                self.log_role[b as usize] = true;
                self.log_blocks_used += 1;
                self.log_open = Some(b);
                b
            }
        };
        let r = self.program_into(block, lpn, data, issue_ns)?;
        if self.blocks[block as usize].state == BlockState::Full {
            self.log_open = None;
        }
        Ok(r)
    }
}
