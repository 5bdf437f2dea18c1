//! Which connection opened a WAL, told after the open: SQLite's `sqlite3WalOpen` asks the
//! opening connection's database file for its device characteristics right after the WAL's
//! `xOpen` returns, on the same thread. A WAL is bound to the file now at its database's name
//! (`wal_database`); when the handle that asks is another file — a connection whose database
//! was renamed or deleted while open, and another database took the name — the WAL at that
//! name is the other database's log, and this handle of it refuses every call before it reads
//! or writes a byte (docs/formats/waldio.md, "A database and its log are tied by the
//! database's file"; docs/robustness.md H146).
//!
//! The open itself cannot tell: in exclusive locking mode a connection opens its WAL with no
//! call on its database file before (it holds EXCLUSIVE from an earlier statement), so the
//! thread's last lock may be another connection's.

use super::db_files::FileKey;
use joj_vfs::{ResultCode, SqliteError};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// A WAL handle's verdict: `Some(file)` once its opener turned out to be `file`, not the file
/// at the name.
pub(crate) type Verdict = Arc<Mutex<Option<FileKey>>>;

struct Pending {
    db: PathBuf,
    bound: FileKey,
    verdict: Weak<Mutex<Option<FileKey>>>,
}

thread_local! {
    static PENDING: RefCell<Option<Pending>> = const { RefCell::new(None) };
}

/// A WAL of database `db` was just opened on this thread, bound to the file `bound` at the
/// name; its handle keeps the verdict the opener's next call gives.
pub(crate) fn expect(db: &Path, bound: FileKey) -> Verdict {
    let verdict: Verdict = Arc::new(Mutex::new(None));
    // At thread exit the slot may be gone; nothing opens a WAL then.
    let _ = PENDING.try_with(|p| {
        *p.borrow_mut() = Some(Pending {
            db: db.to_path_buf(),
            bound,
            verdict: Arc::downgrade(&verdict),
        });
    });
    verdict
}

/// The main database `db`'s handle of the file `key` asked for its device characteristics on
/// this thread: if a WAL of `db` was just opened here, this handle opened it.
pub(crate) fn device_characteristics_asked(db: &Path, key: Option<FileKey>) {
    let _ = PENDING.try_with(|p| {
        let mut p = p.borrow_mut();
        if p.as_ref().is_some_and(|pending| pending.db == db) {
            let pending = p.take().expect("checked above");
            if let (Some(key), Some(verdict)) = (key, pending.verdict.upgrade()) {
                if key != pending.bound {
                    *super::instance::lock(&verdict) = Some(key);
                }
            }
        }
    });
}

/// The refusal of a WAL whose opener's database file `opener` is no longer the file at `db`.
pub(crate) fn another_file_at_the_name(db: &Path, opener: FileKey) -> SqliteError {
    SqliteError::with_message(
        ResultCode::IOERR_FSTAT,
        format!(
            "{}: this connection's database file (device {}, inode {}) was renamed or deleted \
             while open, and another file has its name now; the WAL named after it is that \
             file's log: not used, lest this connection's frames be replayed onto the other \
             database; fix: close the connection, and open the database by the name it has now",
            db.display(),
            opener.0,
            opener.1
        ),
    )
}
