//! A file of the waldio VFS: a WAL handle or a pass-through file.

use super::pass_through::PassThrough;
use super::wal_file::WalFile;
use joj_vfs::{
    DeviceCharacteristics, FetchedPage, FileControl, LockLevel, ReadOutcome, ShmLockFlags,
    ShmMapping, SqliteError, SyncFlags, VfsFile,
};

pub(crate) enum WaldioFile {
    Wal(WalFile),
    PassThrough(PassThrough),
}

/// The same call on whichever file this is.
macro_rules! each {
    ($self:expr, |$f:ident| $call:expr) => {
        match $self {
            WaldioFile::Wal($f) => $call,
            WaldioFile::PassThrough($f) => $call,
        }
    };
}

impl VfsFile for WaldioFile {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError> {
        each!(self, |f| f.read(buf, offset))
    }

    fn write(&mut self, data: &[u8], offset: u64) -> Result<(), SqliteError> {
        each!(self, |f| f.write(data, offset))
    }

    fn truncate(&mut self, size: u64) -> Result<(), SqliteError> {
        each!(self, |f| f.truncate(size))
    }

    fn sync(&mut self, flags: SyncFlags) -> Result<(), SqliteError> {
        each!(self, |f| f.sync(flags))
    }

    fn file_size(&mut self) -> Result<u64, SqliteError> {
        each!(self, |f| f.file_size())
    }

    fn lock(&mut self, level: LockLevel) -> Result<(), SqliteError> {
        each!(self, |f| f.lock(level))
    }

    fn unlock(&mut self, level: LockLevel) -> Result<(), SqliteError> {
        each!(self, |f| f.unlock(level))
    }

    fn check_reserved_lock(&mut self) -> Result<bool, SqliteError> {
        each!(self, |f| f.check_reserved_lock())
    }

    fn file_control(&mut self, control: FileControl<'_>) -> Result<(), SqliteError> {
        each!(self, |f| f.file_control(control))
    }

    fn sector_size(&mut self) -> u32 {
        each!(self, |f| f.sector_size())
    }

    fn device_characteristics(&mut self) -> DeviceCharacteristics {
        each!(self, |f| f.device_characteristics())
    }

    fn has_shared_memory(&self) -> bool {
        each!(self, |f| f.has_shared_memory())
    }

    fn has_memory_map(&self) -> bool {
        each!(self, |f| f.has_memory_map())
    }

    fn reserve_bytes(&self) -> u8 {
        each!(self, |f| f.reserve_bytes())
    }

    fn shm_map(
        &mut self,
        region: u32,
        bytes: u32,
        extend: bool,
    ) -> Result<ShmMapping, SqliteError> {
        each!(self, |f| f.shm_map(region, bytes, extend))
    }

    fn shm_lock(&mut self, offset: u32, n: u32, flags: ShmLockFlags) -> Result<(), SqliteError> {
        each!(self, |f| f.shm_lock(offset, n, flags))
    }

    fn shm_barrier(&mut self) {
        each!(self, |f| f.shm_barrier())
    }

    fn shm_unmap(&mut self, delete: bool) -> Result<(), SqliteError> {
        each!(self, |f| f.shm_unmap(delete))
    }

    fn fetch(&mut self, offset: u64, amount: usize) -> Result<Option<FetchedPage>, SqliteError> {
        match self {
            // A mapped first page would show the header's mark raw: SQLite reads it instead.
            WaldioFile::PassThrough(f) if f.main_db && offset < 100 => Ok(None),
            _ => each!(self, |f| f.fetch(offset, amount)),
        }
    }

    fn unfetch(&mut self, offset: u64, page: Option<FetchedPage>) -> Result<(), SqliteError> {
        each!(self, |f| f.unfetch(offset, page))
    }

    fn close(self) -> Result<(), SqliteError> {
        each!(self, |f| f.close())
    }
}
