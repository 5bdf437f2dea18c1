//! Where a VFS's errors go: [`ErrorLog`] keeps the last error of one registered VFS (SQLite
//! only passes the code on), and the last one each thread met through it, and sends every
//! reported error to `sqlite3_log`; panics become errors here too.

use crate::error::{ResultCode, SqliteError};
use libsqlite3_sys as ffi;
use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Orders last errors across every VFS of the process (the newest has the largest).
static NEXT_SEQ: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The last error each VFS reported on this thread, by the VFS's log (its `Inner`'s
    /// address, which lives as long as the process: a registered VFS is never dropped).
    static ON_THIS_THREAD: RefCell<HashMap<usize, LastError>> = RefCell::new(HashMap::new());
}

/// The last error a VFS reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastError {
    code: ResultCode,
    message: String,
    seq: u64,
}

impl LastError {
    pub fn code(&self) -> ResultCode {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// Reported after `other` (across all VFSs of the process)?
    pub fn is_newer_than(&self, other: &LastError) -> bool {
        self.seq > other.seq
    }
}

/// The error log of one registered VFS. Cloning shares it.
#[derive(Clone)]
pub struct ErrorLog {
    inner: Arc<Inner>,
}

struct Inner {
    vfs_name: String,
    last: Mutex<Option<LastError>>,
}

impl ErrorLog {
    pub(crate) fn new(vfs_name: &str) -> ErrorLog {
        ErrorLog {
            inner: Arc::new(Inner {
                vfs_name: vfs_name.to_string(),
                last: Mutex::new(None),
            }),
        }
    }

    fn slot(&self) -> MutexGuard<'_, Option<LastError>> {
        crate::unpoisoned::lock(&self.inner.last)
    }

    /// Keep `err` as the last error and log it (`sqlite3_log`, prefixed with the VFS's name).
    /// For errors that happen outside a VFS call (a background thread's); within a call the shim
    /// reports what the method returns.
    pub fn report(&self, err: &SqliteError) {
        let message = err
            .message()
            .map_or_else(|| err.code().description().to_string(), str::to_string);
        if let Ok(c) = CString::new(format!("{}: {message}", self.inner.vfs_name)) {
            // SAFETY: sqlite3_log with a "%s" format and a valid C string.
            unsafe { ffi::sqlite3_log(err.code().raw(), c"%s".as_ptr(), c.as_ptr()) };
        }
        let last = LastError {
            code: err.code(),
            message,
            seq: NEXT_SEQ.fetch_add(1, Ordering::Relaxed),
        };
        let key = self.key();
        ON_THIS_THREAD.with(|t| t.borrow_mut().insert(key, last.clone()));
        *self.slot() = Some(last);
    }

    fn key(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    /// Log a warning (`sqlite3_log` with `SQLITE_WARNING`, prefixed with the VFS's name),
    /// leaving the last error as it is.
    pub fn warn(&self, message: &str) {
        if let Ok(c) = CString::new(format!("{}: {message}", self.inner.vfs_name)) {
            // SAFETY: sqlite3_log with a "%s" format and a valid C string.
            unsafe { ffi::sqlite3_log(ffi::SQLITE_WARNING, c"%s".as_ptr(), c.as_ptr()) };
        }
    }

    pub fn last(&self) -> Option<LastError> {
        self.slot().clone()
    }

    pub fn clear(&self) {
        *self.slot() = None;
    }

    /// The last error this VFS reported on the calling thread: SQLite calls a VFS on the thread
    /// that runs the statement, so this is what that thread's last failed call was told, whatever
    /// other threads' calls met since (as `errno` is). Errors of work the VFS does on threads of
    /// its own are in [`ErrorLog::last`] only.
    pub fn last_on_this_thread(&self) -> Option<LastError> {
        let key = self.key();
        ON_THIS_THREAD.with(|t| t.borrow().get(&key).cloned())
    }

    /// Forget the last error this VFS reported on the calling thread (not other threads').
    pub fn clear_on_this_thread(&self) {
        let key = self.key();
        ON_THIS_THREAD.with(|t| t.borrow_mut().remove(&key));
    }

    /// The code SQLite gets for `err`; an error with a message is reported first.
    pub(crate) fn fail(&self, err: &SqliteError) -> std::ffi::c_int {
        if err.message().is_some() {
            self.report(err);
        }
        err.code().raw()
    }
}

impl std::fmt::Debug for ErrorLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ErrorLog")
            .field("vfs", &self.inner.vfs_name)
            .field("last", &self.last())
            .finish()
    }
}

/// The error a panic in `method` becomes; `then` says what follows from it.
pub(crate) fn panic_error(
    method: &str,
    code: ResultCode,
    payload: &(dyn Any + Send),
    then: &str,
) -> SqliteError {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    SqliteError::with_message(code, format!("{method} panicked: {what}{then}"))
}
