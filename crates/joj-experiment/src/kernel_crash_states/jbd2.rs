//! Where an ext4 image keeps its jbd2 journal, and what the kernel's journal recovery will
//! replay from it: pure parsing of a [`SparseImage`] (no mount, no tool).
//!
//! The journal's place comes from the superblock's backup of the journal inode's block map
//! (`s_jnl_blocks`, ext4's `EXT3_JNL_BACKUP_BLOCKS`): an extent tree whose root lives in those
//! 60 bytes. The replay walk follows jbd2's recovery scan (`do_one_pass`, `PASS_SCAN`): from the
//! journal superblock's `s_start` and `s_sequence`, block headers of consecutive sequence
//! numbers; each descriptor's tags name the home blocks its data blocks go to; a transaction
//! counts only when its commit block is found. Layouts: the kernel's `fs/ext4/ext4.h`,
//! `include/linux/jbd2.h` (ext4 little-endian, jbd2 big-endian).
//!
//! Invariant: a malformed image is an `Err` naming the field, never a panic.

use joj_linux::record::{BLOCK_BYTES, SparseImage};
use serde::{Deserialize, Serialize};

/// Offset of the ext4 superblock.
const SB_OFFSET: u64 = 1024;
const EXT4_FEATURE_COMPAT_HAS_JOURNAL: u32 = 0x4;
const EXT3_JNL_BACKUP_BLOCKS: u8 = 1;
const EXTENT_MAGIC: u16 = 0xF30A;
/// jbd2 block header magic.
pub const JBD2_MAGIC: u32 = 0xC03B_3998;
pub const JBD2_DESCRIPTOR: u32 = 1;
pub const JBD2_COMMIT: u32 = 2;
pub const JBD2_REVOKE: u32 = 5;
const JBD2_INCOMPAT_64BIT: u32 = 0x2;
const JBD2_INCOMPAT_CSUM_V2: u32 = 0x8;
const JBD2_INCOMPAT_CSUM_V3: u32 = 0x10;
const JBD2_FLAG_SAME_UUID: u32 = 0x2;
const JBD2_FLAG_LAST_TAG: u32 = 0x8;

/// Most blocks a journal may have: 32,768 (128 MiB), the largest journal mke2fs makes by
/// default (`ext2fs_default_journal_size`, e2fsprogs `lib/ext2fs/mkjournal.c`) for any
/// filesystem of up to 16 GiB ([`super::from_log::MAX_DEVICE_BYTES`]); joj's own runs, on
/// 64–300 MiB images, get 1,024 or 4,096. With `fast_commit` (an `mke2fs.conf` may turn it on)
/// mke2fs adds a 64th for its area: 33,280. The mount-cost model writes every journal block
/// into its in-memory device once.
pub const MAX_JOURNAL_BLOCKS: u64 = 32_768 + 32_768 / 64;
/// Filesystem blocks of the largest device joj makes crash images of (16 GiB,
/// `from_log::MAX_DEVICE_BYTES`; the parent module asserts the two agree).
pub const MAX_DEVICE_BLOCKS: u64 = (16 << 30) / BLOCK_BYTES;

/// One run of the journal inode: `blocks` journal blocks from logical `logical` at filesystem
/// block `physical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub logical: u64,
    pub physical: u64,
    pub blocks: u64,
}

/// The journal's place on the device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    pub runs: Vec<Run>,
}

impl Journal {
    /// Checks the journal is one a run can locate: runs of at least one block that follow one
    /// another from journal block 0, each within the largest device
    /// ([`MAX_DEVICE_BLOCKS`]), at most [`MAX_JOURNAL_BLOCKS`] in all. Returns its blocks.
    pub fn check(&self) -> Result<u64, JournalShapeError> {
        if self.runs.is_empty() {
            return Err(JournalShapeError::NoRuns);
        }
        let mut blocks = 0u64;
        for (run, r) in self.runs.iter().enumerate() {
            if r.blocks == 0 {
                return Err(JournalShapeError::EmptyRun { run });
            }
            if r.logical != blocks {
                return Err(JournalShapeError::Gap {
                    run,
                    logical: r.logical,
                    expected: blocks,
                });
            }
            blocks = blocks.saturating_add(r.blocks);
            if blocks > MAX_JOURNAL_BLOCKS {
                return Err(JournalShapeError::TooLarge {
                    blocks,
                    max: MAX_JOURNAL_BLOCKS,
                });
            }
            let end = r.physical.saturating_add(r.blocks);
            if end > MAX_DEVICE_BLOCKS {
                return Err(JournalShapeError::BeyondDevice {
                    run,
                    end,
                    max: MAX_DEVICE_BLOCKS,
                });
            }
        }
        Ok(blocks)
    }

