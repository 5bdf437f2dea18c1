//! `joj device calibrate PATH`: measure a real block device, or a file on one, with `O_DIRECT`,
//! and derive a device profile from those measurements alone — nothing from a SQLite run.
//!
//! What is measured (queue depth 1 unless said): 4 KiB random writes and reads; 1 MiB
//! sequential writes and reads; the latency of a flush (`fdatasync` of a file whose blocks are
//! all written, which commits no filesystem journal and only flushes the device's cache) after
//! N KiB of random 4 KiB writes, for several N; a 4 KiB write with `O_DSYNC` (FUA where the
//! device offers it, else a write and a flush); and 4 KiB random writes from several threads at
//! once (queue-depth scaling). The measurements go into the profile's `calibration` section as
//! they are; the device model's numbers are derived from them (see [`profile_from`]):
//!
//! - host bus bandwidth from the 1 MiB and 4 KiB write times, the command's fixed time what is
//!   left of a 4 KiB write;
//! - that fixed time split by the queue-depth scaling ([`queue_split`]): the share the device
//!   serves one command at a time (`command_overhead_ns`) is what its best measured throughput
//!   allows, the rest a latency commands in flight together share (`command_latency_ns`), and
//!   the queue as deep as the depth that gave that throughput;
//! - one unit, each page of which the model moves over the channel (at the host bus bandwidth)
//!   and programs: the slope of flush latency over pages written before it is that transfer
//!   plus the page program time ([`flush_pages`]), and the read time is what is left of a 4 KiB
//!   read;
//! - a write-back cache large enough to hold everything written between two flushes (the flush
//!   pays for it all, as measured), and a fixed number of metadata pages per flush for the
//!   flush latency's intercept, each costing what a page costs the model (transfer and program),
//!   so that the modeled flush takes the measured time.
//!
//! Before the derivation, the 4 KiB write, the 4 KiB read and every flush have the median of
//! the same pattern on joj's memory loop device taken off, and the 1 MiB write that of the
//! 4 KiB write ([`Reference`], `net`, docs/device-model.md "The reference"): the host time of
//! a modeled run is measured on that device and already holds a command's path through the
//! system call, the block layer and the loop driver, which a timed system call holds too. The
//! `O_DSYNC` write, the reads of 1 MiB and the queue-depth points are kept as measured.
//!
//! A file is created inside a directory PATH (its blocks written first, so every later write is
//! an overwrite the filesystem need not journal) and removed at the end; a block device PATH is
//! written over only with `destroy_data`.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::ExperimentError;

const KIB: u64 = 1024;
const MIB: u64 = 1 << 20;
const BLOCK: u64 = 4 * KIB;

/// How to calibrate.
#[derive(Debug, Clone)]
pub struct CalibrateOptions {
    /// A directory (a test file is made in it) or a block device.
    pub path: PathBuf,
    /// Size of the test file (or of the region of the block device used).
    pub size_bytes: u64,
    /// Samples of each QD1 latency.
    pub samples: u32,
    /// Write over a block device PATH.
    pub destroy_data: bool,
    /// The profile's name.
    pub name: String,
    pub seed: u64,
    /// Hold the CPUs out of idle states while measuring (`--cpus-awake`).
    pub cpus_awake: bool,
}

/// Latency statistics of one measurement, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub samples: u64,
    pub median_us: f64,
    pub p10_us: f64,
    pub p90_us: f64,
}

impl Latency {
    fn of(mut ns: Vec<u64>) -> Latency {
        ns.sort_unstable();
        let at = |q: f64| {
            if ns.is_empty() {
                0.0
            } else {
                ns[((ns.len() - 1) as f64 * q).round() as usize] as f64 / 1e3
            }
        };
        Latency {
            samples: ns.len() as u64,
            median_us: at(0.5),
            p10_us: at(0.1),
            p90_us: at(0.9),
        }
    }
}

/// Flush latency after `kib` KiB of random 4 KiB writes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FlushAfter {
    pub kib: u64,
    pub latency: Latency,
}

/// Throughput of 4 KiB random writes from `queue_depth` threads at once.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QueueDepthPoint {
    pub queue_depth: u32,
    pub iops: f64,
    pub mean_latency_us: f64,
}

/// Everything `calibrate` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub path: String,
    /// `file` or `block device`.
    pub kind: String,
    /// The device under the path (`/sys/block/NAME`), when found.
    pub device: Option<String>,
    /// `queue/fua` of that device: whether it takes FUA writes (else a FUA write is a write and
    /// a flush).
    pub fua: Option<bool>,
    /// `queue/write_cache` of that device (`write back` or `write through`).
    pub write_cache: Option<String>,
    pub region_bytes: u64,
    pub write_4k: Latency,
    pub read_4k: Latency,
    pub write_1m: Latency,
    pub read_1m: Latency,
    pub seq_write_mib_s: f64,
    pub seq_read_mib_s: f64,
    pub flush_after: Vec<FlushAfter>,
    /// A flush after a 4 KiB write made once the kernel's coarse clock had ticked since the
    /// last one, so that a file behind the path gets new timestamps at the write. A block
    /// device has no timestamps and flushes as after any write; where a file is behind it — the
    /// test file itself, or the image of a loop device — the filesystem holding that file may
    /// write its inode first (this VM's root ext4 does: docs/measurement.md, "Known limits"),
    /// and the difference from `flush_after`'s 4 KiB point is that cost. (`flush_after`'s
    /// points of 256 KiB and more carry it too: their writes outlast a tick.) Kept, not used
    /// by the profile. Measurements saved before 2026-11-27 have none.
    #[serde(default)]
    pub flush_after_4k_clock_ticked: Option<Latency>,
    /// A 4 KiB `O_DIRECT | O_DSYNC` write: FUA, or a write and a flush.
    pub dsync_write_4k: Latency,
    /// 4 KiB random writes from 1, 2, 4 and 8 threads: how far the device overlaps commands
    /// ([`queue_split`]).
    pub queue_depth: Vec<QueueDepthPoint>,
    /// `/proc/loadavg`'s one-minute figure when the measurement began and ended.
    pub load_before: f64,
    pub load_after: f64,
    /// The CPUs were held out of idle states while measuring (`--cpus-awake`); measurements
    /// made before the option read as `false`.
    #[serde(default)]
    pub cpus_awake: bool,
    /// The same patterns on joj's memory loop device, taken off before the profile is derived;
    /// measurements saved before 2026-11-27 have none and derive as they did.
    #[serde(default)]
    pub reference: Option<Reference>,
}

/// Queue-depth-1 medians of a loop device of joj's own over a file in its tmpfs: the command's
/// path through the host that a modeled run's host time already holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    pub write_4k: Latency,
    pub read_4k: Latency,
    /// `fdatasync` of the loop device after one 4 KiB write.
    pub flush_after_4k: Latency,
    /// The same once the coarse clock ticked: the control of the device's
    /// `flush_after_4k_clock_ticked` (the same wait before each write, and no file written
    /// behind this device: a tmpfs file's `fsync` writes nothing). `None` when saved before
    /// 2026-11-27, or when the clock did not move.
    #[serde(default)]
    pub flush_after_4k_clock_ticked: Option<Latency>,
}

