//! Marking a database where no SQLite without waldio can slip in (`docs/formats/waldio.md`,
//! "A stock process that had the database open first"): the open of a WAL marks a WAL-mode
//! database while the connection opening it holds the database's EXCLUSIVE lock — the lock
//! every SQLite, with waldio or without, in this process or another, must get SHARED against
//! before it reads the header, and which it holds SHARED as long as it has the database open in
//! WAL mode. Getting EXCLUSIVE therefore proves that no other connection has the database open
//! in WAL mode (nor is opening it), and holding it across the mark keeps every later opener
//! until the mark is there to refuse it.
//!
//! The connection opening the WAL is found by the lock SQLite took on its database file just
//! before, in the same call, on the same thread ([`locked`], told by the database's file). A
//! database whose header is marked already needs no lock and no check: every mark is written
//! under EXCLUSIVE, so no SQLite without waldio read it unmarked and has it open still.

use super::db_files::{self, FileKey};
use super::wal_name;
use crate::db_mark;
use crate::io::Tap;
use crate::wal::WalError;
use joj_vfs::{BaseFile, LockLevel, ReadOutcome, ResultCode, SqliteError, WeakBaseFile};
use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;

/// The main database file this thread last locked or unlocked through waldio, and its level.
struct LastLock {
    db: Arc<Path>,
    /// The database file (device, inode) the handle opened ([`db_files::key_of`]).
    key: Option<FileKey>,
    file: WeakBaseFile,
    level: LockLevel,
}

thread_local! {
    static LAST_LOCK: RefCell<Option<LastLock>> = const { RefCell::new(None) };
}

/// SQLite set the lock of the main database `db`'s file `file` (the file `key` when it opened)
/// to `level`, on this thread.
pub(crate) fn locked(db: &Arc<Path>, key: Option<FileKey>, file: WeakBaseFile, level: LockLevel) {
    // At thread exit the slot may be gone; nothing opens a WAL then.
    let _ = LAST_LOCK.try_with(|l| {
        *l.borrow_mut() = Some(LastLock {
            db: Arc::clone(db),
            key,
            file,
            level,
        });
    });
}

/// The database file (device, inode) of the connection that holds a lock on `db` and last
/// took or changed it on this thread: the connection opening `db`'s WAL (SQLite takes SHARED
/// just before, in the same call) or deleting it (SQLite holds EXCLUSIVE). `None`: no such
/// lock seen on this thread.
pub(crate) fn opener_key(db: &Path) -> Option<FileKey> {
    LAST_LOCK
        .try_with(|l| {
            l.borrow()
                .as_ref()
                .filter(|l| &*l.db == db && l.level >= LockLevel::Shared && l.file.is_open())
                .and_then(|l| l.key)
        })
        .ok()
        .flatten()
}

/// The file of the connection opening `db`'s WAL on this thread, and the lock it holds: SQLite
/// takes SHARED (in exclusive locking mode EXCLUSIVE) on the database just before it opens the
/// WAL, in the same call.
fn opener(db: &Path) -> Option<(WeakBaseFile, LockLevel)> {
    LAST_LOCK
        .try_with(|l| {
            l.borrow()
                .as_ref()
                .filter(|l| &*l.db == db && l.level >= LockLevel::Shared && l.file.is_open())
                .map(|l| (l.file.clone(), l.level))
        })
        .ok()
        .flatten()
}

/// What stands between the open of a WAL and the mark on its database.
pub(crate) enum Exclusion {
    /// Nothing to mark: the header is marked already, or does not say WAL.
    NotNeeded,
    /// The opener holds EXCLUSIVE: no other connection has the database open. After the mark
    /// its lock goes back to `lower_to` (`None`: it held EXCLUSIVE itself, in exclusive locking
    /// mode).
    Held {
        file: WeakBaseFile,
        lower_to: Option<LockLevel>,
    },
    /// The opener's file refused the lock other than with BUSY (a database opened read-only:
    /// a write lock needs a descriptor open for writing): fine for a WAL this process may only
    /// read, which marks nothing; any other WAL open fails with it.
    Unlockable(SqliteError),
    /// No lock of the opener was seen on this thread (a connection in exclusive locking mode
    /// holds EXCLUSIVE from an earlier call, so no other connection can have the database
    /// open): marked through any of the database's files, once no other process is seen
    /// holding a lock on it with a `-wal` there.
    Unseen,
}

