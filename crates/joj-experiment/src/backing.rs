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
//! disk), so for a partition none are reported.

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
    /// The disk's flushes in the window; `None` for a partition, whose counters have none.
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
        partition: bool,
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
            disk_flush_ios: (!partition).then_some(disk.flush_ios),
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
    partition: bool,
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
            self.partition,
            &self.loops,
            self.direct_io,
            transactions,
        )
    }
}

/// The counters to read at both ends of a window: the disk holding the main device's image and
/// every loop device whose image is on that disk.
#[derive(Debug)]
pub(crate) struct BackingWatch {
    disk_id: String,
    partition: bool,
    loops: Vec<String>,
    direct_io: bool,
    before: Option<(DiskStats, DiskStats)>,
}

/// `major:minor` of the block device holding `path`'s filesystem, when `/sys/dev/block` has it
/// (a tmpfs or btrfs has an anonymous device number, which it does not).
fn disk_of(path: &std::path::Path) -> Option<String> {
    let id = joj_linux::DevNum::from_rdev(std::fs::metadata(path).ok()?.dev()).to_string();
    DiskStats::read(&id).ok().map(|_| id)
}

/// Whether block device `id` (`major:minor`) is a partition of a disk.
fn is_partition(id: &str) -> bool {
    std::path::Path::new(&format!("/sys/dev/block/{id}/partition")).exists()
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
            partition: is_partition(&disk_id),
            disk_id,
            loops: on_disk.iter().map(|d| d.dev.to_string()).collect(),
            direct_io: on_disk.iter().all(|d| loop_dio(&d.path)),
            before: None,
        })
    }

    /// The disk's and the loop devices' counters. The loop devices are read first: a loop
    /// write completes after its write of the disk, so nothing the loop side counts is missing
    /// from the disk's.
    fn read(&self) -> Option<(DiskStats, DiskStats)> {
        let loops: Option<Vec<DiskStats>> =
            self.loops.iter().map(|d| DiskStats::read(d).ok()).collect();
        let loops = DiskStats::sum(&loops?);
        Some((DiskStats::read(&self.disk_id).ok()?, loops))
    }

    /// At the window's start.
    pub(crate) fn begin(&mut self) {
        self.before = self.read();
    }

    /// At the window's end: what both sides counted since [`BackingWatch::begin`] (`None` if
    /// either read failed).
    pub(crate) fn end(&self) -> Option<BackingDeltas> {
        let (d0, l0) = self.before?;
        let (d1, l1) = self.read()?;
        Some(BackingDeltas {
            disk_id: self.disk_id.clone(),
            partition: self.partition,
            disk: d1.since(&d0),
            loops: l1.since(&l0),
            direct_io: self.direct_io,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let b = BackingDisk::new("254:0", &disk, false, &loops, true, 1000);
        assert_eq!(b.own_write_bytes, Some(4_096_000));
        assert_eq!(b.own_bytes_per_txn, Some(4096.0));
        assert_eq!(b.disk_flush_ios, Some(1000));
        // A partition's counters have no flushes: none reported, the bytes as on a disk.
        let b = BackingDisk::new("254:1", &disk, true, &loops, true, 1000);
        assert_eq!(
            (b.disk_flush_ios, b.own_write_bytes),
            (None, Some(4_096_000))
        );
        // Two WAL commits whose flushes ride on the journal's commit blocks: an empty preflush
        // write more on the disk than on the loop device for each, and no byte of its own.
        let b = BackingDisk::new("254:0", &stats(5, 80, 2), false, &stats(3, 80, 2), true, 1);
        assert_eq!(b.own_write_bytes, Some(0));
        // Fewer bytes on the disk than the loop device sent (a counter read late): none of its
        // own, never a negative count.
        let b = BackingDisk::new("254:0", &stats(10, 8, 1), false, &stats(12, 16, 1), true, 4);
        assert_eq!(b.own_write_bytes, Some(0));
        // Through the page cache the disk's writes are merged writeback: no difference drawn.
        let b = BackingDisk::new("254:0", &disk, false, &loops, false, 1000);
        assert_eq!((b.own_write_bytes, b.own_bytes_per_txn), (None, None));
        let b = BackingDisk::new("254:0", &stats(5, 16, 1), false, &stats(3, 8, 1), true, 0);
        assert_eq!((b.own_write_bytes, b.own_bytes_per_txn), (Some(4096), None));
    }

    #[test]
    fn a_directory_in_memory_has_no_disk() {
        // /dev/shm is a tmpfs: an anonymous device number that /sys/dev/block does not list.
        assert_eq!(disk_of(std::path::Path::new("/dev/shm")), None);
    }
}
