//! Where each file's blocks are during the measured window: the VFS tells an
//! [`ExtentRecorder`] whenever it syncs, truncates or deletes a file, and the recorder takes
//! the file's FIEMAP there (a cheap ioctl; translation to device sectors happens after the
//! window). It also keeps the interval of every sync call, to attribute FS journal writes to
//! the file being synced. File ranges whose device location cannot be known (not yet allocated,
//! inline, encoded, or outside btrfs's chunk map) are reported, not silently left to metadata.

use std::ffi::c_int;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use joj_linux::ScratchFs;
use joj_trace::FileRole;
use joj_trace::classify::{DevExtent, FileSnapshot};
use joj_vfs::{FileEvent, FileObserver};
use joj_workload::lock;

use crate::error::ExperimentError;
use crate::result::UnplacedData;

/// A file's raw FIEMAP answer at one instant (btrfs: logical addresses, mapped after the run).
struct RawSnapshot {
    path: PathBuf,
    role: FileRole,
    time_ns: u64,
    extents: Vec<joj_linux::Extent>,
    /// Taken just before the file let go of its name or blocks ([`FileSnapshot::released`]).
    released: bool,
}

/// One sync call: which file role was synced, from when to when (CLOCK_MONOTONIC).
#[derive(Debug, Clone, Copy)]
pub(super) struct SyncInterval {
    pub(super) role: FileRole,
    pub(super) start_ns: u64,
    pub(super) end_ns: u64,
}

/// Records extents and sync intervals while the window runs.
#[derive(Default)]
pub(super) struct ExtentRecorder {
    snapshots: Mutex<Vec<RawSnapshot>>,
    syncs: Mutex<Vec<SyncInterval>>,
    open_syncs: Mutex<Vec<(std::thread::ThreadId, FileRole, u64)>>,
}

impl ExtentRecorder {
    fn record(&self, path: &Path, role: FileRole, fd: Option<c_int>, released: bool) {
        let extents = match fd {
            // SAFETY: the VFS passes a descriptor it keeps open for the duration of the call.
            Some(fd) => joj_linux::fiemap(unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }),
            None => joj_linux::fiemap_path(path),
        };
        // A file that cannot be mapped (already gone) simply has no data extents: its
        // requests fall to metadata, which is what they then are.
        let Ok(extents) = extents else { return };
        lock(&self.snapshots).push(RawSnapshot {
            path: path.to_path_buf(),
            role,
            time_ns: joj_linux::now_mono_ns(),
            extents,
            released,
        });
    }

    /// Snapshot an open file (one joj opened itself, e.g. for a supervised command);
    /// `released` when the file is about to let go of its name or blocks.
    pub(super) fn record_file(
        &self,
        path: &Path,
        role: FileRole,
        file: &std::fs::File,
        released: bool,
    ) {
        let Ok(extents) = joj_linux::fiemap(file) else {
            return;
        };
        lock(&self.snapshots).push(RawSnapshot {
            path: path.to_path_buf(),
            role,
            time_ns: joj_linux::now_mono_ns(),
            extents,
            released,
        });
    }

    /// Record the extents a file gave up as the filesystem freed them, at `time_ns`: a
    /// released snapshot, as one taken just before an unlink's stop.
    pub(super) fn record_freed(
        &self,
        path: &Path,
        role: FileRole,
        extents: &[joj_linux::Extent],
        time_ns: u64,
    ) {
        lock(&self.snapshots).push(RawSnapshot {
            path: path.to_path_buf(),
            role,
            time_ns,
            extents: extents.to_vec(),
            released: true,
        });
    }

    /// Record a sync call that joj observed from outside (a supervised command).
    pub(super) fn push_sync(&self, sync: SyncInterval) {
        lock(&self.syncs).push(sync);
    }

    /// Give every snapshot of a path the role `role_of` says, when it says one (a file's role
    /// can be known only late, e.g. once its SQLite header is written).
    pub(super) fn relabel(&self, role_of: &dyn Fn(&Path) -> Option<FileRole>) {
        for snap in lock(&self.snapshots).iter_mut() {
            if let Some(role) = role_of(&snap.path) {
                snap.role = role;
            }
        }
    }

    /// Snapshot every regular file under `dir` (where joj reaches it) named as under `as_dir`
    /// (where the command reaches it: an overlay's upper directory and the directory it
    /// covers), its role read from its name.
    pub(super) fn record_tree_as(&self, dir: &Path, as_dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            let named = as_dir.join(e.file_name());
            if t.is_dir() {
                self.record_tree_as(&e.path(), &named);
            } else if t.is_file() {
                self.record_as(&e.path(), &named, role_from_name(&named));
            }
        }
    }

    fn record_as(&self, path: &Path, named: &Path, role: FileRole) {
        let Ok(extents) = joj_linux::fiemap_path(path) else {
            return;
        };
        lock(&self.snapshots).push(RawSnapshot {
            path: named.to_path_buf(),
            role,
            time_ns: joj_linux::now_mono_ns(),
            extents,
            released: false,
        });
    }

    /// Snapshot every regular file under `dir`, its role read from its name.
    pub(super) fn record_dir(&self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_file() {
                self.record(&p, role_from_name(&p), None, false);
            }
        }
    }

    /// The sync intervals recorded so far (taken: a second call returns none).
    pub(super) fn take_syncs(&self) -> Vec<SyncInterval> {
        std::mem::take(&mut *lock(&self.syncs))
    }

    /// Translate the raw snapshots into device sectors (one chunk-map read on btrfs), with the
    /// file ranges that could not be placed.
    pub(super) fn snapshots(
        &self,
        scratch: &ScratchFs,
    ) -> Result<(Vec<FileSnapshot>, Vec<UnplacedData>), ExperimentError> {
        let raw = std::mem::take(&mut *lock(&self.snapshots));
        let main = scratch.main_device();
        let chunks = if scratch.kind().fs_type() == "btrfs" {
            Some(
                joj_linux::fs_btrfs::read_chunk_map(&main.path)
                    .map_err(|e| joj_linux::Error::from(joj_linux::ScratchError::from(e)))?,
            )
        } else {
            None
        };
        Ok(place(raw, &main.dev.to_string(), chunks.as_deref()))
    }
}

