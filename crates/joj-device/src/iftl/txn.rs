//! i-FTL's commands: `begin`, `write(t, lpn, kind)`, `commit(t)`, `abort(t)`, in the order of
//! persistent steps `docs/formats/iftl.md` §4 fixes (and §5 argues for).

use super::layout::{
    ENTRY_COMMITTING, ENTRY_DISCARDED, ENTRY_OLD_OFFSET, Loc, LogEntry, OFF_CURSOR, OFF_NEXT_TID,
    TX_ACTIVE, TX_COMMITTED, TX_FREE, pack_cursor, pack_slot,
};
use super::{Held, IFtl, ITxn, IftlCanary, WriteKind};
use crate::addr::Lpn;
use crate::block_table::{check_lpn, collect_garbage};
use crate::error::FtlError;
use crate::medium::Medium;
use crate::xftl::Tid;

impl<M: Medium> IFtl<M> {
    /// Open a transaction: a transaction-table slot becomes `{tid, active}`. Returns the id and
    /// when the slot store is persistent.
    pub fn begin(&mut self, issue_ns: u64) -> Result<(Tid, u64), FtlError> {
        let slot = self
            .tx_slot_used
            .iter()
            .position(|u| !u)
            .ok_or(FtlError::TxnTableFull {
                slots: self.layout.tx_slots,
            })? as u32;
        let tid = self.next_tid;
        self.next_tid = self.next_tid.checked_add(1).ok_or(FtlError::NvmCorrupt {
            reason: "transaction ids exhausted".into(),
        })?;
        let t = self
            .nvm
            .store_u64(OFF_NEXT_TID, u64::from(self.next_tid), issue_ns)?;
        let t = self
            .nvm
            .store_u64(self.layout.tx_slot(slot), pack_slot(tid, TX_ACTIVE), t)?;
        self.tx_slot_used[slot as usize] = true;
        self.txns.insert(
            tid,
            ITxn {
                slot,
                lpns: Vec::new(),
            },
        );
        Ok((Tid(tid), t))
    }

    /// Transactions open.
    pub fn open_transactions(&self) -> usize {
        self.txns.len()
    }

    /// The open transaction holding `lpn`, if any.
    pub fn holder(&self, lpn: Lpn) -> Option<Tid> {
        self.held.get(&lpn.0).map(|h| Tid(h.tid))
    }

    /// Write one page of `kind` as `tid`'s copy of `lpn` (`None`: a plain write, atomic per
    /// page). Returns when the page and its mapping are persistent.
    pub fn write(
        &mut self,
        tid: Option<Tid>,
        lpn: Lpn,
        kind: WriteKind,
        data: &[u8],
        issue_ns: u64,
    ) -> Result<u64, FtlError> {
        let l = check_lpn(lpn, self.logical_pages())?;
        let pb = self.layout.page_bytes as usize;
        if kind == WriteKind::Metadata && data.len() != pb {
            return Err(FtlError::Medium(crate::error::MediumError::BadDataLength {
                expected: pb,
                found: data.len(),
            }));
        }
        let first = self.check_writer(tid, l)?;
        if kind == WriteKind::Data {
            // Before the lookup: GC may move the page's current copy.
            collect_garbage(self, issue_ns)?;
        }
        let cur = self.map_get(l)?;
        let own = !first && tid.is_some();
        let (new, done) = match kind {
            WriteKind::Data => {
                let (p, done) = self.program_data(l, data, issue_ns)?;
                self.stats.host_programs += 1;
                self.stats.data_bytes_to_flash += pb as u64;
                (Loc::Flash(p), done)
            }
            WriteKind::Metadata => match cur {
                // The transaction's own slot: in place.
                Loc::Meta(s) if own => {
                    let t = self.nvm.store(self.layout.meta(s), data, issue_ns)?;
                    self.stats.metadata_bytes_to_nvm += data.len() as u64;
                    self.stats.host_pages_written += 1;
                    return Ok(t);
                }
                _ => {
                    let s = self.free_slots.pop().ok_or(FtlError::NvmSlotsFull {
                        slots: self.layout.meta_slots,
                    })?;
                    let t = self.nvm.store(self.layout.meta(s), data, issue_ns)?;
                    self.stats.metadata_bytes_to_nvm += data.len() as u64;
                    (Loc::Meta(s), t)
                }
            },
        };
        self.stats.host_pages_written += 1;
        self.install(tid, l, first, cur, new, done)
    }