/// The reference's region: enough for random offsets, small enough for memory.
const REFERENCE_REGION: u64 = 64 * MIB;

/// Measure the [`Reference`]: a scratch ext4 in joj's tmpfs, unmounted, its loop device written
/// raw (the filesystem is thrown away), released when this returns.
fn reference(samples: u64, seed: u64) -> Result<Reference, ExperimentError> {
    // As every run that makes a scratch filesystem: what dead runs left goes first, and a
    // SIGINT or SIGTERM from here on releases what this one makes.
    joj_linux::leftovers::sweep_and_report();
    joj_linux::install_cleanup_handler()?;
    let fail = |e: joj_linux::ScratchError| ExperimentError::Calibrate {
        reason: format!(
            "the reference (a loop device in memory, docs/device-model.md \"The reference\") \
             could not be made: {e}; fix: calibrate as root, on a machine with loop devices"
        ),
    };
    let mut fs = joj_linux::ScratchFs::create(
        joj_linux::FsKind::Ext4,
        joj_linux::ScratchOptions {
            size_bytes: 2 * REFERENCE_REGION,
            ..Default::default()
        },
    )
    .map_err(fail)?;
    let released = |e: joj_linux::ScratchError| ExperimentError::Calibrate {
        reason: format!(
            "the reference's loop device could not be released: {e}; fix: `joj cleanup`"
        ),
    };
    fs.unmount().map_err(released)?;
    let dev = fs.main_device().path.clone();
    let shown = dev.display().to_string();
    let f = open_direct(&dev, 0)?;
    let mut rng = Rng(seed ^ 0x5eed_0f0e);
    let mut buf = Aligned::new(MIB as usize, 0x7e);
    let err = |what: &str| io(format!("{what} on the reference {shown}"));
    let region = REFERENCE_REGION;
    let write_4k = random_4k(
        &f,
        true,
        samples,
        &mut rng,
        &mut buf,
        region,
        err("4 KiB random writes"),
    )?;
    let read_4k = random_4k(
        &f,
        false,
        samples,
        &mut rng,
        &mut buf,
        region,
        err("4 KiB random reads"),
    )?;
    let flush_after_4k = lat(
        samples,
        &mut rng,
        &mut buf,
        &mut |r, b| {
            f.write_all_at(b.bytes(BLOCK as usize), r.block(region))?;
            timed(|| f.sync_data())
        },
        err("a flush after a 4 KiB write"),
    )?;
    let flush_after_4k_clock_ticked = flushes_after_a_tick(
        &f,
        (samples / 10).clamp(10, 100),
        &mut rng,
        &mut buf,
        region,
        err("a 4 KiB write and fdatasync once the clock ticked, again and again,"),
    )?;
    drop(f);
    fs.close().map_err(released)?;
    Ok(Reference {
        write_4k,
        read_4k,
        flush_after_4k,
        flush_after_4k_clock_ticked,
    })
}

/// A page-aligned buffer for `O_DIRECT`.
struct Aligned {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Aligned {
    fn new(bytes: usize, fill: u8) -> Aligned {
        let layout = std::alloc::Layout::from_size_align(bytes.max(4096), 4096)
            .expect("a power-of-two alignment and a size under isize::MAX");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // SAFETY: `ptr` points at `layout.size()` bytes we own.
        unsafe { std::ptr::write_bytes(ptr, fill, layout.size()) };
        Aligned { ptr, layout }
    }

    fn bytes(&self, n: usize) -> &[u8] {
        assert!(n <= self.layout.size());
        // SAFETY: initialised above, owned for the lifetime of `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, n) }
    }

    fn bytes_mut(&mut self, n: usize) -> &mut [u8] {
        assert!(n <= self.layout.size());
        // SAFETY: initialised above, owned and borrowed mutably through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, n) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

// SAFETY: the buffer is plain memory owned by the value.
unsafe impl Send for Aligned {}

/// SplitMix64: the offsets' random source, from one seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A 4 KiB-aligned offset in `0..region`.
    fn block(&mut self, region: u64) -> u64 {
        (self.next() % (region / BLOCK).max(1)) * BLOCK
    }
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ExperimentError {
    let what = what.into();
    move |source| ExperimentError::Io { what, source }
}

fn load_1min() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// The test target: a file made in a directory (removed on drop), or a block device.
struct Target {
    path: PathBuf,
    remove: bool,
    kind: &'static str,
    /// A block device's exclusive open, held for the whole calibration: while it is held no
    /// filesystem can be mounted from the device (the measurement's own descriptors are
    /// opened without it; an exclusive claim conflicts only with other exclusive claims).
    _claim: Option<File>,
}

impl Target {
    /// `O_NOFOLLOW` for the test file joj made (reopened by name: never through a symlink put
    /// in its place), nothing for a block device (often named through one, /dev/disk/by-id).
    fn nofollow(&self) -> i32 {
        if self.remove { libc::O_NOFOLLOW } else { 0 }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn open_direct(path: &Path, extra: i32) -> Result<File, ExperimentError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT | extra)
        .open(path)
        .map_err(io(format!("opening {} with O_DIRECT", path.display())))
}

fn target(opts: &CalibrateOptions) -> Result<Target, ExperimentError> {
    let meta = std::fs::metadata(&opts.path).map_err(io(format!(
        "reading {} (give a directory on the disk to measure, or a block device)",
        opts.path.display()
    )))?;
    if meta.file_type().is_block_device() {
        if !opts.destroy_data {
            return Err(ExperimentError::Calibrate {
                reason: format!(
                    "{} is a block device and calibrating writes over its first {} MiB; fix: \
                     pass --destroy-data if nothing on it matters, or give a directory on it",
                    opts.path.display(),
                    opts.size_bytes / MIB
                ),
            });
        }
        return Ok(Target {
            path: opts.path.clone(),
            remove: false,
            kind: "block device",
            _claim: Some(claim_device(opts)?),
        });
    }
    if !meta.is_dir() {
        return Err(ExperimentError::Calibrate {
            reason: format!(
                "{} is neither a directory nor a block device; fix: give a directory on the \
                 disk to measure (a test file is made there and removed)",
                opts.path.display()
            ),
        });
    }
    check_room(opts)?;
    let path = opts
        .path
        .join(format!("joj-calibrate-{}.img", std::process::id()));
    // Every block written once, then synced: later writes overwrite initialised blocks, so
    // `fdatasync` commits no journal transaction and only flushes the device. Made new (never
    // through a symlink, never a file already there), and only then joj's to remove: a file of
    // that name that was there is somebody else's and stays. Made without `O_DIRECT`: a
    // filesystem that refuses it at open (ramfs) has made the file by then, and the failed open
    // could not say whether the file was there before.
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| {
            // Only a file already there is somebody else's; any other failure is the folder's.
            let why = if e.kind() == std::io::ErrorKind::AlreadyExists {
                "a file of that name that is there is not joj's: it is left as it is"
            } else {
                "fix: give a folder on the disk to measure, where joj may make a file that \
                 takes O_DIRECT"
            };
            io(format!("creating {} ({why})", path.display()))(e)
        })?;
    // Joj's from here: removed on every way out.
    let t = Target {
        path: path.clone(),
        remove: true,
        kind: "file",
        _claim: None,
    };
    direct(&f).map_err(|e| ExperimentError::Calibrate {
        reason: format!(
            "{} is on a filesystem that does not do direct I/O (it refused O_DIRECT: {e}), \
             and calibrating must time the device, not the page cache; the test file made \
             there was removed; fix: give a directory on a disk filesystem (ext4, xfs, …), or \
             a block device",
            opts.path.display()
        ),
    })?;
    let buf = Aligned::new(MIB as usize, 0x5a);
    let mut at = 0;
    while at < opts.size_bytes {
        f.write_all_at(buf.bytes(MIB as usize), at)
            .map_err(|e| full(e, format!("filling {}", path.display())))?;
        at += MIB;
    }
    f.sync_all()
        .map_err(|e| full(e, format!("syncing {}", path.display())))?;
    Ok(t)
}

/// The fix a filesystem that filled up while the test file was written asks for.
const ROOM_FIX: &str = "fix: give a smaller --size-mib, at least 64, or a directory on a \
     filesystem with more free space";

/// The free space of the directory `opts.path`, checked before its test file is made: a file
/// that does not fit would fill the filesystem and fail part way.
fn check_room(opts: &CalibrateOptions) -> Result<(), ExperimentError> {
    let st = rustix::fs::statvfs(&opts.path)
        .map_err(|e| io(format!("reading the free space of {}", opts.path.display()))(e.into()))?;
    let free_bytes = st.f_bavail.saturating_mul(st.f_frsize);
    // A filesystem of no blocks (ramfs) keeps no account of its space: nothing to check.
    if st.f_blocks > 0 && free_bytes < opts.size_bytes {
        let free_mib = free_bytes / MIB;
        // A file of --size-mib MiB takes a few blocks more for the filesystem's own records.
        let fix = if free_mib > 64 {
            format!(
                "fix: give a smaller --size-mib (64 to {}), or a directory on a filesystem with \
                 more free space",
                free_mib - 1
            )
        } else {
            "fix: give a directory on a filesystem with more free space (--size-mib is at \
             least 64)"
                .to_string()
        };
        return Err(ExperimentError::Calibrate {
            reason: format!(
                "{} has {free_mib} MiB free, less than the {} MiB test file calibrating writes \
                 there; nothing was written; {fix}",
                opts.path.display(),
                opts.size_bytes / MIB
            ),
        });
    }
    Ok(())
}

/// Switch `f` to direct I/O (`O_DIRECT`), which its filesystem may refuse.
fn direct(f: &File) -> rustix::io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(f)?;
    rustix::fs::fcntl_setfl(f, flags | rustix::fs::OFlags::DIRECT)
}

/// An I/O error writing the test file; a full filesystem (space taken since [`check_room`],
/// or a quota) names the fix.
fn full(e: std::io::Error, what: String) -> ExperimentError {
    let no_room = matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT));
    io(if no_room {
        format!("{what} ({ROOM_FIX})")
    } else {
        what
    })(e)
}

