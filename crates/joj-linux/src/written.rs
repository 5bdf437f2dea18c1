//! Images on a disk written whole (`--image-dir DIR --loop-direct-io`; docs/measurement.md,
//! "Known limits"): after mkfs, zeros over every part of an image file that is not a written
//! extent of DIR's filesystem — its holes, and the unwritten extents that mkfs's zeroing leaves
//! (a loop device turns a zero-out into `fallocate(ZERO_RANGE)` on its file). Both read as
//! zeros, so the scratch filesystem's content does not change; what changes is that a first
//! write there no longer makes DIR's filesystem record a new extent, which the loop device's
//! next flush (an `fsync` of the image) would commit to DIR's journal: a cost no block device
//! has.
//!
//! Invariant: only bytes outside every written extent are written, and only whole 4 KiB blocks
//! inside such a gap ([`gaps`], a pure function), so no byte mkfs wrote is touched.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use crate::fiemap::{Extent, FiemapError, fiemap};

/// The alignment and granularity of the writes: `O_DIRECT` on any logical block size up to 4 KiB.
const BLOCK: u64 = 4096;
/// Bytes written per call.
const CHUNK: usize = 1 << 20;

/// The parts of a file of `size` bytes that no written extent covers, as `(offset, length)`,
/// shrunk to whole [`BLOCK`]s: a gap's first block rounds up and its end rounds down, so a
/// partial block next to a written extent is left as it is.
pub fn gaps(extents: &[Extent], size: u64) -> Vec<(u64, u64)> {
    let mut written: Vec<(u64, u64)> = extents
        .iter()
        .filter(|e| !e.is_unwritten())
        .map(|e| {
            (
                e.logical_bytes,
                e.logical_bytes.saturating_add(e.length_bytes),
            )
        })
        .collect();
    written.sort_unstable();
    let mut out = Vec::new();
    let mut at = 0u64;
    let mut push = |from: u64, to: u64| {
        let (a, b) = (from.next_multiple_of(BLOCK), to - to % BLOCK);
        if b > a {
            out.push((a, b - a));
        }
    };
    for (start, end) in written {
        if start > at {
            push(at, start.min(size));
        }
        at = at.max(end);
        if at >= size {
            break;
        }
    }
    if at < size {
        push(at, size);
    }
    out
}

/// Write zeros over the [`gaps`] of the image at `path` with `O_DIRECT`, then sync it; the bytes
/// written, or `None` (nothing written) where the file's filesystem does not map extents
/// (`EOPNOTSUPP`: its gaps cannot be told from its data). The file is synced first, so that
/// what mkfs wrote has its extents.
pub fn write_whole(path: &Path) -> std::io::Result<Option<u64>> {
    File::open(path)?.sync_all()?;
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT | libc::O_CLOEXEC)
        .open(path)?;
    let size = file.metadata()?.len();
    let extents = match fiemap(&file) {
        Ok(e) => e,
        Err(FiemapError::Ioctl { source }) if source.raw_os_error() == Some(libc::EOPNOTSUPP) => {
            return Ok(None);
        }
        Err(e) => return Err(std::io::Error::other(e)),
    };
    // mkfs always writes a superblock: a map with nothing written is not to be trusted with
    // zeros over the whole file.
    if !extents.iter().any(|e| !e.is_unwritten()) {
        return Err(std::io::Error::other(
            "FIEMAP lists no written extent of a formatted image; nothing was written",
        ));
    }
    // A zeroed buffer aligned to BLOCK for O_DIRECT: a Vec with room to slide to the boundary
    // (no allocator API needed).
    let raw = vec![0u8; CHUNK + BLOCK as usize];
    let skip = raw.as_ptr().align_offset(BLOCK as usize);
    let zeros = &raw[skip..skip + CHUNK];
    let mut total = 0u64;
    for (offset, len) in gaps(&extents, size) {
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(CHUNK as u64) as usize;
            file.write_all_at(&zeros[..n], offset + done)?;
            done += n as u64;
        }
        total += len;
    }
    file.sync_all()?;
    Ok(Some(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(logical: u64, len: u64, unwritten: bool) -> Extent {
        Extent {
            logical_bytes: logical,
            physical_bytes: logical,
            length_bytes: len,
            flags: if unwritten {
                crate::fiemap::flags::UNWRITTEN
            } else {
                0
            },
        }
    }

    #[test]
    fn gaps_are_the_holes_and_the_unwritten_extents_in_whole_blocks() {
        const K: u64 = 4096;
        // Written 0..2K, a hole, unwritten 4K..8K, written 8K..12K, a hole to the end (20K).
        let ext = [
            e(0, 2 * K, false),
            e(4 * K, 4 * K, true),
            e(8 * K, 4 * K, false),
        ];
        assert_eq!(gaps(&ext, 20 * K), vec![(2 * K, 6 * K), (12 * K, 8 * K)]);
        // Nothing written: all of it; everything written: nothing.
        assert_eq!(gaps(&[], 8 * K), vec![(0, 8 * K)]);
        assert_eq!(gaps(&[e(0, 8 * K, false)], 8 * K), Vec::<(u64, u64)>::new());
        // A written extent that ends inside a block: that block is left alone.
        assert_eq!(gaps(&[e(0, 100, false)], 3 * K), vec![(K, 2 * K)]);
        // Extents out of order, overlapping, and one past the end of the file.
        let ext = [e(6 * K, 4 * K, false), e(0, K, false), e(K / 2, K, false)];
        assert_eq!(gaps(&ext, 8 * K), vec![(2 * K, 4 * K)]);
    }
}
