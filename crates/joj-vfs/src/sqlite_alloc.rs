//! The two things joj-vfs needs from SQLite that differ between the bundled SQLite and the API
//! table of a loadable extension (`loadable_extension` feature): initializing the library (an
//! extension runs inside an initialized one, and the table has no `sqlite3_initialize`) and
//! strings SQLite will free (the table has no variadic `sqlite3_mprintf`).

use libsqlite3_sys as ffi;
use std::ffi::c_char;

/// Make sure SQLite is initialized before its VFS registry is used.
pub(crate) fn initialize() {
    #[cfg(not(feature = "loadable_extension"))]
    // SAFETY: sqlite3_initialize is idempotent and thread-safe.
    unsafe {
        ffi::sqlite3_initialize();
    }
}

/// `text` (without NUL bytes) copied into memory from `sqlite3_malloc`, NUL-terminated: what
/// SQLite frees with `sqlite3_free`. `None` when SQLite is out of memory or the text is
/// larger than SQLite allocates.
pub(crate) fn string(text: &str) -> Option<*mut c_char> {
    let n = i32::try_from(text.len() + 1).ok()?;
    // SAFETY: a plain allocation; NULL on failure.
    let p = unsafe { ffi::sqlite3_malloc(n) } as *mut u8;
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` holds `text.len() + 1` bytes; the source and destination do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), p, text.len());
        *p.add(text.len()) = 0;
    }
    Some(p as *mut c_char)
}
