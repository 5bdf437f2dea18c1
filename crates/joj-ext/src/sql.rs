//! The few raw SQLite calls the SQL functions need, each wrapped once: argument text, results,
//! errors and strings SQLite frees. Through the loading SQLite's API table.

use libsqlite3_sys as ffi;
use std::ffi::{c_char, c_int};

/// `3040001` as `3.40.1`.
pub(crate) fn version_text(n: c_int) -> String {
    format!("{}.{}.{}", n / 1_000_000, n / 1000 % 1000, n % 1000)
}

/// Put `message` where SQLite looks for an extension's error (`*err`, freed with
/// `sqlite3_free`).
///
/// # Safety
/// `err` is null or SQLite's error out pointer; `sqlite3_malloc` is bound.
pub(crate) unsafe fn set_error(err: *mut *mut c_char, message: &str) {
    if err.is_null() {
        return;
    }
    let text = message.replace('\0', " ");
    let Ok(n) = c_int::try_from(text.len() + 1) else {
        return;
    };
    // SAFETY: a plain allocation, filled with the text and a NUL before SQLite sees it.
    unsafe {
        let p = ffi::sqlite3_malloc(n) as *mut u8;
        if p.is_null() {
            return;
        }
        std::ptr::copy_nonoverlapping(text.as_ptr(), p, text.len());
        *p.add(text.len()) = 0;
        *err = p as *mut c_char;
    }
}

/// The `i`-th argument of a function call as text, all its bytes (`None`: NULL).
///
/// # Safety
/// `argv` holds at least `i + 1` values of the current call.
pub(crate) unsafe fn arg_bytes(argv: *mut *mut ffi::sqlite3_value, i: usize) -> Option<Vec<u8>> {
    // SAFETY: per the contract; the bytes are copied before the call returns, and
    // sqlite3_value_bytes is asked after sqlite3_value_text, as SQLite documents.
    unsafe {
        let v = *argv.add(i);
        let t = ffi::sqlite3_value_text(v);
        if t.is_null() {
            return None;
        }
        let n = usize::try_from(ffi::sqlite3_value_bytes(v)).unwrap_or(0);
        Some(std::slice::from_raw_parts(t, n).to_vec())
    }
}

/// Return `text` from the function call.
///
/// # Safety
/// `ctx` is the current call's context.
pub(crate) unsafe fn result_text(ctx: *mut ffi::sqlite3_context, text: &str) {
    // SAFETY: SQLite copies the bytes (TRANSIENT) before this returns.
    unsafe {
        ffi::sqlite3_result_text(
            ctx,
            text.as_ptr() as *const c_char,
            text.len() as c_int,
            ffi::SQLITE_TRANSIENT(),
        )
    }
}

/// Fail the function call with `message`.
///
/// # Safety
/// `ctx` is the current call's context.
pub(crate) unsafe fn result_error(ctx: *mut ffi::sqlite3_context, message: &str) {
    // SAFETY: SQLite copies the message (given with its length).
    unsafe {
        ffi::sqlite3_result_error(
            ctx,
            message.as_ptr() as *const c_char,
            message.len() as c_int,
        )
    }
}
