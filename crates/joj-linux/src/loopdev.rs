//! Loop devices attached to a backing file through the kernel's ioctls: `LOOP_CTL_GET_FREE` on
//! `/dev/loop-control`, then `LOOP_CONFIGURE` (or `LOOP_SET_FD` + `LOOP_SET_STATUS64` on
//! kernels before 5.8) on `/dev/loopN`, and `LOOP_CLR_FD` to detach.
//!
//! Loop devices are shared by the whole machine and other processes attach them concurrently, so
//! a free index may be taken between `GET_FREE` and `CONFIGURE`; attach then retries with the
//! next free one. Ownership is proved, not assumed: a [`LoopDevice`] keeps `/dev/loopN` open for
//! its lifetime, is configured with `LO_FLAGS_AUTOCLEAR` (so the kernel detaches it by itself
//! when the last opener goes away, even if this process is killed), and before detaching it
//! checks with `LOOP_GET_STATUS64` that the device is still backed by the inode it attached.
//! A device that is not provably ours is never detached.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::dev::DevNum;
use crate::mounts;
use crate::prereq::LOOP_CONTROL;

// From <linux/loop.h>.
const LOOP_SET_FD: libc::c_ulong = 0x4C00;
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LOOP_SET_STATUS64: libc::c_ulong = 0x4C04;
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
const LO_FLAGS_AUTOCLEAR: u32 = 4;
const LO_FLAGS_DIRECT_IO: u32 = 16;
const LO_NAME_SIZE: usize = 64;
const LO_KEY_SIZE: usize = 32;

/// How many times attach looks for another free device after losing a race for one.
const ATTACH_ATTEMPTS: u32 = 256;
/// How long detach waits for another opener of the device to close it.
const DETACH_WAIT: Duration = Duration::from_secs(3);

/// `struct loop_info64`.
#[repr(C)]
#[derive(Clone, Copy)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; LO_NAME_SIZE],
    lo_crypt_name: [u8; LO_NAME_SIZE],
    lo_encrypt_key: [u8; LO_KEY_SIZE],
    lo_init: [u64; 2],
}

/// `struct loop_config`.
#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

const _: () = assert!(std::mem::size_of::<LoopInfo64>() == 232);
const _: () = assert!(std::mem::size_of::<LoopConfig>() == 304);

impl LoopInfo64 {
    fn zeroed() -> Self {
        Self {
            lo_device: 0,
            lo_inode: 0,
            lo_rdevice: 0,
            lo_offset: 0,
            lo_sizelimit: 0,
            lo_number: 0,
            lo_encrypt_type: 0,
            lo_encrypt_key_size: 0,
            lo_flags: 0,
            lo_file_name: [0; LO_NAME_SIZE],
            lo_crypt_name: [0; LO_NAME_SIZE],
            lo_encrypt_key: [0; LO_KEY_SIZE],
            lo_init: [0; 2],
        }
    }
}

/// How a loop device reaches its backing file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoopOptions {
    /// Open the backing file with `O_DIRECT` (`LO_FLAGS_DIRECT_IO`): no double caching in the
    /// host page cache. Off by default: buffered backing works on any host filesystem, and the
    /// requests joj traces are the ones *issued to the loop device*, identical either way.
    pub direct_io: bool,
    /// Logical block size in bytes (512, 1024, 2048 or 4096); `None` keeps the kernel's 512.
    pub block_size: Option<u32>,
}

