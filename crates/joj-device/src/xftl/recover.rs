//! Rebuilding the FTL's mapping at power-on, after a power loss or from an image.
//!
//! A "page" here is a slot, the mapping unit; padding slots (no logical page, a valid checksum)
//! are neither mapped nor torn.
//!
//! Phases, in the order they run (`docs/formats/xftl.md`, recovery, and
//! `docs/formats/device-image.md`, what is checked on open):
//! 1. **Load the tables.** The commit table (X-FTL) and the mapping checkpoint (sequence `S`)
//!    are read at power-on, the commit table first: its load time is X-FTL's own part.
//! 2. **Scan.** Per block, read the OOB of its first and last programmed page. A block whose
//!    first page is erased, torn or newer than `S` was (re)written after the checkpoint: it is
//!    *fresh*, and checkpoint pointers into it are stale. Every block holding pages newer than
//!    `S` is read page by page; torn pages and blocks with a torn erase are counted, never
//!    mapped.
//! 3. **Checkpoint.** Its pointers, minus those into fresh blocks; each must name a complete
//!    page of its logical page with a sequence `≤ S`, or the checkpoint is corrupt.
//! 4. **Scanned pages.** A valid untagged page with `seq > S` replaces the mapping if its `seq`
//!    is the highest seen for its logical page.
//! 5. **Commit table.** A committed transaction's page that the checkpoint does not cover
//!    competes with its *commit's* sequence number (not its page's: GC may have copied the
//!    previous version after the page was programmed), if its page still holds exactly what
//!    the entry names.
//! 6. **Block table.** Valid counts, free blocks and the GC index from the recovered mapping;
//!    sequence numbers continue above everything found on flash.
//! 7. **Persist.** A checkpoint of the recovered mapping: what the device shows after power-on
//!    must itself be durable, or a later trim followed by GC could let the next recovery's scan
//!    bring back a version older than the one shown.
//!
//! The modeled time is the table loads plus the OOB reads, spread over the units, plus that
//! checkpoint.

use super::xl2p::{self, TXN_BIT};
use crate::addr::{BlockId, NO_LPN, Oob, Ppn};
use crate::config::FtlConfig;
use crate::error::FtlError;
use crate::ftl::{Ftl, RecoveryReport};
use crate::medium::{CommitEntry, Medium};

/// When the tables read at power-on are in controller RAM.
struct Loaded {
    /// The mapping checkpoint: the OOB scan is issued then.
    checkpoint_ns: u64,
    /// The checkpoint and the commit table both.
    all_ns: u64,
}

/// What the OOB scan of every block found.
struct Scan {
    /// Per block: erased or (re)written since the checkpoint, so checkpoint pointers into it
    /// are stale.
    fresh: Vec<bool>,
    /// Valid untagged pages programmed after the checkpoint, `(ppn, oob)` in block and page
    /// order.
    newer: Vec<(u32, Oob)>,
    /// The highest sequence number on flash, at least the checkpoint's.
    max_seq: u64,
    /// Completion of the last read so far (tables and OOB).
    end_ns: u64,
}

impl RecoveryReport {
    /// A report with nothing found yet.
    fn new(checkpoint_seq: u64, map_page_reads: u64) -> RecoveryReport {
        RecoveryReport {
            modeled_ns: 0,
            checkpoint_seq,
            oob_reads: 0,
            map_page_reads,
            map_page_writes: 0,
            mapped_from_scan: 0,
            torn_pages: 0,
            torn_erase_blocks: 0,
            xl2p_entries_applied: 0,
            xl2p_entries_stale: 0,
            uncommitted_pages_dropped: 0,
            xl2p_table_pages: 0,
            xl2p_load_ns: 0,
        }
    }
}

