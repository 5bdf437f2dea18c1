//! `IftlDevice` behind the block-device contracts (`BlockDevice`, `TransactionalDevice`), so
//! the flash file layer and everything else written against them run on i-FTL unchanged. Every
//! write through these traits is tagged `WriteKind::Data`; a caller that knows its metadata
//! pages uses `IftlDevice::write_txn_kind`.
//!
//! Plain writes are persistent when they return (i-FTL has no volatile cache), so `flush` only
//! pays its command overhead and FUA / reliable flags change nothing. A write covering part of
//! a page reads the page, merges, and writes it whole.

use super::IftlDevice;
use crate::addr::Lpn;
use crate::block::{BlockDevice, DeviceGeometry, TransactionalDevice, WriteFlags};
use crate::counters::Counters;
use crate::error::DeviceError;
use crate::iftl::WriteKind;
use crate::medium::Medium;
use crate::queue::CommandKind;
use crate::xftl::Tid;

impl<M: Medium> IftlDevice<M> {
    fn check_range(&self, offset_bytes: u64, len: u64, unit: u64) -> Result<(), DeviceError> {
        if len == 0 {
            return Err(DeviceError::EmptyRequest);
        }
        let capacity = self.logical_pages() * u64::from(self.page_bytes());
        if offset_bytes.checked_add(len).is_none_or(|e| e > capacity) {
            return Err(DeviceError::BeyondDevice {
                offset_bytes,
                len_bytes: len,
                capacity_bytes: capacity,
            });
        }
        if !offset_bytes.is_multiple_of(unit) || !len.is_multiple_of(unit) {
            return Err(DeviceError::Misaligned {
                offset_bytes,
                len_bytes: len,
                sector_bytes: unit as u32,
            });
        }
        Ok(())
    }

    fn sector_bytes(&self) -> u64 {
        u64::from(self.profile.geometry.sector_bytes)
    }

    /// `(lpn, offset in page, offset in request, length)` of each page a request touches.
    fn spans(&self, offset_bytes: u64, len: u64) -> Vec<(u32, usize, usize, usize)> {
        let pb = u64::from(self.page_bytes());
        let mut out = Vec::new();
        let mut at = offset_bytes;
        while at < offset_bytes + len {
            let in_page = at % pb;
            let n = (pb - in_page).min(offset_bytes + len - at);
            out.push((
                (at / pb) as u32,
                in_page as usize,
                (at - offset_bytes) as usize,
                n as usize,
            ));
            at += n;
        }
        out
    }

    /// A transactional write of whole pages with a data tag.
    pub fn write_txn_kind(
        &mut self,
        tid: Tid,
        offset_bytes: u64,
        data: &[u8],
        kind: WriteKind,
    ) -> Result<(), DeviceError> {
        let pb = u64::from(self.page_bytes());
        self.check_range(offset_bytes, data.len() as u64, pb)?;
        for (lpn, _, in_req, n) in self.spans(offset_bytes, data.len() as u64) {
            self.write(Some(tid), Lpn(lpn), kind, &data[in_req..in_req + n])?;
        }
        Ok(())
    }
}

impl<M: Medium> BlockDevice for IftlDevice<M> {
    fn geometry(&self) -> DeviceGeometry {
        DeviceGeometry {
            capacity_bytes: self.logical_pages() * u64::from(self.page_bytes()),
            sector_bytes: self.profile.geometry.sector_bytes,
            optimal_write_bytes: self.page_bytes(),
        }
    }

    fn read(&mut self, offset_bytes: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.check_range(offset_bytes, buf.len() as u64, self.sector_bytes())?;
        let mut page = vec![0u8; self.page_bytes() as usize];
        for (lpn, in_page, in_req, n) in self.spans(offset_bytes, buf.len() as u64) {
            IftlDevice::read(self, None, Lpn(lpn), &mut page)?;
            buf[in_req..in_req + n].copy_from_slice(&page[in_page..in_page + n]);
        }
        Ok(())
    }

