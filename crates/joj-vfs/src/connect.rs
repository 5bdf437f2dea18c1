//! [`Connecting`]: a connection being opened on one of joj's VFSs, as
//! [`Vfs::on_connect`](crate::Vfs::on_connect) sees it — the few things a VFS may set up on it
//! before the application gets it.

use crate::error::SqliteError;
use libsqlite3_sys as ffi;
use std::ffi::{CStr, CString, c_int, c_void};
use std::marker::PhantomData;
use std::ptr::NonNull;

/// A connection SQLite is opening (valid for the call, `'a`).
pub struct Connecting<'a> {
    db: NonNull<ffi::sqlite3>,
    _call: PhantomData<&'a mut ffi::sqlite3>,
}

impl Connecting<'_> {
    /// # Safety
    /// `db` is a connection SQLite is opening (an auto-extension's argument), valid for `'a`.
    pub(crate) unsafe fn from_raw(db: NonNull<ffi::sqlite3>) -> Self {
        Connecting {
            db,
            _call: PhantomData,
        }
    }

    /// Ask for `n` reserved bytes at the end of every page of the main database
    /// (`SQLITE_FCNTL_RESERVE_BYTES`): a new database gets them; an existing one keeps its own
    /// until `VACUUM`. Returns the reserve asked for before.
    pub fn request_reserve_bytes(&mut self, n: u8) -> u8 {
        let mut v = c_int::from(n);
        // SAFETY: a live connection and a valid int in/out pointer, as this control takes. It is
        // handled inside SQLite (never reaches a VFS) and always succeeds.
        unsafe {
            ffi::sqlite3_file_control(
                self.db.as_ptr(),
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_RESERVE_BYTES,
                &mut v as *mut c_int as *mut c_void,
            )
        };
        v.clamp(0, 255) as u8
    }

    /// The URI parameter `key` of the main database's name (`file:x.db?key=value`).
    pub fn uri_parameter(&self, key: &str) -> Option<String> {
        let key = CString::new(key).ok()?;
        // SAFETY: a live connection; the filename SQLite returns carries its URI parameters.
        unsafe {
            let name = ffi::sqlite3_db_filename(self.db.as_ptr(), c"main".as_ptr());
            if name.is_null() {
                return None;
            }
            let v = ffi::sqlite3_uri_parameter(name, key.as_ptr());
            (!v.is_null()).then(|| CStr::from_ptr(v).to_string_lossy().into_owned())
        }
    }

    /// The keys of every URI parameter of the main database's name, in order.
    pub fn uri_keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        // SAFETY: a live connection; sqlite3_uri_key returns NULL past the last parameter.
        unsafe {
            let name = ffi::sqlite3_db_filename(self.db.as_ptr(), c"main".as_ptr());
            if name.is_null() {
                return keys;
            }
            for n in 0.. {
                let k = ffi::sqlite3_uri_key(name, n);
                if k.is_null() {
                    break;
                }
                keys.push(CStr::from_ptr(k).to_string_lossy().into_owned());
            }
        }
        keys
    }

    /// The main database's file (`None`: in-memory or temporary).
    pub fn database_path(&self) -> Option<std::path::PathBuf> {
        // SAFETY: a live connection; the name is SQLite's, copied before the call returns.
        let name = unsafe {
            let p = ffi::sqlite3_db_filename(self.db.as_ptr(), c"main".as_ptr());
            if p.is_null() || *p == 0 {
                return None;
            }
            CStr::from_ptr(p)
        };
        use std::os::unix::ffi::OsStrExt;
        Some(std::path::PathBuf::from(std::ffi::OsStr::from_bytes(
            name.to_bytes(),
        )))
    }

    /// Read `buf.len()` bytes of the main database at `offset` through the file SQLite opened
    /// for it (the top of its VFS stack), as SQLite would see them: `Ok(false)` if the file is
    /// shorter (or has no file yet). No descriptor is opened (closing one would drop the
    /// process's POSIX locks on the file) and no lock is taken: a check of the header, not a
    /// read of data SQLite may be changing.
    pub fn read_main_database(&self, buf: &mut [u8], offset: u64) -> Result<bool, SqliteError> {
        let mut file: *mut ffi::sqlite3_file = std::ptr::null_mut();
        // SAFETY: a live connection; FILE_POINTER is answered by SQLite itself.
        let rc = unsafe {
            ffi::sqlite3_file_control(
                self.db.as_ptr(),
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_FILE_POINTER,
                &mut file as *mut *mut ffi::sqlite3_file as *mut c_void,
            )
        };
        // SAFETY: the file SQLite returned is open for the connection's life; a file whose
        // pMethods is NULL is not open (a temporary database before its first write).
        let read = unsafe {
            if rc != ffi::SQLITE_OK || file.is_null() || (*file).pMethods.is_null() {
                return Ok(false);
            }
            (*(*file).pMethods).xRead
        };
        let Some(x_read) = read else {
            return Ok(false);
        };
        let n = c_int::try_from(buf.len())
            .map_err(|_| SqliteError::new(crate::error::ResultCode::MISUSE))?;
        // SAFETY: the file's own method, a buffer of `n` bytes.
        let rc = unsafe {
            x_read(
                file,
                buf.as_mut_ptr() as *mut c_void,
                n,
                offset.min(i64::MAX as u64) as i64,
            )
        };
        match rc {
            ffi::SQLITE_OK => Ok(true),
            ffi::SQLITE_IOERR_SHORT_READ => Ok(false),
            rc => Err(SqliteError::new(crate::error::ResultCode::from_raw(rc))),
        }
    }
}