impl<M: Medium> Ftl<M> {
    /// Rebuild the mapping from the medium after a power loss (or from an image): the last
    /// checkpoint plus a scan of what was programmed after it. `start_ns` is power-on time.
    pub fn recover(
        medium: M,
        cfg: FtlConfig,
        logical_pages: u64,
        start_ns: u64,
    ) -> Result<(Ftl<M>, RecoveryReport), FtlError> {
        let mut ftl = Self::empty(medium, cfg, logical_pages)?;
        let s = ftl.checkpoint_seq_to_recover()?;
        let map_page_reads = logical_pages.div_ceil(ftl.entries_per_map_page);
        let mut report = RecoveryReport::new(s, map_page_reads);
        // Copied out: the phases below change the FTL while they read it.
        let table = ftl.medium.commit_table().to_vec();
        let loaded = ftl.load_tables(&table, start_ns, &mut report);
        let scan = ftl.scan_blocks(s, &loaded, &mut report)?;
        let persisted = ftl.medium.checkpoint().entries.clone();
        let mut best_seq = ftl.map_from_checkpoint(&persisted, &scan.fresh, s)?;
        let mut from_scan = ftl.map_from_scan(scan.newer, &mut best_seq);
        let committed_seq =
            ftl.map_from_commit_table(&table, s, &mut best_seq, &mut from_scan, &mut report);
        report.mapped_from_scan = from_scan.iter().filter(|&&x| x).count() as u64;
        ftl.rebuild_block_table(scan.max_seq.max(committed_seq));
        let done = ftl.persist_recovered(&persisted, s, scan.end_ns, &mut report)?;
        report.modeled_ns = done - start_ns;
        ftl.check_invariants();
        Ok((ftl, report))
    }

    /// The checkpoint's sequence number `S`, once the checkpoint is known to cover exactly this
    /// device's logical pages.
    fn checkpoint_seq_to_recover(&self) -> Result<u64, FtlError> {
        let cp = self.medium.checkpoint();
        if cp.entries.len() as u64 != self.logical_pages {
            return Err(FtlError::CheckpointCorrupt {
                reason: format!(
                    "checkpoint has {} entries, device has {} logical pages",
                    cp.entries.len(),
                    self.logical_pages
                ),
            });
        }
        Ok(cp.checkpoint_seq)
    }

    /// Phase 1: read the commit table (docs/formats/xftl.md, recovery: first, so its load time
    /// is X-FTL's own) and the checkpoint, both issued at power-on.
    fn load_tables(
        &mut self,
        table: &[CommitEntry],
        start_ns: u64,
        report: &mut RecoveryReport,
    ) -> Loaded {
        let mut all_ns = start_ns;
        if !table.is_empty() {
            let pages = xl2p::table_pages(table.len(), self.medium.geometry().page_bytes);
            all_ns = self.medium.read_map_pages(pages, start_ns);
            report.xl2p_table_pages = pages;
            report.xl2p_load_ns = all_ns - start_ns;
        }
        let checkpoint_ns = self.medium.read_map_pages(report.map_page_reads, start_ns);
        Loaded {
            checkpoint_ns,
            all_ns: all_ns.max(checkpoint_ns),
        }
    }

    /// Phase 2: the OOB scan of every block, which also sets each programmed block's entry of
    /// the block table (full, no valid pages yet, its newest sequence).
    fn scan_blocks(
        &mut self,
        s: u64,
        loaded: &Loaded,
        report: &mut RecoveryReport,
    ) -> Result<Scan, FtlError> {
        let nblocks = self.table.len() as u32;
        let mut scan = Scan {
            fresh: vec![false; nblocks as usize],
            newer: Vec::new(),
            max_seq: s,
            end_ns: loaded.all_ns,
        };
        for b in 0..nblocks {
            let n = self.medium.programmed_pages(BlockId(b));
            if n == 0 {
                // Erased since the checkpoint (or free then): nothing the checkpoint names is here.
                scan.fresh[b as usize] = true;
                continue;
            }
            let last_seq = self.scan_block(b, n, s, loaded.checkpoint_ns, &mut scan, report)?;
            scan.max_seq = scan.max_seq.max(last_seq);
            self.table.close_recovered(b, 0, last_seq);
        }
        Ok(scan)
    }

