//! The WAL file's I/O, as a trait so crashes can be injected.
//!
//! [`WalIo`] is the handful of calls the WAL logic makes on its physical file: aligned reads and
//! writes (optionally `RWF_DSYNC`), `fdatasync`, the file length and the direct-I/O alignment.
//! [`DirectFile`] is the one real implementation: an `O_DIRECT` descriptor. [`Tap`] lets a test
//! see every physical write and sync in order (the crash tests rebuild crash states from it).
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
    /// File length in bytes.
    fn len(&self) -> std::io::Result<u64>;
    /// Direct-I/O offset and length alignment in bytes.
    fn dio_align(&self) -> u32;
    /// Test canary only: allocate `len` bytes with `fallocate` (unwritten extents).
    fn preallocate_unwritten(&mut self, _len: u64) -> std::io::Result<()> {
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }
    /// Test canary only: a cache flush that commits none of the WAL's metadata.
    fn flush_cache_only(&mut self) -> std::io::Result<()> {
        self.sync_data()
    }
    /// Cut the file back to `len` bytes (a preallocation that failed part way is removed).
    fn set_len(&mut self, len: u64) -> std::io::Result<()>;
    /// Bytes this process may still allocate on the file's filesystem (`None`: not known); a
    /// preallocation is cut rather than made to fill the disk.
    fn free_bytes(&self) -> std::io::Result<Option<u64>> {
        Ok(None)
    }
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
    /// The open of a WAL is about to mark its database `db` (byte 19, so that a SQLite without
    /// waldio refuses it) if the header says WAL: a test may pause here to be the process that
    /// opens the database in that instant.
    fn marking(&self, db: &Path) {
        let _ = db;
    }
}

/// The real WAL file: an `O_DIRECT` descriptor.
pub struct DirectFile {
    fd: OwnedFd,
    path: std::path::PathBuf,
    align: u32,
    tap: Option<Arc<dyn Tap>>,
    /// Opened for reading only: the process may not write the file.
    read_only: bool,
}

impl DirectFile {
    /// Open (creating with `mode` if asked) `path` for direct I/O.
    pub fn open(
        path: &Path,
        create: bool,
        mode: u32,
        tap: Option<Arc<dyn Tap>>,
    ) -> std::io::Result<Self> {
        let create = if create {
            rustix::fs::OFlags::CREATE
        } else {
            rustix::fs::OFlags::empty()
        };
        Self::open_flags(path, create, mode, tap)
    }

    /// Make `path` with `mode` and open it for direct I/O; `AlreadyExists` if anything is at
    /// the name (`O_EXCL`: what this makes is its own to remove).
    pub fn create_new(path: &Path, mode: u32) -> std::io::Result<Self> {
        use rustix::fs::OFlags;
        Self::open_flags(path, OFlags::CREATE | OFlags::EXCL, mode, None)
    }

