//! Unlinks and truncates seen without a stop, paired with the extents ext4 freed
//! ([`super::bpf_opens`]): what a FIEMAP at the call's stop read before the file let go of its
//! blocks, read instead as the filesystem frees them. Pure: no I/O.
//!
//! An unlink's record names the path and the inode ext4 unlinked; ext4's records name the
//! inode and the extents it freed — inside the unlink (their records come before the unlink's,
//! which is written at its exit), or later, at the last close of a file still open. So an
//! inode is *claimed* by its unlink until ext4 frees the inode (its number may then name another
//! file), and extents freed of an inode no unlink has claimed yet are kept a while
//! ([`KEPT_NS`]) for the unlink whose record comes after them. Extents freed before the unlink
//! began are never taken for it.
//!
//! An `ftruncate` frees the blocks past the new end inside the call, in the calling thread
//! (`ext4_truncate` from `ext4_setattr`): the extents freed by that thread between the call's
//! entry and exit are the truncated file's ([`Unlinks::truncated`]) — its syscall events, read
//! after the records (the records of a batch are read before its events are applied), name the
//! thread, the times and the descriptor. Everything is kept by inode and bounded; what the
//! bounds drop is counted ([`Unlinks::dropped`]).

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

/// How long extents no unlink or truncate claimed are kept, after the events applied so far
/// ([`Unlinks::applied_until`]): an unlink's record comes after the extents it freed, read in
/// the same or the next reads of the ring (at most 100 ms apart); a truncate's event is applied
/// after the records read with it, or with the next read when the trace held it back. Counted
/// from the events applied, not from the records read, so that a read of the ring that comes
/// late (a slow pass of the events thread) expires nothing a truncate not yet applied needs.
pub(crate) const KEPT_NS: u64 = 1_000_000_000;

/// How much later than its time a record may come in the ring: the BPF program takes the time,
/// then writes the record, with preemption off (an interrupt between the two at most).
const RING_ORDER_SLACK_NS: u64 = 10_000_000;