/// Claim the block device `opts.path` exclusively (`O_EXCL`, as mkfs does), before anything is
/// written. `--destroy-data` says nothing on the device matters; a device a mounted filesystem,
/// md, device-mapper or swap holds is in use by the kernel, and writing under it corrupts a
/// live filesystem, so it is refused. A device smaller than the region is refused too (its
/// writes would fail part way, after the device was written over).
fn claim_device(opts: &CalibrateOptions) -> Result<File, ExperimentError> {
    use std::io::Seek;
    let shown = opts.path.display();
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(&opts.path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::EBUSY) {
                ExperimentError::Calibrate {
                    reason: format!(
                        "{shown} is in use: a mounted filesystem, md, device-mapper or swap \
                         holds it (the kernel refused an exclusive open), and calibrating \
                         would write under it; --destroy-data never covers a device in use; \
                         fix: unmount it (or stop what holds it: `lsblk {shown}`), or give a \
                         directory on it instead"
                    ),
                }
            } else {
                io(format!("opening {shown} exclusively"))(e)
            }
        })?;
    let size = (&f)
        .seek(std::io::SeekFrom::End(0))
        .map_err(io(format!("reading the size of {shown}")))?;
    if size < opts.size_bytes {
        return Err(ExperimentError::Calibrate {
            reason: format!(
                "{shown} holds {} MiB, less than the {} MiB region calibrating writes over; \
                 nothing was written; fix: give a smaller --size-mib (at least 64), or a larger \
                 device",
                size / MIB,
                opts.size_bytes / MIB
            ),
        });
    }
    Ok(f)
}

/// `/sys/block/NAME` of the device holding `path` (for a partition, its disk).
fn sys_block(path: &Path, kind: &str) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    let dev = if kind == "block device" {
        m.rdev()
    } else {
        m.dev()
    };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let link = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    // A partition's directory sits inside its disk's, which has `queue/`.
    [link.clone(), link.parent()?.to_path_buf()]
        .into_iter()
        .find(|p| p.join("queue").is_dir())
}

fn timed(f: impl FnOnce() -> std::io::Result<()>) -> std::io::Result<u64> {
    let t0 = Instant::now();
    f()?;
    Ok(t0.elapsed().as_nanos() as u64)
}

/// `n` samples of `f`, a timed request at a random place.
fn lat(
    n: u64,
    rng: &mut Rng,
    buf: &mut Aligned,
    f: &mut dyn FnMut(&mut Rng, &mut Aligned) -> std::io::Result<u64>,
    on_err: impl FnOnce(std::io::Error) -> ExperimentError,
) -> Result<Latency, ExperimentError> {
    let mut ns = Vec::with_capacity(n as usize);
    for _ in 0..n {
        match f(rng, buf) {
            Ok(t) => ns.push(t),
            Err(e) => return Err(on_err(e)),
        }
    }
    Ok(Latency::of(ns))
}

/// `n` 4 KiB writes (or reads) at random places in the first `region` bytes of `f`, one at a
/// time.
fn random_4k(
    f: &File,
    write: bool,
    n: u64,
    rng: &mut Rng,
    buf: &mut Aligned,
    region: u64,
    on_err: impl FnOnce(std::io::Error) -> ExperimentError,
) -> Result<Latency, ExperimentError> {
    lat(
        n,
        rng,
        buf,
        &mut |r, b| {
            let at = r.block(region);
            if write {
                timed(|| f.write_all_at(b.bytes(BLOCK as usize), at))
            } else {
                timed(|| f.read_exact_at(b.bytes_mut(BLOCK as usize), at))
            }
        },
        on_err,
    )
}

/// `joj device calibrate --json`: what was measured and the profile derived from it
/// (`docs/formats/device-commands.md`).
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationReport {
    pub measured: Measured,
    pub profile: joj_device::Profile,
}

