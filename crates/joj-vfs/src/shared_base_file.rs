//! [`SharedBaseFile`]: a [`BaseFile`] that code outside SQLite's calls on it may also use, one
//! call at a time — how a VFS reads or writes a database file SQLite has open without opening a
//! second descriptor of it (closing that one would drop the process's POSIX locks on the file).
//!
//! The VFS file that owns it forwards SQLite's calls (it has every method of [`BaseFile`], so
//! [`forward_to_base!`](crate::forward_to_base) works on it); a [`WeakBaseFile`] kept elsewhere
//! (a registry by path) reaches the same file while it is open and finds nothing once it is
//! closed. A mutex serialises the two, which keeps SQLite's rule that no two calls on one file
//! run at once.

use crate::base_file::BaseFile;
use crate::control::FileControl;
use crate::error::{ResultCode, SqliteError};
use crate::flags::{DeviceCharacteristics, LockLevel, ShmLockFlags, SyncFlags};
use crate::outcome::{FetchedPage, ReadOutcome, ShmMapping};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// An open base file, shared (see the module documentation).
pub struct SharedBaseFile {
    inner: Arc<Mutex<Option<BaseFile>>>,
}

/// A reference to a [`SharedBaseFile`] that does not keep it open.
#[derive(Clone)]
pub struct WeakBaseFile {
    inner: Weak<Mutex<Option<BaseFile>>>,
}

fn closed() -> SqliteError {
    SqliteError::with_message(ResultCode::MISUSE, "a call on a closed file")
}

/// Each method: the [`BaseFile`] method of the same name, under the lock.
macro_rules! locked {
    ($( fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*) -> $ret:ty; )*) => {
        $(
            pub fn $name(&mut self $(, $arg: $ty)*) -> $ret {
                match self.guard().as_mut() {
                    Some(f) => f.$name($($arg),*),
                    None => Err(closed()),
                }
            }
        )*
    };
}

impl SharedBaseFile {
    pub fn new(file: BaseFile) -> SharedBaseFile {
        SharedBaseFile {
            inner: Arc::new(Mutex::new(Some(file))),
        }
    }

    fn guard(&self) -> MutexGuard<'_, Option<BaseFile>> {
        crate::unpoisoned::lock(&self.inner)
    }

    /// A reference for use outside SQLite's calls on this file.
    pub fn downgrade(&self) -> WeakBaseFile {
        WeakBaseFile {
            inner: Arc::downgrade(&self.inner),
        }
    }

    locked! {
        fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError>;
        fn write(&mut self, data: &[u8], offset: u64) -> Result<(), SqliteError>;
        fn truncate(&mut self, size: u64) -> Result<(), SqliteError>;
        fn sync(&mut self, flags: SyncFlags) -> Result<(), SqliteError>;
        fn file_size(&mut self) -> Result<u64, SqliteError>;
        fn lock(&mut self, level: LockLevel) -> Result<(), SqliteError>;
        fn unlock(&mut self, level: LockLevel) -> Result<(), SqliteError>;
        fn check_reserved_lock(&mut self) -> Result<bool, SqliteError>;
        fn file_control(&mut self, control: FileControl<'_>) -> Result<(), SqliteError>;
        fn shm_map(&mut self, region: u32, region_bytes: u32, extend: bool)
            -> Result<ShmMapping, SqliteError>;
        fn shm_lock(&mut self, offset: u32, count: u32, flags: ShmLockFlags)
            -> Result<(), SqliteError>;
        fn shm_unmap(&mut self, delete: bool) -> Result<(), SqliteError>;
        fn fetch(&mut self, offset: u64, amount: usize)
            -> Result<Option<FetchedPage>, SqliteError>;
        fn unfetch(&mut self, offset: u64, page: Option<FetchedPage>) -> Result<(), SqliteError>;
    }

    pub fn sector_size(&mut self) -> u32 {
        self.guard().as_mut().map_or(4096, BaseFile::sector_size)
    }

    pub fn device_characteristics(&mut self) -> DeviceCharacteristics {
        self.guard().as_mut().map_or(
            DeviceCharacteristics::NONE,
            BaseFile::device_characteristics,
        )
    }

    pub fn has_memory_map(&self) -> bool {
        self.guard().as_ref().is_some_and(BaseFile::has_memory_map)
    }

    pub fn has_shared_memory(&self) -> bool {
        self.guard()
            .as_ref()
            .is_some_and(BaseFile::has_shared_memory)
    }

    pub fn shm_barrier(&mut self) {
        if let Some(f) = self.guard().as_mut() {
            f.shm_barrier();
        }
    }

    /// Close the file: from now on every [`WeakBaseFile`] of it finds nothing.
    pub fn close(self) -> Result<(), SqliteError> {
        let file = self.guard().take();
        file.map_or(Ok(()), BaseFile::close)
    }
}

impl WeakBaseFile {
    /// Run `f` on the file if it is still open (`None`: closed).
    pub fn with<R>(&self, f: impl FnOnce(&mut BaseFile) -> R) -> Option<R> {
        let inner = self.inner.upgrade()?;
        let mut guard = crate::unpoisoned::lock(&inner);
        guard.as_mut().map(f)
    }

    /// Whether the file is still open.
    pub fn is_open(&self) -> bool {
        self.inner
            .upgrade()
            .is_some_and(|i| crate::unpoisoned::lock(&i).is_some())
    }
}
