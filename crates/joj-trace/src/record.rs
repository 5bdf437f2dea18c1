//! The block-trace record shared by capture (tracefs, blkparse import), classification,
//! totals, plots and replay through the device model.

use serde::{Deserialize, Serialize};

/// Bytes per sector of the block layer's addressing, whatever the device's logical block size.
pub const SECTOR_BYTES: u64 = 512;

/// Operation of a block request (the op letter of the kernel's `rwbs` string).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    /// A pure cache flush (`REQ_OP_FLUSH`), zero bytes.
    Flush,
    Discard,
    /// Anything else the kernel may issue (secure erase, write zeroes, driver-private ops).
    Other,
}

/// Where a request's bytes belong, from the filesystem's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockClass {
    /// Not classified (an imported trace with no layout, or classification not run).
    Unknown,
    /// Contents of a regular file.
    Data,
    /// Filesystem metadata outside the journal: inodes, bitmaps, extent trees, superblocks.
    Metadata,
    /// The filesystem's journal: ext4's jbd2 area or external journal device, the xfs log.
    FsJournal,
    /// A zero-byte flush request.
    Flush,
}

/// Role of a file whose data a request carries: what SQLite uses the file for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileRole {
    /// A SQLite database file (main or attached).
    Database,
    /// The WAL file (`-wal`).
    Wal,
    /// A rollback journal (`-journal`), including ones SQLite deleted after commit.
    RollbackJournal,
    /// Any other file (super-journal, temp files, a file workload's file).
    Other,
}

/// One block request as issued to the device, plus its classification.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TraceRecord {
    /// Issue time in nanoseconds on CLOCK_MONOTONIC (tracefs `mono` clock), or relative to the
    /// first record of an imported trace.
    pub time_ns: u64,
    /// Device as `major:minor`, e.g. `"7:0"`.
    pub dev: String,
    pub op: Op,
    /// Preceded by a cache flush (`REQ_PREFLUSH`, leading `F` in rwbs).
    pub preflush: bool,
    /// Forced unit access (`REQ_FUA`, `F` after the op letter).
    pub fua: bool,
    /// `REQ_SYNC` (`S`).
    pub sync: bool,
    /// `REQ_META` (`M`): the filesystem marked the request as metadata.
    pub meta: bool,
    /// First sector (512-byte units) on `dev`.
    pub sector: u64,
    /// Length in sectors.
    pub sectors: u64,
    /// Name of the task that issued the request (e.g. `jbd2/loop0-8`, `joj`).
    pub comm: String,
    /// Class after classification; `Unknown` before.
    pub class: BlockClass,
    /// For `Data`: the role of the file that holds (most of) the request's bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileRole>,
    /// When the request completed, on the same clock as `time_ns` (`block_rq_complete`, blkparse
    /// `C`); `None` when no completion was captured ([`crate::completions`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_ns: Option<u64>,
}

/// A request's completion as the kernel reported it: enough to find the request it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub time_ns: u64,
    pub dev: String,
    pub op: Op,
    pub sector: u64,
    pub sectors: u64,
}

impl TraceRecord {
    /// An unclassified synchronous request with no other flags, issued by `joj`: the common
    /// shape of synthetic traces and tests. Set the other fields on the result as needed.
    pub fn new(time_ns: u64, dev: &str, op: Op, sector: u64, sectors: u64) -> TraceRecord {
        TraceRecord {
            time_ns,
            dev: dev.to_string(),
            op,
            preflush: false,
            fua: false,
            sync: true,
            meta: false,
            sector,
            sectors,
            comm: "joj".to_string(),
            class: BlockClass::Unknown,
            file: None,
            complete_ns: None,
        }
    }

    /// The sector after the request's last (saturating), for a request with an address (a
    /// read, write or discard); 0 for a flush or another operation, whose sector names no
    /// place (a trace may give it any number, and a device is not sized by it).
    pub fn addressed_end(&self) -> u64 {
        match self.op {
            Op::Read | Op::Write | Op::Discard => self.sector.saturating_add(self.sectors),
            Op::Flush | Op::Other => 0,
        }
    }

    /// Size of the request in bytes.
    pub fn bytes(&self) -> u64 {
        self.sectors * SECTOR_BYTES
    }

    /// Whether the request makes the device flush its volatile cache: a pure flush or a
    /// write with a preflush.
    pub fn is_flush(&self) -> bool {
        self.op == Op::Flush || self.preflush
    }

    /// A request as `block_rq_issue` gives it, not yet classified; `None` when `rwbs` names no
    /// operation ([`parse_rwbs`](Self::parse_rwbs)).
    pub fn issued(
        time_ns: u64,
        dev: String,
        rwbs: &str,
        (sector, sectors): (u64, u64),
        comm: String,
    ) -> Option<TraceRecord> {
        let (op, preflush, fua, sync, meta) = Self::parse_rwbs(rwbs)?;
        Some(TraceRecord {
            time_ns,
            dev,
            op,
            preflush,
            fua,
            sync,
            meta,
            sector,
            sectors,
            comm,
            class: BlockClass::Unknown,
            file: None,
            complete_ns: None,
        })
    }

    /// Parse the kernel's `rwbs` string (e.g. `"WS"`, `"FWFS"`, `"F"`, `"RM"`) into
    /// `(op, preflush, fua, sync, meta)`. Returns `None` if no op letter is found.
    pub fn parse_rwbs(rwbs: &str) -> Option<(Op, bool, bool, bool, bool)> {
        let b = rwbs.as_bytes();
        let mut i = 0;
        let mut preflush = false;
        // A leading F is a preflush when an op letter follows; "F" alone is a flush, and "FF" is
        // the block layer's flush request carrying REQ_PREFLUSH (still one flush).
        if b.first() == Some(&b'F')
            && b.len() > 1
            && matches!(b[1], b'W' | b'R' | b'D' | b'N' | b'F')
        {
            preflush = true;
            i = 1;
        }
        let op = match b.get(i)? {
            b'W' => Op::Write,
            b'R' => Op::Read,
            b'F' => Op::Flush,
            b'D' => Op::Discard,
            b'N' => Op::Other,
            _ => return None,
        };
        i += 1;
        if op == Op::Discard && b.get(i) == Some(&b'E') {
            i += 1;
        }
        let (mut fua, mut sync, mut meta) = (false, false, false);
        for &c in &b[i..] {
            match c {
                b'F' => fua = true,
                b'S' => sync = true,
                b'M' => meta = true,
                b'A' => {}
                _ => {}
            }
        }
        Some((op, preflush, fua, sync, meta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rwbs_strings_parse_as_the_kernel_writes_them() {
        assert_eq!(
            TraceRecord::parse_rwbs("WS"),
            Some((Op::Write, false, false, true, false))
        );
        assert_eq!(
            TraceRecord::parse_rwbs("FWFS"),
            Some((Op::Write, true, true, true, false))
        );
        assert_eq!(
            TraceRecord::parse_rwbs("WFS"),
            Some((Op::Write, false, true, true, false))
        );
        assert_eq!(
            TraceRecord::parse_rwbs("F"),
            Some((Op::Flush, false, false, false, false))
        );
        assert_eq!(
            TraceRecord::parse_rwbs("FF"),
            Some((Op::Flush, true, false, false, false))
        );
        assert_eq!(
            TraceRecord::parse_rwbs("RM"),
            Some((Op::Read, false, false, false, true))
        );
        assert_eq!(
            TraceRecord::parse_rwbs("D"),
            Some((Op::Discard, false, false, false, false))
        );
        assert_eq!(TraceRecord::parse_rwbs(""), None);
    }
}
