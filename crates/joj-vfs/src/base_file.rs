//! [`BaseFile`]: a file a base VFS opened, owned by Rust. It owns the heap buffer of the base's
//! `szOsFile` bytes the base VFS opened into, calls the base's io methods on it, and closes it
//! once (by [`BaseFile::close`], or on drop). A forwarding VFS keeps one per file and forwards
//! what it does not change, without unsafe code of its own.

use crate::control::FileControl;
use crate::error::{ResultCode, SqliteError, check};
use crate::flags::{DeviceCharacteristics, LockLevel, ShmLockFlags, SyncFlags};
use crate::outcome::{FetchedPage, ReadOutcome, ShmMapping};
use crate::shm_view::ShmView;
use libsqlite3_sys as ffi;
use std::alloc::Layout;
use std::ffi::{c_int, c_void};
use std::os::fd::BorrowedFd;
use std::ptr::NonNull;

/// A file of a base VFS (see the module documentation).
pub struct BaseFile {
    mem: NonNull<u8>,
    layout: Layout,
    /// The base's `xOpen` succeeded and `xClose` has not run.
    open: bool,
    /// Opened by SQLite's unix VFS (or one of its variants): the buffer is a `unixFile`.
    unix: bool,
}

// SAFETY: the base file is used by one caller at a time (every call takes `&mut self` or
// ownership), and SQLite's VFSs may be called from any thread in a threadsafe build
// (libsqlite3-sys builds SQLite with SQLITE_THREADSAFE=1).
unsafe impl Send for BaseFile {}

/// The io-method `$field` of `$file`, or `$missing` if the base does not have it.
macro_rules! base_call {
    ($file:expr, $field:ident, $missing:expr, |$f:ident| $call:expr) => {
        match $file.methods().and_then(|m| m.$field) {
            // SAFETY: the base's own method, called on the file it opened, with arguments of
            // the types SQLite's VFS interface documents.
            Some($f) => unsafe { $call },
            None => $missing,
        }
    };
}

impl BaseFile {
    /// Open `name` with `flags` through the base VFS `vfs` into a fresh buffer.
    ///
    /// # Safety
    /// `vfs` is a registered VFS; `name` is NULL or a name SQLite passed to an `xOpen`.
    pub(crate) unsafe fn open_in(
        vfs: NonNull<ffi::sqlite3_vfs>,
        unix: bool,
        name: ffi::sqlite3_filename,
        flags: c_int,
    ) -> Result<(BaseFile, c_int), SqliteError> {
        // SAFETY: a registered VFS object (the caller's contract).
        let v = unsafe { vfs.as_ref() };
        let size = (v.szOsFile.max(0) as usize).max(std::mem::size_of::<ffi::sqlite3_file>());
        let layout = Layout::from_size_align(size, 16)
            .map_err(|_| SqliteError::new(ResultCode::CANTOPEN))?;
        // SAFETY: non-zero size. SQLite hands VFSs zeroed buffers; so do we.
        let mem = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
            .ok_or_else(|| SqliteError::new(ResultCode::NOMEM))?;
        let mut file = BaseFile {
            mem,
            layout,
            open: false,
            unix,
        };
        let Some(x_open) = v.xOpen else {
            return Err(SqliteError::new(ResultCode::CANTOPEN));
        };
        let mut out: c_int = 0;
        // SAFETY: a buffer of szOsFile bytes, a valid name or NULL (caller's contract).
        let rc = unsafe { x_open(vfs.as_ptr(), name, file.raw(), flags, &mut out) };
        // SAFETY: the buffer is ours; pMethods is the first field of every sqlite3_file.
        let methods = unsafe { (*file.raw()).pMethods };
        file.open = !methods.is_null();
        check(rc)?;
        if !file.open {
            return Err(SqliteError::new(ResultCode::CANTOPEN));
        }
        Ok((file, out))
    }

    fn raw(&self) -> *mut ffi::sqlite3_file {
        self.mem.as_ptr() as *mut ffi::sqlite3_file
    }

    fn methods(&self) -> Option<&ffi::sqlite3_io_methods> {
        if !self.open {
            return None;
        }
        // SAFETY: an open file's pMethods points at the base's static io-methods table.
        unsafe { (*self.raw()).pMethods.as_ref() }
    }

    fn version(&self) -> c_int {
        self.methods().map_or(0, |m| m.iVersion)
    }

    pub fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError> {
        let (p, n) = (buf.as_mut_ptr() as *mut c_void, buf.len() as c_int);
        let rc = base_call!(self, xRead, ffi::SQLITE_IOERR_READ, |f| f(
            self.raw(),
            p,
            n,
            offset as i64
        ));
        match rc {
            ffi::SQLITE_IOERR_SHORT_READ => Ok(ReadOutcome::Short),
            rc => check(rc).map(|()| ReadOutcome::Full),
        }
    }

