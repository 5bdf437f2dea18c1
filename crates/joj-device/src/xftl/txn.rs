//! The transactional commands of X-FTL on the page-mapping FTL: `begin`, `write(t, p)`,
//! `read(t, p)`, `commit(t)`, `abort(t)`, kept in the X-L2P table ([`super::xl2p`]). Format,
//! rules and the crash argument: `docs/formats/xftl.md`.

use super::xl2p::{Active, TXN_BIT, Tid, Txn, table_pages};
use crate::addr::{Lpn, NO_LPN};
use crate::block_table::{check_lpn, collect_garbage};
use crate::error::FtlError;
use crate::ftl::Ftl;
use crate::medium::{CommitEntry, Medium};

impl<M: Medium> Ftl<M> {
    /// Start a transaction.
    pub fn begin(&mut self) -> Tid {
        let tid = self.xl2p.next_tid;
        self.xl2p.next_tid = self.xl2p.next_tid.wrapping_add(1).max(1);
        self.xl2p.txns.insert(tid, Txn::default());
        Tid(tid)
    }

    /// Transactions begun and neither committed nor aborted.
    pub fn active_transactions(&self) -> usize {
        self.xl2p.txns.len()
    }

    /// Entries in the X-L2P table (active plus committed-not-yet-checkpointed).
    pub fn xl2p_len(&self) -> usize {
        self.xl2p.len()
    }

    /// The transaction holding `lpn`, if any.
    pub fn holder(&self, lpn: Lpn) -> Option<Tid> {
        self.xl2p.active.get(&lpn.0).map(|a| Tid(a.tid))
    }

    /// Canary for crash tests: acknowledge commits at once, before their pages and commit
    /// table are programmed.
    pub fn set_canary_commit_before_durable(&mut self, on: bool) {
        self.xl2p.canary_commit_before_durable = on;
    }

    /// `write(t, p)`: program `data` as `tid`'s copy of `lpn`. Returns when the program
    /// completes (the caller need not wait: `commit` does).
    pub fn txn_write(
        &mut self,
        tid: Tid,
        lpn: Lpn,
        data: &[u8],
        issue_ns: u64,
    ) -> Result<u64, FtlError> {
        check_lpn(lpn, self.logical_pages)?;
        if !self.xl2p.txns.contains_key(&tid.0) {
            return Err(FtlError::NoSuchTxn { tid: tid.0 });
        }
        match self.xl2p.active.get(&lpn.0) {
            Some(a) if a.tid != tid.0 => {
                return Err(FtlError::TxnConflict {
                    lpn: lpn.0,
                    holder: a.tid,
                    by: format!("transaction {tid}"),
                });
            }
            Some(_) => {}
            None if self.xl2p.len() >= self.xl2p.capacity => {
                // Committed entries are freed by a checkpoint; active ones only by their owner.
                if !self.xl2p.committed.is_empty() {
                    self.checkpoint(issue_ns)?;
                }
                if self.xl2p.len() >= self.xl2p.capacity {
                    return Err(FtlError::XL2PFull {
                        capacity: self.xl2p.capacity as u32,
                    });
                }
            }
            None => {}
        }
        collect_garbage(self, issue_ns)?;
        let (ppn, seq, done) = self.program_raw(lpn.0 | TXN_BIT, data, issue_ns)?;
        // Looked up again: GC may have moved this transaction's previous copy.
        let old = self.xl2p.active.insert(
            lpn.0,
            Active {
                tid: tid.0,
                ppn,
                seq,
            },
        );
        let txn = self.xl2p.txns.get_mut(&tid.0).expect("checked above");
        txn.durable_ns = txn.durable_ns.max(done);
        match old {
            Some(a) => {
                assert!(
                    a.tid == tid.0 && a.ppn != ppn,
                    "a transaction's rewrite of lpn {} replaces its own older copy: entry of tid {} at ppn {}, writer {tid} at ppn {ppn}",
                    lpn.0,
                    a.tid,
                    a.ppn
                );
                self.invalidate(a.ppn);
            }
            None => txn.lpns.push(lpn.0),
        }
        self.stats.host_programs += 1;
        if self.programs_since_checkpoint >= self.cfg.checkpoint_interval_programs {
            self.checkpoint(issue_ns)?;
        }
        Ok(done)
    }

