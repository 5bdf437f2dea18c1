//! The disk under a scratch filesystem's images (`joj bench --image-dir DIR` on a disk): what
//! its own counters saw in a run's window, next to what the loop devices passed down to it.
//!
//! A loop device over a file writes the file and flushes it with `fsync`, so the filesystem that
//! holds the image adds writes of its own whenever the file's metadata changed since the last
//! flush: on Linux 6.13 and later, at nearly every flush of a rollback-journal or OFF run
//! (multigrain timestamps; docs/measurement.md, "Known limits"). A block device has none of
//! them and the device model has no term for them, so a run says how many there were.
//!
//! Both sides are the block layer's own `stat` counters ([`DiskStats`]). With direct I/O every
//! byte the loop device writes is written to the disk once, so the disk's bytes beyond the loop
//! devices' are its own — a net figure: a write-zeroes request to the loop device, which reaches
//! the disk's filesystem as `fallocate`, counts on the loop's side only. (Requests would not do:
//! a flush that reaches the loop device with a write is an empty preflush write more on the
//! disk.) Through the page cache the disk sees merged writeback instead, and no difference is
//! drawn. A partition's counters have no flushes (the block layer counts them on the whole
//! disk), nor do a bio-based device's (device-mapper, md: only the multi-queue path counts
//! them, `/sys/dev/block/ID/mq`), so for those none are reported.

use std::os::unix::fs::MetadataExt;

use joj_linux::diskstats::DiskStats;
use serde::{Deserialize, Serialize};

/// The images' disk in one run's window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackingDisk {
    /// The disk (`major:minor`) of the filesystem holding the images.
    pub disk: String,
    /// The disk's write requests in the window (every writer of that disk counts).
    pub disk_write_ios: u64,
    /// The bytes of those requests.
    pub disk_write_bytes: u64,
    /// The disk's flushes in the window; `None` for a partition or a bio-based device
    /// (device-mapper, md), whose counters have none.
    pub disk_flush_ios: Option<u64>,
    /// The write requests of the loop devices whose images are on the disk.
    pub loop_write_ios: u64,
    /// The bytes of those requests.
    pub loop_write_bytes: u64,
    /// The flushes those loop devices received.
    pub loop_flush_ios: u64,
    /// Whether those loop devices do direct I/O (`/sys/block/loopN/loop/dio`; a loop device
    /// whose attribute could not be read counts as not).
    pub direct_io: bool,
    /// The bytes the disk wrote beyond the loop devices' (direct I/O only): the image files'
    /// filesystem's own, and any other writer's of that disk.
    pub own_write_bytes: Option<u64>,
    /// `own_write_bytes` per transaction (`None` without transactions).
    pub own_bytes_per_txn: Option<f64>,
}

impl BackingDisk {
    /// The report of a window in which the disk counted `disk` and its loop devices `loops`.
    pub fn new(
        disk_id: &str,
        disk: &DiskStats,
        flushes_counted: bool,
        loops: &DiskStats,
        direct_io: bool,
        transactions: u64,
    ) -> BackingDisk {
        let bytes = |s: &DiskStats| s.write_sectors * 512;
        let own = direct_io.then(|| bytes(disk).saturating_sub(bytes(loops)));
        BackingDisk {
            disk: disk_id.to_string(),
            disk_write_ios: disk.write_ios,
            disk_write_bytes: bytes(disk),
            disk_flush_ios: flushes_counted.then_some(disk.flush_ios),
            loop_write_ios: loops.write_ios,
            loop_write_bytes: bytes(loops),
            loop_flush_ios: loops.flush_ios,
            direct_io,
            own_write_bytes: own,
            own_bytes_per_txn: own
                .filter(|_| transactions > 0)
                .map(|o| o as f64 / transactions as f64),
        }
    }
}

/// What the window counted on the disk and the loop devices (their deltas).
#[derive(Debug, Clone)]
pub(crate) struct BackingDeltas {
    disk_id: String,
    flushes_counted: bool,
    disk: DiskStats,
    loops: DiskStats,
    direct_io: bool,
}

impl BackingDeltas {
    /// The report of the window, with its `transactions`.
    pub(crate) fn report(&self, transactions: u64) -> BackingDisk {
        BackingDisk::new(
            &self.disk_id,
            &self.disk,
            self.flushes_counted,
            &self.loops,
            self.direct_io,
            transactions,
        )
    }
}