    pub fn write(&mut self, data: &[u8], offset: u64) -> Result<(), SqliteError> {
        let (p, n) = (data.as_ptr() as *const c_void, data.len() as c_int);
        check(base_call!(self, xWrite, ffi::SQLITE_IOERR_WRITE, |f| f(
            self.raw(),
            p,
            n,
            offset as i64
        )))
    }

    pub fn truncate(&mut self, size: u64) -> Result<(), SqliteError> {
        check(base_call!(
            self,
            xTruncate,
            ffi::SQLITE_IOERR_TRUNCATE,
            |f| f(self.raw(), size as i64)
        ))
    }

    pub fn sync(&mut self, flags: SyncFlags) -> Result<(), SqliteError> {
        check(base_call!(self, xSync, ffi::SQLITE_IOERR_FSYNC, |f| f(
            self.raw(),
            flags.bits()
        )))
    }

    pub fn file_size(&mut self) -> Result<u64, SqliteError> {
        let mut size: i64 = 0;
        check(base_call!(self, xFileSize, ffi::SQLITE_IOERR_FSTAT, |f| f(
            self.raw(),
            &mut size
        )))?;
        Ok(size.max(0) as u64)
    }

    pub fn lock(&mut self, level: LockLevel) -> Result<(), SqliteError> {
        check(base_call!(self, xLock, ffi::SQLITE_IOERR_LOCK, |f| f(
            self.raw(),
            level.raw()
        )))
    }

    pub fn unlock(&mut self, level: LockLevel) -> Result<(), SqliteError> {
        check(base_call!(self, xUnlock, ffi::SQLITE_IOERR_UNLOCK, |f| f(
            self.raw(),
            level.raw()
        )))
    }

    pub fn check_reserved_lock(&mut self) -> Result<bool, SqliteError> {
        let mut out: c_int = 0;
        let missing = ffi::SQLITE_IOERR_CHECKRESERVEDLOCK;
        check(base_call!(self, xCheckReservedLock, missing, |f| f(
            self.raw(),
            &mut out
        )))?;
        Ok(out != 0)
    }

    /// Forward a file control unchanged (`SQLITE_NOTFOUND` comes back as such an error).
    pub fn file_control(&mut self, control: FileControl<'_>) -> Result<(), SqliteError> {
        control.with_raw(|op, arg| {
            check(base_call!(self, xFileControl, ffi::SQLITE_NOTFOUND, |f| f(
                self.raw(),
                op,
                arg
            )))
        })
    }

    pub fn sector_size(&mut self) -> u32 {
        let n = base_call!(self, xSectorSize, 4096, |f| f(self.raw()));
        n.max(0) as u32
    }

    pub fn device_characteristics(&mut self) -> DeviceCharacteristics {
        DeviceCharacteristics::from_raw(base_call!(self, xDeviceCharacteristics, 0, |f| f(
            self.raw()
        )))
    }

    /// The base file can map pages into memory (io-methods version 3 with `xFetch`).
    pub fn has_memory_map(&self) -> bool {
        self.version() >= 3 && self.methods().is_some_and(|m| m.xFetch.is_some())
    }

    /// The base file has SQLite's shared-memory methods (io-methods version 2 or later).
    pub fn has_shared_memory(&self) -> bool {
        self.version() >= 2 && self.methods().is_some_and(|m| m.xShmMap.is_some())
    }

    pub fn shm_map(
        &mut self,
        region: u32,
        region_bytes: u32,
        extend: bool,
    ) -> Result<ShmMapping, SqliteError> {
        if self.version() < 2 {
            return Err(SqliteError::new(ResultCode::IOERR_SHMMAP));
        }
        let mut p: *mut c_void = std::ptr::null_mut();
        let (r, n, e) = (region as c_int, region_bytes as c_int, c_int::from(extend));
        let rc = base_call!(self, xShmMap, ffi::SQLITE_IOERR_SHMMAP, |f| f(
            self.raw(),
            r,
            n,
            e,
            &mut p
        ));
        // A read-only shared memory comes with its region (the unix VFS's `readonly_shm`).
        if rc == ffi::SQLITE_OK || (rc & 0xff == ffi::SQLITE_READONLY && !p.is_null()) {
            return Ok(ShmMapping {
                region: p,
                code: rc,
            });
        }
        Err(SqliteError::new(ResultCode::from_raw(rc)))
    }