/// Where each snapshot's extents are on device `dev` (`chunks`: btrfs's chunk map, whose
/// logical addresses FIEMAP reports), and what could not be placed.
fn place(
    raw: Vec<RawSnapshot>,
    dev: &str,
    chunks: Option<&[joj_linux::fs_btrfs::BtrfsChunk]>,
) -> (Vec<FileSnapshot>, Vec<UnplacedData>) {
    let mut out = Vec::with_capacity(raw.len());
    let mut unplaced: Vec<UnplacedData> = Vec::new();
    for snap in raw {
        // This snapshot's unplaced bytes by reason.
        let mut here: Vec<(String, u64)> = Vec::new();
        let mut add = |reason: String, bytes: u64| match here.iter_mut().find(|h| h.0 == reason) {
            Some(h) => h.1 += bytes,
            None => here.push((reason, bytes)),
        };
        let (placed, skipped) = joj_linux::fiemap::to_dev_extents(&snap.extents, dev);
        for (e, why) in &skipped {
            add(why.to_string(), e.length_bytes);
        }
        let extents = match chunks {
            None => placed.into_iter().map(dev_extent).collect(),
            Some(chunks) => {
                let mut v = Vec::new();
                for e in placed {
                    // `to_dev_extents` read btrfs logical addresses as sectors; map them.
                    match joj_linux::fs_btrfs::map_logical(chunks, e.sector * 512, e.sectors * 512)
                    {
                        Ok(mapped) => v.extend(mapped.into_iter().map(|(off, len)| DevExtent {
                            dev: dev.to_string(),
                            sector: off / 512,
                            sectors: len.div_ceil(512),
                        })),
                        Err(why) => add(why.to_string(), e.sectors * 512),
                    }
                }
                v
            }
        };
        let path = snap.path.to_string_lossy().into_owned();
        for (reason, bytes) in here {
            match unplaced
                .iter_mut()
                .find(|u| u.path == path && u.reason == reason)
            {
                Some(u) => {
                    u.snapshots += 1;
                    u.max_bytes = u.max_bytes.max(bytes);
                }
                None => unplaced.push(UnplacedData {
                    path: path.clone(),
                    role: snap.role,
                    reason,
                    snapshots: 1,
                    max_bytes: bytes,
                }),
            }
        }
        out.push(FileSnapshot {
            role: snap.role,
            path,
            time_ns: snap.time_ns,
            extents,
            released: snap.released,
        });
    }
    (out, unplaced)
}