/// A loop device this process attached.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoopError {
    #[error("cannot open {LOOP_CONTROL}: {source}; fix: `modprobe loop` and run as root")]
    OpenControl { source: std::io::Error },
    #[error("no free loop device ({source}); fix: detach unused ones (`losetup -a` lists them)")]
    NoFreeDevice { source: std::io::Error },
    #[error("cannot open the backing file {path}: {source}; fix: check the image directory")]
    OpenBacking {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open {path}: {source}; fix: check that devtmpfs is mounted on /dev")]
    OpenDevice {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot attach {backing} to {device}: {source}; fix: for direct I/O the backing \
         filesystem must support O_DIRECT, otherwise check `dmesg`"
    )]
    Configure {
        device: PathBuf,
        backing: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "every free loop device was taken by another process before we could attach \
         {backing} ({ATTACH_ATTEMPTS} attempts); fix: retry when the machine is less busy"
    )]
    AlwaysRaced { backing: PathBuf },
    #[error("cannot query {device}: {source}; fix: check `losetup {device}` and `dmesg`")]
    Status {
        device: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{device} is not backed by our file {backing} any more, so it is left alone; fix: \
         inspect it with `losetup {device}` and detach it by hand if it is stale"
    )]
    NotOurs { device: PathBuf, backing: PathBuf },
    #[error(
        "cannot detach {device}: {source}; fix: unmount whatever uses it, then `losetup -d {device}`"
    )]
    Detach {
        device: PathBuf,
        source: std::io::Error,
    },
    /// A mount that kept the device busy could not be taken away.
    #[error(transparent)]
    Unmount(#[from] mounts::UnmountError),
    /// Detached, but the kernel keeps the device bound to its image while something has it
    /// open: it is not removed, and the sweep says so rather than that it removed it.
    #[error(
        "{device} still serves {} after it was detached: {holders}; the kernel frees it when \
         that lets go; fix: stop what holds it (`fuser -v {device}`), then `losetup -d {device}` \
         if it stays",
        .backing.display()
    )]
    StillBound {
        device: PathBuf,
        backing: PathBuf,
        /// What holds it, as far as joj can tell (processes that have it open).
        holders: String,
    },
}

/// A loop device attached by this process to a backing file. Detached on [`LoopDevice::detach`]
/// or drop — only after proving it still serves our backing file.
#[derive(Debug)]
pub struct LoopDevice {
    index: u32,
    path: PathBuf,
    dev: DevNum,
    backing: PathBuf,
    /// `(st_dev, st_ino)` of the backing file, as `LOOP_GET_STATUS64` reports them.
    backing_id: (u64, u64),
    /// Kept open so the device cannot be cleared and reused by someone else while we own it.
    device: Option<File>,
}

impl LoopDevice {
    /// Attaches `backing` to a free loop device.
    pub fn attach(backing: &Path, options: &LoopOptions) -> Result<Self, LoopError> {
        let backing_file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(backing)
            .map_err(|source| LoopError::OpenBacking {
                path: backing.into(),
                source,
            })?;
        let meta = backing_file
            .metadata()
            .map_err(|source| LoopError::OpenBacking {
                path: backing.into(),
                source,
            })?;
        let backing_id = (meta.dev(), meta.ino());
        // The name sysfs shows for the backing file, used to see when the kernel lets go of it.
        let backing = &std::fs::canonicalize(backing).map_err(|source| LoopError::OpenBacking {
            path: backing.into(),
            source,
        })?;
        let control = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(LOOP_CONTROL)
            .map_err(|source| LoopError::OpenControl { source })?;

        for _ in 0..ATTACH_ATTEMPTS {
            // SAFETY: LOOP_CTL_GET_FREE takes no argument and returns an index or -1.
            let index = unsafe { libc::ioctl(control.as_raw_fd(), LOOP_CTL_GET_FREE as _) };
            if index < 0 {
                return Err(LoopError::NoFreeDevice {
                    source: std::io::Error::last_os_error(),
                });
            }
            let index = index.unsigned_abs();
            let path = PathBuf::from(format!("/dev/loop{index}"));
            let device = match open_device_node(&path) {
                Ok(d) => d,
                // The device is being torn down by whoever detached it last; GET_FREE will
                // offer it again once that is done, or another one.
                Err(LoopError::OpenDevice { source, .. })
                    if source.raw_os_error() == Some(libc::ENXIO) =>
                {
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                }
                Err(e) => return Err(e),
            };
            match configure(&device, &backing_file, backing, options) {
                Ok(()) => {}
                // Another process configured this index between GET_FREE and now.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => continue,
                Err(source) => {
                    return Err(LoopError::Configure {
                        device: path,
                        backing: backing.into(),
                        source,
                    });
                }
            }
            let dev = DevNum::of_block_device(&path).map_err(|source| LoopError::OpenDevice {
                path: path.clone(),
                source,
            })?;
            let me = Self {
                index,
                path,
                dev,
                backing: backing.into(),
                backing_id,
                device: Some(device),
            };
            if !me.is_ours()? {
                return Err(LoopError::NotOurs {
                    device: me.path.clone(),
                    backing: me.backing.clone(),
                });
            }
            return Ok(me);
        }
        Err(LoopError::AlwaysRaced {
            backing: backing.into(),
        })
    }

