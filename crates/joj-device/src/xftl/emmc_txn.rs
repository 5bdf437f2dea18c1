//! X-FTL's transactional commands on the eMMC (`docs/formats/xftl.md`): the device side of
//! `TransactionalDevice`.
//!
//! Timing: each command pays the command overhead; `write_txn` also the host transfer, and
//! returns when the data is in the device (its pages are programmed in the background, like a
//! cache destage); `commit_txn` returns when the commit table is programmed, which starts after
//! the transaction's last page program completes — the durability point. Transactional writes
//! bypass the write cache: a cached (committed) copy of a page is programmed before the
//! transaction's first write of that page, so versions reach flash in commit order.

use crate::addr::Lpn;
use crate::block::TransactionalDevice;
use crate::emmc::{Emmc, UnitWrite};
use crate::error::{DeviceError, FtlError};
use crate::medium::Medium;
use crate::queue::CommandKind;
use crate::xftl::Tid;

impl<M: Medium> Emmc<M> {
    /// Refuse a plain write or discard touching a page an active transaction holds.
    pub(crate) fn check_not_in_txn(&self, offset_bytes: u64, len: u64) -> Result<(), DeviceError> {
        if self.ftl.active_transactions() == 0 {
            return Ok(());
        }
        for (lpn, ..) in self.pages(offset_bytes, len) {
            if let Some(holder) = self.ftl.holder(Lpn(lpn)) {
                return Err(FtlError::TxnConflict {
                    lpn,
                    holder: holder.0,
                    by: "a plain write or discard".into(),
                }
                .into());
            }
        }
        Ok(())
    }

    /// A transactional request must cover whole pages.
    fn check_pages(&self, offset_bytes: u64, len: u64) -> Result<(), DeviceError> {
        self.check_range(offset_bytes, len)?;
        if !offset_bytes.is_multiple_of(self.page_bytes) || !len.is_multiple_of(self.page_bytes) {
            return Err(DeviceError::Misaligned {
                offset_bytes,
                len_bytes: len,
                sector_bytes: self.page_bytes as u32,
            });
        }
        Ok(())
    }

    /// Canary for crash tests: commits are acknowledged before their pages and commit table are
    /// durable.
    pub fn set_canary_commit_before_durable(&mut self, on: bool) {
        self.ftl.set_canary_commit_before_durable(on);
    }
}

impl<M: Medium> TransactionalDevice for Emmc<M> {
    fn begin_txn(&mut self) -> Result<Tid, DeviceError> {
        let admitted = self.start_command(CommandKind::Queued)?;
        let done = self.overhead_done(admitted.start_ns);
        self.finish(CommandKind::Queued, admitted, done);
        Ok(self.ftl.begin())
    }

    fn write_txn(&mut self, tid: Tid, offset_bytes: u64, data: &[u8]) -> Result<(), DeviceError> {
        self.check_pages(offset_bytes, data.len() as u64)?;
        let admitted = self.start_command(CommandKind::Queued)?;
        let t = self.command_and_data(admitted.start_ns, data.len() as u64);
        let pb = self.page_bytes as usize;
        let parts: Vec<_> = self.pages(offset_bytes, data.len() as u64).collect();
        self.guard(|d| {
            for (lpn, _, in_req, _, _) in parts {
                if let Some(ev) = d.cache.take(lpn) {
                    debug_assert!(
                        d.ftl.holder(Lpn(lpn)).is_none(),
                        "a page held by a transaction is never cached"
                    );
                    let one = UnitWrite {
                        lpn,
                        mask: ev.mask,
                        src: Some(ev.slot),
                        extra: None,
                    };
                    let r = d.program_units(&[one], t);
                    d.cache.free_slot(ev.slot);
                    r?;
                }
                let bytes = if d.store_data {
                    &data[in_req..in_req + pb]
                } else {
                    &[][..]
                };
                d.ftl.txn_write(tid, Lpn(lpn), bytes, t)?;
            }
            Ok(())
        })?;
        self.host.write_requests += 1;
        self.host.write_bytes += data.len() as u64;
        self.lat.write.record(t - admitted.arrival_ns);
        self.finish(CommandKind::Queued, admitted, t);
        Ok(())
    }

    fn read_txn(&mut self, tid: Tid, offset_bytes: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.check_pages(offset_bytes, buf.len() as u64)?;
        let mine: Vec<bool> = self
            .pages(offset_bytes, buf.len() as u64)
            .map(|(lpn, ..)| self.ftl.holder(Lpn(lpn)) == Some(tid))
            .collect();
        if !mine.iter().any(|&m| m) {
            // Nothing of this transaction's in the range: the committed version.
            return crate::block::BlockDevice::read(self, offset_bytes, buf);
        }
        let admitted = self.start_command(CommandKind::Queued)?;
        let t = self.overhead_done(admitted.start_ns);
        let pb = self.page_bytes as usize;
        let parts: Vec<_> = self.pages(offset_bytes, buf.len() as u64).collect();
        let done = self.guard(|d| {
            let mut ready = t;
            for ((lpn, _, in_req, _, _), own) in parts.into_iter().zip(mine) {
                let dst = &mut buf[in_req..in_req + pb];
                let cached = if own { None } else { d.cache.lookup(lpn) };
                if let Some((slot, mask)) = cached
                    && mask == d.full_mask
                {
                    if d.store_data {
                        dst.copy_from_slice(d.cache.slot_data(slot));
                    }
                    continue;
                }
                let mut page = std::mem::take(&mut d.page_buf);
                let r = d.ftl.txn_read(tid, Lpn(lpn), &mut page, t);
                if d.store_data {
                    // The committed version: cached sectors over the flash copy.
                    if let Some((slot, mask)) = cached {
                        let sb = d.sector_bytes as usize;
                        let data = d.cache.slot_data(slot);
                        let mut m = mask;
                        while m != 0 {
                            let i = m.trailing_zeros() as usize;
                            m &= m - 1;
                            page[i * sb..(i + 1) * sb].copy_from_slice(&data[i * sb..(i + 1) * sb]);
                        }
                    }
                    dst.copy_from_slice(&page);
                } else {
                    dst.fill(0);
                }
                d.page_buf = page;
                if let Some(done) = r? {
                    ready = ready.max(done);
                }
            }
            let xfer = d.xfer_ns(buf.len() as u64);
            Ok(d.queue.bus(ready, xfer))
        })?;
        self.finish_read(admitted, done, buf.len());
        Ok(())
    }

    fn commit_txn(&mut self, tid: Tid) -> Result<(), DeviceError> {
        let admitted = self.start_command(CommandKind::Queued)?;
        let t = self.overhead_done(admitted.start_ns);
        let done = self.guard(|d| Ok(d.ftl.commit(tid, t)?))?;
        self.lat.flush.record(done - admitted.arrival_ns);
        self.finish(CommandKind::Queued, admitted, done);
        Ok(())
    }

    fn abort_txn(&mut self, tid: Tid) -> Result<(), DeviceError> {
        let admitted = self.start_command(CommandKind::Queued)?;
        let done = self.overhead_done(admitted.start_ns);
        self.finish(CommandKind::Queued, admitted, done);
        self.guard(|d| Ok(d.ftl.abort(tid)?))
    }
}