    /// `read(t, p)`: `tid`'s own copy of `lpn` if it wrote one, else the committed version.
    /// `Ok(None)`: unmapped, `buf` zeroed.
    pub fn txn_read(
        &mut self,
        tid: Tid,
        lpn: Lpn,
        buf: &mut [u8],
        issue_ns: u64,
    ) -> Result<Option<u64>, FtlError> {
        check_lpn(lpn, self.logical_pages)?;
        match self.xl2p.active.get(&lpn.0) {
            Some(a) if a.tid == tid.0 => {
                let ppn = a.ppn;
                self.read_verified(ppn, lpn.0, buf, issue_ns).map(Some)
            }
            _ => self.read(lpn, buf, issue_ns),
        }
    }

    /// `commit(t)`: `t`'s copies become the device's version, durable when the returned time
    /// is reached (the commit table is written after `t`'s programs complete).
    pub fn commit(&mut self, tid: Tid, issue_ns: u64) -> Result<u64, FtlError> {
        let txn = self
            .xl2p
            .txns
            .remove(&tid.0)
            .ok_or(FtlError::NoSuchTxn { tid: tid.0 })?;
        self.stats.commits += 1;
        if txn.lpns.is_empty() {
            return Ok(issue_ns);
        }
        // A sequence number no program takes: checkpoints before it do not cover this commit,
        // checkpoints after it do.
        let commit_seq = self.table.next_seq();
        let entries_before = self.xl2p.committed.len();
        let written = txn.lpns.len();
        for lpn in txn.lpns {
            let a = self
                .xl2p
                .active
                .remove(&lpn)
                .expect("entry of an active txn");
            assert!(
                a.tid == tid.0 && a.seq < commit_seq,
                "a commit maps only its own pages, programmed before it: lpn {lpn} held by tid {} (seq {}), committing {tid} at seq {commit_seq}",
                a.tid,
                a.seq
            );
            let old = self.l2p[lpn as usize];
            assert_ne!(old, a.ppn, "lpn {lpn}: the committed copy is a new page");
            if old != NO_LPN {
                self.invalidate(old);
            }
            self.l2p[lpn as usize] = a.ppn;
            self.mark_dirty(lpn);
            self.xl2p.committed.push(CommitEntry {
                lpn,
                ppn: a.ppn,
                page_seq: a.seq,
                commit_seq,
            });
        }
        assert_eq!(
            self.xl2p.committed.len(),
            entries_before + written,
            "commit of {tid} adds one commit-table entry per page it wrote"
        );
        // After the pages are durable, and after the last checkpoint (which may have freed
        // entries this table no longer names) is complete.
        let start = issue_ns.max(txn.durable_ns).max(self.checkpoint_done_ns);
        let page_bytes = self.medium.geometry().page_bytes;
        let pages = table_pages(self.xl2p.committed.len(), page_bytes)
            .max(u64::from(self.cfg.commit_meta_pages));
        let erased = self.medium.map_erases();
        let done = self
            .medium
            .write_commit_table(&self.xl2p.committed, pages, start)?;
        self.stats.commit_table_programs += pages;
        self.stats.map_erases += self.medium.map_erases() - erased;
        // Keep the table one page: beyond that, a checkpoint (after this commit, not part of
        // its latency) frees the committed entries.
        if table_pages(self.xl2p.committed.len() + 1, page_bytes) > 1 {
            self.checkpoint(done)?;
        }
        if self.xl2p.canary_commit_before_durable {
            // The canary acknowledges the commit at once, before its pages and its table are
            // programmed.
            return Ok(issue_ns);
        }
        Ok(done)
    }

    /// `abort(t)`: drop `t`'s copies; every page reads its committed version again.
    pub fn abort(&mut self, tid: Tid) -> Result<(), FtlError> {
        let txn = self
            .xl2p
            .txns
            .remove(&tid.0)
            .ok_or(FtlError::NoSuchTxn { tid: tid.0 })?;
        for lpn in txn.lpns {
            let a = self
                .xl2p
                .active
                .remove(&lpn)
                .expect("entry of an active txn");
            assert_eq!(
                a.tid, tid.0,
                "abort drops only its own entries: lpn {lpn} at ppn {}",
                a.ppn
            );
            self.invalidate(a.ppn);
        }
        self.stats.aborts += 1;
        Ok(())
    }