    /// Update `bytes` at `offset_bytes` of metadata page `lpn` (tens of bytes for an inode):
    /// in place if `tid` already owns the page's slot, else a copy-on-write of the page.
    pub fn write_bytes(
        &mut self,
        tid: Option<Tid>,
        lpn: Lpn,
        offset_bytes: u32,
        bytes: &[u8],
        issue_ns: u64,
    ) -> Result<u64, FtlError> {
        let l = check_lpn(lpn, self.logical_pages())?;
        let pb = self.layout.page_bytes as usize;
        let off = offset_bytes as usize;
        if off + bytes.len() > pb {
            return Err(FtlError::Medium(crate::error::MediumError::BadDataLength {
                expected: pb - off.min(pb),
                found: bytes.len(),
            }));
        }
        if let (Some(t), Some(h)) = (tid, self.held.get(&l))
            && h.tid == t.0
            && let Loc::Meta(s) = self.map_get(l)?
        {
            let at = self.layout.meta(s) + u64::from(offset_bytes);
            let done = self.nvm.store(at, bytes, issue_ns)?;
            self.stats.metadata_bytes_to_nvm += bytes.len() as u64;
            self.stats.host_pages_written += 1;
            return Ok(done);
        }
        let mut page = vec![0u8; pb];
        let t = self.read(tid, lpn, &mut page, issue_ns)?;
        page[off..off + bytes.len()].copy_from_slice(bytes);
        self.write(tid, lpn, WriteKind::Metadata, &page, t)
    }

    /// Drop `lpn`'s mapping (a plain discard): it reads as zeros; persistent on return.
    pub fn trim(&mut self, lpn: Lpn, issue_ns: u64) -> Result<u64, FtlError> {
        let l = check_lpn(lpn, self.logical_pages())?;
        self.check_writer(None, l)?;
        let cur = self.map_get(l)?;
        if cur == Loc::Unmapped {
            return Ok(issue_ns);
        }
        self.release(cur);
        self.map_set(l, Loc::Unmapped, issue_ns)
    }

    /// Whether `tid` may write `lpn`, and whether it is its first write of it.
    fn check_writer(&self, tid: Option<Tid>, lpn: u32) -> Result<bool, FtlError> {
        let held = self.held.get(&lpn);
        match (tid, held) {
            (Some(t), _) if !self.txns.contains_key(&t.0) => Err(FtlError::NoSuchTxn { tid: t.0 }),
            (Some(t), Some(h)) if h.tid != t.0 => Err(FtlError::TxnConflict {
                lpn,
                holder: h.tid,
                by: format!("transaction {t}"),
            }),
            (Some(_), Some(_)) => Ok(false),
            (Some(_), None) if self.log_len() >= self.layout.log_entries => {
                Err(FtlError::LogFtlFull {
                    capacity: self.layout.log_entries,
                })
            }
            (Some(_), None) => Ok(true),
            (None, Some(h)) => Err(FtlError::TxnConflict {
                lpn,
                holder: h.tid,
                by: "a plain write".into(),
            }),
            (None, None) => Ok(false),
        }
    }

    /// Steps 2–4 of a write: log the old location (first write by a transaction), then point
    /// `dataFTL` at the new copy, each store after `done`.
    fn install(
        &mut self,
        tid: Option<Tid>,
        lpn: u32,
        first: bool,
        cur: Loc,
        new: Loc,
        done: u64,
    ) -> Result<u64, FtlError> {
        let mut t = done;
        match tid {
            Some(tid) if first && self.canary != IftlCanary::NoLogFtl => {
                let c = self.tail;
                let e = LogEntry {
                    tid: tid.0,
                    tx_state: ENTRY_COMMITTING,
                    lpn,
                    old: cur.word(),
                };
                t = self.nvm.store(self.layout.entry(c), &e.encode(), t)?;
                self.tail = c.wrapping_add(1);
                t = self
                    .nvm
                    .store_u64(OFF_CURSOR, pack_cursor(self.head, self.tail), t)?;
                self.stats.log_entries_appended += 1;
                self.held.insert(
                    lpn,
                    Held {
                        tid: tid.0,
                        entry: Some(c),
                        old: cur,
                    },
                );
                if let Loc::Flash(p) = cur {
                    self.retain(p, lpn);
                }
                self.txn_mut(tid)?.lpns.push(lpn);
            }
            Some(tid) if first => {
                // The canary: the old page is simply dropped.
                self.held.insert(
                    lpn,
                    Held {
                        tid: tid.0,
                        entry: None,
                        old: cur,
                    },
                );
                self.release(cur);
                self.txn_mut(tid)?.lpns.push(lpn);
            }
            _ => self.release(cur),
        }
        self.map_set(lpn, new, t)
    }

    fn txn_mut(&mut self, tid: Tid) -> Result<&mut ITxn, FtlError> {
        self.txns
            .get_mut(&tid.0)
            .ok_or(FtlError::NoSuchTxn { tid: tid.0 })
    }

