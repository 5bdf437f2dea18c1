//! Reliable write atomic across its whole command (`ReliableWriteAtomicity::Command`): every
//! page of one reliable write command, packed or not, is old or every page is new after a power
//! cut. Semantics and crash argument: `docs/device-model.md`, "Reliable write across a packed
//! command".
//!
//! A command of one write of one page is written as before (one program is old or new on its
//! own). Any other command is programmed as one X-FTL transaction (`xftl/txn.rs`, format
//! `docs/formats/xftl.md`): each page is programmed tagged, and the commit table written after
//! the last of them completes is the single point at which all of them become the device's
//! version. The command completes when that table is programmed. Nothing of the persistent
//! layout is new: tagged pages and commit tables are X-FTL's.
//!
//! Sectors of a page the command covers only partly come from the newest version the host may
//! read (the command's own earlier copy, else cached sectors over the flash copy), so they
//! become durable with the command. The write cache gives up its copy of a page only after the
//! commit, so a refused command leaves the cache as it was.

use super::Emmc;
use crate::addr::Lpn;
use crate::block::{PackedWrite, WriteFlags};
use crate::config::ReliableWriteAtomicity;
use crate::error::{DeviceError, FtlError};
use crate::medium::Medium;
use crate::xftl::Tid;

impl<M: Medium> Emmc<M> {
    /// Whether a write command of `flags` is made atomic across the command.
    pub(super) fn reliable_atomic(&self, flags: WriteFlags) -> bool {
        flags.reliable
            && self.profile.ftl.reliable_write_atomicity == ReliableWriteAtomicity::Command
    }

    /// Program every page of `writes` as one transaction issued at `t`, commit it, and return
    /// the commit's completion (the command's durability point).
    pub(super) fn write_reliable_atomic(
        &mut self,
        writes: &[PackedWrite<'_>],
        t: u64,
    ) -> Result<u64, DeviceError> {
        for w in writes {
            assert!(
                !w.data.is_empty()
                    && w.offset_bytes.is_multiple_of(self.sector_bytes)
                    && (w.data.len() as u64).is_multiple_of(self.sector_bytes),
                "a reliable write is whole sectors (checked at the command): offset {} len {} sector {}",
                w.offset_bytes,
                w.data.len(),
                self.sector_bytes
            );
        }
        let mut lpns: Vec<u32> = writes
            .iter()
            .flat_map(|w| self.pages(w.offset_bytes, w.data.len() as u64).map(|p| p.0))
            .collect();
        lpns.sort_unstable();
        lpns.dedup();
        let capacity = self.profile.ftl.xl2p_entries;
        if lpns.len() > capacity as usize {
            // Refused before anything changes: the transaction could never hold the command.
            return Err(FtlError::XL2PFull { capacity }.into());
        }
        let pages = lpns.len() as u64;
        self.host.reliable_atomic_commands += 1;
        self.host.reliable_atomic_pages += pages;
        if let [w] = writes
            && pages == 1
        {
            // One program of one page is old or new on its own: no transaction, no commit
            // table to wait for. (Two writes of one page would be two programs.)
            return self.write_durable(w.offset_bytes, w.data, t);
        }
        let tid = self.ftl.begin();
        let mut done = t;
        for w in writes {
            match self.program_reliable_pages(tid, w, t) {
                Ok(end) => done = done.max(end),
                Err(e) => {
                    self.ftl.abort(tid)?;
                    return Err(e);
                }
            }
        }
        let committed = self.ftl.commit(tid, t)?;
        for lpn in lpns {
            assert_eq!(
                self.ftl.holder(Lpn(lpn)),
                None,
                "after the commit of {tid} no transaction holds lpn {lpn}"
            );
            if let Some(ev) = self.cache.take(lpn) {
                self.cache.free_slot(ev.slot);
            }
        }
        Ok(committed.max(done))
    }

    /// Program the pages of one write of the command as `tid`'s copies; returns when the last
    /// program completes.
    fn program_reliable_pages(
        &mut self,
        tid: Tid,
        w: &PackedWrite<'_>,
        t: u64,
    ) -> Result<u64, DeviceError> {
        let parts: Vec<_> = self.pages(w.offset_bytes, w.data.len() as u64).collect();
        let mut done = t;
        for (lpn, in_page, in_req, n, mask) in parts {
            let mut buf = std::mem::take(&mut self.merge_buf);
            let r = self.assemble_page(tid, lpn, mask, &mut buf, t);
            let r = r.and_then(|ready| {
                if self.store_data {
                    buf[in_page..in_page + n].copy_from_slice(&w.data[in_req..in_req + n]);
                }
                Ok(self.ftl.txn_write(tid, Lpn(lpn), &buf, ready)?)
            });
            self.merge_buf = buf;
            done = done.max(r?);
        }
        Ok(done)
    }

    /// Fill `buf` with what the host would read of `lpn` now (`tid`'s own copy, else cached
    /// sectors over the flash copy) when the write covers only `mask`; returns when it is ready.
    fn assemble_page(
        &mut self,
        tid: Tid,
        lpn: u32,
        mask: u64,
        buf: &mut [u8],
        t: u64,
    ) -> Result<u64, DeviceError> {
        if mask == self.full_mask {
            return Ok(t);
        }
        let own = self.ftl.holder(Lpn(lpn)) == Some(tid);
        let mut ready = t;
        if own || self.ftl.is_mapped(Lpn(lpn)) {
            if let Some(done) = self.ftl.txn_read(tid, Lpn(lpn), buf, t)? {
                ready = done;
            }
            self.host.rmw_reads += 1;
        } else {
            buf.fill(0);
        }
        if self.store_data
            && !own
            && let Some((slot, cmask)) = self.cache.lookup(lpn)
        {
            let sb = self.sector_bytes as usize;
            let data = self.cache.slot_data(slot);
            let mut m = cmask;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                buf[i * sb..(i + 1) * sb].copy_from_slice(&data[i * sb..(i + 1) * sb]);
            }
        }
        Ok(ready)
    }
}