/// Measure `opts.path`.
pub fn measure(opts: &CalibrateOptions) -> Result<Measured, ExperimentError> {
    if opts.size_bytes < 64 * MIB {
        return Err(ExperimentError::Calibrate {
            reason: "the test region must be at least 64 MiB (--size-mib 64)".into(),
        });
    }
    let load_before = load_1min();
    let _awake = opts
        .cpus_awake
        .then(joj_linux::cpu_latency::CpusAwake::hold)
        .transpose()?;
    let t = target(opts)?;
    let shown = t.path.display().to_string();
    let f = open_direct(&t.path, t.nofollow())?;
    let region = opts.size_bytes;
    let n = u64::from(opts.samples.max(10));
    let mut rng = Rng(opts.seed);
    let mut buf = Aligned::new(MIB as usize, 0xa5);
    let err = |what: &str| io(format!("{what} on {shown}"));

    let write_4k = random_4k(
        &f,
        true,
        n,
        &mut rng,
        &mut buf,
        region,
        err("4 KiB random writes"),
    )?;
    f.sync_data().map_err(err("fdatasync"))?;
    let read_4k = random_4k(
        &f,
        false,
        n,
        &mut rng,
        &mut buf,
        region,
        err("4 KiB random reads"),
    )?;
    let write_1m = sequential(&f, true, &mut buf, region, &shown)?;
    f.sync_data().map_err(err("fdatasync"))?;
    let read_1m = sequential(&f, false, &mut buf, region, &shown)?;

    let reps = (n / 10).clamp(10, 100);
    let flush_after = flushes(&f, &mut rng, &buf, region, reps, &shown)?;
    let flush_after_4k_clock_ticked = flushes_after_a_tick(
        &f,
        reps,
        &mut rng,
        &mut buf,
        region,
        err("a 4 KiB write and fdatasync once the clock ticked, again and again,"),
    )?;
    let dsync = open_direct(&t.path, libc::O_DSYNC | t.nofollow())?;
    let dsync_write_4k = lat(
        n,
        &mut rng,
        &mut buf,
        &mut |r, b| {
            let at = r.block(region);
            timed(|| dsync.write_all_at(b.bytes(BLOCK as usize), at))
        },
        err("4 KiB O_DSYNC writes"),
    )?;
    let queue_depth = queue_depths(&t.path, t.nofollow(), region, n, opts.seed)?;
    let reference = Some(reference(n, opts.seed)?);
    let sys = sys_block(&t.path, t.kind);
    let read_sys = |name: &str| {
        sys.as_ref()
            .and_then(|s| std::fs::read_to_string(s.join("queue").join(name)).ok())
            .map(|v| v.trim().to_string())
    };
    Ok(Measured {
        path: shown.clone(),
        kind: t.kind.to_string(),
        device: sys
            .as_ref()
            .and_then(|s| s.file_name())
            .map(|n| n.to_string_lossy().into_owned()),
        fua: read_sys("fua").map(|v| v == "1"),
        write_cache: read_sys("write_cache"),
        region_bytes: region,
        write_4k,
        read_4k,
        seq_write_mib_s: mib_per_s(&write_1m),
        seq_read_mib_s: mib_per_s(&read_1m),
        write_1m,
        read_1m,
        flush_after,
        flush_after_4k_clock_ticked,
        dsync_write_4k,
        queue_depth,
        load_before,
        load_after: load_1min(),
        cpus_awake: opts.cpus_awake,
        reference,
    })
}

/// 1 MiB writes (or reads) over the first 64 MiB of the region, one after the other.
fn sequential(
    f: &File,
    write: bool,
    buf: &mut Aligned,
    region: u64,
    shown: &str,
) -> Result<Latency, ExperimentError> {
    let mut ns = Vec::new();
    let mut at = 0;
    while at + MIB <= region.min(64 * MIB) {
        ns.push(
            if write {
                timed(|| f.write_all_at(buf.bytes(MIB as usize), at))
            } else {
                timed(|| f.read_exact_at(buf.bytes_mut(MIB as usize), at))
            }
            .map_err(io(format!("1 MiB sequential I/O on {shown}")))?,
        );
        at += MIB;
    }
    Ok(Latency::of(ns))
}

/// MiB/s of 1 MiB requests whose median took `l` (0 for a median of 0).
fn mib_per_s(l: &Latency) -> f64 {
    if l.median_us > 0.0 {
        1e6 / l.median_us
    } else {
        0.0
    }
}

/// `fdatasync` after a 4 KiB random write made once the coarse clock ticked, `reps` times (the
/// fdatasync alone is timed); `None` when the clock does not move at all (a side measurement
/// the profile does not use: its absence fails nothing).
fn flushes_after_a_tick(
    f: &File,
    reps: u64,
    rng: &mut Rng,
    buf: &mut Aligned,
    region: u64,
    on_err: impl FnOnce(std::io::Error) -> ExperimentError,
) -> Result<Option<Latency>, ExperimentError> {
    if !joj_linux::clock::wait_for_coarse_tick() {
        return Ok(None);
    }
    lat(
        reps,
        rng,
        buf,
        &mut |r, b| {
            if !joj_linux::clock::wait_for_coarse_tick() {
                return Err(std::io::Error::other(
                    "the kernel's coarse clock (CLOCK_REALTIME_COARSE) did not move within a \
                     second",
                ));
            }
            f.write_all_at(b.bytes(BLOCK as usize), r.block(region))?;
            timed(|| f.sync_data())
        },
        on_err,
    )
    .map(Some)
}

/// Flush latency (`fdatasync` of initialised blocks: a flush only) after N KiB of random 4 KiB
/// writes, `reps` times for each N.
fn flushes(
    f: &File,
    rng: &mut Rng,
    buf: &Aligned,
    region: u64,
    reps: u64,
    shown: &str,
) -> Result<Vec<FlushAfter>, ExperimentError> {
    let err = |what: &str| io(format!("{what} on {shown}"));
    let mut out = Vec::new();
    for kib in [0u64, 4, 16, 64, 256, 1024, 4096] {
        let mut ns = Vec::new();
        for _ in 0..reps {
            for _ in 0..kib / 4 {
                let at = rng.block(region);
                f.write_all_at(buf.bytes(BLOCK as usize), at)
                    .map_err(err("4 KiB random writes"))?;
            }
            ns.push(timed(|| f.sync_data()).map_err(err("fdatasync"))?);
        }
        out.push(FlushAfter {
            kib,
            latency: Latency::of(ns),
        });
    }
    Ok(out)
}