    /// `/dev/loopN`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// N in `/dev/loopN`.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The device number (`7:N` for loop devices).
    pub fn dev(&self) -> DevNum {
        self.dev
    }

    /// The file this device serves.
    pub fn backing_file(&self) -> &Path {
        &self.backing
    }

    /// Whether the device is still backed by the inode we attached.
    pub fn is_ours(&self) -> Result<bool, LoopError> {
        let Some(device) = &self.device else {
            return Ok(false);
        };
        let mut info = LoopInfo64::zeroed();
        // SAFETY: LOOP_GET_STATUS64 writes one `struct loop_info64` to the pointer, which points
        // to a live value of exactly that layout.
        let rc = unsafe {
            libc::ioctl(
                device.as_raw_fd(),
                LOOP_GET_STATUS64 as _,
                &mut info as *mut LoopInfo64,
            )
        };
        if rc < 0 {
            let source = std::io::Error::last_os_error();
            // ENXIO: nothing is attached any more.
            if source.raw_os_error() == Some(libc::ENXIO) {
                return Ok(false);
            }
            return Err(LoopError::Status {
                device: self.path.clone(),
                source,
            });
        }
        Ok((info.lo_device, info.lo_inode) == self.backing_id)
    }

    /// Detaches the device. With our descriptor the last one open, the kernel tears the device
    /// down when that descriptor closes, before this returns; if someone else still has it open
    /// (a lazily unmounted filesystem), the kernel detaches it when they let go.
    pub fn detach(mut self) -> Result<(), LoopError> {
        self.detach_inner()
    }

    fn detach_inner(&mut self) -> Result<(), LoopError> {
        if self.device.is_none() {
            return Ok(());
        }
        if !self.is_ours()? {
            // Either already cleared (fine) or — impossible while we hold it open — rebound.
            self.device = None;
            return Ok(());
        }
        // What still mounts it was made by the command run on it (a bind mount of the scratch
        // filesystem elsewhere, a mount stacked on it): it goes with the device.
        match mounts::unmount_holding(self.dev) {
            Ok(gone) => {
                for p in gone {
                    eprintln!(
                        "joj-linux: unmounted {}, a mount of {} (or on it) that joj did not make",
                        p.display(),
                        self.path.display()
                    );
                }
            }
            Err(problem) => eprintln!("joj-linux: warning: {problem}"),
        }
        let Some(device) = self.device.take() else {
            return Ok(());
        };
        // SAFETY: LOOP_CLR_FD takes no argument.
        let rc = unsafe { libc::ioctl(device.as_raw_fd(), LOOP_CLR_FD as _) };
        if rc < 0 {
            let source = std::io::Error::last_os_error();
            if source.raw_os_error() != Some(libc::ENXIO) {
                self.device = Some(device);
                return Err(LoopError::Detach {
                    device: self.path.clone(),
                    source,
                });
            }
        }
        drop(device);
        if !wait_until_released(self.index, &self.backing) {
            eprintln!(
                "joj-linux: warning: {}; a later `joj cleanup` removes it once free",
                still_bound(self.index, &self.backing)
            );
        }
        Ok(())
    }
}

