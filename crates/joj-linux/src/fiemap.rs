//! Where a file's bytes are on disk, via the `FS_IOC_FIEMAP` ioctl.
//!
//! FIEMAP is asked *without* `FIEMAP_FLAG_SYNC`: callers sync first (a delayed-allocation extent
//! has no location yet), so mapping never triggers writeback inside a traced interval.
//!
//! The physical offsets are device byte offsets on ext4 and xfs. On btrfs they are btrfs
//! *logical* addresses; map them with [`crate::fs_btrfs`] (or use
//! [`crate::ScratchFs::file_extents`], which does).
//!
//! Some extents have no sectors of their own, and [`Extent::placement`] says so instead of
//! returning a wrong location: `UNKNOWN`/`DELALLOC` (not allocated yet — sync first),
//! `DATA_INLINE`/`NOT_ALIGNED`/`DATA_TAIL` (data packed inside a metadata block, which the
//! classifier must count as metadata), and `ENCODED` (compressed: the on-disk length differs
//! from the logical length, so a byte-for-byte mapping would be wrong).

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

use crate::dev::DevExtent;

const SECTOR_BYTES: u64 = joj_trace::record::SECTOR_BYTES;

/// `_IOWR('f', 11, struct fiemap)`.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// Extents asked for per ioctl call.
const EXTENTS_PER_CALL: usize = 256;

/// `FIEMAP_EXTENT_*` flags.
pub mod flags {
    pub const LAST: u32 = 0x1;
    pub const UNKNOWN: u32 = 0x2;
    pub const DELALLOC: u32 = 0x4;
    pub const ENCODED: u32 = 0x8;
    pub const DATA_ENCRYPTED: u32 = 0x80;
    pub const NOT_ALIGNED: u32 = 0x100;
    pub const DATA_INLINE: u32 = 0x200;
    pub const DATA_TAIL: u32 = 0x400;
    pub const UNWRITTEN: u32 = 0x800;
    pub const MERGED: u32 = 0x1000;
    pub const SHARED: u32 = 0x2000;
}

/// One extent of a file, as FIEMAP reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// Offset in the file.
    pub logical_bytes: u64,
    /// Offset on the device (btrfs: in the btrfs logical address space).
    pub physical_bytes: u64,
    pub length_bytes: u64,
    /// `FIEMAP_EXTENT_*` bits, see [`flags`].
    pub flags: u32,
}

/// Why an extent has no sectors of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unplaceable {
    #[error("not allocated yet (delayed allocation); sync the file before mapping it")]
    NotAllocated,
    #[error("data is stored inside a metadata block (inline or tail packing)")]
    InMetadata,
    #[error("data is compressed or otherwise encoded: its on-disk length is not its file length")]
    Encoded,
    #[error("physical offset is not sector aligned")]
    Misaligned,
}

impl Extent {
    /// The extent's first sector and length in sectors on the device, or why it has none.
    pub fn placement(&self) -> Result<(u64, u64), Unplaceable> {
        if self.flags & (flags::UNKNOWN | flags::DELALLOC) != 0 {
            return Err(Unplaceable::NotAllocated);
        }
        if self.flags & (flags::DATA_INLINE | flags::DATA_TAIL | flags::NOT_ALIGNED) != 0 {
            return Err(Unplaceable::InMetadata);
        }
        if self.flags & flags::ENCODED != 0 {
            return Err(Unplaceable::Encoded);
        }
        if !self.physical_bytes.is_multiple_of(SECTOR_BYTES) {
            return Err(Unplaceable::Misaligned);
        }
        Ok((
            self.physical_bytes / SECTOR_BYTES,
            self.length_bytes.div_ceil(SECTOR_BYTES),
        ))
    }

    /// Whether the extent is allocated but not yet written (reads return zeros).
    pub fn is_unwritten(&self) -> bool {
        self.flags & flags::UNWRITTEN != 0
    }
}

/// Converts the placeable extents to sector extents on `dev` (`major:minor`); the others are
/// returned with the reason they were left out.
pub fn to_dev_extents(
    extents: &[Extent],
    dev: &str,
) -> (Vec<DevExtent>, Vec<(Extent, Unplaceable)>) {
    let mut placed = Vec::new();
    let mut skipped = Vec::new();
    for e in extents {
        match e.placement() {
            Ok((sector, sectors)) => placed.push(DevExtent {
                dev: dev.to_string(),
                sector,
                sectors,
            }),
            Err(why) => skipped.push((*e, why)),
        }
    }
    (placed, skipped)
}

/// FIEMAP failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FiemapError {
    #[error("cannot open {path}: {source}; fix: check the path and that the file still exists")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "FS_IOC_FIEMAP failed: {source}; fix: use a filesystem that supports FIEMAP \
         (ext4, xfs, btrfs do)"
    )]
    Ioctl { source: std::io::Error },
}