fn cantopen(db: &Path, e: &dyn std::fmt::Display) -> SqliteError {
    SqliteError::with_message(ResultCode::CANTOPEN, format!("{}: {e}", db.display()))
}

/// Whether the header `file` holds must be marked before its WAL is used.
fn needs_mark(file: &mut BaseFile) -> Result<bool, SqliteError> {
    let mut h = [0u8; 100];
    Ok(file.read(&mut h, 0)? == ReadOutcome::Full && db_mark::needs_mark(&h))
}

/// Exclude every other connection from `db` if it is to be marked, before the WAL called
/// `logical_wal` is opened. Refused: another connection holds the database (`StockWalInUse`
/// when a `-wal` is there, `MarkBusy` while it is being opened); nothing was changed.
pub(crate) fn exclude(db: &Path, logical_wal: &Path) -> Result<Exclusion, SqliteError> {
    let refuse = |e: WalError| {
        let code = super::shared_wal::code_of(&e, ResultCode::CANTOPEN);
        SqliteError::with_message(code, format!("{}: {e}", db.display()))
    };
    let Some((file, level)) = opener(db) else {
        if wal_name::stock_wal_in_use(logical_wal, db) {
            let wal = logical_wal.to_path_buf();
            return Err(refuse(WalError::StockWalInUse { wal }));
        }
        return Ok(Exclusion::Unseen);
    };
    match file.with(needs_mark) {
        Some(Ok(true)) => {}
        Some(Ok(false)) => return Ok(Exclusion::NotNeeded),
        Some(Err(e)) => return Err(cantopen(db, &format_args!("reading its header: {e}"))),
        None => return Ok(Exclusion::Unseen),
    }
    if level >= LockLevel::Exclusive {
        let lower_to = None;
        return Ok(Exclusion::Held { file, lower_to });
    }
    let lock = file.with(|f| f.lock(LockLevel::Exclusive));
    let unlock = || file.with(|f| f.unlock(level));
    match lock {
        Some(Ok(())) => Ok(Exclusion::Held {
            lower_to: Some(level),
            file,
        }),
        Some(Err(e)) if e.code().primary() == ResultCode::BUSY => {
            let _ = unlock();
            let wal = logical_wal.to_path_buf();
            Err(refuse(if wal_name::regular_file(logical_wal) {
                WalError::StockWalInUse { wal }
            } else {
                WalError::MarkBusy { wal }
            }))
        }
        Some(Err(e)) => {
            let _ = unlock();
            Ok(Exclusion::Unlockable(e))
        }
        None => Ok(Exclusion::Unseen),
    }
}

impl Exclusion {
    /// Mark `db` if it still needs it (another waldio process may have marked it meanwhile),
    /// durably, then let the other connections in again. `tap`: a test's, told first.
    pub(crate) fn mark(mut self, db: &Path, tap: Option<Arc<dyn Tap>>) -> Result<(), SqliteError> {
        let tell = || {
            if let Some(t) = &tap {
                t.marking(db);
            }
        };
        let marked = match &self {
            Exclusion::NotNeeded => Ok(false),
            Exclusion::Held { file, .. } => {
                tell();
                file.with(db_mark::ensure).unwrap_or(Ok(false))
            }
            Exclusion::Unlockable(e) => Err(e.clone()),
            Exclusion::Unseen => {
                tell();
                db_files::with_database(db, db_mark::ensure).unwrap_or(Ok(false))
            }
        };
        let lowered = self.lower();
        marked.map_err(|e| {
            cantopen(
                db,
                &format_args!(
                    "marking it as a waldio database (byte 19 of its header, so that a SQLite \
                     without waldio refuses it): {e}; fix: make the database file writable"
                ),
            )
        })?;
        lowered.map_err(|e| cantopen(db, &format_args!("lowering its lock after the mark: {e}")))
    }

    /// Give back the EXCLUSIVE lock taken for the mark (once).
    fn lower(&mut self) -> Result<(), SqliteError> {
        if let Exclusion::Held { file, lower_to } = self {
            if let Some(level) = lower_to.take() {
                return file.with(|f| f.unlock(level)).unwrap_or(Ok(()));
            }
        }
        Ok(())
    }
}

impl Drop for Exclusion {
    /// The open failed or needs no mark after all (a WAL only read): the lock goes back.
    fn drop(&mut self) {
        let _ = self.lower();
    }
}