/// The backing file `/dev/loop<index>` serves, as sysfs shows it (a deleted file's name ends in
/// ` (deleted)`); `None` when the device serves none.
pub(crate) fn backing_file(index: u32) -> Option<PathBuf> {
    let sysfs = format!("/sys/block/loop{index}/loop/backing_file");
    let text = std::fs::read_to_string(sysfs).ok()?;
    Some(PathBuf::from(text.trim_end_matches('\n')))
}

/// Waits (briefly) until `/dev/loop<index>` no longer serves `backing`; `false` when it still
/// does. Another process that merely has the device open — a filesystem tool scanning every
/// block device, say — defers the teardown until it closes it; the device is ours until then
/// and freed after.
fn wait_until_released(index: u32, backing: &Path) -> bool {
    let deadline = std::time::Instant::now() + DETACH_WAIT;
    while backing_file(index).is_some_and(|b| b == backing) {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// The error for `/dev/loop<index>` still serving `backing`, with the processes that have it
/// open.
fn still_bound(index: u32, backing: &Path) -> LoopError {
    let device = PathBuf::from(format!("/dev/loop{index}"));
    let openers = openers(&device);
    let holders = if openers.is_empty() {
        "nothing joj can see has it open (a mount in another mount namespace, or a kernel user)"
            .to_string()
    } else {
        format!("open by {}", openers.join(", "))
    };
    LoopError::StillBound {
        device,
        backing: backing.to_path_buf(),
        holders,
    }
}

/// The processes with `device` open (`pid (name)`), from their `/proc/<pid>/fd` links.
fn openers(device: &Path) -> Vec<String> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        if fds
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == device))
        {
            let name = std::fs::read_to_string(p.path().join("comm")).unwrap_or_default();
            found.push(format!("process {pid} ({})", name.trim_end()));
        }
    }
    found
}

/// Detaches `/dev/loop<index>` if it still serves `backing` (named as [`backing_file`] names
/// it): a device a dead joj attached, found by the leftovers sweep, in no registry of this
/// process. Ownership is the name of the backing file, checked again with the device open just
/// before `LOOP_CLR_FD`; a device serving anything else is left alone. Every mount that keeps
/// the device busy is unmounted first ([`mounts::unmount_holding`]: a bind mount a traced
/// command made of the scratch filesystem, mounts stacked on it); their mount points are
/// returned, also when the device could not be freed. `Ok` once the device no longer serves
/// `backing` — detached here, or already by the kernel (autoclear, when the filesystem on it
/// was unmounted); `StillBound` when something still holds it after the wait.
pub(crate) fn detach_stale(index: u32, backing: &Path) -> (Vec<PathBuf>, Result<(), LoopError>) {
    let path = PathBuf::from(format!("/dev/loop{index}"));
    let serves = || backing_file(index).is_some_and(|b| b == backing);
    if !serves() {
        return (Vec::new(), Ok(()));
    }
    let device = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(&path)
    {
        Ok(d) => d,
        Err(e)
            if e.raw_os_error() == Some(libc::ENXIO)
                || e.kind() == std::io::ErrorKind::NotFound =>
        {
            return (Vec::new(), Ok(()));
        }
        Err(source) => {
            return (Vec::new(), Err(LoopError::OpenDevice { path, source }));
        }
    };
    if !serves() {
        return (Vec::new(), Ok(()));
    }
    let unmounted = match DevNum::of_block_device(&path).map(mounts::unmount_holding) {
        Ok(Ok(gone)) => gone,
        Ok(Err(problem)) => return (Vec::new(), Err(problem.into())),
        Err(source) => {
            return (Vec::new(), Err(LoopError::OpenDevice { path, source }));
        }
    };
    // SAFETY: LOOP_CLR_FD takes no argument.
    let rc = unsafe { libc::ioctl(device.as_raw_fd(), LOOP_CLR_FD as _) };
    if rc < 0 {
        let source = std::io::Error::last_os_error();
        if source.raw_os_error() != Some(libc::ENXIO) {
            let e = LoopError::Detach {
                device: path,
                source,
            };
            return (unmounted, Err(e));
        }
    }
    drop(device);
    if !wait_until_released(index, backing) {
        return (unmounted, Err(still_bound(index, backing)));
    }
    (unmounted, Ok(()))
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        if let Err(e) = self.detach_inner() {
            eprintln!("joj-linux: warning: {e}");
        }
    }
}

