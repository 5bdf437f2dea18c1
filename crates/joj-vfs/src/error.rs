//! Errors of the VFS layer, in two kinds.
//!
//! - [`SqliteError`]: what a VFS method tells SQLite — an extended result code and, when there
//!   is something to say, a message. SQLite itself sees only the code; the message goes to the
//!   registered VFS's last-error slot and to `sqlite3_log` (the seam's shim does both).
//! - [`VfsError`]: what joj-vfs's own Rust API returns (registration, parsing options).

use libsqlite3_sys as ffi;
use std::ffi::{CStr, c_int};
use std::fmt;

/// An SQLite result code, primary (`SQLITE_IOERR`) or extended (`SQLITE_IOERR_WRITE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResultCode(c_int);

impl ResultCode {
    pub const OK: ResultCode = ResultCode(ffi::SQLITE_OK);
    pub const ERROR: ResultCode = ResultCode(ffi::SQLITE_ERROR);
    pub const ABORT: ResultCode = ResultCode(ffi::SQLITE_ABORT);
    pub const BUSY: ResultCode = ResultCode(ffi::SQLITE_BUSY);
    pub const LOCKED: ResultCode = ResultCode(ffi::SQLITE_LOCKED);
    pub const NOMEM: ResultCode = ResultCode(ffi::SQLITE_NOMEM);
    pub const READONLY: ResultCode = ResultCode(ffi::SQLITE_READONLY);
    pub const READONLY_DIRECTORY: ResultCode = ResultCode(ffi::SQLITE_READONLY_DIRECTORY);
    pub const FULL: ResultCode = ResultCode(ffi::SQLITE_FULL);
    pub const CANTOPEN: ResultCode = ResultCode(ffi::SQLITE_CANTOPEN);
    pub const MISUSE: ResultCode = ResultCode(ffi::SQLITE_MISUSE);
    pub const NOTFOUND: ResultCode = ResultCode(ffi::SQLITE_NOTFOUND);
    pub const CORRUPT: ResultCode = ResultCode(ffi::SQLITE_CORRUPT);
    pub const NOTADB: ResultCode = ResultCode(ffi::SQLITE_NOTADB);
    pub const IOERR: ResultCode = ResultCode(ffi::SQLITE_IOERR);
    pub const IOERR_READ: ResultCode = ResultCode(ffi::SQLITE_IOERR_READ);
    pub const IOERR_SHORT_READ: ResultCode = ResultCode(ffi::SQLITE_IOERR_SHORT_READ);
    pub const IOERR_WRITE: ResultCode = ResultCode(ffi::SQLITE_IOERR_WRITE);
    pub const IOERR_FSYNC: ResultCode = ResultCode(ffi::SQLITE_IOERR_FSYNC);
    pub const IOERR_DIR_FSYNC: ResultCode = ResultCode(ffi::SQLITE_IOERR_DIR_FSYNC);
    pub const IOERR_TRUNCATE: ResultCode = ResultCode(ffi::SQLITE_IOERR_TRUNCATE);
    pub const IOERR_FSTAT: ResultCode = ResultCode(ffi::SQLITE_IOERR_FSTAT);
    pub const IOERR_UNLOCK: ResultCode = ResultCode(ffi::SQLITE_IOERR_UNLOCK);
    pub const IOERR_LOCK: ResultCode = ResultCode(ffi::SQLITE_IOERR_LOCK);
    pub const IOERR_DELETE: ResultCode = ResultCode(ffi::SQLITE_IOERR_DELETE);
    pub const IOERR_DELETE_NOENT: ResultCode = ResultCode(ffi::SQLITE_IOERR_DELETE_NOENT);
    pub const IOERR_ACCESS: ResultCode = ResultCode(ffi::SQLITE_IOERR_ACCESS);
    pub const IOERR_CHECKRESERVEDLOCK: ResultCode = ResultCode(ffi::SQLITE_IOERR_CHECKRESERVEDLOCK);
    pub const IOERR_CLOSE: ResultCode = ResultCode(ffi::SQLITE_IOERR_CLOSE);
    pub const IOERR_SHMOPEN: ResultCode = ResultCode(ffi::SQLITE_IOERR_SHMOPEN);
    pub const IOERR_SHMSIZE: ResultCode = ResultCode(ffi::SQLITE_IOERR_SHMSIZE);
    pub const IOERR_SHMLOCK: ResultCode = ResultCode(ffi::SQLITE_IOERR_SHMLOCK);
    pub const IOERR_SHMMAP: ResultCode = ResultCode(ffi::SQLITE_IOERR_SHMMAP);

