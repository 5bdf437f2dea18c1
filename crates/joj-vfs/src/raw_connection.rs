//! [`RawConnection`]: a SQLite connection opened through whatever SQLite this code runs in —
//! the bundled one, or, inside joj's loadable extension, the loading SQLite's API table. For the
//! few things joj's layers do to a database themselves (conversion, checks) without rusqlite,
//! which cannot be built against an extension's API table.

use crate::error::{ResultCode, SqliteError};
use libsqlite3_sys as ffi;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::Path;
use std::ptr::NonNull;

/// An open connection; closed by [`RawConnection::close`] (or on drop, ignoring errors).
pub struct RawConnection {
    db: NonNull<ffi::sqlite3>,
}

// SAFETY: SQLite connections may move between threads (SQLite is built threadsafe and the
// connection is opened with SQLITE_OPEN_FULLMUTEX); a RawConnection is used by one owner.
unsafe impl Send for RawConnection {}

fn c_string(what: &str, s: &str) -> Result<CString, SqliteError> {
    CString::new(s).map_err(|_| {
        SqliteError::with_message(ResultCode::MISUSE, format!("{what} with a NUL byte: {s:?}"))
    })
}

/// SQLite's message for the last error on `db`.
fn errmsg(db: *mut ffi::sqlite3) -> String {
    // SAFETY: a connection handle (possibly one whose open failed, which SQLite allows here);
    // the message is copied before any other call on it.
    unsafe {
        let m = ffi::sqlite3_errmsg(db);
        if m.is_null() {
            return String::new();
        }
        CStr::from_ptr(m).to_string_lossy().into_owned()
    }
}

impl RawConnection {
    /// Open `path` (read-write, created if missing) on the VFS `vfs` (`None`: the process
    /// default). `path` may be a `file:` URI.
    pub fn open(path: &Path, vfs: Option<&str>) -> Result<RawConnection, SqliteError> {
        let name = c_string("a path", &path.to_string_lossy())?;
        let vfs = vfs.map(|v| c_string("a VFS name", v)).transpose()?;
        let flags = ffi::SQLITE_OPEN_READWRITE
            | ffi::SQLITE_OPEN_CREATE
            | ffi::SQLITE_OPEN_URI
            | ffi::SQLITE_OPEN_FULLMUTEX;
        let mut db: *mut ffi::sqlite3 = std::ptr::null_mut();
        // SAFETY: valid C strings and out pointer; SQLite returns a handle even on failure.
        let rc = unsafe {
            ffi::sqlite3_open_v2(
                name.as_ptr(),
                &mut db,
                flags,
                vfs.as_ref().map_or(std::ptr::null(), |v| v.as_ptr()),
            )
        };
        if rc != ffi::SQLITE_OK {
            let e = SqliteError::with_message(ResultCode::from_raw(rc), errmsg(db));
            // SAFETY: the handle of a failed open must still be closed (null is harmless).
            unsafe { ffi::sqlite3_close(db) };
            return Err(e);
        }
        let db = NonNull::new(db).ok_or_else(|| SqliteError::new(ResultCode::NOMEM))?;
        // SAFETY: a live connection; 5 s of retries on a locked database, as rusqlite's default.
        unsafe { ffi::sqlite3_busy_timeout(db.as_ptr(), 5000) };
        Ok(RawConnection { db })
    }

    /// Run `sql` (any number of statements); the first column of the last row any of them
    /// returned, as text (`None`: no row, or NULL).
    pub fn query(&mut self, sql: &str) -> Result<Option<String>, SqliteError> {
        // SAFETY: our live connection.
        unsafe { exec(self.db, sql) }
    }

    /// Ask for `n` reserved bytes per page (`SQLITE_FCNTL_RESERVE_BYTES`); a new database or a
    /// `VACUUM` gets them.
    pub fn set_reserve_bytes(&mut self, n: u8) -> Result<(), SqliteError> {
        let mut v = c_int::from(n);
        // SAFETY: a live connection and a valid int in/out pointer, as this control takes.
        let rc = unsafe {
            ffi::sqlite3_file_control(
                self.db.as_ptr(),
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_RESERVE_BYTES,
                &mut v as *mut c_int as *mut c_void,
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(SqliteError::with_message(
                ResultCode::from_raw(rc),
                format!("setting the reserve to {n} bytes per page"),
            ));
        }
        Ok(())
    }

    /// Close, reporting what SQLite says (unfinished statements, a failed checkpoint).
    pub fn close(self) -> Result<(), SqliteError> {
        let db = self.db.as_ptr();
        std::mem::forget(self);
        // SAFETY: our live connection, closed once (Drop is skipped above).
        let rc = unsafe { ffi::sqlite3_close(db) };
        if rc != ffi::SQLITE_OK {
            // Only unfinalized statements keep a connection open, and `query` finalizes all of
            // its own: the handle stays allocated, which is all a failure here costs.
            return Err(SqliteError::with_message(
                ResultCode::from_raw(rc),
                errmsg(db),
            ));
        }
        Ok(())
    }
}

impl Drop for RawConnection {
    fn drop(&mut self) {
        // SAFETY: our live connection, closed once.
        unsafe { ffi::sqlite3_close(self.db.as_ptr()) };
    }
}

/// `sqlite3_exec` of `sql` on `db`: the first column of the last row returned, or the error
/// with the extended code and SQLite's message.
///
/// # Safety
/// `db` is a live connection, used by no other thread during the call.
pub(crate) unsafe fn exec(
    db: NonNull<ffi::sqlite3>,
    sql: &str,
) -> Result<Option<String>, SqliteError> {
    let c = c_string("SQL", sql)?;
    let mut last: Option<String> = None;
    let mut err: *mut c_char = std::ptr::null_mut();
    unsafe extern "C" fn row(
        out: *mut c_void,
        n: c_int,
        values: *mut *mut c_char,
        _names: *mut *mut c_char,
    ) -> c_int {
        // SAFETY: `out` is the `Option<String>` passed below; `values` has `n` entries.
        unsafe {
            let out = &mut *(out as *mut Option<String>);
            *out = if n > 0 && !(*values).is_null() {
                Some(CStr::from_ptr(*values).to_string_lossy().into_owned())
            } else {
                None
            };
        }
        0
    }
    // SAFETY: a live connection, a valid SQL string, a callback whose argument outlives the
    // call, and an error out pointer freed with sqlite3_free.
    let rc = unsafe {
        ffi::sqlite3_exec(
            db.as_ptr(),
            c.as_ptr(),
            Some(row),
            &mut last as *mut Option<String> as *mut c_void,
            &mut err,
        )
    };
    let message = if err.is_null() {
        None
    } else {
        // SAFETY: SQLite's NUL-terminated message, freed right after it is copied.
        let m = unsafe { CStr::from_ptr(err) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: allocated by SQLite for us.
        unsafe { ffi::sqlite3_free(err as *mut c_void) };
        Some(m)
    };
    if rc != ffi::SQLITE_OK {
        // The extended code is on the connection; exec's own return is the primary one.
        // SAFETY: a live connection.
        let code = unsafe { ffi::sqlite3_extended_errcode(db.as_ptr()) };
        let code = ResultCode::from_raw(if code & 0xff == rc { code } else { rc });
        return Err(SqliteError::with_message(
            code,
            message.unwrap_or_else(|| code.description().to_string()),
        ));
    }
    Ok(last)
}