/// Opens `/dev/loopN`, waiting briefly for the node when the index is brand new.
fn open_device_node(path: &Path) -> Result<File, LoopError> {
    let mut last = None;
    for _ in 0..50 {
        match OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(path)
        {
            Ok(f) => return Ok(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                last = Some(e);
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(source) => {
                return Err(LoopError::OpenDevice {
                    path: path.into(),
                    source,
                });
            }
        }
    }
    let source = last.unwrap_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound));
    Err(LoopError::OpenDevice {
        path: path.into(),
        source,
    })
}

fn configure(
    device: &File,
    backing_file: &File,
    backing: &Path,
    options: &LoopOptions,
) -> std::io::Result<()> {
    let mut info = LoopInfo64::zeroed();
    info.lo_flags = LO_FLAGS_AUTOCLEAR
        | if options.direct_io {
            LO_FLAGS_DIRECT_IO
        } else {
            0
        };
    let name = backing.as_os_str().as_encoded_bytes();
    let n = name.len().min(LO_NAME_SIZE - 1);
    info.lo_file_name[..n].copy_from_slice(&name[..n]);
    let config = LoopConfig {
        fd: backing_file.as_raw_fd().unsigned_abs(),
        block_size: options.block_size.unwrap_or(0),
        info,
        reserved: [0; 8],
    };
    // SAFETY: LOOP_CONFIGURE reads one `struct loop_config` from the pointer, which points to a
    // live value of exactly that layout.
    let rc = unsafe {
        libc::ioctl(
            device.as_raw_fd(),
            LOOP_CONFIGURE as _,
            &config as *const LoopConfig,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    // Kernels before 5.8 do not know LOOP_CONFIGURE: fall back to the two-step attach.
    if !matches!(err.raw_os_error(), Some(libc::EINVAL | libc::ENOTTY)) {
        return Err(err);
    }
    // SAFETY: LOOP_SET_FD takes the backing file descriptor as its argument.
    let rc = unsafe {
        libc::ioctl(
            device.as_raw_fd(),
            LOOP_SET_FD as _,
            backing_file.as_raw_fd(),
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: LOOP_SET_STATUS64 reads one `struct loop_info64` from a live value of that layout.
    let rc = unsafe {
        libc::ioctl(
            device.as_raw_fd(),
            LOOP_SET_STATUS64 as _,
            &info as *const LoopInfo64,
        )
    };
    if rc < 0 {
        let err = std::io::Error::last_os_error();
        // SAFETY: LOOP_CLR_FD takes no argument; undo the half-done attach.
        unsafe { libc::ioctl(device.as_raw_fd(), LOOP_CLR_FD as _) };
        return Err(err);
    }
    Ok(())
}

/// `BLKFLSBUF` on a block device: write back and drop its cached blocks, so that the next
/// reader sees the backing file as it is now.
pub fn flush_buffers(device: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    const BLKFLSBUF: libc::c_ulong = 0x1261;
    let dev = std::fs::File::open(device)?;
    // SAFETY: BLKFLSBUF takes no argument; the fd is open for the call's duration.
    let rc = unsafe { libc::ioctl(dev.as_raw_fd(), BLKFLSBUF as _, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Whether something still claims `device` exclusively: a filesystem mounted from it. After
/// an unmount here that is a copy of the mount in another mount namespace — one a process made
/// (`unshare -m`, a container, a sandbox) while the filesystem was mounted, with private
/// propagation, so the unmount did not reach it. The filesystem then stays alive, and the next
/// mount of the device reuses it instead of reading the device.
pub fn is_claimed(device: &Path) -> std::io::Result<bool> {
    // An exclusive open of a block device fails with EBUSY while anything holds it so; it
    // claims nothing beyond the descriptor's life.
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(device)
    {
        Ok(_) => Ok(false),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(true),
        Err(e) => Err(e),
    }
}