/// A device's counters could not be read at one end of the window.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the counters of {device} (/sys/dev/block/{device}/stat) could not be read: {reason}")]
pub(crate) struct BackingError {
    device: String,
    reason: String,
}

/// The counters to read at both ends of a window: the disk holding the main device's image and
/// every loop device whose image is on that disk.
#[derive(Debug)]
pub(crate) struct BackingWatch {
    disk_id: String,
    flushes_counted: bool,
    loops: Vec<String>,
    direct_io: bool,
    /// The counters at the window's start, or why they could not be read.
    before: Option<Result<(DiskStats, DiskStats), BackingError>>,
}

/// `major:minor` of the block device holding `path`'s filesystem, when `/sys/dev/block` has it
/// (a tmpfs or btrfs has an anonymous device number, which it does not).
fn disk_of(path: &std::path::Path) -> Option<String> {
    let id = joj_linux::DevNum::from_rdev(std::fs::metadata(path).ok()?.dev()).to_string();
    DiskStats::read(&id).ok().map(|_| id)
}

/// Whether block device `id` (`major:minor`) counts its flushes: a whole disk on the block
/// layer's multi-queue path (`mq`); a partition's flushes count on its disk, and a bio-based
/// device (device-mapper, md) counts a flush as an empty write.
fn counts_flushes(id: &str) -> bool {
    counts_flushes_at(std::path::Path::new(&format!("/sys/dev/block/{id}")))
}

/// [`counts_flushes`] of the device whose `/sys/dev/block` folder is `dir`.
fn counts_flushes_at(dir: &std::path::Path) -> bool {
    !dir.join("partition").exists() && dir.join("mq").is_dir()
}

/// Whether loop device `loop_path` (`/dev/loopN`) does direct I/O.
fn loop_dio(loop_path: &std::path::Path) -> bool {
    let Some(name) = loop_path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    // A kernel attribute of one short line, not a file anyone else wrote.
    std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).is_ok_and(|s| s.trim() == "1")
}

impl BackingWatch {
    /// The watch of `devices`' images, or `None` when the main image is not on a block device
    /// (images in memory).
    pub(crate) fn new(devices: &[joj_linux::ScratchDevice]) -> Option<BackingWatch> {
        let main = devices
            .iter()
            .find(|d| d.role == joj_linux::DeviceRole::Main)?;
        let disk_id = disk_of(&main.image)?;
        let on_disk: Vec<&joj_linux::ScratchDevice> = devices
            .iter()
            .filter(|d| disk_of(&d.image).as_deref() == Some(disk_id.as_str()))
            .collect();
        Some(BackingWatch {
            flushes_counted: counts_flushes(&disk_id),
            disk_id,
            loops: on_disk.iter().map(|d| d.dev.to_string()).collect(),
            direct_io: on_disk.iter().all(|d| loop_dio(&d.path)),
            before: None,
        })
    }

    /// The disk's and the loop devices' counters, the disk's read first at the window's start
    /// and last at its end. A loop write completes after its write of the disk, so at the end a
    /// write under way counts on the disk's side if on either; at the start only one in flight
    /// across both reads could count on the loop's side alone, and the window's `syncfs` just
    /// before leaves none. The disk's own bytes are then never short for the run's writes.
    fn read(&self, disk_first: bool) -> Result<(DiskStats, DiskStats), BackingError> {
        let read = |d: &str| {
            DiskStats::read(d).map_err(|e| BackingError {
                device: d.to_string(),
                reason: e.to_string(),
            })
        };
        let disk_before = if disk_first {
            Some(read(&self.disk_id)?)
        } else {
            None
        };
        let loops: Vec<DiskStats> = self
            .loops
            .iter()
            .map(|d| read(d))
            .collect::<Result<_, _>>()?;
        let disk = match disk_before {
            Some(d) => d,
            None => read(&self.disk_id)?,
        };
        Ok((disk, DiskStats::sum(&loops)))
    }

    /// At the window's start.
    pub(crate) fn begin(&mut self) {
        self.before = Some(self.read(true));
    }