    /// The code as SQLite's C API spells it.
    pub const fn from_raw(code: c_int) -> ResultCode {
        ResultCode(code)
    }

    pub const fn raw(self) -> c_int {
        self.0
    }

    /// The primary code (the low byte): `SQLITE_IOERR` for every `SQLITE_IOERR_*`.
    pub const fn primary(self) -> ResultCode {
        ResultCode(self.0 & 0xff)
    }

    /// SQLite's English description of the code ("disk I/O error").
    pub fn description(self) -> &'static str {
        // SAFETY: sqlite3_errstr accepts any code and returns a static, NUL-terminated string.
        let s = unsafe { ffi::sqlite3_errstr(self.0) };
        if s.is_null() {
            return "unknown error";
        }
        // SAFETY: non-null and static, as above.
        unsafe { CStr::from_ptr(s) }
            .to_str()
            .unwrap_or("unknown error")
    }
}

impl fmt::Display for ResultCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SQLite code {} ({})", self.0, self.description())
    }
}

/// The failure of one VFS call: the code SQLite gets, and what the VFS has to say about it.
///
/// An error without a message is a plain answer (`SQLITE_BUSY` from a lock, `SQLITE_NOTFOUND`
/// for a file control the VFS does not know, a code passed up from a base VFS) and is neither
/// logged nor kept as the last error; one with a message is both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteError {
    code: ResultCode,
    message: Option<String>,
}

impl SqliteError {
    /// A bare code, nothing to report.
    pub fn new(code: ResultCode) -> SqliteError {
        SqliteError {
            code,
            message: None,
        }
    }

    /// A code and the message that explains it (cause and fix).
    pub fn with_message(code: ResultCode, message: impl Into<String>) -> SqliteError {
        SqliteError {
            code,
            message: Some(message.into()),
        }
    }

    /// `SQLITE_NOTFOUND`: the file control is not one this file handles.
    pub fn not_found() -> SqliteError {
        SqliteError::new(ResultCode::NOTFOUND)
    }

    /// `SQLITE_BUSY`: a lock is held by another connection (SQLite retries or gives up).
    pub fn busy() -> SqliteError {
        SqliteError::new(ResultCode::BUSY)
    }

    pub fn code(&self) -> ResultCode {
        self.code
    }

    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }
}

impl fmt::Display for SqliteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.message {
            Some(m) => write!(f, "{m} ({})", self.code),
            None => write!(f, "{}", self.code),
        }
    }
}

impl std::error::Error for SqliteError {}

/// Errors of joj-vfs's Rust API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VfsError {
    #[error(
        "SQLite has no VFS named {name:?}; register it before the VFS that runs over it (joj's \
         accounting VFS: joj_vfs::register) or run over \"unix\""
    )]
    NoBaseVfs { name: String },
    #[error("the VFS name {name:?} contains a NUL byte; choose a name without one")]
    BadName { name: String },
    #[error(
        "SQLite already has a VFS named {name:?} that joj did not register; choose another name"
    )]
    NameTaken { name: String },
    #[error(
        "the VFS {name:?} is registered already as a {registered}, not a {wanted}; register \
         this one under another name"
    )]
    OtherType {
        name: String,
        registered: &'static str,
        wanted: &'static str,
    },
    #[error("sqlite3_vfs_register({name:?}) failed with {code}")]
    Register { name: String, code: ResultCode },
    #[error(
        "sqlite3_auto_extension failed with {code}; joj cannot set up connections of the VFS \
         {name:?} (out of memory?)"
    )]
    AutoExtension { name: String, code: ResultCode },
    #[error("unknown sync call {given:?}: use fsync or fdatasync")]
    UnknownSyncCall { given: String },
}

/// `Ok` for `SQLITE_OK`, else the code as an error without a message (the base said nothing).
pub(crate) fn check(rc: c_int) -> Result<(), SqliteError> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(SqliteError::new(ResultCode::from_raw(rc)))
    }
}
