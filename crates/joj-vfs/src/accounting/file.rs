//! A file of the accounting VFS: a unix-VFS file ([`BaseFile`]) with counting around `xRead`,
//! `xWrite` and `xTruncate`, and its own `xSync` (the caller's sync call on the unix file's
//! descriptor, the directory sync of a new journal, the observer told before and after).
//! Every other method is the unix file's.

use super::os;
use super::state::{FileEvent, Shared};
use crate::base_file::BaseFile;
use crate::error::{ResultCode, SqliteError};
use crate::flags::SyncFlags;
use crate::outcome::ReadOutcome;
use crate::vfs::VfsFile;
use joj_trace::FileRole;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

pub(crate) struct AcctFile {
    pub(super) shared: &'static Shared,
    pub(super) base: BaseFile,
    pub(super) role: FileRole,
    /// A journal or WAL was created: sync its directory on the first sync (as the unix VFS
    /// does).
    pub(super) dirsync_pending: bool,
    /// A write or sync failed: refuse further writes and syncs.
    pub(super) failed: bool,
    /// Path as SQLite named it; `None` for temporary files without a name.
    pub(super) path: Option<PathBuf>,
}

impl AcctFile {
    /// Tell the observer about this file (with its descriptor), if it has a name.
    fn notify(&self, event: FileEvent) {
        if let Some(path) = self.path.as_deref() {
            let fd = self.base.unix_descriptor().map(|fd| fd.as_raw_fd());
            self.shared.notify(event, path, self.role, fd);
        }
    }

    /// The sync itself: the file, then (first time for a new journal) its directory.
    fn sync_now(&mut self) -> Result<(), SqliteError> {
        let call = self.shared.counters.sync_call();
        let synced = self
            .base
            .unix_descriptor()
            .is_some_and(|fd| os::sync_fd(call, fd));
        if !synced {
            return Err(SqliteError::new(ResultCode::IOERR_FSYNC));
        }
        self.shared.counters.count_sync(call, false);
        if self.dirsync_pending {
            if let Some(path) = self.path.as_deref() {
                if !self.shared.sync_directory_of(path) {
                    return Err(SqliteError::new(ResultCode::IOERR_DIR_FSYNC));
                }
            }
            self.dirsync_pending = false;
        }
        Ok(())
    }
}

impl VfsFile for AcctFile {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError> {
        self.shared.counters.count_read(buf.len() as u64);
        self.base.read(buf, offset)
    }

    fn write(&mut self, data: &[u8], offset: u64) -> Result<(), SqliteError> {
        if self.failed {
            return Err(SqliteError::new(ResultCode::IOERR_WRITE));
        }
        let r = self.base.write(data, offset);
        match &r {
            Ok(()) => self
                .shared
                .counters
                .count_write(self.role, data.len() as u64),
            Err(e) if e.code().primary() == ResultCode::IOERR => self.failed = true,
            Err(_) => {}
        }
        r
    }

    fn truncate(&mut self, size: u64) -> Result<(), SqliteError> {
        self.notify(FileEvent::BeforeTruncate);
        self.shared.counters.count_truncate();
        self.base.truncate(size)
    }

    fn sync(&mut self, _flags: SyncFlags) -> Result<(), SqliteError> {
        if self.failed {
            return Err(SqliteError::new(ResultCode::IOERR_FSYNC));
        }
        self.notify(FileEvent::BeforeSync);
        if let Err(e) = self.sync_now() {
            self.failed = true;
            return Err(e);
        }
        self.notify(FileEvent::AfterSync);
        Ok(())
    }

    crate::forward_to_base!(base);

    fn close(self) -> Result<(), SqliteError> {
        self.base.close()
    }
}
