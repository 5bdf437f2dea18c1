//! The seam: a SQLite VFS as two safe Rust traits, [`Vfs`] and its files' [`VfsFile`].
//!
//! The shim (`c_shim/`) turns a registered `Vfs` into SQLite's C tables and calls these methods;
//! an implementation never sees a raw pointer. Contract, as SQLite's VFS documentation states
//! it and the shim relies on:
//!
//! - SQLite never calls two methods of one file at once, so file methods take `&mut self`; the
//!   VFS itself is shared by every connection and thread, so its methods take `&self`.
//! - An error carries SQLite's extended result code; its message, if any, becomes the VFS's
//!   last error and goes to `sqlite3_log`. A panic becomes an error of the method's I/O code,
//!   never an unwind into C, and the file it happened in refuses further calls until closed.
//! - A short read zeroes what the file did not supply ([`ReadOutcome::from_filled`]).
//! - Locks go up one level at a time and come down to SHARED or NONE ([`LockLevel`]); a lock
//!   held by another connection is `SQLITE_BUSY` ([`SqliteError::busy`]), without a message.
//! - A file control the file does not handle is [`SqliteError::not_found`].

use crate::base::BaseVfs;
use crate::connect::Connecting;
use crate::control::FileControl;
use crate::error::{ResultCode, SqliteError};
use crate::flags::{Access, DeviceCharacteristics, LockLevel, OpenFlags, ShmLockFlags, SyncFlags};
use crate::name::FileName;
use crate::outcome::{FetchedPage, FullPathname, ReadOutcome, ShmMapping};
use std::path::Path;

/// A VFS: opens files, deletes them, checks them. Registered once with
/// [`register_vfs`](crate::register_vfs), it lives for the process.
pub trait Vfs: Send + Sync + Sized + 'static {
    /// An open file of this VFS.
    type File: VfsFile;

    /// Open `name` (`None`: a temporary file the VFS names itself) as `flags` ask. Returns the
    /// file and the flags it was opened with (SQLite's `*pOutFlags`).
    fn open(
        &'static self,
        name: Option<&FileName<'_>>,
        flags: OpenFlags,
    ) -> Result<(Self::File, OpenFlags), SqliteError>;

    /// Delete `path`; with `sync_dir`, make the deletion durable before returning. A missing
    /// file is `SQLITE_IOERR_DELETE_NOENT`.
    fn delete(&self, path: &Path, sync_dir: bool) -> Result<(), SqliteError>;

    /// Whether `path` exists / is readable / is writable.
    fn access(&self, path: &Path, check: Access) -> Result<bool, SqliteError>;

    /// The absolute name of `name`. Default: the [`delegate`](Vfs::delegate)'s answer.
    fn full_pathname(&self, name: &Path) -> Result<FullPathname, SqliteError> {
        match self.delegate() {
            Some(base) => base.full_pathname(name),
            None => Ok(FullPathname::new(name.to_path_buf())),
        }
    }

    /// The VFS that resolves names (by default) and answers SQLite's calls for randomness,
    /// sleep, the current time, dynamic loading and the OS error: by default SQLite's default
    /// VFS. A VFS over a base VFS returns that base.
    fn delegate(&self) -> Option<BaseVfs> {
        BaseVfs::default_vfs()
    }

    /// Longest full pathname (`mxPathname`), read once at registration.
    fn max_pathname(&self) -> usize {
        self.delegate().map_or(512, |b| b.max_pathname())
    }

    /// Called for every new connection whose main database is on this VFS, before the
    /// application gets it. An error fails the open.
    fn on_connect(&self, conn: &mut Connecting<'_>) -> Result<(), SqliteError> {
        let _ = conn;
        Ok(())
    }
}