/// 4 KiB random writes from 1, 2, 4 and 8 threads at once, each its own descriptor.
fn queue_depths(
    path: &Path,
    flags: i32,
    region: u64,
    n: u64,
    seed: u64,
) -> Result<Vec<QueueDepthPoint>, ExperimentError> {
    let mut points = Vec::new();
    for qd in [1u32, 2, 4, 8] {
        let per = (n / u64::from(qd)).max(50);
        let t0 = Instant::now();
        let results: Vec<Result<u64, ExperimentError>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..qd)
                .map(|i| {
                    s.spawn(move || {
                        let f = open_direct(path, flags)?;
                        let buf = Aligned::new(BLOCK as usize, 0x3c);
                        let mut rng = Rng(seed ^ ((u64::from(i) + 1) * 0x1000_0001));
                        let mut busy = 0u64;
                        for _ in 0..per {
                            let at = rng.block(region);
                            busy += timed(|| f.write_all_at(buf.bytes(BLOCK as usize), at))
                                .map_err(io("queue-depth writes"))?;
                        }
                        Ok(busy)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(Ok(0)))
                .collect()
        });
        let wall = t0.elapsed().as_secs_f64();
        let busy: u64 = results.into_iter().sum::<Result<u64, _>>()?;
        let total = per * u64::from(qd);
        points.push(QueueDepthPoint {
            queue_depth: qd,
            iops: total as f64 / wall.max(1e-9),
            mean_latency_us: busy as f64 / total as f64 / 1e3,
        });
    }
    Ok(points)
}

/// How a command's fixed time splits between the device's serial work and a latency that
/// commands in flight together overlap, and how deep the queue is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QueueSplit {
    pub queue_depth: u32,
    /// Served one command at a time: the profile's `command_overhead_ns`.
    pub serial_ns: f64,
    /// Overlapped by the commands in flight: the profile's `command_latency_ns`.
    pub latency_ns: f64,
}

impl QueueSplit {
    /// 4 KiB writes per second the model gives `depth` threads that each keep one write in
    /// flight: each write takes `latency + serial + xfer`, and the serial part and the
    /// transfer pass one at a time.
    pub fn model_iops(&self, depth: u32, xfer_ns: f64) -> f64 {
        let one = self.latency_ns + self.serial_ns + xfer_ns;
        let overlapped = f64::from(depth.min(self.queue_depth)) * 1e9 / one.max(1.0);
        overlapped.min(1e9 / (self.serial_ns + xfer_ns).max(1.0))
    }

    /// The model's throughput beside each measured point, and its error.
    fn fit(&self, points: &[QueueDepthPoint], xfer_ns: f64) -> Vec<serde_json::Value> {
        points
            .iter()
            .map(|p| {
                let model = self.model_iops(p.queue_depth, xfer_ns);
                serde_json::json!({
                    "queue_depth": p.queue_depth,
                    "measured_iops": p.iops.round(),
                    "model_iops": model.round(),
                    "error_percent": ((model / p.iops - 1.0) * 1000.0).round() / 10.0,
                })
            })
            .collect()
    }
}

/// Split a 4 KiB write's fixed time `command_ns` (its transfer `xfer_ns` apart) by the
/// queue-depth `points`. The device serves one command at a time only as much as its best
/// throughput allows: `serial = 1 s / best IOPS − xfer`, at most `command_ns`; the rest of
/// `command_ns` overlaps. The queue is as deep as the depth of that best point. A device whose
/// throughput grows by less than 5 % over one thread's (or with no points) is one command at
/// a time: depth 1, all serial — the profile of earlier versions. With the deepest point still
/// growing the serial share is an upper bound (the model then overlaps less than the device).
pub fn queue_split(points: &[QueueDepthPoint], command_ns: f64, xfer_ns: f64) -> QueueSplit {
    let serial_only = QueueSplit {
        queue_depth: 1,
        serial_ns: command_ns,
        latency_ns: 0.0,
    };
    let Some(one) = points.iter().find(|p| p.queue_depth == 1) else {
        return serial_only;
    };
    let Some(best) = points
        .iter()
        .filter(|p| p.iops.is_finite() && p.iops > 0.0)
        .max_by(|a, b| a.iops.total_cmp(&b.iops))
    else {
        return serial_only;
    };
    if best.iops < one.iops * 1.05 || best.queue_depth <= 1 {
        return serial_only;
    }
    let serial = (1e9 / best.iops - xfer_ns).clamp(0.0, command_ns);
    QueueSplit {
        queue_depth: best.queue_depth.min(joj_device::queue::MAX_QUEUE_DEPTH),
        serial_ns: serial,
        latency_ns: command_ns - serial,
    }
}

/// Where each number of a calibrated profile comes from.
fn sources(m: &Measured, split: &QueueSplit) -> Vec<String> {
    vec![
        match &m.reference {
            Some(r) => format!("every latency below less the same pattern's median on joj's memory loop device, the path a modeled run's host time already holds (4 KiB write {:.1} us, also taken off the 1 MiB write; 4 KiB read {:.1} us; flush {:.1} us; docs/device-model.md, \"The reference\")", r.write_4k.median_us, r.read_4k.median_us, r.flush_after_4k.median_us),
            None => "no reference: the latencies below hold the host's path of each command, which a modeled run's host time holds again (measured before 2026-11-27)".to_string(),
        },
        format!("host_bytes_per_s and the command's fixed time: 4 KiB random writes (median {:.1} us) and 1 MiB sequential writes (median {:.1} us), O_DIRECT, queue depth 1", m.write_4k.median_us, m.write_1m.median_us),
        format!("queue_depth, command_overhead_ns (serial) and command_latency_ns (overlapped): 4 KiB random writes from {} thread counts, best {:.0} IOPS at {} threads", m.queue_depth.len(), m.queue_depth.iter().map(|p| p.iops).fold(0.0, f64::max), split.queue_depth),
        format!("read_page_ns: 4 KiB random reads (median {:.1} us) less the command overhead and transfers", m.read_4k.median_us),
        format!("program_page_ns: slope of flush (fdatasync of overwritten blocks) latency over 4 KiB pages written before it, {} points, less a page's transfer at the host bus bandwidth; flush_meta_pages: its intercept less the command's fixed time, in pages of transfer and program", m.flush_after.len()),
        "erase_block_ns: not measured (a fresh device does not garbage-collect in runs of this size); 1 ms".to_string(),
        "geometry: one unit (the measurements cannot tell units apart: commands overlap in command_latency_ns instead), 4 KiB pages, 8 GiB raw, 7 % over-provisioning: not measured".to_string(),
        "cache: 256 MiB write-back, no background destaging, so a flush pays for everything written since the last (as measured)".to_string(),
        "host: this machine (the runs are made here)".to_string(),
    ]
}

/// The Theil–Sen line through `(x, y)` (the median of the pairwise slopes, then the median
/// intercept), which one outlying point does not tilt: (intercept, slope).
fn line(points: &[(f64, f64)]) -> (f64, f64) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            0.0
        } else if v.len() % 2 == 1 {
            v[v.len() / 2]
        } else {
            (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
        }
    };
    let mut slopes = Vec::new();
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            if b.0 != a.0 {
                slopes.push((b.1 - a.1) / (b.0 - a.0));
            }
        }
    }
    let slope = median(slopes);
    let intercept = median(points.iter().map(|(x, y)| y - slope * x).collect());
    (intercept, slope)
}

