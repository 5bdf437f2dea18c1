//! A connection's handle of a `-wal` file: SQLite's file calls over the [`SharedWal`]'s
//! [`WalState`](crate::WalState). SQLite never locks the WAL file itself (its locks are in the
//! `-shm`), and the WAL needs no shared memory of its own.

use super::instance::{Waldio, lock};
use super::shared_wal::{SharedWal, code_of, release};
use crate::wal::ReadOutcome as WalRead;
use joj_trace::FileRole;
use joj_vfs::{
    DeviceCharacteristics, FileControl, FileEvent, LockLevel, ReadOutcome, ResultCode, SqliteError,
    SyncFlags, VfsFile,
};
use std::fmt::Display;
use std::sync::Arc;

pub(crate) struct WalFile {
    pub(crate) inst: &'static Waldio,
    pub(crate) shared: Arc<SharedWal>,
}

impl WalFile {
    fn fail(&self, code: ResultCode, e: impl Display) -> SqliteError {
        SqliteError::with_message(code, format!("{}: {e}", self.shared.path.display()))
    }

    fn notify(&self, event: FileEvent, fd: i32) {
        if let Some(o) = self.inst.observer() {
            o.file_event(event, &self.shared.path, FileRole::Wal, Some(fd));
        }
    }
}

impl VfsFile for WalFile {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError> {
        let mut st = lock(&self.shared.state);
        match st.read(offset, buf) {
            Ok(WalRead::Full) => Ok(ReadOutcome::Full),
            // WalState zero-fills what the file did not have.
            Ok(WalRead::Short) => Ok(ReadOutcome::Short),
            Err(e) => Err(self.fail(code_of(&e, ResultCode::IOERR_READ), e)),
        }
    }

    fn write(&mut self, data: &[u8], offset: u64) -> Result<(), SqliteError> {
        let mut st = lock(&self.shared.state);
        st.write(offset, data)
            .map_err(|e| self.fail(code_of(&e, ResultCode::IOERR_WRITE), e))
    }

    fn truncate(&mut self, size: u64) -> Result<(), SqliteError> {
        if size > 0 {
            return Ok(()); // blocks stay; frames past the log are stale by their salts
        }
        let mut st = lock(&self.shared.state);
        st.mark_absent()
            .map_err(|e| self.fail(ResultCode::IOERR_TRUNCATE, e))
    }

    fn sync(&mut self, _flags: SyncFlags) -> Result<(), SqliteError> {
        let mut st = lock(&self.shared.state);
        let fd = st.io().raw_fd();
        self.notify(FileEvent::BeforeSync, fd);
        let r = st.sync();
        self.notify(FileEvent::AfterSync, fd);
        r.map_err(|e| self.fail(code_of(&e, ResultCode::IOERR_FSYNC), e))
    }

    fn file_size(&mut self) -> Result<u64, SqliteError> {
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
        let r = lock(&self.shared.state)
            .close()
            .map_err(|e| self.fail(ResultCode::IOERR_CLOSE, e));
        release(self.shared);
        r
    }
}