    fn write(
        &mut self,
        offset_bytes: u64,
        data: &[u8],
        _flags: WriteFlags,
    ) -> Result<(), DeviceError> {
        self.check_range(offset_bytes, data.len() as u64, self.sector_bytes())?;
        let pb = self.page_bytes() as usize;
        let mut page = vec![0u8; pb];
        for (lpn, in_page, in_req, n) in self.spans(offset_bytes, data.len() as u64) {
            let src = &data[in_req..in_req + n];
            if n == pb {
                IftlDevice::write(self, None, Lpn(lpn), WriteKind::Data, src)?;
            } else {
                IftlDevice::read(self, None, Lpn(lpn), &mut page)?;
                page[in_page..in_page + n].copy_from_slice(src);
                IftlDevice::write(self, None, Lpn(lpn), WriteKind::Data, &page)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), DeviceError> {
        let done = self.start(CommandKind::Barrier);
        self.finish(CommandKind::Barrier, done);
        self.flushes += 1;
        Ok(())
    }

    fn discard(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), DeviceError> {
        self.check_range(offset_bytes, len_bytes, self.sector_bytes())?;
        let pb = self.page_bytes() as usize;
        let mut t = self.start(CommandKind::Barrier);
        for (lpn, _, _, n) in self.spans(offset_bytes, len_bytes) {
            if n == pb {
                t = self.ftl.trim(Lpn(lpn), t)?;
            }
        }
        self.finish(CommandKind::Barrier, t);
        Ok(())
    }

    fn counters(&self) -> Counters {
        let s = &self.stats_since_reset();
        let pb = u64::from(self.page_bytes());
        let programs = s.host_programs + s.gc_copies + s.lazy_gc_copies;
        let host_write_bytes = self.host.write_bytes;
        let modeled_s = (self.now_ns - self.start_ns) as f64 / 1e9;
        let ops = self.host.reads + self.host.writes;
        Counters {
            host_write_bytes,
            nand_program_bytes: programs * pb,
            erases: s.erases,
            gc_copies: s.gc_copies + s.lazy_gc_copies,
            gc_runs: s.gc_runs,
            // Valid and retained pages alike: both are copied before the erase.
            gc_validity: if s.gc_runs == 0 {
                0.0
            } else {
                (s.gc_copies + s.lazy_gc_copies) as f64
                    / (s.gc_runs * u64::from(self.profile.geometry.pages_per_block)) as f64
            },
            waf: if host_write_bytes == 0 {
                0.0
            } else {
                (programs * pb) as f64 / host_write_bytes as f64
            },
            flushes: self.flushes,
            modeled_s,
            modeled_ops_per_sec: if modeled_s > 0.0 {
                ops as f64 / modeled_s
            } else {
                0.0
            },
            host_read_requests: self.host.reads,
            host_read_bytes: self.host.read_bytes,
            host_write_requests: self.host.writes,
            nand_reads: s.nand_reads,
            nand_read_bytes: s.nand_reads * pb,
            nand_programs: programs,
            host_page_programs: s.host_programs,
            map_page_programs: s.mapping_flash_programs,
            txn_commits: s.commits,
            txn_aborts: s.aborts,
            ..Counters::default()
        }
    }

    fn set_issuer(&mut self, issuer: u32) {
        IftlDevice::set_issuer(self, issuer);
    }

    fn issuer_ready_ns(&self, issuer: u32) -> Option<u64> {
        Some(self.queue.ready_ns(issuer))
    }
}

impl<M: Medium> TransactionalDevice for IftlDevice<M> {
    fn begin_txn(&mut self) -> Result<Tid, DeviceError> {
        self.begin()
    }

    fn write_txn(&mut self, tid: Tid, offset_bytes: u64, data: &[u8]) -> Result<(), DeviceError> {
        IftlDevice::write_txn_kind(self, tid, offset_bytes, data, WriteKind::Data)
    }

    fn write_txn_kind(
        &mut self,
        tid: Tid,
        offset_bytes: u64,
        data: &[u8],
        kind: WriteKind,
    ) -> Result<(), DeviceError> {
        IftlDevice::write_txn_kind(self, tid, offset_bytes, data, kind)
    }

    fn read_txn(&mut self, tid: Tid, offset_bytes: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        let pb = u64::from(self.page_bytes());
        self.check_range(offset_bytes, buf.len() as u64, pb)?;
        for (lpn, _, in_req, n) in self.spans(offset_bytes, buf.len() as u64) {
            IftlDevice::read(self, Some(tid), Lpn(lpn), &mut buf[in_req..in_req + n])?;
        }
        Ok(())
    }

    fn commit_txn(&mut self, tid: Tid) -> Result<(), DeviceError> {
        self.commit(tid)
    }

    fn abort_txn(&mut self, tid: Tid) -> Result<(), DeviceError> {
        self.abort(tid)
    }
}