/// The extents of the file at `path`.
pub fn fiemap_path(path: &Path) -> Result<Vec<Extent>, FiemapError> {
    let file = File::open(path).map_err(|source| FiemapError::Open {
        path: path.into(),
        source,
    })?;
    fiemap(&file)
}

/// `struct fiemap_extent`.
#[repr(C)]
#[derive(Clone, Copy)]
struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

/// `struct fiemap` with room for [`EXTENTS_PER_CALL`] extents.
#[repr(C)]
struct FiemapRequest {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
    fm_extents: [FiemapExtent; EXTENTS_PER_CALL],
}

const _: () = assert!(std::mem::size_of::<FiemapExtent>() == 56);
const _: () = assert!(std::mem::offset_of!(FiemapRequest, fm_extents) == 32);

/// The extents of an open file, in file order. Holes are simply absent.
pub fn fiemap(file: impl AsFd) -> Result<Vec<Extent>, FiemapError> {
    let fd = file.as_fd();
    let empty = FiemapExtent {
        fe_logical: 0,
        fe_physical: 0,
        fe_length: 0,
        fe_reserved64: [0; 2],
        fe_flags: 0,
        fe_reserved: [0; 3],
    };
    let mut req = Box::new(FiemapRequest {
        fm_start: 0,
        fm_length: 0,
        fm_flags: 0,
        fm_mapped_extents: 0,
        fm_extent_count: 0,
        fm_reserved: 0,
        fm_extents: [empty; EXTENTS_PER_CALL],
    });
    let mut extents = Vec::new();
    let mut start = 0u64;
    loop {
        req.fm_start = start;
        req.fm_length = u64::MAX - start;
        req.fm_flags = 0; // no FIEMAP_FLAG_SYNC: callers sync first
        req.fm_mapped_extents = 0;
        req.fm_extent_count = EXTENTS_PER_CALL as u32;
        // SAFETY: `req` is a `struct fiemap` followed by room for exactly `fm_extent_count`
        // extents, which is all the kernel writes.
        let rc = unsafe {
            libc::ioctl(
                fd.as_raw_fd(),
                FS_IOC_FIEMAP as _,
                &mut *req as *mut FiemapRequest,
            )
        };
        if rc < 0 {
            return Err(FiemapError::Ioctl {
                source: std::io::Error::last_os_error(),
            });
        }
        let mapped = req.fm_mapped_extents as usize;
        assert!(
            mapped <= EXTENTS_PER_CALL,
            "kernel mapped more extents than asked for"
        );
        if mapped == 0 {
            return Ok(extents);
        }
        let mut last = false;
        for fe in &req.fm_extents[..mapped] {
            let e = Extent {
                logical_bytes: fe.fe_logical,
                physical_bytes: fe.fe_physical,
                length_bytes: fe.fe_length,
                flags: fe.fe_flags,
            };
            last = e.flags & flags::LAST != 0;
            start = e.logical_bytes + e.length_bytes;
            extents.push(e);
        }
        if last {
            return Ok(extents);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_refuses_extents_without_own_sectors() {
        let e = |flags| Extent {
            logical_bytes: 0,
            physical_bytes: 8192,
            length_bytes: 5000,
            flags,
        };
        assert_eq!(e(flags::LAST).placement(), Ok((16, 10)));
        assert_eq!(e(flags::UNWRITTEN).placement(), Ok((16, 10)));
        assert_eq!(
            e(flags::DELALLOC | flags::UNKNOWN).placement(),
            Err(Unplaceable::NotAllocated)
        );
        assert_eq!(
            e(flags::DATA_INLINE | flags::NOT_ALIGNED).placement(),
            Err(Unplaceable::InMetadata)
        );
        assert_eq!(e(flags::ENCODED).placement(), Err(Unplaceable::Encoded));
        let odd = Extent {
            physical_bytes: 100,
            ..e(0)
        };
        assert_eq!(odd.placement(), Err(Unplaceable::Misaligned));
        let (placed, skipped) = to_dev_extents(&[e(0), e(flags::DELALLOC)], "7:0");
        assert_eq!(
            placed,
            vec![DevExtent {
                dev: "7:0".into(),
                sector: 16,
                sectors: 10
            }]
        );
        assert_eq!(skipped.len(), 1);
    }

    #[test]
    fn fiemap_of_an_empty_file_is_empty() {
        let f = tempfile::tempfile().unwrap();
        match fiemap(&f) {
            Ok(ext) => assert!(ext.is_empty()),
            // tmpfs and some others have no FIEMAP; nothing to check there.
            Err(FiemapError::Ioctl { .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }
}
