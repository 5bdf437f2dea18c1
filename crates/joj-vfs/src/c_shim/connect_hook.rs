//! One SQLite auto-extension for all of joj's VFSs: on every new connection it finds the joj VFS
//! the main database is on — the connection's VFS, or one below a VFS stacked over it (asked
//! through the main database's file with the shim's own file control, which such a VFS passes
//! down) — and runs that VFS's `on_connect`.
//!
//! SQLite clears its auto-extensions in `sqlite3_shutdown()`; every registration installs the
//! hook again (SQLite ignores one installed already), so an application that registers joj's
//! VFSs (or loads the extension) again after a shutdown has it back.

use super::errors::panic_error;
use super::file_calls::REGISTRATION_FCNTL;
use super::registry;
use crate::connect::Connecting;
use crate::error::ResultCode;
use libsqlite3_sys as ffi;
use std::ffi::{c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;

/// Install the hook (SQLite ignores an entry point registered already).
pub(crate) fn install() -> c_int {
    // SAFETY: registering a valid extern "C" entry point of the documented signature.
    #[cfg(not(feature = "loadable_extension"))]
    let rc = unsafe { ffi::sqlite3_auto_extension(Some(on_open)) };
    // The extension API table declares the entry point as `void (*)(void)`, as sqlite3.h's
    // `sqlite3_auto_extension(void(*)(void))` does; SQLite calls it with the real signature.
    #[cfg(feature = "loadable_extension")]
    // SAFETY: a function pointer cast between two extern "C" function types, the one SQLite
    // documents for auto-extensions being the one it calls.
    let rc = unsafe {
        ffi::sqlite3_auto_extension(Some(std::mem::transmute::<
            unsafe extern "C" fn(
                *mut ffi::sqlite3,
                *mut *mut c_char,
                *const ffi::sqlite3_api_routines,
            ) -> c_int,
            unsafe extern "C" fn(),
        >(on_open)))
    };
    rc
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
    let found = if rc == ffi::SQLITE_OK {
        registry::by_pointer(vfs)
    } else {
        None
    };
    let Some(entry) = found.or_else(|| {
        let mut reg: *const c_void = std::ptr::null();
        // SAFETY: the connection being opened; joj's own control, answered by the shim of a
        // joj VFS's file with its registration (any other VFS answers SQLITE_NOTFOUND).
        let rc = unsafe {
            ffi::sqlite3_file_control(
                db.as_ptr(),
                c"main".as_ptr(),
                REGISTRATION_FCNTL,
                &mut reg as *mut *const c_void as *mut c_void,
            )
        };
        (rc == ffi::SQLITE_OK).then(|| registry::by_registration(reg))?
    }) else {
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
        if let Some(s) = crate::sqlite_alloc::string(m) {
            // SAFETY: SQLite frees *err with sqlite3_free, which matches sqlite_alloc.
            unsafe { *err = s };
        }
    }
    code
}