    /// Journal blocks in all its runs.
    pub fn blocks(&self) -> u64 {
        self.runs.iter().map(|r| r.blocks).sum()
    }

    /// The byte offset of journal block `logical`, if the journal has it.
    pub fn offset_of(&self, logical: u64) -> Option<u64> {
        self.runs
            .iter()
            .find(|r| (r.logical..r.logical + r.blocks).contains(&logical))
            .map(|r| (r.physical + logical - r.logical) * BLOCK_BYTES)
    }

    /// The journal block at byte `offset` of the device, if it is one.
    pub fn block_at(&self, offset: u64) -> Option<u64> {
        let block = offset / BLOCK_BYTES;
        self.runs
            .iter()
            .find(|r| (r.physical..r.physical + r.blocks).contains(&block))
            .map(|r| r.logical + block - r.physical)
    }
}

/// How a journal's runs differ from any a run locates ([`Journal::check`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JournalShapeError {
    #[error("the journal has no runs")]
    NoRuns,
    #[error("journal run {run} holds no block")]
    EmptyRun { run: usize },
    #[error(
        "journal run {run} starts at journal block {logical}, and the runs before it end at \
         block {expected}: a journal's runs follow one another from block 0"
    )]
    Gap {
        run: usize,
        logical: u64,
        expected: u64,
    },
    #[error(
        "the journal holds {blocks} blocks or more, beyond the {max} mke2fs gives any \
         filesystem of up to 16 GiB (32768, 128 MiB, and a 64th more for a fast-commit area)"
    )]
    TooLarge { blocks: u64, max: u64 },
    #[error(
        "journal run {run} ends at filesystem block {end}, beyond the {max} blocks of the \
         largest device joj makes crash images of (16 GiB)"
    )]
    BeyondDevice { run: usize, end: u64, max: u64 },
}

