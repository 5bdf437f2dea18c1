//! Unlinks the BPF observer saw, paired with the extents ext4 freed ([`super::bpf_opens`]): what
//! a FIEMAP at the unlink's stop read before the file let go of its blocks, read instead as the
//! filesystem frees them. Pure: no I/O.
//!
//! An unlink's record names the path and the inode ext4 unlinked; ext4's records name the
//! inode and the extents it freed — inside the unlink (their records come before the unlink's,
//! which is written at its exit), or later, at the last close of a file still open. So an
//! inode is *claimed* by its unlink until ext4 frees the inode (its number may then name another
//! file), and extents freed of an inode no unlink has claimed yet are kept a while
//! ([`KEPT_NS`]) for the unlink whose record comes after them. Extents freed before the unlink
//! began (a truncate's, which its own stop maps) are never taken for it. Everything is kept by
//! inode and bounded; what the bounds drop is counted ([`Unlinks::dropped`]).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// The ext4 filesystem whose unlinks the BPF observer takes without a stop: the extents each
/// unlinked file gives up are read as ext4 frees them (`ext4_remove_blocks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreedBlocks {
    /// Its device (`st_dev`).
    pub dev: u64,
    /// Its block size.
    pub block_bytes: u64,
}

/// How long extents no unlink claimed are kept: an unlink's record comes after the extents it
/// freed, read in the same or the next reads of the ring (at most 100 ms apart).
pub(crate) const KEPT_NS: u64 = 1_000_000_000;

/// Blocks ext4 freed of one extent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FreedExtent {
    pub(crate) time_ns: u64,
    pub(crate) physical_block: u64,
    pub(crate) logical_block: u64,
    pub(crate) blocks: u64,
}

