//! A file of the accounting VFS: a unix-VFS file ([`BaseFile`]) with every call forwarded and
//! counted around. `xSync` goes to the unix file (`fdatasync`, and the directory sync of a new
//! journal, as SQLite's build does them) unless joj's experiment asked for `fsync`, the one
//! call joj then issues itself on the unix file's descriptor; the observer is told before and
//! after. A failed call is the unix file's failure, and the next call is the unix file's again:
//! a handle recovers exactly when the unix VFS's would.

use super::os;
use super::state::{FileEvent, Shared};
use crate::base_file::BaseFile;
use crate::counters::SyncCall;
use crate::error::{ResultCode, SqliteError};
use crate::flags::SyncFlags;
use crate::outcome::ReadOutcome;
use crate::vfs::VfsFile;
use joj_trace::FileRole;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// `SQLITE_FCNTL_COMMIT_PHASETWO`: sent to the main database after every commit.
const COMMIT_PHASETWO: i32 = 22;

pub(crate) struct AcctFile {
    pub(super) shared: &'static Shared,
    pub(super) base: BaseFile,
    pub(super) role: FileRole,
    /// A journal or WAL was created: the unix VFS syncs its directory on the first sync.
    pub(super) dirsync_pending: bool,
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
    fn sync_now(&mut self, flags: SyncFlags) -> Result<(), SqliteError> {
        let call = self.shared.counters.sync_call();
        if call == SyncCall::Fdatasync {
            // What the unix VFS does itself (SQLite built with HAVE_FDATASYNC, as joj's and
            // Debian's are): forwarded, so its own overrides, fault injection and sync
            // counters see it.
            self.base.sync(flags)?;
            self.shared.counters.count_sync(call, false);
            if std::mem::take(&mut self.dirsync_pending) {
                if let Some(path) = self.path.as_deref() {
                    self.shared.count_directory_sync_of(path);
                }
            }
            return Ok(());
        }
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
        self.base.write(data, offset)?;
        self.shared
            .counters
            .count_write(self.role, data.len() as u64);
        Ok(())
    }

    fn truncate(&mut self, size: u64) -> Result<(), SqliteError> {
        self.notify(FileEvent::BeforeTruncate);
        self.shared.counters.count_truncate();
        self.base.truncate(size)
    }

    fn sync(&mut self, flags: SyncFlags) -> Result<(), SqliteError> {
        self.notify(FileEvent::BeforeSync);
        self.sync_now(flags)?;
        self.notify(FileEvent::AfterSync);
        Ok(())
    }

    crate::forward_to_base!(base, except file_control);

    fn file_control(&mut self, control: crate::FileControl<'_>) -> Result<(), SqliteError> {
        let commit = matches!(&control, crate::FileControl::Other(o) if o.op() == COMMIT_PHASETWO);
        if let (true, FileRole::Database, Some(path)) = (commit, self.role, self.path.as_deref()) {
            self.shared.counters.count_commit();
            crate::marker::commit(path);
        }
        self.base.file_control(control)
    }

    fn close(self) -> Result<(), SqliteError> {
        self.base.close()
    }
}
