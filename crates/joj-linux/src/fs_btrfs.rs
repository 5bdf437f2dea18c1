//! btrfs addresses data by a filesystem-wide *logical* address, and FIEMAP reports those, not
//! device offsets. The chunk tree maps logical ranges (chunks) to one stripe per copy on the
//! device. This module reads that map with `btrfs inspect-internal dump-tree -t chunk` and
//! translates logical byte ranges to device byte ranges.
//!
//! Chunks are allocated as the filesystem fills, so read the map after the data of interest is
//! written and synced, not once after mkfs. joj's scratch btrfs has a single device with
//! `single` data and `DUP` metadata, so a stripe is a whole copy; striped profiles (RAID0/10/5/6)
//! are refused rather than mapped wrongly.

use std::os::fd::AsRawFd;
use std::path::Path;

use crate::cmd::{self, CommandError};
use crate::tools::OutputUnparsable;

/// `BLKFLSBUF`: write back and drop the block device's page cache, so dump-tree reads what
/// the mounted filesystem has written rather than stale blocks cached by an earlier read.
const BLKFLSBUF: libc::c_ulong = 0x1261;

/// One chunk: `length` bytes of logical space starting at `logical`, stored at each of
/// `stripe_offsets` on the (single) device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BtrfsChunk {
    pub logical: u64,
    pub length: u64,
    /// The chunk's type, e.g. `DATA|single`, `METADATA|DUP`.
    pub kind: String,
    /// Device byte offset of each copy.
    pub stripe_offsets: Vec<u64>,
}

/// Reading or using the chunk map failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BtrfsMapError {
    #[error("reading the btrfs chunk tree failed: {0}")]
    Tool(#[from] CommandError),
    #[error(
        "cannot flush the page cache of {device}: {source}; fix: run as root, on the scratch filesystem's own device"
    )]
    Flush {
        device: String,
        source: std::io::Error,
    },
    #[error("cannot understand the btrfs chunk tree: {detail}; fix: report the dump-tree output")]
    Unparsable { detail: String },
    #[error(
        "logical range {logical}+{length} is not in any single/DUP chunk; fix: sync before \
         mapping, and use a single-device btrfs without striped profiles"
    )]
    Unmapped { logical: u64, length: u64 },
}

/// Reads the chunk map of the btrfs on `device` (mounted or not).
pub fn read_chunk_map(device: &Path) -> Result<Vec<BtrfsChunk>, BtrfsMapError> {
    let flush_err = |source| BtrfsMapError::Flush {
        device: device.display().to_string(),
        source,
    };
    let f = std::fs::File::open(device).map_err(flush_err)?;
    // SAFETY: BLKFLSBUF takes no argument.
    if unsafe { libc::ioctl(f.as_raw_fd(), BLKFLSBUF as _) } < 0 {
        return Err(flush_err(std::io::Error::last_os_error()));
    }
    drop(f);
    let args = [
        "inspect-internal".into(),
        "dump-tree".into(),
        "-t".into(),
        "chunk".into(),
        device.display().to_string(),
    ];
    let text = cmd::run("btrfs", args)?;
    parse_chunk_tree(&text).map_err(|e| BtrfsMapError::Unparsable {
        detail: e.to_string(),
    })
}

