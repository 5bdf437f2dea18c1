//! One SQLite auto-extension for all of joj's VFSs: on every new connection it asks SQLite which
//! VFS the main database is on and, if the registry knows it, runs that VFS's `on_connect`.

use super::errors::panic_error;
use super::registry;
use crate::connect::Connecting;
use crate::error::ResultCode;
use libsqlite3_sys as ffi;
use std::ffi::{CString, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;

/// Install the hook (SQLite ignores an entry point registered already).
pub(crate) fn install() -> c_int {
    // SAFETY: registering a valid extern "C" entry point of the documented signature.
    unsafe { ffi::sqlite3_auto_extension(Some(on_open)) }
}

unsafe extern "C" fn on_open(
    db: *mut ffi::sqlite3,
    err: *mut *mut c_char,
    _api: *const ffi::sqlite3_api_routines,
) -> c_int {
    let Some(db) = NonNull::new(db) else {
        return ffi::SQLITE_OK;
    };
    let mut vfs: *mut ffi::sqlite3_vfs = std::ptr::null_mut();
    // SAFETY: the connection being opened and a valid out pointer. VFS_POINTER is answered by
    // SQLite itself (it never reaches a VFS).
    let rc = unsafe {
        ffi::sqlite3_file_control(
            db.as_ptr(),
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_VFS_POINTER,
            &mut vfs as *mut *mut ffi::sqlite3_vfs as *mut c_void,
        )
    };
    if rc != ffi::SQLITE_OK {
        return ffi::SQLITE_OK;
    }
    let Some(entry) = registry::by_pointer(vfs) else {
        return ffi::SQLITE_OK;
    };
    // SAFETY: the connection being opened, for the duration of this call.
    let mut conn = unsafe { Connecting::from_raw(db) };
    let result = catch_unwind(AssertUnwindSafe(|| {
        (entry.on_connect)(entry.instance, &mut conn)
    }));
    let e = match result {
        Ok(Ok(())) => return ffi::SQLITE_OK,
        Ok(Err(e)) => e,
        Err(payload) => panic_error(
            &format!("{}.on_connect", entry.name),
            ResultCode::ERROR,
            payload.as_ref(),
            "",
        ),
    };
    let code = entry.errors.fail(&e);
    if let (false, Some(m)) = (err.is_null(), e.message()) {
        if let Ok(c) = CString::new(m) {
            // SAFETY: SQLite frees *err with sqlite3_free; "%s" with a valid C string.
            unsafe { *err = ffi::sqlite3_mprintf(c"%s".as_ptr(), c.as_ptr()) };
        }
    }
    code
}
