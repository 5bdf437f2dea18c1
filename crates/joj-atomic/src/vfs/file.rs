//! A file of the `xftl` VFS: a slot of the attached [`FlashFs`](crate::FlashFs), this handle's
//! lock on it, and the batch-atomic file controls as device transactions.

use super::instance::{Device, Xftl, bump};
use crate::flashfs::{FileId, FsError};
use joj_vfs::{
    DeviceCharacteristics, FileControl, HandleLock, LockLevel, ReadOutcome, ResultCode,
    SqliteError, SyncFlags, VfsFile,
};
use std::sync::atomic::Ordering;

pub(crate) struct XFile<D: 'static> {
    pub(crate) inst: &'static Xftl<D>,
    pub(crate) id: u32,
    pub(crate) lock: HandleLock,
    pub(crate) delete_on_close: bool,
    pub(crate) main_db: bool,
    pub(crate) name: String,
}

/// The SQLite code for a file-layer error (`io` for the plain I/O errors).
pub(crate) fn fs_code(e: &FsError, io: ResultCode) -> ResultCode {
    match e {
        FsError::FileTooLarge { .. } | FsError::NoFreeSlot { .. } => ResultCode::FULL,
        FsError::NoSuchFile(_) => ResultCode::CANTOPEN,
        _ => io,
    }
}

/// Why a batch commit failed.
#[derive(Debug, thiserror::Error)]
enum CommitFailure {
    #[error("injected commit failure")]
    Injected,
    #[error(transparent)]
    Fs(#[from] FsError),
}

impl<D: Device> XFile<D> {
    fn fail(&self, code: ResultCode, what: &str, e: impl std::fmt::Display) -> SqliteError {
        SqliteError::with_message(code, format!("{what} {}: {e}", self.name))
    }

    fn begin_batch(&mut self) -> Result<(), SqliteError> {
        bump(&self.inst.counters.batch_begins);
        let id = FileId(self.id);
        self.inst
            .with_mounted(|m| m.fs.begin_batch(id))?
            .map_err(|e| SqliteError::with_message(ResultCode::IOERR, format!("begin batch: {e}")))
    }

    /// Commit the batch; on failure (a real one or an injected one) the batch is aborted and
    /// the database's journal gets a barrier before SQLite's retry writes the database.
    fn commit_batch(&mut self) -> Result<(), SqliteError> {
        let inst = self.inst;
        let id = FileId(self.id);
        let inject = inst
            .fail_commits
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok();
        let r = inst.with_mounted(|m| {
            if inject {
                m.fs.rollback_batch(id);
                return Err(CommitFailure::Injected);
            }
            Ok(m.fs.commit_batch(id)?)
        })?;
        match r {
            Ok(()) => {
                bump(&inst.counters.batch_commits);
                Ok(())
            }
            Err(e) => {
                let _ = inst.with_mounted(|m| m.barrier.insert(id.0));
                bump(&inst.counters.batch_commit_errors);
                bump(&inst.counters.batch_rollbacks);
                Err(SqliteError::with_message(
                    ResultCode::IOERR_WRITE,
                    format!("commit batch: {e}"),
                ))
            }
        }
    }

    fn rollback_batch(&mut self) {
        let (inst, id) = (self.inst, FileId(self.id));
        let _ = inst.with_mounted(|m| {
            if m.fs.in_batch(id) {
                m.fs.rollback_batch(id);
                bump(&inst.counters.batch_rollbacks);
            }
        });
    }
}

impl<D: Device> VfsFile for XFile<D> {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError> {
        let id = FileId(self.id);
        match self.inst.with_mounted(|m| m.fs.read(id, offset, buf))? {
            Ok(n) => Ok(ReadOutcome::from_filled(buf, n)),
            Err(e) => Err(self.fail(ResultCode::IOERR_READ, "read", e)),
        }
    }