/// A flush as the model serves it: per page written since the last flush, a transfer over the
/// channel and a program; then `meta_pages` metadata pages, each the same. (A calibration once
/// charged a metadata page the program time alone, and the model then took 232 µs for a flush
/// measured at 84–107 µs: its 140 pages also cost their transfer.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FlushPages {
    pub(crate) program_ns: f64,
    pub(crate) meta_pages: u64,
}

/// The program time and metadata pages that make the model's flush take `intercept_ns +
/// slope_ns × pages` after `pages` pages: the slope less a page's transfer (at least 100 ns,
/// no flash programs faster — a slope below the transfer is then overstated by the model), and
/// the intercept less the command's fixed time in whole pages of that cost (at most
/// `MAX_META_PAGES`, 65,536, the bound a profile is held to).
pub(crate) fn flush_pages(
    intercept_ns: f64,
    slope_ns: f64,
    command_ns: f64,
    page_xfer_ns: f64,
) -> FlushPages {
    let program_ns = (slope_ns - page_xfer_ns).max(100.0);
    let meta_pages = ((intercept_ns - command_ns) / (program_ns + page_xfer_ns))
        .round()
        .clamp(0.0, f64::from(joj_device::config::MAX_META_PAGES)) as u64;
    FlushPages {
        program_ns,
        meta_pages,
    }
}

/// The latencies a profile is derived from, in ns: the device's medians less the
/// [`Reference`]'s of the same pattern, each at least 1 µs; without a reference, as measured.
/// What is taken off is a command's path: a flush after any N KiB loses the reference's flush,
/// and a 1 MiB write the reference's 4 KiB write (the memory loop device's copy of a MiB into
/// its tmpfs is not a path the disk's command shares, and the bus bandwidth stays the
/// difference of the two writes, as measured).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Net {
    pub(crate) write_4k_ns: f64,
    pub(crate) write_1m_ns: f64,
    pub(crate) read_4k_ns: f64,
    /// `(pages written before, flush ns)`.
    pub(crate) flushes: Vec<(f64, f64)>,
}

/// A reference that takes this share of the device's latency of the same pattern or more
/// leaves a difference made mostly of noise.
const DOUBTFUL_REFERENCE_SHARE: f64 = 0.5;

/// What makes a calibration's profile doubtful, one sentence each with its fix: a reference
/// (the memory loop device's path, [`net`] takes it off) as slow as half the device's own
/// latency of the same pattern or more. The host path is then what was measured — a busy
/// machine (a compiler, another run) delays each completion by a scheduler tick or so, on the
/// reference as on the device — and the profile's figures derived from the difference are
/// noise, down to the 1 µs floor (a device that costs nothing). Printed by `joj device
/// calibrate` and kept in the profile's `calibration.warnings`.
pub fn doubts(m: &Measured) -> Vec<String> {
    let Some(r) = &m.reference else {
        return Vec::new();
    };
    let flush = m
        .flush_after
        .iter()
        .min_by_key(|p| p.kib)
        .map(|p| &p.latency);
    let pairs = [
        (
            "4 KiB write",
            &r.write_4k,
            Some(&m.write_4k),
            "command time, queue split and bus",
        ),
        ("4 KiB read", &r.read_4k, Some(&m.read_4k), "read_page_ns"),
        (
            "flush",
            &r.flush_after_4k,
            flush,
            "flush_meta_pages and program_page_ns",
        ),
    ];
    pairs
        .into_iter()
        .filter_map(|(what, reference, device, fields)| {
            let device = device?;
            (reference.median_us >= DOUBTFUL_REFERENCE_SHARE * device.median_us).then(|| {
                format!(
                    "the reference's {what} ({:.1} us, the memory loop device's path) is {:.0} % \
                     of the device's ({:.1} us): what is left once it is taken off is mostly \
                     noise, and the profile's {fields} come from it; a host path this slow \
                     means the machine was busy while it was measured (load {:.2} → {:.2}); \
                     fix: calibrate again on an idle machine (--cpus-awake steadies it), and \
                     do not use this profile",
                    reference.median_us,
                    100.0 * reference.median_us / device.median_us.max(f64::MIN_POSITIVE),
                    device.median_us,
                    m.load_before,
                    m.load_after
                )
            })
        })
        .collect()
}

/// [`Net`] of `m`: less its reference where it has one.
pub(crate) fn net(m: &Measured) -> Net {
    let less = |l: &Latency, r: Option<&Latency>| {
        let us = l.median_us - r.map_or(0.0, |r| r.median_us);
        (if r.is_some() { us.max(1.0) } else { us }) * 1e3
    };
    let r = m.reference.as_ref();
    Net {
        write_4k_ns: less(&m.write_4k, r.map(|r| &r.write_4k)),
        write_1m_ns: less(&m.write_1m, r.map(|r| &r.write_4k)),
        read_4k_ns: less(&m.read_4k, r.map(|r| &r.read_4k)),
        flushes: m
            .flush_after
            .iter()
            .map(|p| {
                (
                    (p.kib / 4) as f64,
                    less(&p.latency, r.map(|r| &r.flush_after_4k)),
                )
            })
            .collect(),
    }
}

/// A calibrated profile's description. A path may hold any byte but `/` and NUL, and a
/// profile's text no control character (`joj_device::profile_text`): the path is written plain.
fn description(m: &Measured) -> String {
    let plain = joj_device::profile_text::plain;
    format!(
        "Calibrated by joj device calibrate from O_DIRECT measurements of {} ({}{}): one unit of \
         4 KiB pages behind a write-back cache that the flush empties. Nothing here comes from a \
         SQLite run.",
        plain(&m.path),
        m.kind,
        m.device
            .as_ref()
            .map(|d| format!(" on {}", plain(d)))
            .unwrap_or_default()
    )
}