impl FreedExtent {
    /// As FIEMAP gives it, for blocks of `block_bytes`.
    pub(crate) fn extent(&self, block_bytes: u64) -> crate::Extent {
        crate::Extent {
            logical_bytes: self.logical_block * block_bytes,
            physical_bytes: self.physical_block * block_bytes,
            length_bytes: self.blocks * block_bytes,
            flags: 0,
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Unlinks {
    /// Inodes unlinked and not yet freed, by the path the command unlinked them by (at most
    /// [`KEPT`]).
    claims: HashMap<u64, PathBuf>,
    /// Extents freed of inodes no unlink had claimed, by inode, and the order they came in.
    unclaimed: HashMap<u64, Vec<FreedExtent>>,
    unclaimed_order: VecDeque<(u64, u64)>,
    /// Inodes freed lately, and when: an unlink that freed its inode inside the call claims
    /// nothing after it (the number may already name the next file).
    inodes_freed: HashMap<u64, u64>,
    inodes_freed_order: VecDeque<(u64, u64)>,
    /// Extents, claims and freed inodes dropped at the bounds: what the caller must say it
    /// could not see.
    dropped: u64,
}

/// Entries of each kind kept at most.
const KEPT: usize = 65_536;

impl Unlinks {
    /// The command unlinked `ino` as `path`, from `enter_ns`: the extents it freed inside the
    /// call (already seen), which are the file's.
    pub(crate) fn unlinked(&mut self, path: &Path, ino: u64, enter_ns: u64) -> Vec<FreedExtent> {
        let freed_inside = self.inodes_freed.get(&ino).is_some_and(|t| *t >= enter_ns);
        if !freed_inside {
            // Still open somewhere (its blocks are freed at its last close), or another link
            // is left (then nothing is freed, and the claim ends at the bound or the run's end).
            if self.claims.len() < KEPT || self.claims.contains_key(&ino) {
                self.claims.insert(ino, path.to_path_buf());
            } else {
                self.dropped += 1;
            }
        }
        let mut mine = self.unclaimed.remove(&ino).unwrap_or_default();
        // The older ones (a truncate's, which its stop mapped) are nobody's.
        mine.retain(|e| e.time_ns >= enter_ns);
        mine
    }

    /// ext4 freed `e` of `ino`: the path of the unlink that claimed it, if one did.
    pub(crate) fn freed(&mut self, ino: u64, e: FreedExtent) -> Option<&Path> {
        if self.claims.contains_key(&ino) {
            return self.claims.get(&ino).map(PathBuf::as_path);
        }
        while let Some(&(t, old)) = self.unclaimed_order.front() {
            let full = self.unclaimed_order.len() >= KEPT;
            if t + KEPT_NS >= e.time_ns && !full {
                break;
            }
            self.unclaimed_order.pop_front();
            if let Some(v) = self.unclaimed.get_mut(&old) {
                let kept = v.len();
                v.retain(|x| x.time_ns != t);
                if full {
                    self.dropped += (kept - v.len()) as u64;
                }
                if v.is_empty() {
                    self.unclaimed.remove(&old);
                }
            }
        }
        self.unclaimed.entry(ino).or_default().push(e);
        self.unclaimed_order.push_back((e.time_ns, ino));
        None
    }

    /// ext4 freed inode `ino`: no unlink claims it any longer. (Extents it freed before stay
    /// for the unlink whose record comes after: an unlink frees the blocks, then the inode, then
    /// returns.)
    pub(crate) fn inode_freed(&mut self, ino: u64, time_ns: u64) {
        self.claims.remove(&ino);
        while let Some(&(t, old)) = self.inodes_freed_order.front() {
            if t + KEPT_NS >= time_ns && self.inodes_freed_order.len() < KEPT {
                break;
            }
            self.inodes_freed_order.pop_front();
            if self.inodes_freed.get(&old) == Some(&t) {
                self.inodes_freed.remove(&old);
            }
        }
        self.inodes_freed.insert(ino, time_ns);
        self.inodes_freed_order.push_back((time_ns, ino));
    }

    /// What was dropped at the bounds.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(t: u64, pblk: u64) -> FreedExtent {
        FreedExtent {
            time_ns: t,
            physical_block: pblk,
            logical_block: 0,
            blocks: 3,
        }
    }

    #[test]
    fn an_unlinks_extents_are_the_files_whichever_record_comes_first() {
        let mut u = Unlinks::default();
        // Freed inside the unlink, with the inode: both records come before the unlink's.
        assert_eq!(u.freed(12, ext(100, 4139)), None);
        u.inode_freed(12, 101);
        let journal = u.unlinked(Path::new("/d/a-journal"), 12, 90);
        assert_eq!(journal, vec![ext(100, 4139)]);
        // The number names the next file (a WAL), unlinked in turn: its extents are its own,
        // not the journal's.
        assert_eq!(u.freed(12, ext(150, 4200)), None);
        u.inode_freed(12, 151);
        assert_eq!(
            u.unlinked(Path::new("/d/a-wal"), 12, 140),
            vec![ext(150, 4200)]
        );
        // The same number again, truncated (its stop maps it): freed before its unlink began,
        // so not the unlink's.
        assert_eq!(u.freed(12, ext(200, 5000)), None);
        assert_eq!(u.unlinked(Path::new("/d/b"), 12, 300), vec![]);
        // Unlinked while open: freed at its last close, after the unlink's record.
        assert_eq!(u.freed(12, ext(400, 6000)), Some(Path::new("/d/b")));
        u.inode_freed(12, 401);
        assert_eq!(u.freed(12, ext(500, 7000)), None, "the inode is free again");
    }

    #[test]
    fn unclaimed_extents_are_kept_a_while_only() {
        let mut u = Unlinks::default();
        u.freed(5, ext(0, 1));
        u.freed(6, ext(KEPT_NS + 1, 2));
        assert_eq!(u.unlinked(Path::new("/d/x"), 5, 0), vec![], "too old");
        assert_eq!(
            u.unlinked(Path::new("/d/y"), 6, 0),
            vec![ext(KEPT_NS + 1, 2)]
        );
    }
}