/// Parses `btrfs inspect-internal dump-tree -t chunk` output.
pub fn parse_chunk_tree(text: &str) -> Result<Vec<BtrfsChunk>, OutputUnparsable> {
    let mut chunks: Vec<BtrfsChunk> = Vec::new();
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let bad = |what| OutputUnparsable {
            what,
            near: line.to_string(),
        };
        if line.starts_with("item ") && line.contains("CHUNK_ITEM") {
            // item 1 key (FIRST_CHUNK_TREE CHUNK_ITEM 13631488) itemoff 16105 itemsize 80
            let pos = words
                .iter()
                .position(|w| *w == "CHUNK_ITEM")
                .ok_or_else(|| bad("no CHUNK_ITEM"))?;
            let logical = words
                .get(pos + 1)
                .and_then(|w| w.trim_end_matches(')').parse().ok())
                .ok_or_else(|| bad("bad chunk key"))?;
            chunks.push(BtrfsChunk {
                logical,
                length: 0,
                kind: String::new(),
                stripe_offsets: Vec::new(),
            });
        } else if let Some(chunk) = chunks.last_mut() {
            let value_after = |key: &str| {
                words
                    .iter()
                    .position(|w| *w == key)
                    .and_then(|i| words.get(i + 1))
                    .copied()
            };
            if line.starts_with("length ") {
                chunk.length = value_after("length")
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| bad("bad length"))?;
                chunk.kind = value_after("type").unwrap_or_default().to_string();
            } else if line.starts_with("stripe ") {
                let offset = value_after("offset")
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| bad("bad stripe"))?;
                chunk.stripe_offsets.push(offset);
            }
        }
    }
    if let Some(c) = chunks
        .iter()
        .find(|c| c.length == 0 || c.stripe_offsets.is_empty())
    {
        return Err(OutputUnparsable {
            what: "a chunk has no length or stripes",
            near: format!("chunk at {}", c.logical),
        });
    }
    Ok(chunks)
}

/// Device byte ranges `(offset, length)` holding logical range `[logical, logical + length)`:
/// one range per copy per chunk crossed.
pub fn map_logical(
    chunks: &[BtrfsChunk],
    logical: u64,
    length: u64,
) -> Result<Vec<(u64, u64)>, BtrfsMapError> {
    let unmapped = || BtrfsMapError::Unmapped { logical, length };
    let mut out = Vec::new();
    let (mut at, end) = (logical, logical + length);
    while at < end {
        let chunk = chunks
            .iter()
            .find(|c| c.logical <= at && at < c.logical + c.length)
            .ok_or_else(unmapped)?;
        let striped = ["RAID0", "RAID10", "RAID5", "RAID6"]
            .iter()
            .any(|p| chunk.kind.contains(p));
        if striped {
            return Err(unmapped());
        }
        let piece = (chunk.logical + chunk.length).min(end) - at;
        for &offset in &chunk.stripe_offsets {
            out.push((offset + (at - chunk.logical), piece));
        }
        at += piece;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured on this machine from a fresh 300 MiB btrfs (btrfs-progs 6.2).
    const DUMP: &str = "btrfs-progs v6.2
chunk tree
leaf 22036480 items 4 free space 15781 generation 6 owner CHUNK_TREE
	item 0 key (DEV_ITEMS DEV_ITEM 1) itemoff 16185 itemsize 98
		devid 1 total_bytes 314572800 bytes_used 92274688
		io_align 4096 io_width 4096 sector_size 4096 type 0
	item 1 key (FIRST_CHUNK_TREE CHUNK_ITEM 13631488) itemoff 16105 itemsize 80
		length 8388608 owner 2 stripe_len 65536 type DATA|single
		io_align 65536 io_width 65536 sector_size 4096
		num_stripes 1 sub_stripes 1
			stripe 0 devid 1 offset 13631488
			dev_uuid e6951514-493b-4c94-9774-d560502c2bed
	item 3 key (FIRST_CHUNK_TREE CHUNK_ITEM 30408704) itemoff 15881 itemsize 112
		length 33554432 owner 2 stripe_len 65536 type METADATA|DUP
		io_align 65536 io_width 65536 sector_size 4096
		num_stripes 2 sub_stripes 1
			stripe 0 devid 1 offset 38797312
			dev_uuid e6951514-493b-4c94-9774-d560502c2bed
			stripe 1 devid 1 offset 72351744
			dev_uuid e6951514-493b-4c94-9774-d560502c2bed
";

    #[test]
    fn chunk_tree_dump_parses_and_maps_single_and_dup() {
        let chunks = parse_chunk_tree(DUMP).unwrap();
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].kind, "DATA|single");
        assert_eq!(
            map_logical(&chunks, 13631488 + 4096, 8192).unwrap(),
            vec![(13631488 + 4096, 8192)]
        );
        assert_eq!(
            map_logical(&chunks, 30408704, 16384).unwrap(),
            vec![(38797312, 16384), (72351744, 16384)]
        );
        assert!(map_logical(&chunks, 0, 4096).is_err());
    }
}
