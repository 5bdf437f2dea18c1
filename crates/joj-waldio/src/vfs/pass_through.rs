//! Every file but the WAL (database, `-shm` through it, journals, temporary files): the base
//! VFS's file, unchanged but for the main database's header mark (`db_mark`). A test's tap sees
//! its writes (as SQLite gave them), syncs and truncates after they succeed.

use super::instance::Waldio;
use crate::db_mark;
use joj_vfs::{BaseFile, ReadOutcome, SqliteError, SyncFlags, VfsFile};
use std::path::PathBuf;

pub(crate) struct PassThrough {
    pub(crate) inst: &'static Waldio,
    pub(crate) base: BaseFile,
    pub(crate) path: Option<PathBuf>,
    /// The main database: its header's read version is marked on disk (`db_mark`).
    pub(crate) main_db: bool,
}

impl PassThrough {
    /// Tell the instance's tap, if a test taps the VFS and the file has a name.
    fn tap(&self, f: impl FnOnce(&dyn crate::io::Tap, &std::path::Path)) {
        if let (Some(tap), Some(path)) = (self.inst.tap(), self.path.as_deref()) {
            f(tap.as_ref(), path);
        }
    }
}

impl VfsFile for PassThrough {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError> {
        let out = self.base.read(buf, offset)?;
        if self.main_db {
            db_mark::show(buf, offset);
        }
        Ok(out)
    }

    fn write(&mut self, data: &[u8], offset: u64) -> Result<(), SqliteError> {
        match self
            .main_db
            .then(|| db_mark::stored(data, offset))
            .flatten()
        {
            Some(marked) => self.base.write(&marked, offset)?,
            None => self.base.write(data, offset)?,
        }
        self.tap(|t, p| t.write(p, offset, data, false));
        Ok(())
    }

    fn truncate(&mut self, size: u64) -> Result<(), SqliteError> {
        self.base.truncate(size)?;
        self.tap(|t, p| t.truncate(p, size));
        Ok(())
    }

    fn sync(&mut self, flags: SyncFlags) -> Result<(), SqliteError> {
        self.base.sync(flags)?;
        self.tap(|t, p| t.sync(p));
        Ok(())
    }

    joj_vfs::forward_to_base!(base);

    fn close(self) -> Result<(), SqliteError> {
        self.base.close()
    }
}