    /// `commit(t)`: one 8-byte store makes `t` committed; returns when it is persistent (the
    /// commit is durable then). Then `t`'s entries are discarded and its slot freed.
    pub fn commit(&mut self, tid: Tid, issue_ns: u64) -> Result<u64, FtlError> {
        let txn = self
            .txns
            .remove(&tid.0)
            .ok_or(FtlError::NoSuchTxn { tid: tid.0 })?;
        let slot_off = self.layout.tx_slot(txn.slot);
        let durable = self
            .nvm
            .store_u64(slot_off, pack_slot(tid.0, TX_COMMITTED), issue_ns)?;
        let mut t = durable;
        for &lpn in &txn.lpns {
            let Some(h) = self.held.remove(&lpn) else {
                continue;
            };
            if let Some(c) = h.entry {
                t = self.discard(c, tid.0, t)?;
                match h.old {
                    // Not retained only under `IftlCanary::EagerGc` (already dropped).
                    Loc::Flash(p) => {
                        if self.unretain(p) {
                            self.invalidate(p);
                        }
                    }
                    other => self.release(other),
                }
            }
        }
        t = self.advance_head(t)?;
        self.nvm.store_u64(slot_off, pack_slot(0, TX_FREE), t)?;
        self.tx_slot_used[txn.slot as usize] = false;
        self.stats.commits += 1;
        Ok(durable)
    }

    /// `abort(t)` (Algorithm 1 for one transaction): restore every page `t` wrote to its old
    /// location, newest first, then discard the entries. Returns when all is persistent.
    pub fn abort(&mut self, tid: Tid, issue_ns: u64) -> Result<u64, FtlError> {
        let txn = self
            .txns
            .remove(&tid.0)
            .ok_or(FtlError::NoSuchTxn { tid: tid.0 })?;
        let mut t = issue_ns;
        let mut entries = Vec::with_capacity(txn.lpns.len());
        for &lpn in txn.lpns.iter().rev() {
            let Some(h) = self.held.remove(&lpn) else {
                continue;
            };
            let Some(c) = h.entry else { continue };
            let cur = self.map_get(lpn)?;
            t = self.map_set(lpn, h.old, t)?;
            self.release(cur);
            if let Loc::Flash(p) = h.old
                && !self.unretain(p)
            {
                // Only under `IftlCanary::EagerGc`, which erased the page: the FTL believes it
                // valid again, as a firmware with that bug would.
                self.table.revalidate(p);
            }
            entries.push(c);
        }
        for c in entries {
            t = self.discard(c, tid.0, t)?;
        }
        t = self.advance_head(t)?;
        t = self
            .nvm
            .store_u64(self.layout.tx_slot(txn.slot), pack_slot(0, TX_FREE), t)?;
        self.tx_slot_used[txn.slot as usize] = false;
        self.stats.aborts += 1;
        Ok(t)
    }

    /// Mark entry `c` discarded (its first word: tid and TX-state, one atomic store).
    fn discard(&mut self, c: u32, tid: u32, t: u64) -> Result<u64, FtlError> {
        let word = u64::from(tid) | u64::from(ENTRY_DISCARDED) << 32;
        Ok(self.nvm.store_u64(self.layout.entry(c), word, t)?)
    }

    /// Move `head` over discarded entries at the front of the ring.
    fn advance_head(&mut self, t: u64) -> Result<u64, FtlError> {
        let before = self.head;
        while self.head != self.tail {
            let state = self.nvm.peek_u32(self.layout.entry(self.head) + 4)?;
            if state != ENTRY_DISCARDED {
                break;
            }
            self.head = self.head.wrapping_add(1);
        }
        if self.head == before {
            return Ok(t);
        }
        Ok(self
            .nvm
            .store_u64(OFF_CURSOR, pack_cursor(self.head, self.tail), t)?)
    }

    /// Lazy GC moved retained page `lpn`'s old copy to `to`: its entry follows (4-byte store).
    pub(super) fn move_retained(
        &mut self,
        lpn: u32,
        from: u32,
        to: u32,
        t: u64,
    ) -> Result<u64, FtlError> {
        let h = self.held.get_mut(&lpn).ok_or(FtlError::NvmCorrupt {
            reason: format!("retained page {from} of logical page {lpn} has no entry"),
        })?;
        let c = h.entry.ok_or(FtlError::NvmCorrupt {
            reason: format!("retained page {from} has no entry"),
        })?;
        h.old = Loc::Flash(to);
        self.unretain(from);
        self.retain(to, lpn);
        let at = self.layout.entry(c) + ENTRY_OLD_OFFSET;
        Ok(self.nvm.store_u32(at, to, t)?)
    }
}
