//! joj as a loadable SQLite extension: `libjoj.so`, entry point `sqlite3_joj_init`.
//!
//! Loaded into any SQLite (the `sqlite3` shell's `.load`, Python's `load_extension`, C's
//! `sqlite3_load_extension`), it registers joj's two VFSs in that SQLite — `waldio` (WALDIO:
//! direct-I/O WAL commits, `docs/formats/waldio.md`; options as URI parameters) and `joj` (the
//! accounting VFS: system calls and bytes per file role) — and SQL functions on every
//! connection (`functions`). Every SQLite call goes through the loading SQLite's API table
//! (libsqlite3-sys's `loadable_extension`), so the extension runs inside whichever SQLite
//! loads it; one older than the headers it was built against is refused with a message.
//!
//! The extension stays loaded for the life of the process (`SQLITE_OK_LOAD_PERMANENTLY`): the
//! VFSs it registers must outlive the connection that loaded it. A program that links
//! `libjoj.so` instead registers `sqlite3_joj_auto_init` with `sqlite3_auto_extension`.
//!
//! The C declarations are in `include/joj.h`; an example in `examples/waldio_demo.c`.

mod functions;
mod sql;

use libsqlite3_sys as ffi;
use std::ffi::{c_char, c_int};

/// Entry point for `sqlite3_load_extension` (SQLite derives the name `sqlite3_joj_init` from
/// `libjoj.so`).
///
/// # Safety
/// Called by SQLite with a connection, an error out pointer and its API table.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sqlite3_joj_init(
    db: *mut ffi::sqlite3,
    err: *mut *mut c_char,
    api: *mut ffi::sqlite3_api_routines,
) -> c_int {
    // SAFETY: SQLite's arguments, passed on.
    match unsafe { init(db, err, api) } {
        ffi::SQLITE_OK => {
            // Later connections get the SQL functions too.
            // SAFETY: registering an entry point of the auto-extension signature.
            unsafe { functions::install_for_new_connections() };
            ffi::SQLITE_OK_LOAD_PERMANENTLY
        }
        rc => rc,
    }
}

/// Entry point for `sqlite3_auto_extension` in a program that links `libjoj.so`: run for every
/// new connection, it registers the VFSs (once) and the SQL functions.
///
/// # Safety
/// Called by SQLite with a connection, an error out pointer and its API table.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sqlite3_joj_auto_init(
    db: *mut ffi::sqlite3,
    err: *mut *mut c_char,
    api: *mut ffi::sqlite3_api_routines,
) -> c_int {
    // SAFETY: SQLite's arguments, passed on.
    unsafe { init(db, err, api) }
}

/// Bind to the loading SQLite's API table, register the VFSs, add the functions to `db`.
unsafe fn init(
    db: *mut ffi::sqlite3,
    err: *mut *mut c_char,
    api: *mut ffi::sqlite3_api_routines,
) -> c_int {
    if api.is_null() {
        return ffi::SQLITE_MISUSE;
    }
    // SAFETY: the API table SQLite passed; this stores its entries for every later call.
    if let Err(e) = unsafe { ffi::rusqlite_extension_init2(api) } {
        let m = match e {
            ffi::InitError::VersionMismatch {
                compile_time,
                runtime,
            } => format!(
                "joj: this SQLite is {}, older than the {} the extension was built against; load \
                 it into SQLite {} or newer, or rebuild it against this SQLite's headers \
                 (./scripts/setup.sh builds it against the system's libsqlite3-dev)",
                sql::version_text(runtime),
                sql::version_text(compile_time),
                sql::version_text(compile_time)
            ),
            other => format!("joj: this SQLite's extension API table is unusable: {other}"),
        };
        // SAFETY: `err` is SQLite's out pointer; malloc is bound before the version check.
        unsafe { sql::set_error(err, &m) };
        return ffi::SQLITE_ERROR;
    }
    if let Err(e) = functions::register_vfss() {
        // SAFETY: as above, with the whole table bound.
        unsafe { sql::set_error(err, &e.to_string()) };
        return ffi::SQLITE_ERROR;
    }
    // SAFETY: the connection SQLite is loading us into.
    unsafe { functions::add_to(db, err) }
}
