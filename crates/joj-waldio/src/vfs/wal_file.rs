//! A connection's handle of a `-wal` file: SQLite's file calls over the [`SharedWal`]'s
//! [`WalState`](crate::WalState). SQLite never locks the WAL file itself (its locks are in the
//! `-shm`), and the WAL needs no shared memory of its own.
//!
//! The handle tells a commit's sync from every other: SQLite syncs a commit (when its
//! `synchronous` asks it to) right after writing the commit frame, on the committing
//! connection's handle, with nothing in between. That sync is the durability option's to decide
//! (`WalState::commit_sync`: nothing more for `full`, which synced in the commit, and `fua`; none
//! for `normal` and group sync); every other sync (the WAL header after a restart, a checkpoint)
//! is real. A checkpoint that runs right after a commit without a sync between them is caught
//! at `SQLITE_FCNTL_CKPT_START`, before it copies a page (`shared_wal::checkpoint_starts`).

use super::instance::lock;
use super::opener_check::{Verdict, another_file_at_the_name};
use super::shared_wal::{SharedWal, code_of, release};
use crate::wal::ReadOutcome as WalRead;
use joj_vfs::{
    DeviceCharacteristics, FileControl, LockLevel, ReadOutcome, ResultCode, SqliteError, SyncFlags,
    VfsFile,
};
use std::fmt::Display;
use std::sync::Arc;

pub(crate) struct WalFile {
    shared: Arc<SharedWal>,
    /// Set when the connection that opened this handle turned out to be another database file
    /// than the one at the name (`opener_check`): every call that reads or writes is refused.
    opener: Verdict,
    /// The last call on this handle wrote a commit frame: a sync now is that commit's.
    just_committed: bool,
}

impl WalFile {
    pub(crate) fn new(shared: Arc<SharedWal>, opener: Verdict) -> WalFile {
        WalFile {
            shared,
            opener,
            just_committed: false,
        }
    }

    /// Refused when this handle's opener is another database file than the one at the name,
    /// and in a child forked while the WAL was open with group sync.
    fn usable(&self) -> Result<(), SqliteError> {
        self.shared.usable_in_this_process()?;
        match *lock(&self.opener) {
            Some(other) => Err(another_file_at_the_name(self.shared.database(), other)),
            None => Ok(()),
        }
    }

    fn fail(&self, code: ResultCode, e: impl Display) -> SqliteError {
        SqliteError::with_message(code, format!("{}: {e}", self.shared.path.display()))
    }
}

impl VfsFile for WalFile {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError> {
        self.usable()?;
        self.just_committed = false;
        let mut st = lock(&self.shared.state);
        match st.read(offset, buf) {
            Ok(WalRead::Full) => Ok(ReadOutcome::Full),
            // WalState zero-fills what the file did not have.
            Ok(WalRead::Short) => Ok(ReadOutcome::Short),
            Err(e) => Err(self.fail(code_of(&e, ResultCode::IOERR_READ), e)),
        }
    }

    fn write(&mut self, data: &[u8], offset: u64) -> Result<(), SqliteError> {
        self.usable()?;
        self.just_committed = false;
        if offset < crate::layout::WAL_HEADER_BYTES as u64 {
            // A new log's header (a restart, or the first): the database first, then the lock.
            self.shared.sync_database()?;
        }
        let mut st = lock(&self.shared.state);
        let wrote = st
            .write(offset, data)
            .map_err(|e| self.fail(code_of(&e, ResultCode::IOERR_WRITE), e))?;
        self.just_committed = wrote.commit;
        Ok(())
    }

    fn truncate(&mut self, size: u64) -> Result<(), SqliteError> {
        self.usable()?;
        self.just_committed = false;
        if size > 0 {
            return Ok(()); // blocks stay; frames past the log are stale by their salts
        }
        self.shared.sync_database()?;
        let mut st = lock(&self.shared.state);
        st.mark_absent()
            .map_err(|e| self.fail(ResultCode::IOERR_TRUNCATE, e))
    }

    fn sync(&mut self, _flags: SyncFlags) -> Result<(), SqliteError> {
        self.usable()?;
        let commit = std::mem::take(&mut self.just_committed);
        let mut st = lock(&self.shared.state);
        let r = if commit { st.commit_sync() } else { st.sync() };
        r.map_err(|e| self.fail(code_of(&e, ResultCode::IOERR_FSYNC), e))
    }

    fn file_size(&mut self) -> Result<u64, SqliteError> {
        self.usable()?;
        self.just_committed = false;
        let mut st = lock(&self.shared.state);
        st.logical_size()
            .map_err(|e| self.fail(ResultCode::IOERR_FSTAT, e))
    }

    fn lock(&mut self, _level: LockLevel) -> Result<(), SqliteError> {
        Ok(())
    }

    fn unlock(&mut self, _level: LockLevel) -> Result<(), SqliteError> {
        Ok(())
    }

    fn check_reserved_lock(&mut self) -> Result<bool, SqliteError> {
        Ok(false)
    }

    fn file_control(&mut self, control: FileControl<'_>) -> Result<(), SqliteError> {
        match control {
            FileControl::VfsName(mut reply) => {
                let label = lock(&self.shared.state).options().label();
                reply.set(&format!("waldio({label})"))
            }
            _ => Err(SqliteError::not_found()),
        }
    }

    fn sector_size(&mut self) -> u32 {
        512
    }

    fn device_characteristics(&mut self) -> DeviceCharacteristics {
        // A frame write changes only its own blocks, torn or not: powersafe overwrite (no
        // padding).
        DeviceCharacteristics::POWERSAFE_OVERWRITE
    }

    fn close(self) -> Result<(), SqliteError> {
        if !self.shared.opened_in_this_process() {
            // A child forked with the connection open, closing it (a finaliser at exit): the
            // group buffer it inherited holds the parent's commits, which the parent writes;
            // written here too, they would land over the parent's later frames (H147).
            release(self.shared);
            return Ok(());
        }
        let r = lock(&self.shared.state)
            .close()
            .map_err(|e| self.fail(ResultCode::IOERR_CLOSE, e));
        release(self.shared);
        r
    }
}