    /// At the window's end: what both sides counted since [`BackingWatch::begin`], or why a
    /// read failed (`None` without a start).
    pub(crate) fn end(&self) -> Option<Result<BackingDeltas, BackingError>> {
        let before = self.before.clone()?;
        Some(before.and_then(|(d0, l0)| {
            let (d1, l1) = self.read(false)?;
            Ok(BackingDeltas {
                disk_id: self.disk_id.clone(),
                flushes_counted: self.flushes_counted,
                disk: d1.since(&d0),
                loops: l1.since(&l0),
                direct_io: self.direct_io,
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a whole disk on the multi-queue path counts its flushes: not a partition, not a
    /// bio-based device (device-mapper, md) that counts a flush as an empty write.
    #[test]
    fn flushes_are_counted_on_a_whole_multi_queue_disk_only() {
        let tmp = tempfile::tempdir().unwrap();
        let (disk, part, dm) = (
            tmp.path().join("d"),
            tmp.path().join("p"),
            tmp.path().join("m"),
        );
        std::fs::create_dir_all(disk.join("mq")).unwrap();
        std::fs::create_dir_all(&part).unwrap();
        std::fs::write(part.join("partition"), "1\n").unwrap();
        std::fs::create_dir_all(&dm).unwrap();
        assert!(counts_flushes_at(&disk));
        assert!(!counts_flushes_at(&part));
        assert!(!counts_flushes_at(&dm));
    }

    /// A device whose counters cannot be read gives the window's end an error naming it, not
    /// a report that looks like images in memory.
    #[test]
    fn counters_that_cannot_be_read_are_said_not_left_out() {
        let mut w = BackingWatch {
            disk_id: "4095:1048575".into(),
            flushes_counted: true,
            loops: vec![],
            direct_io: true,
            before: None,
        };
        assert!(w.end().is_none(), "no start, nothing to report");
        w.begin();
        let e = w.end().unwrap().unwrap_err().to_string();
        assert!(
            e.contains("4095:1048575") && e.contains("could not be read"),
            "{e}"
        );
    }

    fn stats(write_ios: u64, write_sectors: u64, flush_ios: u64) -> DiskStats {
        DiskStats {
            write_ios,
            write_sectors,
            flush_ios,
            ..DiskStats::default()
        }
    }

    #[test]
    fn the_disks_own_bytes_are_what_it_wrote_beyond_the_loop_devices_with_direct_io_only() {
        // An OFF commit: two 4 KiB pages and a flush through the loop device (an empty
        // preflush write in its count), the same on the disk plus the image's inode.
        let loops = stats(3000, 16_000, 1000);
        let disk = stats(4000, 24_000, 1000);
        let b = BackingDisk::new("254:0", &disk, true, &loops, true, 1000);
        assert_eq!(b.own_write_bytes, Some(4_096_000));
        assert_eq!(b.own_bytes_per_txn, Some(4096.0));
        assert_eq!(b.disk_flush_ios, Some(1000));
        // A partition's (or a bio-based device's) counters have no flushes: none reported, the
        // bytes as on a disk.
        let b = BackingDisk::new("254:1", &disk, false, &loops, true, 1000);
        assert_eq!(
            (b.disk_flush_ios, b.own_write_bytes),
            (None, Some(4_096_000))
        );
        // Two WAL commits whose flushes ride on the journal's commit blocks: an empty preflush
        // write more on the disk than on the loop device for each, and no byte of its own.
        let b = BackingDisk::new("254:0", &stats(5, 80, 2), true, &stats(3, 80, 2), true, 1);
        assert_eq!(b.own_write_bytes, Some(0));
        // Fewer bytes on the disk than the loop device sent (a counter read late): none of its
        // own, never a negative count.
        let b = BackingDisk::new("254:0", &stats(10, 8, 1), true, &stats(12, 16, 1), true, 4);
        assert_eq!(b.own_write_bytes, Some(0));
        // Through the page cache the disk's writes are merged writeback: no difference drawn.
        let b = BackingDisk::new("254:0", &disk, true, &loops, false, 1000);
        assert_eq!((b.own_write_bytes, b.own_bytes_per_txn), (None, None));
        let b = BackingDisk::new("254:0", &stats(5, 16, 1), true, &stats(3, 8, 1), true, 0);
        assert_eq!((b.own_write_bytes, b.own_bytes_per_txn), (Some(4096), None));
    }

    #[test]
    fn a_directory_in_memory_has_no_disk() {
        // /dev/shm is a tmpfs: an anonymous device number that /sys/dev/block does not list.
        assert_eq!(disk_of(std::path::Path::new("/dev/shm")), None);
    }
}