    /// GC copied an active transaction's page of `lpn` to `ppn` (sequence `seq`, complete at
    /// `done`): move its entry.
    pub(crate) fn moved_active(&mut self, lpn: u32, ppn: u32, seq: u64, done: u64) {
        let a = self.xl2p.active.get_mut(&lpn).expect("GC found it active");
        let old = a.ppn;
        assert!(
            old != ppn && a.seq < seq,
            "GC moves active lpn {lpn} to a newer page: from ppn {old} (seq {}) to {ppn} (seq {seq})",
            a.seq
        );
        a.ppn = ppn;
        a.seq = seq;
        let tid = a.tid;
        self.invalidate(old);
        if let Some(t) = self.xl2p.txns.get_mut(&tid) {
            t.durable_ns = t.durable_ns.max(done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DataMode, FtlConfig, Geometry, Timing};
    use crate::nand::NandMedium;

    fn ftl(logical: u64, xl2p_entries: u32) -> Ftl<NandMedium> {
        ftl_with(logical, xl2p_entries, 0)
    }

    /// The small test device: 2 channels of 32 blocks of 8 pages of 512 bytes.
    fn small_geometry() -> Geometry {
        Geometry {
            page_bytes: 512,
            pages_per_block: 8,
            blocks_per_plane: 32,
            planes_per_die: 1,
            dies_per_channel: 1,
            channels: 2,
            sector_bytes: 512,
        }
    }

    fn ftl_with(logical: u64, xl2p_entries: u32, commit_meta_pages: u32) -> Ftl<NandMedium> {
        ftl_with_slots(logical, xl2p_entries, commit_meta_pages, 512)
    }

    /// The small test FTL whose pages hold slots of `slot_bytes` (512: the page).
    fn ftl_with_slots(
        logical: u64,
        xl2p_entries: u32,
        commit_meta_pages: u32,
        slot_bytes: u32,
    ) -> Ftl<NandMedium> {
        let g = small_geometry();
        let m = NandMedium::with_slots(g, Timing::default(), DataMode::Full, slot_bytes);
        let cfg = FtlConfig {
            gc_free_blocks: 2,
            checkpoint_interval_programs: 50,
            xl2p_entries,
            commit_meta_pages,
            ..FtlConfig::default()
        };
        Ftl::format(m, cfg, logical).unwrap()
    }

    fn page(v: u8) -> Vec<u8> {
        vec![v; 512]
    }

    fn read(f: &mut Ftl<NandMedium>, lpn: u32) -> u8 {
        let mut b = vec![0; f.medium().slot_bytes() as usize];
        f.read(Lpn(lpn), &mut b, 0).unwrap();
        b[0]
    }

    #[test]
    fn a_transaction_sees_its_writes_others_the_committed_version() {
        let mut f = ftl(100, 1000);
        f.write(Lpn(1), &page(1), 0).unwrap();
        let t = f.begin();
        f.txn_write(t, Lpn(1), &page(2), 0).unwrap();
        f.txn_write(t, Lpn(2), &page(3), 0).unwrap();
        let mut b = page(0);
        f.txn_read(t, Lpn(1), &mut b, 0).unwrap();
        assert_eq!(b[0], 2);
        assert_eq!(read(&mut f, 1), 1);
        assert_eq!(read(&mut f, 2), 0);
        f.check_invariants();
        f.commit(t, 0).unwrap();
        assert_eq!((read(&mut f, 1), read(&mut f, 2)), (2, 3));
        f.check_invariants();
    }

    #[test]
    fn abort_leaves_every_page_as_it_was() {
        let mut f = ftl(100, 1000);
        f.write(Lpn(5), &page(7), 0).unwrap();
        let t = f.begin();
        f.txn_write(t, Lpn(5), &page(8), 0).unwrap();
        f.txn_write(t, Lpn(6), &page(9), 0).unwrap();
        f.abort(t).unwrap();
        assert_eq!((read(&mut f, 5), read(&mut f, 6)), (7, 0));
        assert!(!f.is_mapped(Lpn(6)));
        f.check_invariants();
        assert!(matches!(f.commit(t, 0), Err(FtlError::NoSuchTxn { .. })));
    }

    #[test]
    fn conflicting_writers_are_refused() {
        let mut f = ftl(100, 1000);
        let t = f.begin();
        let u = f.begin();
        f.txn_write(t, Lpn(3), &page(1), 0).unwrap();
        assert!(matches!(
            f.txn_write(u, Lpn(3), &page(2), 0),
            Err(FtlError::TxnConflict { holder: 1, .. })
        ));
        assert!(matches!(
            f.write(Lpn(3), &page(2), 0),
            Err(FtlError::TxnConflict { .. })
        ));
        f.txn_write(u, Lpn(4), &page(2), 0).unwrap();
        f.commit(u, 0).unwrap();
        f.commit(t, 0).unwrap();
        assert_eq!((read(&mut f, 3), read(&mut f, 4)), (1, 2));
    }

    #[test]
    fn a_full_table_is_an_error_not_corruption() {
        let mut f = ftl(100, 4);
        let t = f.begin();
        for lpn in 0..4 {
            f.txn_write(t, Lpn(lpn), &page(1), 0).unwrap();
        }
        // Rewriting a page it holds needs no new entry.
        f.txn_write(t, Lpn(0), &page(2), 0).unwrap();
        assert!(matches!(
            f.txn_write(t, Lpn(4), &page(1), 0),
            Err(FtlError::XL2PFull { capacity: 4 })
        ));
        f.check_invariants();
        f.commit(t, 0).unwrap();
        // Committed entries are freed by a checkpoint when room is needed.
        let u = f.begin();
        for lpn in 10..14 {
            f.txn_write(u, Lpn(lpn), &page(3), 0).unwrap();
        }
        f.commit(u, 0).unwrap();
        assert_eq!(
            (read(&mut f, 0), read(&mut f, 3), read(&mut f, 13)),
            (2, 1, 3)
        );
        f.check_invariants();
    }

    #[test]
    fn gc_keeps_active_pages_and_the_old_committed_copy() {
        // A slot the page, and half-page slots: GC then copies an active page and committed
        // ones in one program.
        for (slot_bytes, logical) in [(512u32, 150u32), (256, 300)] {
            let page = |v: u8| vec![v; slot_bytes as usize];
            let mut f = ftl_with_slots(u64::from(logical), 1000, 0, slot_bytes);
            let mut now = 0;
            for lpn in 0..logical {
                now = f.write(Lpn(lpn), &page(1), now).unwrap();
            }
            let t = f.begin();
            for lpn in 0..20u32 {
                now = f.txn_write(t, Lpn(lpn), &page(2), now).unwrap();
            }
            // Enough plain overwrites elsewhere to force many GC runs.
            for round in 0..6u8 {
                for lpn in 20..logical {
                    now = f.write(Lpn(lpn), &page(10 + round), now).unwrap();
                }
            }
            assert!(f.stats().gc_runs > 0);
            f.check_invariants();
            assert_eq!(read(&mut f, 0), 1, "committed copy kept while t is active");
            let mut b = page(0);
            f.txn_read(t, Lpn(19), &mut b, now).unwrap();
            assert_eq!(b[0], 2);
            f.abort(t).unwrap();
            assert_eq!(read(&mut f, 19), 1);
            f.check_invariants();
        }
    }

    /// Regression (found by `tests/packed_reliable_write_is_all_or_nothing.rs`): while `t` is
    /// active, GC copies the previous committed versions of `t`'s pages, and the copies get
    /// higher sequence numbers than `t`'s own pages. After `t` commits and power goes before
    /// any checkpoint, recovery must still show `t`'s pages (it ranks a commit-table entry by
    /// its commit, not by its page's program).
    #[test]
    fn regression_a_gc_copy_of_the_previous_version_does_not_beat_a_commit() {
        let g = small_geometry();
        let m = NandMedium::new(g, Timing::default(), DataMode::Full);
        let cfg = FtlConfig {
            gc_free_blocks: 2,
            checkpoint_interval_programs: u64::MAX,
            ..FtlConfig::default()
        };
        // 440 of 512 physical pages: GC runs with victims that still hold valid pages.
        let mut f = Ftl::format(m, cfg.clone(), 440).unwrap();
        let mut now = 0;
        for lpn in 0..440u32 {
            now = f.write(Lpn(lpn), &page(1), now).unwrap();
        }
        let t = f.begin();
        for lpn in 0..5u32 {
            now = f.txn_write(t, Lpn(lpn), &page(2), now).unwrap();
        }
        let copies_before = f.stats().gc_copies;
        let mut rng = crate::rng::SimRng::new(22);
        for i in 0..3000u32 {
            let lpn = 5 + rng.below(435) as u32;
            now = f.write(Lpn(lpn), &page(10 + (i % 200) as u8), now).unwrap();
        }
        assert!(
            f.stats().gc_copies > copies_before,
            "GC copied pages while t was active"
        );
        let done = f.commit(t, now).unwrap();
        let mut m = f.into_medium();
        m.power_loss(done, 3);
        let (mut g, _) = Ftl::recover(m, cfg, 440, done).unwrap();
        g.check_invariants();
        for lpn in 0..5u32 {
            assert_eq!(
                read(&mut g, lpn),
                2,
                "lpn {lpn}: the committed version is shown"
            );
        }
    }

    /// Power cut at a random instant during a stream of transactions; recovery must show every
    /// transaction whose commit completed by then and nothing of any other. With
    /// `commit_meta_pages`, every commit also programs that many metadata pages (the `openssd`
    /// profile's firmware), which makes each commit's window longer.
    fn crash_trial(seed: u64, canary: bool, commit_meta_pages: u32) -> Result<(), String> {
        crash_trial_on(seed, canary, commit_meta_pages, 512)
    }

    /// [`crash_trial`] on pages of `slot_bytes` slots.
    fn crash_trial_on(
        seed: u64,
        canary: bool,
        commit_meta_pages: u32,
        slot_bytes: u32,
    ) -> Result<(), String> {
        let page = |v: u8| vec![v; slot_bytes as usize];
        let mut f = ftl_with_slots(120, 1000, commit_meta_pages, slot_bytes);
        f.set_canary_commit_before_durable(canary);
        let mut rng = crate::rng::SimRng::new(seed);
        let mut now = 0;
        // (commit done time, pages with their values)
        let mut commits: Vec<(u64, Vec<(u32, u8)>)> = Vec::new();
        let mut aborted_values = Vec::new();
        let mut windows = Vec::new();
        for i in 0..60u32 {
            let t = f.begin();
            let v = (i % 250 + 1) as u8;
            let mut pages = Vec::new();
            for _ in 0..1 + rng.below(8) {
                let lpn = rng.below(120) as u32;
                f.txn_write(t, Lpn(lpn), &page(v), now).unwrap();
                pages.push((lpn, v));
                now += 5_000;
            }
            if rng.below(5) == 0 {
                f.abort(t).unwrap();
                aborted_values.push(v);
            } else {
                let done = f.commit(t, now).unwrap();
                windows.push((now, done));
                commits.push((done, pages));
                now = done;
            }
            f.medium_mut().retire(now.saturating_sub(2_000_000));
        }
        // Inside the window of one commit, from its issue to its completion.
        let (from, to) = windows[rng.below(windows.len() as u64) as usize];
        let at = from + rng.below(to - from + 1);
        let mut m = f.into_medium();
        m.power_loss(at, seed);
        let cfg = FtlConfig {
            gc_free_blocks: 2,
            checkpoint_interval_programs: 50,
            commit_meta_pages,
            ..FtlConfig::default()
        };
        let (mut g, _) = Ftl::recover(m, cfg, 120, at).map_err(|e| e.to_string())?;
        g.check_invariants();
        let _ = page;
        // Expected: the last value of each page over commits done by `at`.
        let mut want = [0u8; 120];
        let mut maybe: Vec<Vec<u8>> = vec![vec![]; 120];
        for (done, pages) in &commits {
            for &(lpn, v) in pages {
                if *done <= at {
                    want[lpn as usize] = v;
                    maybe[lpn as usize].clear();
                } else {
                    maybe[lpn as usize].push(v);
                }
            }
        }
        for lpn in 0..120u32 {
            let got = read(&mut g, lpn);
            if got != want[lpn as usize] && !maybe[lpn as usize].contains(&got) {
                return Err(format!(
                    "lpn {lpn}: read {got}, want {} (or one of the commits under way {:?})",
                    want[lpn as usize], maybe[lpn as usize]
                ));
            }
            if aborted_values.contains(&got) && got != want[lpn as usize] {
                return Err(format!("lpn {lpn} shows aborted value {got}"));
            }
        }
        Ok(())
    }

    #[test]
    fn power_cuts_keep_committed_and_drop_uncommitted_transactions() {
        for commit_meta_pages in [0, 5] {
            for seed in 0..200 {
                if let Err(e) = crash_trial(seed, false, commit_meta_pages) {
                    panic!("seed {seed}, commit_meta_pages {commit_meta_pages}: {e}");
                }
            }
        }
    }

    #[test]
    fn power_cuts_keep_committed_transactions_with_sub_page_units() {
        for slot_bytes in [256, 128] {
            for seed in 0..200 {
                if let Err(e) = crash_trial_on(seed, false, 5, slot_bytes) {
                    panic!("seed {seed}, {slot_bytes}-byte units: {e}");
                }
            }
            let caught = (0..200)
                .filter(|&s| crash_trial_on(s, true, 5, slot_bytes).is_err())
                .count();
            assert!(
                caught > 0,
                "the canary is caught with {slot_bytes}-byte units"
            );
        }
    }

    #[test]
    fn canary_commit_before_pages_are_durable_is_caught() {
        for commit_meta_pages in [0, 5] {
            let caught = (0..200)
                .filter(|&s| crash_trial(s, true, commit_meta_pages).is_err())
                .count();
            assert!(
                caught > 0,
                "the crash trial cannot tell an early commit ({commit_meta_pages} meta pages)"
            );
        }
    }
}
