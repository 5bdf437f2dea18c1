//! Where a replay's requests come from ([`Requests`]): records in memory, or a trace file read
//! once more for each pass ([`crate::TraceFile`]), so that a replay holds no more of a trace
//! than the request it is applying. A replay reads its requests twice: once for what it must
//! know before the first request is applied ([`Scan`]: the devices, how high each one's
//! requests reach, how many there are), then to apply them, in trace order, each chosen and
//! placed by a [`Selection`].
//!
//! Invariants: a source gives the same requests, in the same order, on every pass (a file that
//! changed between passes is an error, `TraceError::ChangedWhileRead`); `Scan::devices` lists
//! every device of the requests once, in order of first appearance, with `end_sectors` beside.

use std::borrow::Cow;
use std::collections::HashMap;

use joj_trace::{Op, SECTOR_BYTES, TraceRecord};

use crate::error::ReplayError;

/// A trace's requests, in trace order, as many times as a replay reads them.
pub trait Requests {
    /// Call `f` with every request and its index in the trace (from 0), in trace order;
    /// stop at the first error, `f`'s or the source's.
    fn each(
        &self,
        f: &mut dyn FnMut(usize, &TraceRecord) -> Result<(), ReplayError>,
    ) -> Result<(), ReplayError>;

    /// What a first pass over the requests finds (a source that made that pass already may
    /// say it without another).
    fn scan(&self) -> Result<Scan, ReplayError> {
        scan_of(self)
    }

    /// What the source knows of its requests without a pass, if it does: their devices and
    /// how many there are, not how high they reach (`end_sectors` empty). A trace file whose
    /// header lists one device knows it.
    fn known(&self) -> Option<Scan> {
        None
    }
}

/// A pass over `requests` noting what [`Scan`] holds.
pub(crate) fn scan_of<R: Requests + ?Sized>(requests: &R) -> Result<Scan, ReplayError> {
    let mut scan = Scan::default();
    let mut known: HashMap<String, usize> = HashMap::new();
    requests.each(&mut |_, r| {
        scan.see(&mut known, r);
        Ok(())
    })?;
    Ok(scan)
}

impl Requests for [TraceRecord] {
    fn each(
        &self,
        f: &mut dyn FnMut(usize, &TraceRecord) -> Result<(), ReplayError>,
    ) -> Result<(), ReplayError> {
        self.iter().enumerate().try_for_each(|(i, r)| f(i, r))
    }
}

/// What a replay must know of a trace before its first request is applied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Every device of the requests (`major:minor`), in order of first appearance.
    pub devices: Vec<String>,
    /// Per device of `devices`, the highest end of its requests with an address
    /// ([`TraceRecord::addressed_end`]);
    /// empty when the requests were not read ([`Requests::known`]).
    pub end_sectors: Vec<u64>,
    /// Requests in the trace.
    pub records: u64,
}

impl Scan {
    fn see(&mut self, known: &mut HashMap<String, usize>, r: &TraceRecord) {
        self.records += 1;
        let end = r.addressed_end();
        match known.get(&r.dev) {
            Some(&i) => self.end_sectors[i] = self.end_sectors[i].max(end),
            None => {
                known.insert(r.dev.clone(), self.devices.len());
                self.devices.push(r.dev.clone());
                self.end_sectors.push(end);
            }
        }
    }

    pub fn names(&self) -> Vec<&str> {
        self.devices.iter().map(String::as_str).collect()
    }

    /// The highest `sector + sectors` of `dev`'s requests (0 for a device with none).
    pub fn end_of(&self, dev: &str) -> u64 {
        self.devices
            .iter()
            .position(|d| d == dev)
            .and_then(|i| self.end_sectors.get(i).copied())
            .unwrap_or(0)
    }