/// The device profile the measurements give (the derivation is the module's header), with
/// this machine as its host and the measurements under `calibration`.
pub fn profile_from(m: &Measured, name: &str) -> Result<joj_device::Profile, ExperimentError> {
    let Net {
        write_4k_ns: w4,
        write_1m_ns: w1m,
        read_4k_ns: r4,
        flushes: pts,
    } = net(m);
    // Host bus: the time a MiB adds over 4 KiB; what is left of a 4 KiB write is the command.
    let host_bps = if w1m > w4 {
        ((MIB - BLOCK) as f64 / ((w1m - w4) / 1e9)).round()
    } else {
        MIB as f64 / (w1m.max(1.0) / 1e9)
    }
    .clamp(1e6, joj_device::config::MAX_BYTES_PER_S as f64);
    let xfer_4k = BLOCK as f64 / host_bps * 1e9;
    let overhead = (w4 - xfer_4k).max(0.0);
    let split = queue_split(&m.queue_depth, overhead, xfer_4k);
    let read_page = (r4 - overhead - 2.0 * xfer_4k).max(1.0);
    let (intercept, slope) = line(&pts);
    let FlushPages {
        program_ns: program,
        meta_pages,
    } = flush_pages(intercept, slope, overhead, xfer_4k);
    let calibration = serde_json::json!({
        "tool": "joj device calibrate",
        "measured": m,
        "warnings": doubts(m),
        "derived": {
            "reference subtracted (us: the memory loop device's medians, taken off each latency before the rest is derived)": m.reference.as_ref().map(|r| serde_json::json!({
                "write_4k": r.write_4k.median_us, "read_4k": r.read_4k.median_us,
                "flush": r.flush_after_4k.median_us,
            })),
            "host_bytes_per_s": host_bps,
            "command time ns (4 KiB write less its transfer)": overhead.round(),
            "command_overhead_ns (serial: 1 s / best IOPS less the transfer)": split.serial_ns.round(),
            "command_latency_ns (the rest, overlapped)": split.latency_ns.round(),
            "queue_depth (the depth of the best IOPS)": split.queue_depth,
            "read_page_ns": read_page.round(),
            "flush latency slope ns per 4 KiB page": slope.round(),
            "program_page_ns (the slope less a page's transfer, at least 100)": program.round(),
            "flush latency intercept ns": intercept.round(),
            "flush_meta_pages ((intercept - command time) / (program + transfer))": meta_pages,
        },
        "queue_depth": {
            "what": "4 KiB O_DIRECT random writes from N threads at once, each its own descriptor; the model's IOPS for the same threads beside (serial share and latency as derived)",
            "points": m.queue_depth,
            "fit": split.fit(&m.queue_depth, xfer_4k),
        },
    });
    let raw_pages: u64 = 8 * (1 << 30) / BLOCK;
    let doc = serde_json::json!({
        "name": name,
        "description": description(m),
        "sources": sources(m, &split),
        "geometry": {
            "page_bytes": BLOCK, "pages_per_block": 256,
            "blocks_per_plane": raw_pages / 256, "planes_per_die": 1,
            "dies_per_channel": 1, "channels": 1, "sector_bytes": 512
        },
        "timing": {
            "read_page_ns": read_page.round() as u64,
            "program_page_ns": program.round() as u64,
            "erase_block_ns": 1_000_000u64,
            "channel_bytes_per_s": host_bps as u64,
            "host_bytes_per_s": host_bps as u64,
            "command_overhead_ns": split.serial_ns.round() as u64,
            "command_latency_ns": split.latency_ns.round() as u64,
            "queue_depth": split.queue_depth
        },
        "cache": {
            "capacity_bytes": 256 * MIB, "destage_watermark_percent": 100,
            "idle_destage_after_ns": 0, "partial_page_write_through": false
        },
        "ftl": {
            "over_provisioning_percent": 7.0, "gc_policy": "greedy", "gc_free_blocks": 4,
            "checkpoint_interval_programs": 65536, "flush_meta_pages": meta_pages
        },
        "data_mode": "full",
        "host": {
            "name": "this machine",
            "cpu_factor": 1.0,
            "sources": ["the runs are made on the machine calibrated: its host time as measured in each run"]
        },
        "calibration": calibration,
    });
    joj_device::Profile::from_json(&doc.to_string()).map_err(|e| ExperimentError::Calibrate {
        reason: format!("the derived profile is invalid: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lat(us: f64) -> Latency {
        Latency {
            samples: 10,
            median_us: us,
            p10_us: us,
            p90_us: us,
        }
    }

    /// A disk whose 4 KiB write takes 50 us, 1 MiB 1,070 us, a read 80 us, and a flush
    /// 100 us + 20 us a page written before it; no queue-depth points, no reference.
    fn measured() -> Measured {
        Measured {
            path: "/x".into(),
            kind: "file".into(),
            device: None,
            fua: Some(false),
            write_cache: None,
            region_bytes: 64 * MIB,
            write_4k: lat(50.0),
            read_4k: lat(80.0),
            write_1m: lat(50.0 + 1020.0),
            read_1m: lat(1100.0),
            seq_write_mib_s: 0.0,
            seq_read_mib_s: 0.0,
            flush_after: [0u64, 4, 16, 64]
                .iter()
                .map(|&kib| FlushAfter {
                    kib,
                    latency: lat(100.0 + kib as f64 / 4.0 * 20.0),
                })
                .collect(),
            flush_after_4k_clock_ticked: None,
            dsync_write_4k: lat(150.0),
            queue_depth: vec![],
            load_before: 0.0,
            load_after: 0.0,
            cpus_awake: false,
            reference: None,
        }
    }

    /// A reference measured as slow as the device (a busy machine: 3.85 ms a flush on the
    /// memory loop device, seen in four of five short calibrations under load) is said, with
    /// its fix, and kept in the profile; a reference well below the device's is not.
    #[test]
    fn a_reference_as_slow_as_the_device_is_doubted_aloud() {
        let mut m = measured();
        m.reference = Some(Reference {
            write_4k: lat(12.0),
            read_4k: lat(11.0),
            flush_after_4k: lat(11.0),
            flush_after_4k_clock_ticked: None,
        });
        assert!(doubts(&m).is_empty(), "{:?}", doubts(&m));
        m.reference.as_mut().unwrap().flush_after_4k = lat(3850.0);
        let d = doubts(&m);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].contains("the reference's flush (3850.0 us")
                && d[0].contains("of the device's (100.0 us)")
                && d[0].contains("fix: calibrate again"),
            "{}",
            d[0]
        );
        let p = profile_from(&m, "t").unwrap();
        let kept = &p.calibration.as_ref().unwrap()["warnings"];
        assert_eq!(kept.as_array().unwrap().len(), 1, "{kept}");
    }

    #[test]
    fn the_profile_follows_the_measurements() {
        let m = measured();
        let p = profile_from(&m, "t").unwrap();
        // 1020 KiB in 1020 us: 1 KiB/us, so a 4 KiB transfer is 4 us and the command 46 us.
        assert!((p.timing.host_bytes_per_s as f64 - 1024.0 * 1e6).abs() < 1e4);
        assert!((p.timing.command_overhead_ns as i64 - 46_000).abs() < 100);
        // A slope of 20 us a page: 4 us of transfer and 16 us of program.
        assert!((p.timing.program_page_ns as i64 - 16_000).abs() < 10);
        // Intercept 100 us, less 46 us of command, is 2.7 pages of 20 us: 3.
        assert_eq!(p.ftl.flush_meta_pages, 3);
        // One point far off the line does not tilt it.
        let mut m2 = m.clone();
        m2.flush_after[2].latency = lat(5000.0);
        let p2 = profile_from(&m2, "t").unwrap();
        assert!((p2.timing.program_page_ns as i64 - 16_000).abs() < 10);
        assert!(p.calibration.is_some() && p.host.is_some());
        // No queue-depth points: one command at a time, all of its fixed time serial.
        assert_eq!((p.timing.queue_depth, p.timing.command_latency_ns), (1, 0));
        // With this machine's scaling the fixed time splits, and stays whole.
        let mut m3 = m.clone();
        m3.queue_depth = points(&[(1, 21_120.0), (2, 35_168.0), (4, 54_640.0), (8, 74_399.0)]);
        let p3 = profile_from(&m3, "t").unwrap();
        assert_eq!(p3.timing.queue_depth, 8);
        assert!(p3.timing.command_latency_ns > 30_000, "{:?}", p3.timing);
        let whole = p3.timing.command_overhead_ns + p3.timing.command_latency_ns;
        assert!((whole as i64 - 46_000).abs() <= 1, "{:?}", p3.timing);
        // The flush once the clock ticked is kept, not used: the device model is the same.
        let mut m4 = m.clone();
        m4.flush_after_4k_clock_ticked = Some(lat(5000.0));
        let p4 = profile_from(&m4, "t").unwrap();
        assert_eq!((p4.timing, p4.ftl), (p.timing, p.ftl));
    }

    /// With a reference, each latency has the reference's median of the same pattern taken
    /// off before anything is derived, and none falls below 1 µs; the derived section says so.
    #[test]
    fn the_reference_is_taken_off_before_the_profile_is_derived() {
        let mut m = Measured {
            reference: Some(Reference {
                write_4k: lat(10.0),
                read_4k: lat(12.0),
                flush_after_4k: lat(20.0),
                flush_after_4k_clock_ticked: Some(lat(25.0)),
            }),
            ..measured()
        };
        let p = profile_from(&m, "t").unwrap();
        // Net: a 4 KiB write 40 us, 1 MiB 1060 us: still 1 KiB/us, so the command is 36 us.
        assert!((p.timing.host_bytes_per_s as f64 - 1024.0 * 1e6).abs() < 1e4);
        assert!((p.timing.command_overhead_ns as i64 - 36_000).abs() < 100);
        // The flush's slope is unchanged (16 us of program); its intercept is 80 us, less the
        // command's 36 us: 2.2 pages of 20 us, 2.
        assert!((p.timing.program_page_ns as i64 - 16_000).abs() < 10);
        assert_eq!(p.ftl.flush_meta_pages, 2);
        // A read: 80 - 12 us, less the command and two transfers.
        assert!((p.timing.read_page_ns as i64 - 24_000).abs() < 100);
        let cal = p.calibration.as_ref().unwrap();
        let said = &cal["derived"]["reference subtracted (us: the memory loop device's medians, taken off each latency before the rest is derived)"];
        assert_eq!(said["flush"], 20.0, "{cal}");
        // A reference slower than the device leaves 1 us, not a negative time.
        m.reference.as_mut().unwrap().write_4k = lat(500.0);
        assert_eq!(net(&m).write_4k_ns, 1000.0);
        // Without one, the latencies are as measured.
        m.reference = None;
        assert_eq!(net(&m).write_4k_ns, 50_000.0);
    }

    /// The model's flush, on a profile calibrated from a disk whose flush took `107 + 1.5 ×
    /// pages` µs after `pages` 4 KiB pages, takes that time: the metadata pages and the pages
    /// written cost what the model charges for them, transfer included (it took 21 % more when
    /// calibration counted the program time alone).
    #[test]
    fn the_modeled_flush_takes_the_measured_time() {
        use joj_device::{BlockDevice, DataMode, Emmc, WriteFlags};
        let flush_us = |kib: u64| 107.0 + kib as f64 / 4.0 * 1.5;
        let m = Measured {
            path: "/dev/loop0".into(),
            kind: "block device".into(),
            device: None,
            fua: Some(false),
            write_cache: None,
            region_bytes: 64 * MIB,
            write_4k: lat(72.6),
            read_4k: lat(80.0),
            write_1m: lat(300.0),
            read_1m: lat(400.0),
            seq_write_mib_s: 0.0,
            seq_read_mib_s: 0.0,
            flush_after: [0u64, 4, 16, 64, 256, 1024]
                .iter()
                .map(|&kib| FlushAfter {
                    kib,
                    latency: lat(flush_us(kib)),
                })
                .collect(),
            flush_after_4k_clock_ticked: None,
            dsync_write_4k: lat(180.0),
            queue_depth: vec![],
            load_before: 0.0,
            load_after: 0.0,
            cpus_awake: false,
            reference: None,
        };
        let p = profile_from(&m, "t")
            .unwrap()
            .with_data_mode(DataMode::OobOnly);
        let mut dev = Emmc::new(&p).unwrap();
        let page = vec![0u8; BLOCK as usize];
        dev.flush().unwrap();
        let mut at = 0u64;
        for pages in [0u64, 16, 256] {
            for _ in 0..pages {
                dev.write(at, &page, WriteFlags::NONE).unwrap();
                at += BLOCK;
            }
            dev.flush().unwrap();
            let c = dev.last_command();
            let modeled_us = (c.done_ns - c.arrival_ns) as f64 / 1e3;
            let measured_us = flush_us(pages * 4);
            assert!(
                (modeled_us / measured_us - 1.0).abs() < 0.03,
                "after {pages} pages: modeled {modeled_us:.1} us, measured {measured_us:.1} us ({:?} {:?})",
                p.timing,
                p.ftl.flush_meta_pages
            );
        }
    }

    fn points(p: &[(u32, f64)]) -> Vec<QueueDepthPoint> {
        p.iter()
            .map(|&(queue_depth, iops)| QueueDepthPoint {
                queue_depth,
                iops,
                mean_latency_us: 0.0,
            })
            .collect()
    }

    #[test]
    fn the_serial_share_is_what_the_best_throughput_allows() {
        // 47 us a write at one thread; 74,399 IOPS at eight is 13.44 us a write, 1 us of it
        // the transfer.
        let s = queue_split(
            &points(&[(1, 21_120.0), (2, 35_168.0), (4, 54_640.0), (8, 74_399.0)]),
            46_000.0,
            1_000.0,
        );
        assert_eq!(s.queue_depth, 8);
        assert!((s.serial_ns - 12_441.0).abs() < 1.0, "{s:?}");
        assert!((s.latency_ns + s.serial_ns - 46_000.0).abs() < 1e-6);
        // The model gives one thread its whole command, eight the best throughput.
        assert!((s.model_iops(1, 1_000.0) - 1e9 / 47_000.0).abs() < 1.0);
        assert!((s.model_iops(8, 1_000.0) - 74_399.0).abs() < 1.0);
    }

    #[test]
    fn a_device_that_does_not_scale_serves_one_command_at_a_time() {
        for p in [
            points(&[(1, 20_000.0), (2, 20_500.0), (8, 20_900.0)]),
            points(&[(2, 40_000.0)]),
            vec![],
        ] {
            let s = queue_split(&p, 46_000.0, 1_000.0);
            assert_eq!(
                (s.queue_depth, s.serial_ns, s.latency_ns),
                (1, 46_000.0, 0.0),
                "{p:?}"
            );
        }
    }

    #[test]
    fn the_serial_share_never_exceeds_the_command() {
        // A best throughput below one thread's rate of whole commands (noise): all serial.
        let s = queue_split(&points(&[(1, 10_000.0), (4, 11_000.0)]), 46_000.0, 1_000.0);
        assert_eq!(s.queue_depth, 4);
        assert_eq!((s.serial_ns, s.latency_ns), (46_000.0, 0.0));
    }
}