/// An open file of a [`Vfs`]. Dropped after [`close`](VfsFile::close).
pub trait VfsFile: Send + 'static {
    /// Fill `buf` from `offset`.
    fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError>;

    /// Write all of `data` at `offset`.
    fn write(&mut self, data: &[u8], offset: u64) -> Result<(), SqliteError>;

    fn truncate(&mut self, size: u64) -> Result<(), SqliteError>;

    /// Make what was written durable.
    fn sync(&mut self, flags: SyncFlags) -> Result<(), SqliteError>;

    fn file_size(&mut self) -> Result<u64, SqliteError>;

    /// Raise this handle's lock to `level` (`SQLITE_BUSY` if another holds it).
    fn lock(&mut self, level: LockLevel) -> Result<(), SqliteError>;

    /// Lower this handle's lock to `level` (SHARED or NONE).
    fn unlock(&mut self, level: LockLevel) -> Result<(), SqliteError>;

    /// Whether any connection holds RESERVED or more on the file.
    fn check_reserved_lock(&mut self) -> Result<bool, SqliteError>;

    /// Act on a file control; default: not handled.
    fn file_control(&mut self, control: FileControl<'_>) -> Result<(), SqliteError> {
        let _ = control;
        Err(SqliteError::not_found())
    }

    /// The write unit the medium cannot tear below; default SQLite's 4096.
    fn sector_size(&mut self) -> u32 {
        4096
    }

    /// What the medium guarantees; default nothing.
    fn device_characteristics(&mut self) -> DeviceCharacteristics {
        DeviceCharacteristics::NONE
    }

    /// Whether the file has the shared-memory methods below (WAL mode needs them). Asked once,
    /// at open: a file without them gets SQLite's version-1 io methods, and SQLite then keeps
    /// WAL mode to `locking_mode=EXCLUSIVE` and never maps pages.
    fn has_shared_memory(&self) -> bool {
        false
    }

    /// Whether the file can map pages into memory ([`fetch`](VfsFile::fetch)) when it has no
    /// shared memory (a temporary database, a journal). Asked once, at open; default no.
    fn has_memory_map(&self) -> bool {
        false
    }

    /// Reserved bytes per page a database this file holds must have when SQLite creates it
    /// (default 0: SQLite's choice). The shim asks SQLite for them
    /// (`SQLITE_FCNTL_RESERVE_BYTES`) on the connection that takes the file's first SHARED
    /// lock while the file is empty, whichever schema (main or attached) and whichever VFS
    /// stacked above this one opened it; an existing database keeps its own reserve.
    fn reserve_bytes(&self) -> u8 {
        0
    }

    fn shm_map(
        &mut self,
        region: u32,
        region_bytes: u32,
        extend: bool,
    ) -> Result<ShmMapping, SqliteError> {
        let _ = (region, region_bytes, extend);
        Err(SqliteError::new(ResultCode::IOERR_SHMMAP))
    }

    fn shm_lock(
        &mut self,
        offset: u32,
        count: u32,
        flags: ShmLockFlags,
    ) -> Result<(), SqliteError> {
        let _ = (offset, count, flags);
        Err(SqliteError::new(ResultCode::IOERR_SHMLOCK))
    }

    fn shm_barrier(&mut self) {}

    fn shm_unmap(&mut self, delete: bool) -> Result<(), SqliteError> {
        let _ = delete;
        Ok(())
    }

    /// Map `amount` bytes at `offset` into memory; default `None` (SQLite reads instead).
    fn fetch(&mut self, offset: u64, amount: usize) -> Result<Option<FetchedPage>, SqliteError> {
        let _ = (offset, amount);
        Ok(None)
    }

    fn unfetch(&mut self, offset: u64, page: Option<FetchedPage>) -> Result<(), SqliteError> {
        let _ = (offset, page);
        Ok(())
    }

    /// Close the file (SQLite's `xClose`); the file is dropped afterwards either way.
    fn close(self) -> Result<(), SqliteError>
    where
        Self: Sized,
    {
        Ok(())
    }
}