    /// Where each device starts when every device is a partition of one device, in order of
    /// first appearance, each at the first MiB boundary after the highest sector the previous
    /// one used; and the end of the last, in sectors.
    pub fn partitions(&self) -> (HashMap<String, u64>, u64) {
        const MIB_SECTORS: u64 = (1 << 20) / SECTOR_BYTES;
        let mut starts = HashMap::with_capacity(self.devices.len());
        let mut next = 0u64;
        let mut top = 0u64;
        for (d, end) in self.devices.iter().zip(&self.end_sectors) {
            starts.insert(d.clone(), next);
            top = top.max(next.saturating_add(*end));
            // Saturating: a device reaching near 2^64 sectors must not wrap the next one to 0,
            // on top of the first (the replay then refuses it as beyond the device).
            let span = end.div_ceil(MIB_SECTORS).max(1).saturating_mul(MIB_SECTORS);
            next = next.saturating_add(span);
        }
        (starts, top)
    }
}

/// The device name records carry when every device is a partition of one.
pub const PARTITIONED_DEV: &str = "partitions";

/// Which of a trace's requests a replay applies, and where.
#[derive(Debug, Clone)]
pub enum Selection {
    /// Every request, as it is.
    All,
    /// The requests of one device.
    Dev(String),
    /// Every request, moved to its device's partition of one device (the start of each, in
    /// sectors); a flush carries no address and is not moved.
    Partitions(HashMap<String, u64>),
}

impl Selection {
    /// `r` as the replay applies it, or `None` if it does not.
    pub fn pick<'r>(&self, r: &'r TraceRecord) -> Option<Cow<'r, TraceRecord>> {
        match self {
            Selection::All => Some(Cow::Borrowed(r)),
            Selection::Dev(d) if *d == r.dev => Some(Cow::Borrowed(r)),
            Selection::Dev(_) => None,
            Selection::Partitions(starts) => {
                let start = starts.get(r.dev.as_str()).copied().unwrap_or(0);
                let mut m = r.clone();
                if r.op != Op::Flush {
                    m.sector = m.sector.saturating_add(start);
                }
                m.dev = PARTITIONED_DEV.to_string();
                Some(Cow::Owned(m))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_lists_devices_in_order_with_their_highest_sector() {
        let recs = [
            TraceRecord::new(0, "7:1", Op::Write, 100, 8),
            TraceRecord::new(1, "7:0", Op::Write, 5000, 16),
            TraceRecord::new(2, "7:1", Op::Write, 50, 8),
            TraceRecord::new(3, "7:0", Op::Flush, 0, 0),
        ];
        let scan = recs[..].scan().unwrap();
        assert_eq!(scan.names(), ["7:1", "7:0"]);
        assert_eq!(scan.end_sectors, [108, 5016]);
        assert_eq!(scan.records, 4);
        let (starts, top) = scan.partitions();
        assert_eq!(starts["7:1"], 0);
        assert_eq!(starts["7:0"], 2048);
        assert_eq!(top, 2048 + 5016);
    }

    /// A flush's sector names no place: it does not size its device's partition (a flush at
    /// sector 2^40 put the next device past the emulated one). And a device reaching near
    /// 2^64 sectors puts the next one at the end, not back at 0 on top of the first.
    #[test]
    fn partitions_are_sized_by_addressed_requests_and_never_wrap() {
        let recs = [
            TraceRecord::new(0, "7:0", Op::Write, 0, 8),
            TraceRecord::new(1, "7:0", Op::Flush, 1 << 40, 0),
            TraceRecord::new(2, "7:1", Op::Write, 0, 8),
        ];
        let (starts, _) = recs[..].scan().unwrap().partitions();
        assert_eq!(starts["7:1"], 2048);
        let recs = [
            TraceRecord::new(0, "7:0", Op::Write, u64::MAX - 100, 8),
            TraceRecord::new(1, "7:1", Op::Write, 0, 8),
        ];
        let (starts, _) = recs[..].scan().unwrap().partitions();
        assert_eq!(starts["7:1"], u64::MAX);
    }
}