fn dev_extent(e: joj_linux::DevExtent) -> DevExtent {
    DevExtent {
        dev: e.dev,
        sector: e.sector,
        sectors: e.sectors,
    }
}

impl FileObserver for ExtentRecorder {
    fn file_event(&self, event: FileEvent, path: &Path, role: FileRole, fd: Option<c_int>) {
        let now = joj_linux::now_mono_ns();
        let me = std::thread::current().id();
        match event {
            FileEvent::BeforeSync => lock(&self.open_syncs).push((me, role, now)),
            FileEvent::AfterSync => {
                let mut open = lock(&self.open_syncs);
                if let Some(i) = open.iter().position(|(t, _, _)| *t == me) {
                    let (_, r, start_ns) = open.swap_remove(i);
                    lock(&self.syncs).push(SyncInterval {
                        role: r,
                        start_ns,
                        end_ns: now,
                    });
                }
                drop(open);
                self.record(path, role, fd, false);
            }
            FileEvent::BeforeDelete | FileEvent::BeforeTruncate => {
                self.record(path, role, fd, true)
            }
        }
    }
}

/// A file's role from its name (SQLite's suffixes, waldio's `-waldio` and joj's `.db`).
pub(super) fn role_from_name(p: &Path) -> FileRole {
    let s = p.to_string_lossy();
    if s.ends_with("-wal") || s.ends_with("-waldio") {
        FileRole::Wal
    } else if s.ends_with("-journal") {
        FileRole::RollbackJournal
    } else if s.ends_with(".db") {
        FileRole::Database
    } else {
        FileRole::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use joj_linux::Extent;
    use joj_linux::fiemap::flags;

    fn snap(time_ns: u64, extents: Vec<Extent>) -> RawSnapshot {
        RawSnapshot {
            path: PathBuf::from("/d/joj-0.db-wal"),
            role: FileRole::Wal,
            time_ns,
            extents,
            released: false,
        }
    }

    fn extent(physical_bytes: u64, length_bytes: u64, flags: u32) -> Extent {
        Extent {
            logical_bytes: 0,
            physical_bytes,
            length_bytes,
            flags,
        }
    }

    #[test]
    fn ranges_without_a_place_are_reported_per_file_and_reason() {
        let raw = vec![
            snap(
                1,
                vec![extent(4096, 8192, 0), extent(0, 4096, flags::DELALLOC)],
            ),
            snap(
                2,
                vec![
                    extent(0, 4096, flags::DELALLOC),
                    extent(0, 4096, flags::DATA_INLINE),
                    extent(0, 4096, flags::DELALLOC),
                ],
            ),
        ];
        let (placed, unplaced) = place(raw, "7:0", None);
        assert_eq!(placed[0].extents.len(), 1);
        assert_eq!(placed[0].extents[0].sector, 8);
        assert!(placed[1].extents.is_empty());
        assert_eq!(unplaced.len(), 2, "{unplaced:?}");
        let u = &unplaced[0];
        // Both delayed-allocation ranges of snapshot 2 count together, though another reason
        // stands between them.
        assert_eq!((u.role, u.snapshots, u.max_bytes), (FileRole::Wal, 2, 8192));
        assert!(u.reason.contains("not allocated"), "{}", u.reason);
        assert_eq!((unplaced[1].snapshots, unplaced[1].max_bytes), (1, 4096));
    }

    #[test]
    fn btrfs_ranges_outside_the_chunk_map_are_reported() {
        let chunks = [joj_linux::fs_btrfs::BtrfsChunk {
            logical: 1 << 20,
            length: 1 << 20,
            kind: "DATA|single".into(),
            stripe_offsets: vec![8 << 20],
        }];
        let raw = vec![snap(
            1,
            vec![extent(1 << 20, 4096, 0), extent(64 << 20, 4096, 0)],
        )];
        let (placed, unplaced) = place(raw, "7:0", Some(&chunks));
        assert_eq!(placed[0].extents.len(), 1);
        assert_eq!(placed[0].extents[0].sector, (8 << 20) / 512);
        assert_eq!(unplaced.len(), 1);
        assert_eq!(unplaced[0].max_bytes, 4096);
    }
}