    fn open_flags(
        path: &Path,
        create: rustix::fs::OFlags,
        mode: u32,
        tap: Option<Arc<dyn Tap>>,
    ) -> std::io::Result<Self> {
        use rustix::fs::{FileType, Mode, OFlags};
        use rustix::io::Errno;
        // Never through a symlink (one planted at the WAL's name would have the process write
        // its log wherever it points), and only into a regular file (`O_RDWR` opens a FIFO
        // without blocking; it is refused here).
        let flags = OFlags::RDWR | OFlags::DIRECT | OFlags::CLOEXEC | OFlags::NOFOLLOW | create;
        let mut read_only = false;
        let opened = match rustix::fs::open(path, flags, Mode::from_raw_mode(mode)) {
            // A file this process may not write (another user's, a read-only filesystem) is
            // opened for reading, as SQLite's unix VFS opens its `-wal`: a reader of such a
            // database still reads the commits in its log. SQLite writes nothing through it
            // (it is told the WAL is read-only).
            Err(e) if [Errno::ACCESS, Errno::ROFS, Errno::PERM].contains(&e) => {
                read_only = true;
                let ro = (flags - OFlags::RDWR - OFlags::CREATE - OFlags::EXCL) | OFlags::RDONLY;
                rustix::fs::open(path, ro, Mode::empty()).map_err(|_| e)
            }
            r => r,
        };
        let fd = opened.map_err(|e| {
            if e == rustix::io::Errno::LOOP {
                std::io::Error::other(format!(
                    "{} is a symbolic link: waldio writes a WAL only into a file of its own \
                     name, never through a link",
                    path.display()
                ))
            } else if e == rustix::io::Errno::ISDIR {
                std::io::Error::other(format!(
                    "{} is a directory, where waldio keeps the database's WAL (a WAL is a \
                     regular file); fix: move the directory away",
                    path.display()
                ))
            } else {
                e.into()
            }
        })?;
        let kind = FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode);
        if kind != FileType::RegularFile {
            return Err(std::io::Error::other(format!(
                "{} is not a regular file ({kind:?}): a WAL is one; fix: move it away",
                path.display()
            )));
        }
        let align = dio_alignment(&fd)?;
        Ok(DirectFile {
            fd,
            path: path.to_path_buf(),
            align,
            tap,
            read_only,
        })
    }

    /// Give the WAL the database's permissions when it was just made (empty), and, when this
    /// process is root, the database's owner — as SQLite's unix VFS does for its `-wal` and
    /// `-shm` (`robust_open`'s `fchmod`, `robustFchown`): root opening a user's database must
    /// not leave a log its owner cannot open, and the umask of whoever opened it first is not
    /// the database's.
    pub fn match_database(&self, db: &Path) -> std::io::Result<()> {
        use rustix::fs::{Gid, Mode, Uid};
        let own = rustix::fs::fstat(&self.fd)?;
        if own.st_nlink != 1 {
            // A hard link planted at the log's name (`O_NOFOLLOW` stops only symbolic ones)
            // could be any file of the host: root gives away no file that has another name.
            return Ok(());
        }
        let dbs = rustix::fs::stat(db)?;
        let mode = dbs.st_mode & 0o777;
        if own.st_size == 0 && own.st_mode & 0o777 != mode {
            rustix::fs::fchmod(&self.fd, Mode::from_raw_mode(mode))?;
        }
        if rustix::process::geteuid().is_root()
            && (own.st_uid, own.st_gid) != (dbs.st_uid, dbs.st_gid)
        {
            rustix::fs::fchown(
                &self.fd,
                Some(Uid::from_raw(dbs.st_uid)),
                Some(Gid::from_raw(dbs.st_gid)),
            )?;
        }
        Ok(())
    }

    /// Whether the file was opened for reading only (see [`DirectFile::open`]).
    pub fn read_only(&self) -> bool {
        self.read_only
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

    fn len(&self) -> std::io::Result<u64> {
        Ok(rustix::fs::fstat(&self.fd)?.st_size as u64)
    }

    fn dio_align(&self) -> u32 {
        self.align
    }

    fn preallocate_unwritten(&mut self, len: u64) -> std::io::Result<()> {
        rustix::fs::fallocate(&self.fd, rustix::fs::FallocateFlags::empty(), 0, len)?;
        Ok(())
    }

    fn set_len(&mut self, len: u64) -> std::io::Result<()> {
        rustix::fs::ftruncate(&self.fd, len)?;
        if let Some(t) = &self.tap {
            t.truncate(&self.path, len);
        }
        Ok(())
    }

    /// What this process may still take: as root, the blocks a filesystem keeps for root too
    /// (ext4's reserve, 5 % by default), which root's stock SQLite would write into.
    fn free_bytes(&self) -> std::io::Result<Option<u64>> {
        let st = rustix::fs::fstatvfs(&self.fd)?;
        let blocks = if rustix::process::geteuid().is_root() {
            st.f_bfree
        } else {
            st.f_bavail
        };
        Ok(Some(blocks.saturating_mul(st.f_frsize)))
    }

    /// `fsync` of the block device under the WAL (found through `/sys/dev/block`): the
    /// device flushes its cache, and no filesystem journal commit is waited for. (An `fsync`
    /// of the WAL's directory is no such thing on ext4: measured, it commits the journal.)
    fn flush_cache_only(&mut self) -> std::io::Result<()> {
        let st = rustix::fs::fstat(&self.fd)?;
        let (major, minor) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
        let uevent = std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/uevent"))?;
        let name = uevent
            .lines()
            .find_map(|l| l.strip_prefix("DEVNAME="))
            .ok_or_else(|| std::io::Error::other("the WAL's block device has no DEVNAME"))?;
        std::fs::File::open(format!("/dev/{name}"))?.sync_all()
    }
}