    fn write(&mut self, data: &[u8], offset: u64) -> Result<(), SqliteError> {
        let (inst, id) = (self.inst, FileId(self.id));
        let r = inst.with_mounted(|m| {
            if m.barrier.remove(&id.0) && !m.fs.in_batch(id) {
                // SQLite's retry after a failed batch creates the journal from its in-memory
                // copy and writes database pages without syncing it first: make the journal
                // (data and size) durable before the first database page can reach flash.
                let journal = format!("{}-journal", m.fs.name(id));
                if let Some(j) = m.fs.lookup(&journal) {
                    m.fs.sync(j)?;
                    bump(&inst.counters.journal_barriers);
                }
            }
            m.fs.write(id, offset, data)
        })?;
        r.map_err(|e| self.fail(fs_code(&e, ResultCode::IOERR_WRITE), "write", e))
    }

    fn truncate(&mut self, size: u64) -> Result<(), SqliteError> {
        let id = FileId(self.id);
        let r = self.inst.with_mounted(|m| m.fs.truncate(id, size))?;
        r.map_err(|e| self.fail(fs_code(&e, ResultCode::IOERR_TRUNCATE), "truncate", e))
    }

    fn sync(&mut self, _flags: SyncFlags) -> Result<(), SqliteError> {
        if self.main_db {
            bump(&self.inst.counters.db_syncs);
        }
        let id = FileId(self.id);
        let r = self.inst.with_mounted(|m| m.fs.sync(id))?;
        r.map_err(|e| self.fail(ResultCode::IOERR_FSYNC, "sync", e))
    }

    fn file_size(&mut self) -> Result<u64, SqliteError> {
        let id = FileId(self.id);
        self.inst.with_mounted(|m| m.fs.size(id))
    }

    fn lock(&mut self, level: LockLevel) -> Result<(), SqliteError> {
        let (id, handle) = (self.id, &mut self.lock);
        self.inst
            .with_mounted(|m| m.locks.lock(&id, handle, level))?
            .map_err(|_| SqliteError::busy())
    }

    fn unlock(&mut self, level: LockLevel) -> Result<(), SqliteError> {
        let (id, handle) = (self.id, &mut self.lock);
        self.inst
            .with_mounted(|m| m.locks.unlock(&id, handle, level))
    }

    fn check_reserved_lock(&mut self) -> Result<bool, SqliteError> {
        let id = self.id;
        self.inst.with_mounted(|m| m.locks.is_reserved(&id))
    }

    fn file_control(&mut self, control: FileControl<'_>) -> Result<(), SqliteError> {
        match control {
            FileControl::BeginAtomicWrite => self.begin_batch(),
            FileControl::CommitAtomicWrite => self.commit_batch(),
            FileControl::RollbackAtomicWrite => {
                self.rollback_batch();
                Ok(())
            }
            FileControl::SizeHint(_) => Ok(()),
            _ => Err(SqliteError::not_found()),
        }
    }

    fn sector_size(&mut self) -> u32 {
        let page = self.inst.with_mounted(|m| m.fs.page_bytes());
        page.map_or(4096, |p| p.min(u64::from(u32::MAX)) as u32)
    }

    fn device_characteristics(&mut self) -> DeviceCharacteristics {
        DeviceCharacteristics::BATCH_ATOMIC | DeviceCharacteristics::POWERSAFE_OVERWRITE
    }

    fn close(mut self) -> Result<(), SqliteError> {
        let (inst, id) = (self.inst, FileId(self.id));
        let _ = inst.with_mounted(|m| {
            // A handle closed inside a batch (a process going away): the batch is aborted.
            if m.fs.in_batch(id) {
                m.fs.rollback_batch(id);
                bump(&inst.counters.batch_rollbacks);
            }
            m.locks.unlock(&id.0, &mut self.lock, LockLevel::None);
            m.open_handles = m.open_handles.saturating_sub(1);
            if self.delete_on_close {
                let _ = m.fs.delete(&self.name);
            }
        });
        Ok(())
    }
}
