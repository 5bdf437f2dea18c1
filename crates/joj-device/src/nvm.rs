//! Byte-addressable non-volatile memory beside the controller (i-FTL's STT-RAM): a persistent
//! byte region with timing per access, counters, and the power-loss semantics of
//! `docs/formats/iftl.md` §3.
//!
//! # Model
//! - Each access costs `latency + bytes / bandwidth` (`NvmTiming`). Stores are served one at a
//!   time in the order issued, each ending with a persist barrier: the next store starts after
//!   it. Reads queue only behind reads: a store scheduled to run once a NAND program completes
//!   does not hold up a host read issued before then (the model charges no bus contention
//!   between a read and a store that overlap in time).
//! - Fault model: every store is logged with its start and end time and the bytes it replaced
//!   until it is retired. On `power_loss(at)`, walking the log backwards: a store that had not
//!   started by `at` never happened; a store under way at `at` keeps a random subset of its
//!   8-byte aligned words new and the rest old (an aligned 8-byte word is atomic; nothing orders
//!   the words of one store); a store complete by `at` stands.
//! - Time is simulated nanoseconds; the random choices of a tear come from the seed given.

use serde::{Deserialize, Serialize};

use crate::config::{NvmTiming, Timing};
use crate::error::NvmError;
use crate::rng::SimRng;

/// An aligned word: the unit a store is atomic in.
pub const NVM_WORD_BYTES: u64 = 8;

/// What the NVM did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NvmStats {
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub reads: u64,
    pub stores: u64,
    /// Time the port was busy, summed.
    pub busy_ns: u64,
}

#[derive(Debug, Clone)]
struct InflightStore {
    offset: u64,
    start_ns: u64,
    end_ns: u64,
    old: Vec<u8>,
}

/// The NVM region.
#[derive(Debug, Clone)]
pub struct Nvm {
    bytes: Vec<u8>,
    timing: NvmTiming,
    free_ns: u64,
    read_free_ns: u64,
    inflight: Vec<InflightStore>,
    stats: NvmStats,
}

impl Nvm {
    /// A region of `size_bytes` zero bytes.
    pub fn new(size_bytes: u64, timing: NvmTiming) -> Nvm {
        Nvm {
            bytes: vec![0; size_bytes as usize],
            timing,
            free_ns: 0,
            read_free_ns: 0,
            inflight: Vec::new(),
            stats: NvmStats::default(),
        }
    }

    pub fn size_bytes(&self) -> u64 {
        self.bytes.len() as u64
    }

    pub fn stats(&self) -> &NvmStats {
        &self.stats
    }

    pub fn timing(&self) -> &NvmTiming {
        &self.timing
    }

    /// When every store issued so far is persistent.
    pub fn free_ns(&self) -> u64 {
        self.free_ns
    }

    fn check(&self, offset: u64, len: u64) -> Result<std::ops::Range<usize>, NvmError> {
        let size = self.size_bytes();
        match offset.checked_add(len) {
            Some(end) if end <= size => Ok(offset as usize..end as usize),
            _ => Err(NvmError::OutOfRange { offset, len, size }),
        }
    }

    /// When an access of `len` bytes started at `start` ends: `latency + bytes / bandwidth`
    /// later, checked (the profile bounds each latency, `MAX_STEP_NS`; a sum past the `u64`
    /// clock is an error, never a wrapped, earlier time).
    fn end_of(&self, start: u64, latency_ns: u64, len: u64) -> Result<u64, NvmError> {
        let cost = latency_ns.saturating_add(Timing::transfer_ns(len, self.timing.bytes_per_s));
        start.checked_add(cost).ok_or(NvmError::ClockOverflow {
            start_ns: start,
            cost_ns: cost,
        })
    }

    fn schedule_store(&mut self, len: u64, issue_ns: u64) -> Result<(u64, u64), NvmError> {
        let start = issue_ns.max(self.free_ns);
        let end = self.end_of(start, self.timing.write_latency_ns, len)?;
        self.free_ns = end;
        self.stats.busy_ns = self.stats.busy_ns.saturating_add(end - start);
        Ok((start, end))
    }

    fn schedule_read(&mut self, len: u64, issue_ns: u64) -> Result<u64, NvmError> {
        let start = issue_ns.max(self.read_free_ns);
        let end = self.end_of(start, self.timing.read_latency_ns, len)?;
        self.read_free_ns = end;
        self.stats.busy_ns = self.stats.busy_ns.saturating_add(end - start);
        Ok(end)
    }

    /// Read `buf.len()` bytes at `offset`; returns when the data is in the controller.
    pub fn read(&mut self, offset: u64, buf: &mut [u8], issue_ns: u64) -> Result<u64, NvmError> {
        let r = self.check(offset, buf.len() as u64)?;
        let end = self.schedule_read(buf.len() as u64, issue_ns)?;
        buf.copy_from_slice(&self.bytes[r]);
        self.stats.reads += 1;
        self.stats.bytes_read += buf.len() as u64;
        Ok(end)
    }