    /// Block `b`, with `n > 0` programmed pages: its first and last page say whether it is fresh
    /// and whether it holds pages newer than `S`; only then is every page read. Returns the
    /// highest sequence number in the block.
    fn scan_block(
        &mut self,
        b: u32,
        n: u32,
        s: u64,
        issue_ns: u64,
        scan: &mut Scan,
        report: &mut RecoveryReport,
    ) -> Result<u64, FtlError> {
        let first_ppn = b * self.ppb;
        let first = self.medium.peek_valid_oob(Ppn(first_ppn));
        let last = self.medium.peek_valid_oob(Ppn(first_ppn + n - 1));
        let read = self.medium.read_oob(Ppn(first_ppn), issue_ns)?;
        scan.end_ns = scan.end_ns.max(read.done_ns);
        report.oob_reads += 1;
        let fresh = first.is_none_or(|o| o.seq > s);
        scan.fresh[b as usize] = fresh;
        if fresh || last.is_none_or(|o| o.seq > s) {
            self.scan_pages(b, n, s, issue_ns, scan, report)
        } else {
            // Not fresh and its last page is complete and older than `S`: nothing newer here.
            Ok(last.map_or(0, |o| o.seq))
        }
    }

    /// Every page of block `b`: collects the valid untagged pages newer than `S`, counts the
    /// tagged ones (dropped unless a commit record names them, phase 5) and the tears. Returns
    /// the highest sequence number among the block's valid pages.
    fn scan_pages(
        &mut self,
        b: u32,
        n: u32,
        s: u64,
        issue_ns: u64,
        scan: &mut Scan,
        report: &mut RecoveryReport,
    ) -> Result<u64, FtlError> {
        let mut last_seq = 0;
        let mut torn_here = 0u64;
        let mut erase_torn = true;
        for p in 0..n {
            let ppn = b * self.ppb + p;
            let read = self.medium.read_oob(Ppn(ppn), issue_ns)?;
            scan.end_ns = scan.end_ns.max(read.done_ns);
            report.oob_reads += 1;
            match self.medium.peek_valid_oob(Ppn(ppn)) {
                None => {
                    torn_here += 1;
                    // An interrupted erase leaves no logical page number in any OOB.
                    erase_torn &= self
                        .medium
                        .peek_oob(Ppn(ppn))
                        .is_none_or(|o| o.lpn == NO_LPN);
                }
                Some(o) if o.lpn == NO_LPN => {
                    // Padding of a page programmed with fewer units than it holds.
                    erase_torn = false;
                    last_seq = last_seq.max(o.seq);
                }
                Some(o) => {
                    erase_torn = false;
                    last_seq = last_seq.max(o.seq);
                    if o.seq > s && u64::from(o.lpn) < self.logical_pages {
                        scan.newer.push((ppn, o));
                    } else if o.seq > s && o.lpn & TXN_BIT != 0 {
                        // A transaction's page: only a commit record can make it the device's
                        // version (phase 5).
                        report.uncommitted_pages_dropped += 1;
                    }
                }
            }
        }
        if erase_torn && torn_here == u64::from(n) {
            report.torn_erase_blocks += 1;
        } else {
            report.torn_pages += torn_here;
        }
        Ok(last_seq)
    }

    /// Phase 3: the checkpoint's mapping, minus pointers into blocks rewritten since. Returns,
    /// per logical page, the sequence number of the copy mapped (0 where none is).
    fn map_from_checkpoint(
        &mut self,
        persisted: &[u32],
        fresh: &[bool],
        s: u64,
    ) -> Result<Vec<u64>, FtlError> {
        let mut best_seq = vec![0u64; self.logical_pages as usize];
        for (lpn, &p) in persisted.iter().enumerate() {
            if p == NO_LPN {
                continue;
            }
            // An image's checkpoint is as its writer chose: a pointer past the last block is
            // corruption, not an index.
            let Some(&rewritten) = fresh.get((p / self.ppb) as usize) else {
                return Err(FtlError::CheckpointCorrupt {
                    reason: format!(
                        "logical page {lpn} points at physical page {p}, beyond the device's {} \
                         pages",
                        u64::from(self.ppb) * fresh.len() as u64
                    ),
                });
            };
            if rewritten {
                continue;
            }
            match self.medium.peek_valid_oob(Ppn(p)) {
                Some(o) if (o.lpn & !TXN_BIT) as usize == lpn && o.seq <= s => {
                    self.l2p[lpn] = p;
                    best_seq[lpn] = o.seq;
                }
                other => {
                    return Err(FtlError::CheckpointCorrupt {
                        reason: format!(
                            "logical page {lpn} points at physical page {p} holding {other:?}"
                        ),
                    });
                }
            }
        }
        Ok(best_seq)
    }

