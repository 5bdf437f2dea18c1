//! The `xftl` VFS on joj-vfs's seam: SQLite's files on [`FlashFs`](crate::FlashFs) on a
//! transactional device — the emulated eMMC of this process, or one served from another process
//! (`remote`). How each call maps: `docs/formats/xftl.md` §3.
//!
//! Every file of a registered instance lives in the one file layer attached to it; SQLite's
//! batch-atomic file controls become device transactions (`file`). Locks are in-process (one
//! process uses a device at a time), in joj-vfs's [`LockTable`](joj_vfs::LockTable) with
//! SQLite's lock levels. Names, time, sleep and randomness are the default VFS's; the files
//! never reach it.

mod apps;
mod file;
mod instance;

pub(crate) use file::APP_TXN_PRAGMA;
pub use instance::XftlCounters;
pub(crate) use instance::{Device, Mounted, Refusal, Xftl, lock, thread_issuer};

use crate::FsError;
use crate::apptxn::error::AppTxnError;
use apps::JournalRefusal;
use file::{XFile, fs_code};
use instance::bump;
use joj_vfs::{Access, FileKind, FileName, HandleLock, OpenFlags, ResultCode, SqliteError, Vfs};
use std::path::Path;
use std::sync::atomic::Ordering;

/// Why an open failed: the file layer's error, or a refusal of the VFS's own.
enum Opened {
    Fs(FsError),
    Refused(String),
}

impl From<FsError> for Opened {
    fn from(e: FsError) -> Opened {
        Opened::Fs(e)
    }
}

/// SQLite may open `path` now, unless it opens the rollback journal of a database an application
/// transaction holds, or whose writer is fenced, to write it (`docs/formats/apptxn.md` §4): that
/// journal would hold the transaction's changes outside the device transaction. A look at a
/// journal (read-only: SQLite's check for a hot journal) writes nothing and is let through. A
/// refusal inside a transaction is recorded as its failure.
fn journal_allowed<D: Device>(m: &mut Mounted<D>, path: &str, write: bool) -> Result<(), Opened> {
    let Some((db, slot)) = path
        .strip_suffix("-journal")
        .and_then(|db| Some((db, m.fs.lookup(db)?)))
        .filter(|_| write)
    else {
        return Ok(());
    };
    match m.apps.journal_refused(slot.0) {
        None => Ok(()),
        Some(JournalRefusal::Held(tid)) => {
            let database = db.to_string();
            m.apps
                .fail(tid, AppTxnError::JournalRefused { tid, database });
            Err(Opened::Refused(format!(
                "the database is in application transaction {tid}, whose changes may not go \
                 into a rollback journal outside it"
            )))
        }
        Some(JournalRefusal::Fenced(t)) => Err(Opened::Refused(format!(
            "application transaction {t} ended without a commit under this connection's SQL \
             transaction; its changes may not go into a rollback journal (roll back)"
        ))),
    }
}

impl<D: Device> Vfs for Xftl<D> {
    type File = XFile<D>;

    fn open(
        &'static self,
        name: Option<&FileName<'_>>,
        flags: OpenFlags,
    ) -> Result<(XFile<D>, OpenFlags), SqliteError> {
        let (path, temp) = match name {
            None => {
                let n = self.next_temp.fetch_add(1, Ordering::Relaxed);
                (format!("xftl-temp-{}-{n}", std::process::id()), true)
            }
            Some(name) => (name.as_c_str().to_string_lossy().into_owned(), false),
        };
        let create = flags.create();
        let hid = self.next_handle.fetch_add(1, Ordering::Relaxed);
        let opened = self.with_mounted(|m| {
            journal_allowed(m, &path, flags.read_write() || create)?;
            let id = m.fs.open(&path, create)?;
            m.open_handles += 1;
            m.apps.opened(hid, id.0);
            Ok(id)
        })?;
        let id = opened.map_err(|e| match e {
            Opened::Refused(why) => {
                SqliteError::with_message(ResultCode::CANTOPEN, format!("open {path}: {why}"))
            }
            Opened::Fs(e) => SqliteError::with_message(
                fs_code(&e, ResultCode::CANTOPEN),
                format!("open {path}: {e}"),
            ),
        })?;
        if path.ends_with("-journal") {
            bump(&self.counters.journal_opens);
        }
        let file = XFile {
            inst: self,
            id: id.0,
            hid,
            lock: HandleLock::new(),
            delete_on_close: temp || flags.delete_on_close(),
            main_db: flags.kind() == FileKind::MainDb,
            name: path,
            batch_open: false,
        };
        Ok((file, flags))
    }

    fn delete(&self, path: &Path, _sync_dir: bool) -> Result<(), SqliteError> {
        let path = path.to_string_lossy();
        match self.with_mounted(|m| m.fs.delete(&path))? {
            Ok(()) => Ok(()),
            Err(crate::FsError::NoSuchFile(_)) => {
                Err(SqliteError::new(ResultCode::IOERR_DELETE_NOENT))
            }
            Err(e) => Err(SqliteError::with_message(
                ResultCode::IOERR_DELETE,
                format!("delete {path}: {e}"),
            )),
        }
    }

    fn access(&self, path: &Path, _check: Access) -> Result<bool, SqliteError> {
        let path = path.to_string_lossy();
        self.with_mounted(|m| m.fs.lookup(&path).is_some())
    }

    fn max_pathname(&self) -> usize {
        512
    }
}
