//! The block-device contract (DESIGN.md, "Contracts between layers"): everything above the
//! device layer talks to this, so the same code runs on the emulated eMMC, on a host file and
//! on a fault-injecting device in tests.

use serde::{Deserialize, Serialize};

use crate::counters::Counters;
use crate::error::DeviceError;
use crate::xftl::Tid;

/// Flags of a write request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WriteFlags {
    /// Forced unit access: the write is durable when it completes (bypasses the volatile cache).
    pub fua: bool,
    /// eMMC reliable write: like FUA, and the request's pages are each old-or-new after a power
    /// loss — all of the command's together with `ReliableWriteAtomicity::Command` (Linux sends
    /// FUA writes to eMMC as reliable writes: `drivers/mmc/core/block.c`,
    /// docs/sources.md#linux-fua-on-emmc).
    pub reliable: bool,
}

impl WriteFlags {
    pub const NONE: WriteFlags = WriteFlags {
        fua: false,
        reliable: false,
    };
    pub const FUA: WriteFlags = WriteFlags {
        fua: true,
        reliable: false,
    };
    pub const RELIABLE: WriteFlags = WriteFlags {
        fua: false,
        reliable: true,
    };

    /// Whether the write must be durable on return.
    pub fn durable(self) -> bool {
        self.fua || self.reliable
    }
}

/// What a block device looks like from above.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceGeometry {
    pub capacity_bytes: u64,
    /// Addressing and alignment unit of requests.
    pub sector_bytes: u32,
    /// Preferred write unit (the NAND page): smaller or misaligned writes cost more.
    pub optimal_write_bytes: u32,
}

/// One write of a packed command.
#[derive(Debug, Clone, Copy)]
pub struct PackedWrite<'a> {
    pub offset_bytes: u64,
    pub data: &'a [u8],
}

/// A block device with a volatile write cache.
///
/// Offsets and lengths are in bytes and must be multiples of `geometry().sector_bytes`.
/// After an error that leaves the device's state unknown, it returns `DeviceError::Failed`
/// until reopened.
pub trait BlockDevice {
    fn geometry(&self) -> DeviceGeometry;

    fn read(&mut self, offset_bytes: u64, buf: &mut [u8]) -> Result<(), DeviceError>;

    fn write(
        &mut self,
        offset_bytes: u64,
        data: &[u8],
        flags: WriteFlags,
    ) -> Result<(), DeviceError>;

    /// Several writes in one command (eMMC packed write): one command overhead, each write
    /// as if issued alone.
    fn write_packed(
        &mut self,
        writes: &[PackedWrite<'_>],
        flags: WriteFlags,
    ) -> Result<(), DeviceError> {
        for w in writes {
            self.write(w.offset_bytes, w.data, flags)?;
        }
        Ok(())
    }

    /// Make every completed write durable.
    fn flush(&mut self) -> Result<(), DeviceError>;

    /// The range's contents are no longer needed; whole pages in it read as zeros afterwards
    /// (durable at the next flush).
    fn discard(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), DeviceError>;

    fn counters(&self) -> Counters;

    /// The host context (a thread) the next commands come from. Each issuer's command arrives
    /// when its previous one completed; commands of different issuers may be in flight
    /// together as far as the device's queue allows (`docs/device-model.md`, "Command queue").
    /// A device without a queue ignores it.
    fn set_issuer(&mut self, issuer: u32) {
        let _ = issuer;
    }

    /// When `issuer`'s next command would arrive (its last command's completion, or later if
    /// the host held the device idle), in the device's simulated time; `None` for a device
    /// without a command queue. A driver of several threads uses it to issue in device-time
    /// order.
    fn issuer_ready_ns(&self, issuer: u32) -> Option<u64> {
        let _ = issuer;
        None
    }
}

/// The data tag of a write (i-FTL, paper §IV.A): where its contents belong. A device without
/// NVM treats both alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteKind {
    /// File contents: programmed to flash.
    Data,
    /// Filesystem metadata (inodes, sizes, extents, superblock): kept in an NVM slot.
    Metadata,
}

/// A block device with X-FTL's transactions (DESIGN.md, "Transactional device";
/// `docs/formats/xftl.md`). Transactional requests cover whole pages.
///
/// A commit that returns is durable; an abort, or a power loss before the commit returned,
/// leaves every page the transaction wrote as it was. A transaction reads its own writes;
/// plain reads (and other transactions) read the committed version. A page is held by at most
/// one active transaction, and a plain write or discard of a held page is refused.
pub trait TransactionalDevice: BlockDevice {
    fn begin_txn(&mut self) -> Result<Tid, DeviceError>;
    fn write_txn(&mut self, tid: Tid, offset_bytes: u64, data: &[u8]) -> Result<(), DeviceError>;
    /// `write_txn` with the write's data tag, which a device with NVM uses to place it (i-FTL);
    /// by default the tag is dropped.
    fn write_txn_kind(
        &mut self,
        tid: Tid,
        offset_bytes: u64,
        data: &[u8],
        kind: WriteKind,
    ) -> Result<(), DeviceError> {
        let _ = kind;
        self.write_txn(tid, offset_bytes, data)
    }
    fn read_txn(&mut self, tid: Tid, offset_bytes: u64, buf: &mut [u8]) -> Result<(), DeviceError>;
    fn commit_txn(&mut self, tid: Tid) -> Result<(), DeviceError>;
    fn abort_txn(&mut self, tid: Tid) -> Result<(), DeviceError>;
}
