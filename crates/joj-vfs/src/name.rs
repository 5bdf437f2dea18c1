//! [`FileName`]: the name SQLite passes to `xOpen`, with the URI parameters SQLite keeps after
//! it. Only the shim makes one (from SQLite's pointer), so a VFS can read the parameters and
//! hand the very same name to a base VFS.

use crate::flags::{FileKind, OpenFlags};
use libsqlite3_sys as ffi;
use std::ffi::{CStr, CString, OsStr, c_char};
use std::marker::PhantomData;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

/// A file name as SQLite passed it to `xOpen` (valid for the call, `'a`).
#[derive(Debug, Clone, Copy)]
pub struct FileName<'a> {
    raw: NonNull<c_char>,
    flags: OpenFlags,
    _call: PhantomData<&'a CStr>,
}

impl<'a> FileName<'a> {
    /// `None` for a NULL name (a temporary file SQLite leaves the VFS to name).
    ///
    /// # Safety
    /// `raw` is NULL or a name SQLite's core passed to `xOpen` together with `flags` (such names
    /// carry SQLite's URI-parameter block after their NUL), valid for `'a`.
    pub(crate) unsafe fn from_raw(raw: ffi::sqlite3_filename, flags: OpenFlags) -> Option<Self> {
        NonNull::new(raw as *mut c_char).map(|raw| FileName {
            raw,
            flags,
            _call: PhantomData,
        })
    }

    pub(crate) fn as_ptr(&self) -> ffi::sqlite3_filename {
        self.raw.as_ptr()
    }

    pub fn as_c_str(&self) -> &'a CStr {
        // SAFETY: `from_raw`'s contract: a NUL-terminated name valid for 'a.
        unsafe { CStr::from_ptr(self.raw.as_ptr()) }
    }

    pub fn path(&self) -> &'a Path {
        Path::new(OsStr::from_bytes(self.as_c_str().to_bytes()))
    }

    /// The value of URI parameter `key` (`file:x.db?key=value`), as SQLite keeps it with the
    /// database name and the names of its journal and WAL.
    pub fn uri_parameter(&self, key: &str) -> Option<String> {
        let key = CString::new(key).ok()?;
        // SAFETY: a name SQLite passed to xOpen (from_raw's contract) and a valid C string.
        let v = unsafe { ffi::sqlite3_uri_parameter(self.raw.as_ptr(), key.as_ptr()) };
        if v.is_null() {
            return None;
        }
        // SAFETY: SQLite returns a NUL-terminated string inside the name's parameter block.
        Some(unsafe { CStr::from_ptr(v) }.to_string_lossy().into_owned())
    }

    /// The path of the database this file belongs to, for a main database, its rollback
    /// journal or its WAL (`None` for other kinds).
    pub fn database_path(&self) -> Option<PathBuf> {
        if !matches!(
            self.flags.kind(),
            FileKind::MainDb | FileKind::MainJournal | FileKind::Wal
        ) {
            return None;
        }
        // SAFETY: a database, journal or WAL name SQLite passed to xOpen: exactly the names
        // sqlite3_filename_database is defined for.
        let db = unsafe { ffi::sqlite3_filename_database(self.raw.as_ptr()) };
        if db.is_null() {
            return None;
        }
        // SAFETY: SQLite returns a NUL-terminated string that lives as long as the name.
        let bytes = unsafe { CStr::from_ptr(db) }.to_bytes();
        Some(PathBuf::from(OsStr::from_bytes(bytes)))
    }
}