    /// Charge a read of `len` bytes without copying (a scan whose values the caller already
    /// took with `peek`).
    pub fn charge_read(&mut self, offset: u64, len: u64, issue_ns: u64) -> Result<u64, NvmError> {
        self.check(offset, len)?;
        let end = self.schedule_read(len, issue_ns)?;
        self.stats.reads += 1;
        self.stats.bytes_read += len;
        Ok(end)
    }

    /// Store `data` at `offset`; returns when it is persistent.
    pub fn store(&mut self, offset: u64, data: &[u8], issue_ns: u64) -> Result<u64, NvmError> {
        let r = self.check(offset, data.len() as u64)?;
        let (start, end) = self.schedule_store(data.len() as u64, issue_ns)?;
        let old = self.bytes[r.clone()].to_vec();
        self.bytes[r].copy_from_slice(data);
        self.inflight.push(InflightStore {
            offset,
            start_ns: start,
            end_ns: end,
            old,
        });
        self.stats.stores += 1;
        self.stats.bytes_written += data.len() as u64;
        Ok(end)
    }

    pub fn store_u32(&mut self, offset: u64, v: u32, issue_ns: u64) -> Result<u64, NvmError> {
        self.store(offset, &v.to_le_bytes(), issue_ns)
    }

    pub fn store_u64(&mut self, offset: u64, v: u64, issue_ns: u64) -> Result<u64, NvmError> {
        self.store(offset, &v.to_le_bytes(), issue_ns)
    }

    /// The bytes at `offset`, untimed (the controller's bookkeeping; callers charge the
    /// reads they model).
    pub fn peek(&self, offset: u64, len: u64) -> Result<&[u8], NvmError> {
        let r = self.check(offset, len)?;
        Ok(&self.bytes[r])
    }

    pub fn peek_u32(&self, offset: u64) -> Result<u32, NvmError> {
        let b = self.peek(offset, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn peek_u64(&self, offset: u64) -> Result<u64, NvmError> {
        let b = self.peek(offset, 8)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        Ok(u64::from_le_bytes(w))
    }

    /// Forget the undo records of stores persistent by `now_ns` (no power loss can undo them).
    pub fn retire(&mut self, now_ns: u64) {
        self.inflight.retain(|s| s.end_ns > now_ns);
    }

    /// Every instant at or after `from_ns` at which a logged store starts or ends, sorted and
    /// distinct: cutting at each and one nanosecond after reaches every crash state.
    pub fn event_times_ns(&self, from_ns: u64) -> Vec<u64> {
        let mut t: Vec<u64> = self
            .inflight
            .iter()
            .flat_map(|s| [s.start_ns, s.end_ns])
            .filter(|&x| x >= from_ns)
            .collect();
        t.sort_unstable();
        t.dedup();
        t
    }

    /// Power is cut at `at_ns` (fault model in the module header). The port restarts at
    /// `at_ns`.
    pub fn power_loss(&mut self, at_ns: u64, seed: u64) {
        let mut rng = SimRng::new(seed ^ 0x4E56_4D5F_4355_5421);
        let log = std::mem::take(&mut self.inflight);
        for s in log.into_iter().rev() {
            if s.end_ns <= at_ns {
                continue;
            }
            let base = s.offset as usize;
            if s.start_ns >= at_ns {
                self.bytes[base..base + s.old.len()].copy_from_slice(&s.old);
                continue;
            }
            // Under way: each aligned word it touches is old or new on its own.
            let end = s.offset + s.old.len() as u64;
            let mut w = s.offset - s.offset % NVM_WORD_BYTES;
            while w < end {
                let lo = w.max(s.offset);
                let hi = (w + NVM_WORD_BYTES).min(end);
                if rng.below(2) == 0 {
                    let (a, b) = ((lo - s.offset) as usize, (hi - s.offset) as usize);
                    self.bytes[lo as usize..hi as usize].copy_from_slice(&s.old[a..b]);
                }
                w += NVM_WORD_BYTES;
            }
        }
        self.free_ns = at_ns;
        self.read_free_ns = at_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_cost_latency_plus_transfer_and_serialize() {
        let mut n = Nvm::new(4096, NvmTiming::default());
        let t1 = n.store(0, &[1u8; 8], 0).unwrap();
        let t2 = n.store(8, &[1u8; 8], 0).unwrap();
        assert_eq!(t1, 156 + 4);
        assert_eq!(t2, 2 * t1);
        assert_eq!(n.stats().bytes_written, 16);
        assert!(n.store(4090, &[0u8; 8], 0).is_err());
    }

    #[test]
    fn a_cut_before_a_store_undoes_it_and_after_keeps_it() {
        let mut n = Nvm::new(64, NvmTiming::default());
        let t1 = n.store_u64(0, 7, 0).unwrap();
        let t2 = n.store_u64(8, 9, 0).unwrap();
        n.power_loss(t1, 1);
        assert_eq!(n.peek_u64(0).unwrap(), 7);
        assert_eq!(n.peek_u64(8).unwrap(), 0);
        assert!(t2 > t1);
    }
}