    /// Phase 4: a scanned copy becomes the mapping when its sequence number is the highest seen
    /// for its logical page. Returns, per logical page, whether the scan supplied its mapping.
    fn map_from_scan(&mut self, newer: Vec<(u32, Oob)>, best_seq: &mut [u64]) -> Vec<bool> {
        let mut from_scan = vec![false; self.logical_pages as usize];
        for (ppn, o) in newer {
            let lpn = o.lpn as usize;
            if o.seq > best_seq[lpn] {
                best_seq[lpn] = o.seq;
                self.l2p[lpn] = ppn;
                from_scan[lpn] = true;
            }
        }
        from_scan
    }

    /// Phase 5: committed transactions the checkpoint does not cover (docs/formats/xftl.md,
    /// recovery). An entry counts only while its page still holds exactly the tagged copy it
    /// names; then it competes with the other copies by its commit sequence number. Returns the highest
    /// commit sequence number of these entries (0 if none).
    fn map_from_commit_table(
        &mut self,
        table: &[CommitEntry],
        s: u64,
        best_seq: &mut [u64],
        from_scan: &mut [bool],
        report: &mut RecoveryReport,
    ) -> u64 {
        let mut max_commit_seq = 0;
        for e in table {
            if e.commit_seq <= s || u64::from(e.lpn) >= self.logical_pages {
                continue;
            }
            max_commit_seq = max_commit_seq.max(e.commit_seq);
            let lpn = e.lpn as usize;
            match self.medium.peek_valid_oob(Ppn(e.ppn)) {
                Some(o) if o.lpn == e.lpn | TXN_BIT && o.seq == e.page_seq => {
                    // The scan counted this tagged page as dropped; a commit record names it.
                    report.uncommitted_pages_dropped =
                        report.uncommitted_pages_dropped.saturating_sub(1);
                    // Ranked by the commit, not the program: while the transaction was
                    // active, GC may have copied the previous version with a higher `seq`
                    // than this page's, and that copy must not win. Every copy programmed
                    // after the commit (a later write, or GC moving this version) is newer.
                    if e.commit_seq > best_seq[lpn] {
                        best_seq[lpn] = e.commit_seq;
                        self.l2p[lpn] = e.ppn;
                        from_scan[lpn] = false;
                        report.xl2p_entries_applied += 1;
                    } else {
                        report.xl2p_entries_stale += 1;
                    }
                }
                _ => report.xl2p_entries_stale += 1,
            }
        }
        max_commit_seq
    }

    /// Phase 6: the block table from the recovered mapping — valid counts, free blocks, the GC
    /// index — and the device sequence continues from `max_seq`, the highest number found.
    fn rebuild_block_table(&mut self, max_seq: u64) {
        for &p in &self.l2p {
            if p != NO_LPN {
                self.table.count_recovered(p);
            }
        }
        let nblocks = self.table.len() as u32;
        for b in (0..nblocks).rev() {
            if self.medium.programmed_pages(BlockId(b)) == 0 {
                self.table.push_free(b);
            }
        }
        self.table.recovered(max_seq);
    }

    /// Phase 7: checkpoint the recovered mapping, starting once every read of recovery is done
    /// (`end_ns`). Returns its completion.
    fn persist_recovered(
        &mut self,
        persisted: &[u32],
        s: u64,
        end_ns: u64,
        report: &mut RecoveryReport,
    ) -> Result<u64, FtlError> {
        for (lpn, &p) in persisted.iter().enumerate() {
            if self.l2p[lpn] != p {
                self.mark_dirty(lpn as u32);
            }
        }
        // Persist what recovery found before accepting commands: the device now shows these
        // versions, and without a checkpoint a later trim and GC could let a scan after the
        // next power loss bring back an older version that is still newer than `S`.
        self.table.start_programs_at(end_ns);
        if self.table.seq() > s && self.dirty_map_pages.is_empty() {
            self.mark_dirty(0);
        }
        let map_programs_before = self.stats.map_programs;
        let done = self.checkpoint(end_ns)?;
        report.map_page_writes = self.stats.map_programs - map_programs_before;
        Ok(done)
    }
}