    /// Region `region` of the shared memory SQLite has opened on this file, `region_bytes` long
    /// (the size SQLite maps its regions with), as words; `Ok(None)` while the region does not
    /// exist yet. Never extends the shared memory. Only for a file whose shared memory SQLite
    /// has opened (after its `xShmMap`, before its `xShmUnmap`): on any other the base VFS
    /// would open it now (the unix VFS: the `-shm` file, taking its DMS lock, clearing it if
    /// nobody held that).
    pub fn shm_view(
        &mut self,
        region: u32,
        region_bytes: u32,
    ) -> Result<Option<ShmView<'_>>, SqliteError> {
        let mapping = self.shm_map(region, region_bytes, false)?;
        let Some(p) = NonNull::new(mapping.region as *mut u8) else {
            return Ok(None);
        };
        // A read-only shared memory (`readonly_shm`, a `-shm` the process may not write) is
        // mapped without write permission.
        let writable = mapping.code == ffi::SQLITE_OK;
        // SAFETY: the base VFS mapped `region_bytes` bytes at `p` (SQLite's xShmMap contract;
        // mmap and SQLite's allocator return at least 8-byte aligned memory). A region stays
        // mapped until this file's `xShmUnmap` (the unix VFS unmaps the regions only when the
        // process's last connection unmaps), which cannot run while the view borrows the file.
        Ok(Some(unsafe {
            ShmView::new(p, region_bytes as usize, writable)
        }))
    }

    pub fn shm_lock(
        &mut self,
        offset: u32,
        count: u32,
        flags: ShmLockFlags,
    ) -> Result<(), SqliteError> {
        if self.version() < 2 {
            return Err(SqliteError::new(ResultCode::IOERR_SHMLOCK));
        }
        let (o, n) = (offset as c_int, count as c_int);
        check(base_call!(
            self,
            xShmLock,
            ffi::SQLITE_IOERR_SHMLOCK,
            |f| f(self.raw(), o, n, flags.bits())
        ))
    }

    pub fn shm_barrier(&mut self) {
        if self.version() >= 2 {
            base_call!(self, xShmBarrier, (), |f| f(self.raw()));
        }
    }

    pub fn shm_unmap(&mut self, delete: bool) -> Result<(), SqliteError> {
        if self.version() < 2 {
            return Ok(());
        }
        let d = c_int::from(delete);
        check(base_call!(self, xShmUnmap, ffi::SQLITE_OK, |f| f(
            self.raw(),
            d
        )))
    }

    /// Map `amount` bytes at `offset`, if the base can (`Ok(None)`: read them instead).
    pub fn fetch(
        &mut self,
        offset: u64,
        amount: usize,
    ) -> Result<Option<FetchedPage>, SqliteError> {
        if self.version() < 3 {
            return Ok(None);
        }
        let mut p: *mut c_void = std::ptr::null_mut();
        let n = amount as c_int;
        check(base_call!(self, xFetch, ffi::SQLITE_OK, |f| f(
            self.raw(),
            offset as i64,
            n,
            &mut p
        )))?;
        Ok(NonNull::new(p).map(|ptr| FetchedPage { ptr }))
    }

    /// Give back a page from [`fetch`](Self::fetch) (`None`: SQLite's "unmap everything").
    pub fn unfetch(&mut self, offset: u64, page: Option<FetchedPage>) -> Result<(), SqliteError> {
        if self.version() < 3 {
            return Ok(());
        }
        let p = page.map_or(std::ptr::null_mut(), |pg| pg.ptr.as_ptr());
        check(base_call!(self, xUnfetch, ffi::SQLITE_OK, |f| f(
            self.raw(),
            offset as i64,
            p
        )))
    }

    /// The descriptor of a file SQLite's unix VFS opened. Its `unixFile` starts with three
    /// pointers (`pMethod`, `pVfs`, `pInode`) and then `int h`, the layout since SQLite 3.7;
    /// `None` for other base VFSs. A caller that depends on it checks it (`fstat` against the
    /// path) before use.
    pub(crate) fn unix_descriptor(&self) -> Option<BorrowedFd<'_>> {
        const FD_OFFSET: usize = 3 * std::mem::size_of::<*const c_void>();
        if !self.open || !self.unix || self.layout.size() < FD_OFFSET + 4 {
            return None;
        }
        // SAFETY: the buffer holds at least FD_OFFSET + 4 bytes (checked) of a `unixFile`.
        let fd = unsafe { *(self.mem.as_ptr().add(FD_OFFSET) as *const c_int) };
        if fd < 0 {
            return None;
        }
        // SAFETY: the unix VFS keeps `h` open until xClose, which needs `&mut self` or
        // ownership of this BaseFile: the descriptor outlives the borrow.
        Some(unsafe { BorrowedFd::borrow_raw(fd) })
    }

    /// Close the base file, with the base's result.
    pub fn close(mut self) -> Result<(), SqliteError> {
        self.close_once()
    }

    fn close_once(&mut self) -> Result<(), SqliteError> {
        let rc = base_call!(self, xClose, ffi::SQLITE_OK, |f| f(self.raw()));
        self.open = false;
        check(rc)
    }
}

impl Drop for BaseFile {
    fn drop(&mut self) {
        if self.open {
            // Dropped without close (an error path): close it; the result has nowhere to go.
            let _ = self.close_once();
        }
        // SAFETY: allocated in open_in with this layout, and no longer used by the base.
        unsafe { std::alloc::dealloc(self.mem.as_ptr(), self.layout) };
    }
}

impl std::fmt::Debug for BaseFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BaseFile")
            .field("open", &self.open)
            .field("unix", &self.unix)
            .finish()
    }
}