/// Blocks ext4 freed of one extent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FreedExtent {
    pub(crate) time_ns: u64,
    /// The thread ext4 freed it in.
    pub(crate) tid: i32,
    /// The inode it was freed of.
    pub(crate) ino: u64,
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
    /// The time of the last syscall event applied: unclaimed extents older than
    /// [`KEPT_NS`] before it are let go.
    applied_ns: u64,
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
        // Only those freed since the unlink began: older ones are a truncate's, whose event
        // may not be applied yet (the ring is read to the moment, the trace to its last read).
        let Some(v) = self.unclaimed.get_mut(&ino) else {
            return Vec::new();
        };
        let mine: Vec<FreedExtent> = v
            .iter()
            .filter(|e| e.time_ns >= enter_ns)
            .copied()
            .collect();
        v.retain(|e| e.time_ns < enter_ns);
        if v.is_empty() {
            self.unclaimed.remove(&ino);
        }
        mine
    }

    /// The syscall events are applied up to `time_ns`.
    pub(crate) fn applied_until(&mut self, time_ns: u64) {
        self.applied_ns = self.applied_ns.max(time_ns);
    }

    /// Thread `tid` truncated a file from `start_ns` to `end_ns`: the extents it freed inside
    /// the call, which are that file's, taken from those no unlink claimed. (Of a file
    /// unlinked while open, they went to its unlink's path as they came.)
    pub(crate) fn truncated(&mut self, tid: i32, start_ns: u64, end_ns: u64) -> Vec<FreedExtent> {
        let inside = |e: &FreedExtent| e.tid == tid && (start_ns..=end_ns).contains(&e.time_ns);
        // The inodes with an extent freed since the call began: the newest of the order, which
        // is the ring's (a record may come a little after a later-stamped one).
        let inodes: std::collections::BTreeSet<u64> = self
            .unclaimed_order
            .iter()
            .rev()
            .take_while(|(t, _)| t + RING_ORDER_SLACK_NS >= start_ns)
            .map(|(_, ino)| *ino)
            .collect();
        let mut mine = Vec::new();
        for ino in inodes {
            let Some(v) = self.unclaimed.get_mut(&ino) else {
                continue;
            };
            mine.extend(v.iter().filter(|e| inside(e)).copied());
            v.retain(|e| !inside(e));
            if v.is_empty() {
                self.unclaimed.remove(&ino);
            }
        }
        // The order keeps its entries; one whose extents are gone is skipped when it expires.
        mine.sort_by_key(|e| e.time_ns);
        mine
    }

    /// ext4 freed `e` of `ino`: the path of the unlink that claimed it, if one did.
    pub(crate) fn freed(&mut self, ino: u64, e: FreedExtent) -> Option<&Path> {
        if self.claims.contains_key(&ino) {
            return self.claims.get(&ino).map(PathBuf::as_path);
        }
        while let Some(&(t, old)) = self.unclaimed_order.front() {
            let full = self.unclaimed_order.len() >= KEPT;
            if t + KEPT_NS >= self.applied_ns && !full {
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
        self.unclaimed
            .entry(ino)
            .or_default()
            .push(FreedExtent { ino, ..e });
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

    /// An extent of `ino`, freed at `t` by thread 7.
    fn ext(ino: u64, t: u64, pblk: u64) -> FreedExtent {
        FreedExtent {
            time_ns: t,
            tid: 7,
            ino,
            physical_block: pblk,
            logical_block: 0,
            blocks: 3,
        }
    }

    #[test]
    fn an_unlinks_extents_are_the_files_whichever_record_comes_first() {
        let mut u = Unlinks::default();
        // Freed inside the unlink, with the inode: both records come before the unlink's.
        assert_eq!(u.freed(12, ext(12, 100, 4139)), None);
        u.inode_freed(12, 101);
        let journal = u.unlinked(Path::new("/d/a-journal"), 12, 90);
        assert_eq!(journal, vec![ext(12, 100, 4139)]);
        // The number names the next file (a WAL), unlinked in turn: its extents are its own,
        // not the journal's.
        assert_eq!(u.freed(12, ext(12, 150, 4200)), None);
        u.inode_freed(12, 151);
        assert_eq!(
            u.unlinked(Path::new("/d/a-wal"), 12, 140),
            vec![ext(12, 150, 4200)]
        );
        // The same number again, truncated: freed before its unlink began, so not the
        // unlink's.
        assert_eq!(u.freed(12, ext(12, 200, 5000)), None);
        assert_eq!(u.unlinked(Path::new("/d/b"), 12, 300), vec![]);
        // Unlinked while open: freed at its last close, after the unlink's record.
        assert_eq!(u.freed(12, ext(12, 400, 6000)), Some(Path::new("/d/b")));
        u.inode_freed(12, 401);
        assert_eq!(
            u.freed(12, ext(12, 500, 7000)),
            None,
            "the inode is free again"
        );
    }

    #[test]
    fn unclaimed_extents_are_kept_a_while_after_the_events_applied() {
        let mut u = Unlinks::default();
        u.freed(5, ext(5, 0, 1));
        u.freed(5, ext(5, 10, 3));
        // Records read a long time later, before the events of their time are applied: the
        // older extents wait for their events (a truncate's).
        u.freed(6, ext(6, KEPT_NS + 1, 2));
        assert_eq!(u.truncated(7, 0, 0), vec![ext(5, 0, 1)]);
        // Once the events are applied past them, they go.
        u.applied_until(KEPT_NS + 11);
        u.freed(6, ext(6, KEPT_NS + 20, 4));
        assert_eq!(u.unlinked(Path::new("/d/x"), 5, 0), vec![], "too old");
        assert_eq!(
            u.unlinked(Path::new("/d/y"), 6, 0),
            vec![ext(6, KEPT_NS + 1, 2), ext(6, KEPT_NS + 20, 4)]
        );
        assert_eq!(u.dropped(), 0);
    }

    #[test]
    fn a_truncates_extents_are_those_its_thread_freed_inside_the_call() {
        let mut u = Unlinks::default();
        let of = |ino, tid, t, pblk| FreedExtent {
            tid,
            ..ext(ino, t, pblk)
        };
        // Before the call, by another thread inside it, and two of the call's own (two
        // inodes would be a bug of ext4's, but both are the call's).
        u.freed(12, of(12, 7, 90, 1));
        u.freed(13, of(13, 8, 105, 2));
        u.freed(12, of(12, 7, 110, 3));
        u.freed(12, of(12, 7, 120, 4));
        u.freed(12, of(12, 7, 140, 5));
        assert_eq!(
            u.truncated(7, 100, 130),
            vec![of(12, 7, 110, 3), of(12, 7, 120, 4)]
        );
        assert_eq!(u.truncated(7, 100, 130), vec![], "taken once");
        // What it did not take is still there for an unlink.
        assert_eq!(
            u.unlinked(Path::new("/d/x"), 12, 0),
            vec![of(12, 7, 90, 1), of(12, 7, 140, 5)]
        );
        assert_eq!(
            u.unlinked(Path::new("/d/y"), 13, 0),
            vec![of(13, 8, 105, 2)]
        );
        // The emptied inode's place in the order expires quietly.
        u.applied_until(KEPT_NS + 1_000);
        u.freed(14, of(14, 7, KEPT_NS + 1_000, 6));
        assert_eq!(u.dropped(), 0);
    }

    #[test]
    fn an_unlink_read_before_the_truncate_is_applied_leaves_it_its_extents() {
        // fd = open; write; fsync; ftruncate(fd, 0); close; unlink — all in one read: the
        // ring's records (the truncate's extents, then the unlink's) are read before the
        // trace's events are applied.
        let mut u = Unlinks::default();
        u.freed(12, ext(12, 110, 1));
        u.inode_freed(12, 210);
        assert_eq!(u.unlinked(Path::new("/d/t.bin"), 12, 200), vec![]);
        assert_eq!(u.truncated(7, 100, 130), vec![ext(12, 110, 1)]);
    }

    #[test]
    fn a_record_written_late_in_the_ring_does_not_hide_a_truncates_extents() {
        // Another CPU's record stamped before the truncate began, written after its extent.
        let mut u = Unlinks::default();
        u.freed(12, ext(12, 110, 1));
        u.freed(
            13,
            FreedExtent {
                tid: 8,
                ..ext(13, 95, 2)
            },
        );
        assert_eq!(u.truncated(7, 100, 130), vec![ext(12, 110, 1)]);
    }
}
