//! The WAL file's I/O, as a trait so crashes can be injected.
//!
//! [`WalIo`] is the handful of calls the WAL logic makes on its physical file: aligned reads and
//! writes (optionally `RWF_DSYNC`), `fdatasync`, a write with its `fdatasync` in one system
//! call, the file length and change time, and the direct-I/O alignment. [`DirectFile`] is the
//! one real implementation: an `O_DIRECT` descriptor. [`Tap`] lets a test see every physical
//! write and sync in order (the crash tests rebuild crash states from it).
//!
//! Fault model of the real file (what the crash tests assume): a completed direct write sits in
//! the device's volatile cache until a flush (`fdatasync`) or is durable at once with
//! `RWF_DSYNC`; an interrupted or unflushed write may be lost or torn at 512-byte sectors.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

/// A heap buffer aligned for direct I/O.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}

/// Alignment of every buffer (covers any `stx_dio_mem_align` seen in practice: 512 or 4096).
pub const BUF_ALIGN: usize = 4096;

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (`len` may be 0).
    pub fn zeroed(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1), BUF_ALIGN).expect("valid layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len, layout }
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the buffer's lifetime.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and we hold &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// What the WAL logic needs of its physical file.
#[allow(clippy::len_without_is_empty)] // `len` is a file length, not a collection's
pub trait WalIo: Send {
    /// Read into `buf` at `off` (both aligned); returns the bytes read (short at end of file).
    fn read_at(&mut self, buf: &mut [u8], off: u64) -> std::io::Result<usize>;
    /// Write all of `buf` at `off` (both aligned). `dsync`: durable on return (`RWF_DSYNC`).
    fn write_at(&mut self, buf: &[u8], off: u64, dsync: bool) -> std::io::Result<()>;
    /// `fdatasync`.
    fn sync_data(&mut self) -> std::io::Result<()>;
    /// Write all of `buf` at `off` (both aligned), then `fdatasync`: on return the write has
    /// completed and the device cache has been flushed, exactly as `write_at` then `sync_data`.
    /// A file may carry both in one submission; by default it makes the two calls.
    fn write_and_sync(&mut self, buf: &[u8], off: u64) -> std::io::Result<()> {
        self.write_at(buf, off, false)?;
        self.sync_data()
    }
    /// File length in bytes.
    fn len(&self) -> std::io::Result<u64>;
    /// A stamp that changes whenever anyone (another process too) writes the file: the inode's
    /// change time. `None`: the file cannot tell, and callers must assume it changed.
    fn change_stamp(&self) -> std::io::Result<Option<(i64, u32)>> {
        Ok(None)
    }
    /// Direct-I/O offset and length alignment in bytes.
    fn dio_align(&self) -> u32;
}

/// Sees every physical write and sync of a file, in order (tests: crash-state reconstruction).
pub trait Tap: Send + Sync {
    fn write(&self, path: &Path, off: u64, data: &[u8], durable: bool);
    fn sync(&self, path: &Path);
    fn truncate(&self, path: &Path, size: u64);
    /// A file (a rollback journal) was deleted through the VFS.
    fn delete(&self, path: &Path) {
        let _ = path;
    }
}

/// The real WAL file: an `O_DIRECT` descriptor.
pub struct DirectFile {
    fd: OwnedFd,
    path: std::path::PathBuf,
    align: u32,
    tap: Option<Arc<dyn Tap>>,
    /// The file's block device declares no FUA (`queue/fua` is 0): there an `RWF_DSYNC`
    /// direct write is the write followed, inside the kernel, by the file's data sync
    /// (`generic_write_sync`), the same commands as `write_at` then `sync_data`.
    dsync_is_write_then_sync: bool,
}

impl DirectFile {
    /// Open (creating with `mode` if asked) `path` for direct I/O.
    pub fn open(
        path: &Path,
        create: bool,
        mode: u32,
        tap: Option<Arc<dyn Tap>>,
    ) -> std::io::Result<Self> {
        use rustix::fs::{Mode, OFlags};
        let mut flags = OFlags::RDWR | OFlags::DIRECT | OFlags::CLOEXEC;
        if create {
            flags |= OFlags::CREATE;
        }
        let fd = rustix::fs::open(path, flags, Mode::from_raw_mode(mode))?;
        let align = dio_alignment(&fd)?;
        let dsync_is_write_then_sync = device_declares_no_fua(&fd);
        Ok(DirectFile {
            fd,
            path: path.to_path_buf(),
            align,
            tap,
            dsync_is_write_then_sync,
        })
    }

    pub fn raw_fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.fd.as_raw_fd()
    }

    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Take an OFD lock on byte 0: exclusive for group sync (its buffer lives in this process
    /// only), shared otherwise. Fails at once on conflict.
    pub fn ofd_lock(&self, exclusive: bool) -> std::io::Result<()> {
        // SAFETY: a zeroed flock is a valid value; fcntl(F_OFD_SETLK) on our own descriptor
        // with a pointer to it.
        unsafe {
            let mut fl: libc::flock = std::mem::zeroed();
            fl.l_type = if exclusive {
                libc::F_WRLCK as libc::c_short
            } else {
                libc::F_RDLCK as libc::c_short
            };
            fl.l_whence = libc::SEEK_SET as libc::c_short;
            fl.l_start = 0;
            fl.l_len = 1;
            if libc::fcntl(self.raw_fd(), libc::F_OFD_SETLK, &fl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Whether the block device under the file's filesystem reads `0` in `queue/fua` (the
/// partition's disk for a partition). Unknown (no sysfs entry: btrfs's anonymous devices,
/// network filesystems) counts as "has FUA", which keeps commits on two calls.
fn device_declares_no_fua(fd: &OwnedFd) -> bool {
    let Ok(st) = rustix::fs::fstat(fd) else {
        return false;
    };
    let dev = st.st_dev;
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let base = format!("/sys/dev/block/{major}:{minor}");
    [format!("{base}/queue/fua"), format!("{base}/../queue/fua")]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .is_some_and(|v| v.trim() == "0")
}

/// The file's direct-I/O alignment from `statx` (`STATX_DIOALIGN`, Linux 6.1+), the larger of
/// the memory and offset alignments; 512 if the filesystem does not report it.
fn dio_alignment(fd: &OwnedFd) -> std::io::Result<u32> {
    use rustix::fs::{AtFlags, StatxFlags, statx};
    let st = statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN)?;
    if st.stx_mask & StatxFlags::DIOALIGN.bits() == 0 || st.stx_dio_offset_align == 0 {
        return Ok(512);
    }
    Ok(st.stx_dio_offset_align.max(st.stx_dio_mem_align).max(512))
}

impl WalIo for DirectFile {
    fn read_at(&mut self, buf: &mut [u8], off: u64) -> std::io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match rustix::io::pread(&self.fd, &mut buf[done..], off + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(done)
    }

    fn write_at(&mut self, buf: &[u8], off: u64, dsync: bool) -> std::io::Result<()> {
        use rustix::io::ReadWriteFlags;
        let flags = if dsync {
            ReadWriteFlags::DSYNC
        } else {
            ReadWriteFlags::empty()
        };
        let mut done = 0;
        while done < buf.len() {
            let slice = [std::io::IoSlice::new(&buf[done..])];
            match rustix::io::pwritev2(&self.fd, &slice, off + done as u64, flags) {
                Ok(0) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::WriteZero,
                        "direct write made no progress",
                    ));
                }
                Ok(n) => done += n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        if let Some(t) = &self.tap {
            t.write(&self.path, off, buf, dsync);
        }
        Ok(())
    }

    fn sync_data(&mut self) -> std::io::Result<()> {
        loop {
            match rustix::fs::fdatasync(&self.fd) {
                Ok(()) => break,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        if let Some(t) = &self.tap {
            t.sync(&self.path);
        }
        Ok(())
    }

    /// Where the device has no FUA, one `pwritev2(RWF_DSYNC)`: the kernel completes the direct
    /// write, then syncs the file's data (`generic_write_sync`, the `fdatasync` path: a cache
    /// flush) before returning — no return to user space between the two. Where it has FUA,
    /// `RWF_DSYNC` would make a FUA write instead of a flush, so the two calls are made.
    fn write_and_sync(&mut self, buf: &[u8], off: u64) -> std::io::Result<()> {
        if !self.dsync_is_write_then_sync {
            self.write_at(buf, off, false)?;
            return self.sync_data();
        }
        let tap = self.tap.take();
        let written = self.write_at(buf, off, true);
        self.tap = tap;
        written?;
        if let Some(t) = &self.tap {
            t.write(&self.path, off, buf, false);
            t.sync(&self.path);
        }
        Ok(())
    }

    fn len(&self) -> std::io::Result<u64> {
        Ok(rustix::fs::fstat(&self.fd)?.st_size as u64)
    }

    /// `statx` change time. A change time that was read is updated with full resolution at
    /// the next change (multigrain timestamps, Linux 6.13+ on ext4, xfs, btrfs, tmpfs), so a
    /// write after this call gives a different stamp.
    fn change_stamp(&self) -> std::io::Result<Option<(i64, u32)>> {
        use rustix::fs::{AtFlags, StatxFlags, statx};
        let st = statx(&self.fd, "", AtFlags::EMPTY_PATH, StatxFlags::CTIME)?;
        if st.stx_mask & StatxFlags::CTIME.bits() == 0 {
            return Ok(None);
        }
        Ok(Some((st.stx_ctime.tv_sec, st.stx_ctime.tv_nsec)))
    }

    fn dio_align(&self) -> u32 {
        self.align
    }
}