/// What the image's journal is not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Jbd2Error {
    #[error("not an ext4 image with a journal: {0}")]
    NoJournal(&'static str),
    #[error("the journal inode's extent tree is malformed: {0}")]
    BadExtents(String),
    #[error("the journal inode's extents are not a journal's: {0}")]
    Shape(#[from] JournalShapeError),
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// The journal of the ext4 image `image` (4 KiB blocks).
pub fn locate(image: &SparseImage) -> Result<Journal, Jbd2Error> {
    let mut sb = [0u8; 1024];
    image.read(SB_OFFSET, &mut sb);
    if le16(&sb, 0x38) != 0xEF53 {
        return Err(Jbd2Error::NoJournal("no ext4 superblock magic"));
    }
    // s_log_block_size: the block size is 1024 << it; 2 is 4 KiB.
    if le32(&sb, 0x18) != 2 {
        return Err(Jbd2Error::NoJournal("the block size is not 4 KiB"));
    }
    if le32(&sb, 0x5C) & EXT4_FEATURE_COMPAT_HAS_JOURNAL == 0 || le32(&sb, 0xE0) == 0 {
        return Err(Jbd2Error::NoJournal(
            "no internal journal (has_journal off)",
        ));
    }
    if sb[0xFD] != EXT3_JNL_BACKUP_BLOCKS {
        return Err(Jbd2Error::NoJournal(
            "no backup of the journal inode's blocks",
        ));
    }
    let mut runs = Vec::new();
    let mut entries_left = 2 * MAX_JOURNAL_BLOCKS;
    walk_extents(
        image,
        &sb[0x10C..0x10C + 60],
        0,
        &mut entries_left,
        &mut runs,
    )?;
    runs.sort_by_key(|r| r.logical);
    if runs.is_empty() {
        return Err(Jbd2Error::BadExtents("no extents".into()));
    }
    let journal = Journal { runs };
    journal.check()?;
    Ok(journal)
}

/// Collects the leaf extents of the tree node `node` (a header and its entries).
fn walk_extents(
    image: &SparseImage,
    node: &[u8],
    depth_seen: u16,
    entries_left: &mut u64,
    out: &mut Vec<Run>,
) -> Result<(), Jbd2Error> {
    if le16(node, 0) != EXTENT_MAGIC {
        return Err(Jbd2Error::BadExtents("bad extent header magic".into()));
    }
    let (entries, depth) = (le16(node, 2) as usize, le16(node, 6));
    if depth > 5 || depth_seen > 5 || 12 + entries * 12 > node.len() {
        return Err(Jbd2Error::BadExtents(format!(
            "{entries} entries at depth {depth} do not fit"
        )));
    }
    for i in 0..entries {
        // Each leaf entry holds a block at least and each index entry leads to one, so a
        // journal's tree has at most twice as many entries as blocks: a tree with more is no
        // journal's, however its nodes repeat.
        *entries_left = entries_left.checked_sub(1).ok_or_else(|| {
            Jbd2Error::BadExtents(format!(
                "more than {} extent entries",
                2 * MAX_JOURNAL_BLOCKS
            ))
        })?;
        let e = &node[12 + i * 12..24 + i * 12];
        if depth == 0 {
            let len = le16(e, 4) as u64;
            let len = if len > 32768 { len - 32768 } else { len };
            let physical = (le16(e, 6) as u64) << 32 | le32(e, 8) as u64;
            out.push(Run {
                logical: le32(e, 0) as u64,
                physical,
                blocks: len,
            });
        } else {
            let leaf = (le16(e, 8) as u64) << 32 | le32(e, 4) as u64;
            let mut block = vec![0u8; BLOCK_BYTES as usize];
            image.read(leaf * BLOCK_BYTES, &mut block);
            walk_extents(image, &block, depth_seen + 1, entries_left, out)?;
        }
    }
    Ok(())
}

/// What the kernel's recovery of an image's journal will do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Replay {
    /// Journal block where the scan starts (`s_start`).
    pub start: u64,
    /// The log's first block and its length in blocks (`s_first`, `s_maxlen`): the scan wraps
    /// from the end back to `first`.
    pub first: u64,
    pub maxlen: u64,
    /// Committed transactions found after the journal's tail.
    pub transactions: u64,
    /// Journal blocks the scan reads (descriptor, data, revoke and commit blocks, and the
    /// block that ends the scan).
    pub journal_blocks_read: u64,
    /// Blocks written to their home locations (one per tag of a committed transaction).
    pub home_blocks_written: u64,
    /// Those home blocks (filesystem block numbers), in replay order.
    #[serde(skip)]
    pub home_blocks: Vec<u64>,
}

/// The replay of `image`'s journal (none when the journal is clean: `s_start` = 0).
pub fn replay(image: &SparseImage, journal: &Journal) -> Replay {
    let block = |logical: u64| -> Option<Vec<u8>> {
        let at = journal.offset_of(logical)?;
        let mut b = vec![0u8; BLOCK_BYTES as usize];
        image.read(at, &mut b);
        Some(b)
    };
    let Some(sb) = block(0) else {
        return Replay::default();
    };
    if be32(&sb, 0) != JBD2_MAGIC {
        return Replay::default();
    }
    let (maxlen, first, mut sequence, start) = (
        be32(&sb, 0x10),
        be32(&sb, 0x14),
        be32(&sb, 0x18),
        be32(&sb, 0x1C),
    );
    if start == 0 || first == 0 || maxlen <= first {
        return Replay::default();
    }
    let incompat = be32(&sb, 0x28);
    let tag_bytes = tag_bytes(incompat);
    let tail_bytes = if incompat & (JBD2_INCOMPAT_CSUM_V2 | JBD2_INCOMPAT_CSUM_V3) != 0 {
        4
    } else {
        0
    };
    let wrap = |b: u64| {
        if b >= maxlen as u64 {
            b - (maxlen - first) as u64
        } else {
            b
        }
    };
    let mut out = Replay {
        start: start as u64,
        first: first as u64,
        maxlen: maxlen as u64,
        ..Replay::default()
    };
    let (mut next, mut pending) = (start as u64, Vec::new());
    let high = incompat & JBD2_INCOMPAT_64BIT != 0;
    // Bounded: a full lap of the journal ends any scan, and no scan reads more blocks than
    // the journal holds (a real one reads at most a lap and the block that ends it), which a
    // merged part's counts are checked against.
    let size = journal.blocks();
    for _ in 0..maxlen {
        if out.journal_blocks_read >= size {
            break;
        }
        let Some(b) = block(next) else { break };
        out.journal_blocks_read += 1;
        if be32(&b, 0) != JBD2_MAGIC || be32(&b, 8) != sequence {
            break;
        }
        next = wrap(next + 1);
        match be32(&b, 4) {
            JBD2_DESCRIPTOR => {
                let homes = tags(&b, tag_bytes, tail_bytes, high);
                let tags = homes.len() as u64;
                if out.journal_blocks_read + tags > size {
                    break;
                }
                pending.extend(homes);
                out.journal_blocks_read += tags;
                next = wrap(next + tags);
            }
            JBD2_COMMIT => {
                out.transactions += 1;
                out.home_blocks_written += pending.len() as u64;
                out.home_blocks.append(&mut pending);
                sequence = sequence.wrapping_add(1);
            }
            JBD2_REVOKE => {}
            _ => break,
        }
    }
    out
}

/// Bytes of one descriptor tag (`journal_tag_bytes` in the kernel).
fn tag_bytes(incompat: u32) -> usize {
    if incompat & JBD2_INCOMPAT_CSUM_V3 != 0 {
        return 16;
    }
    let sz = 12
        + if incompat & JBD2_INCOMPAT_CSUM_V2 != 0 {
            2
        } else {
            0
        };
    if incompat & JBD2_INCOMPAT_64BIT != 0 {
        sz
    } else {
        sz - 4
    }
}

/// The home blocks a descriptor block's tags name (each tag: one data block that follows it).
fn tags(block: &[u8], tag_bytes: usize, tail_bytes: usize, high: bool) -> Vec<u64> {
    let end = block.len() - tail_bytes;
    let (mut at, mut tags) = (12usize, Vec::new());
    while at + tag_bytes <= end {
        // The flags: a be32 in tag3, a be16 at byte 6 otherwise.
        let flags = if tag_bytes == 16 {
            be32(block, at + 4)
        } else {
            u16::from_be_bytes([block[at + 6], block[at + 7]]) as u32
        };
        // t_blocknr, and t_blocknr_high at byte 8 with the 64-bit feature.
        let hi = if high { be32(block, at + 8) as u64 } else { 0 };
        tags.push(hi << 32 | be32(block, at) as u64);
        at += tag_bytes;
        if flags & JBD2_FLAG_SAME_UUID == 0 {
            at += 16;
        }
        if flags & JBD2_FLAG_LAST_TAG != 0 {
            break;
        }
    }
    tags
}

/// The jbd2 block type of a 4 KiB block, if it starts with a jbd2 header.
pub fn block_type(block: &[u8]) -> Option<u32> {
    (block.len() >= 12 && be32(block, 0) == JBD2_MAGIC).then(|| be32(block, 4))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(kind: u32, seq: u32) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK_BYTES as usize];
        b[0..4].copy_from_slice(&JBD2_MAGIC.to_be_bytes());
        b[4..8].copy_from_slice(&kind.to_be_bytes());
        b[8..12].copy_from_slice(&seq.to_be_bytes());
        b
    }

    /// A journal of 64 blocks at filesystem block 100, tail at 1, sequence 7: a committed
    /// transaction of 2 data blocks, then one of 1 data block without its commit.
    fn image() -> (SparseImage, Journal) {
        let journal = Journal {
            runs: vec![Run {
                logical: 0,
                physical: 100,
                blocks: 64,
            }],
        };
        let mut img = SparseImage::zeroed(1 << 20);
        let at = |l: u64| journal.offset_of(l).unwrap();
        let mut sb = header(4, 0);
        sb[0x0C..0x10].copy_from_slice(&4096u32.to_be_bytes());
        sb[0x10..0x14].copy_from_slice(&64u32.to_be_bytes());
        sb[0x14..0x18].copy_from_slice(&1u32.to_be_bytes());
        sb[0x18..0x1C].copy_from_slice(&7u32.to_be_bytes());
        sb[0x1C..0x20].copy_from_slice(&1u32.to_be_bytes());
        sb[0x28..0x2C].copy_from_slice(&(JBD2_INCOMPAT_CSUM_V3 | 0x2).to_be_bytes());
        img.write(at(0), &sb);
        let mut desc = header(JBD2_DESCRIPTOR, 7);
        // Tag 1 (with a UUID after it), tag 2 (same UUID, last).
        desc[12..16].copy_from_slice(&500u32.to_be_bytes());
        let t2 = 12 + 16 + 16;
        desc[t2..t2 + 4].copy_from_slice(&501u32.to_be_bytes());
        desc[t2 + 4..t2 + 8]
            .copy_from_slice(&(JBD2_FLAG_SAME_UUID | JBD2_FLAG_LAST_TAG).to_be_bytes());
        img.write(at(1), &desc);
        img.write(at(2), &[1u8; 4096]);
        img.write(at(3), &[2u8; 4096]);
        img.write(at(4), &header(JBD2_COMMIT, 7));
        let mut desc = header(JBD2_DESCRIPTOR, 8);
        desc[12 + 4..12 + 8].copy_from_slice(&JBD2_FLAG_LAST_TAG.to_be_bytes());
        img.write(at(5), &desc);
        img.write(at(6), &[3u8; 4096]);
        (img, journal)
    }

    #[test]
    fn the_scan_counts_committed_transactions_only() {
        let (img, journal) = image();
        let r = replay(&img, &journal);
        assert_eq!(r.transactions, 1);
        assert_eq!(r.home_blocks_written, 2);
        assert_eq!(r.home_blocks, vec![500, 501]);
        assert_eq!((r.start, r.first, r.maxlen), (1, 1, 64));
        // sb is not read by the scan; blocks 1..=6 and the zero block 7 that ends it.
        assert_eq!(r.journal_blocks_read, 7);
    }

    #[test]
    fn a_clean_journal_replays_nothing() {
        let (mut img, journal) = image();
        let mut sb = vec![0u8; 4096];
        img.read(journal.offset_of(0).unwrap(), &mut sb);
        sb[0x1C..0x20].copy_from_slice(&0u32.to_be_bytes());
        img.write(journal.offset_of(0).unwrap(), &sb);
        assert_eq!(replay(&img, &journal), Replay::default());
    }

    #[test]
    fn journal_blocks_map_both_ways() {
        let (_, journal) = image();
        assert_eq!(journal.offset_of(3), Some(103 * 4096));
        assert_eq!(journal.block_at(103 * 4096 + 512), Some(3));
        assert_eq!(journal.block_at(99 * 4096), None);
        assert_eq!(journal.offset_of(64), None);
    }

    #[test]
    fn a_scan_reads_no_more_blocks_than_the_journal_holds() {
        let journal = Journal {
            runs: vec![Run {
                logical: 0,
                physical: 100,
                blocks: 8,
            }],
        };
        let mut img = SparseImage::zeroed(1 << 20);
        let at = |l: u64| journal.offset_of(l).unwrap();
        let mut sb = header(4, 0);
        sb[0x10..0x14].copy_from_slice(&8u32.to_be_bytes());
        sb[0x14..0x18].copy_from_slice(&1u32.to_be_bytes());
        sb[0x18..0x1C].copy_from_slice(&7u32.to_be_bytes());
        sb[0x1C..0x20].copy_from_slice(&1u32.to_be_bytes());
        sb[0x28..0x2C].copy_from_slice(&JBD2_INCOMPAT_CSUM_V3.to_be_bytes());
        img.write(at(0), &sb);
        // A descriptor of 255 tags, none the last: more data blocks than the journal holds.
        let mut desc = header(JBD2_DESCRIPTOR, 7);
        for t in 0..255 {
            let o = 12 + t * 16;
            desc[o..o + 4].copy_from_slice(&(500 + t as u32).to_be_bytes());
            desc[o + 4..o + 8].copy_from_slice(&JBD2_FLAG_SAME_UUID.to_be_bytes());
        }
        img.write(at(1), &desc);
        let r = replay(&img, &journal);
        assert!(r.journal_blocks_read <= 8, "{r:?}");
        assert!(r.home_blocks_written <= r.journal_blocks_read, "{r:?}");
    }

    /// An ext4 superblock whose journal backup holds the extent tree `root` (60 bytes).
    fn superblock_with(root: &[u8]) -> Vec<u8> {
        let mut sb = vec![0u8; 1024];
        sb[0x18..0x1C].copy_from_slice(&2u32.to_le_bytes());
        sb[0x38..0x3A].copy_from_slice(&0xEF53u16.to_le_bytes());
        sb[0x5C..0x60].copy_from_slice(&EXT4_FEATURE_COMPAT_HAS_JOURNAL.to_le_bytes());
        sb[0xE0..0xE4].copy_from_slice(&8u32.to_le_bytes());
        sb[0xFD] = EXT3_JNL_BACKUP_BLOCKS;
        sb[0x10C..0x10C + root.len()].copy_from_slice(root);
        sb
    }

    /// An extent node header of `entries` entries at `depth`, then the entries.
    fn node(depth: u16, entries: &[[u8; 12]], bytes: usize) -> Vec<u8> {
        let mut n = vec![0u8; bytes];
        n[0..2].copy_from_slice(&EXTENT_MAGIC.to_le_bytes());
        n[2..4].copy_from_slice(&(entries.len() as u16).to_le_bytes());
        n[4..6].copy_from_slice(&(entries.len() as u16).to_le_bytes());
        n[6..8].copy_from_slice(&depth.to_le_bytes());
        for (i, e) in entries.iter().enumerate() {
            n[12 + i * 12..24 + i * 12].copy_from_slice(e);
        }
        n
    }

    fn leaf(logical: u32, blocks: u16, physical: u32) -> [u8; 12] {
        let mut e = [0u8; 12];
        e[0..4].copy_from_slice(&logical.to_le_bytes());
        e[4..6].copy_from_slice(&blocks.to_le_bytes());
        e[8..12].copy_from_slice(&physical.to_le_bytes());
        e
    }

    fn index(child: u32) -> [u8; 12] {
        let mut e = [0u8; 12];
        e[4..8].copy_from_slice(&child.to_le_bytes());
        e
    }

    #[test]
    fn located_extents_that_leave_a_gap_are_refused() {
        let mut img = SparseImage::zeroed(1 << 20);
        let root = node(0, &[leaf(0, 10, 100), leaf(20, 5, 200)], 60);
        img.write(SB_OFFSET, &superblock_with(&root));
        assert!(matches!(
            locate(&img),
            Err(Jbd2Error::Shape(JournalShapeError::Gap {
                run: 1,
                logical: 20,
                expected: 10
            }))
        ));
        let root = node(0, &[leaf(0, 10, 100), leaf(10, 5, 200)], 60);
        img.write(SB_OFFSET, &superblock_with(&root));
        assert_eq!(locate(&img).map(|j| j.blocks()), Ok(15));
    }

    #[test]
    fn an_extent_tree_of_more_entries_than_a_journal_has_blocks_is_refused() {
        // Four levels of 340 index entries each, every one leading to the next level's node,
        // over an empty leaf: 4 × 340^4 (5·10^10) nodes to read, and no block of a journal.
        let mut img = SparseImage::zeroed(1 << 20);
        let all = |child: u32| vec![index(child); 340];
        for level in 0..4u32 {
            img.write(
                u64::from(10 + level) * BLOCK_BYTES,
                &node(1, &all(11 + level), 4096),
            );
        }
        img.write(14 * BLOCK_BYTES, &node(0, &[], 4096));
        img.write(SB_OFFSET, &superblock_with(&node(5, &[index(10); 4], 60)));
        assert!(matches!(locate(&img), Err(Jbd2Error::BadExtents(_))));
    }

    #[test]
    fn an_image_without_ext4_is_refused() {
        assert!(matches!(
            locate(&SparseImage::zeroed(1 << 20)),
            Err(Jbd2Error::NoJournal(_))
        ));
    }
}
