//! SQLite's VFS-level calls for a registered `V: Vfs`: open, delete, access and full pathname
//! go to the Rust VFS (under `catch_unwind`); randomness, sleep, time, dynamic loading, the OS
//! error and the system-call overrides (`xSetSystemCall` and its two companions, with which a
//! test or an application replaces the base VFS's `open`, `unlink`, ...) go unchanged to the
//! VFS's delegate.

use super::file_calls::FileSlot;
use super::registration::Registration;
use crate::error::ResultCode;
use crate::flags::{Access, OpenFlags};
use crate::name::FileName;
use crate::vfs::Vfs;
use libsqlite3_sys as ffi;
use std::ffi::{CStr, OsStr, c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::ptr;

/// The `sqlite3_vfs` of `reg` (leaked by the caller's registration).
pub(crate) fn make_vfs<V: Vfs>(reg: &'static Registration<V>) -> ffi::sqlite3_vfs {
    ffi::sqlite3_vfs {
        iVersion: 3,
        szOsFile: std::mem::size_of::<FileSlot<V>>() as c_int,
        mxPathname: reg.vfs.max_pathname().min(c_int::MAX as usize) as c_int,
        pNext: ptr::null_mut(),
        zName: reg.c_name.as_ptr(),
        pAppData: reg as *const Registration<V> as *mut c_void,
        xOpen: Some(x_open::<V>),
        xDelete: Some(x_delete::<V>),
        xAccess: Some(x_access::<V>),
        xFullPathname: Some(x_full_pathname::<V>),
        xDlOpen: Some(x_dl_open::<V>),
        xDlError: Some(x_dl_error::<V>),
        xDlSym: Some(x_dl_sym::<V>),
        xDlClose: Some(x_dl_close::<V>),
        xRandomness: Some(x_randomness::<V>),
        xSleep: Some(x_sleep::<V>),
        xCurrentTime: Some(x_current_time::<V>),
        xGetLastError: Some(x_get_last_error::<V>),
        xCurrentTimeInt64: Some(x_current_time_int64::<V>),
        xSetSystemCall: Some(x_set_system_call::<V>),
        xGetSystemCall: Some(x_get_system_call::<V>),
        xNextSystemCall: Some(x_next_system_call::<V>),
    }
}

/// A path SQLite passed (NUL-terminated, valid for the call).
///
/// # Safety
/// `name` is a valid C string for `'a`.
unsafe fn path_of<'a>(name: *const c_char) -> &'a Path {
    // SAFETY: the caller's contract.
    Path::new(OsStr::from_bytes(
        unsafe { CStr::from_ptr(name) }.to_bytes(),
    ))
}

// Every callback below: SQLite calls it with a VFS object `make_vfs::<V>` built (so pAppData
// is a Registration<V>) and arguments of the documented types.

unsafe extern "C" fn x_open<V: Vfs>(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: see above; `file` is a buffer of szOsFile bytes and `name` NULL or SQLite's name.
    unsafe {
        let reg: &'static Registration<V> = Registration::of(vfs);
        (*file).pMethods = ptr::null();
        let flags = OpenFlags::from_raw(flags);
        let name = FileName::from_raw(name, flags);
        // `open` gets the 'static VFS (its files may keep a reference to it).
        let vfs: &'static V = &reg.vfs;
        let opened = reg.guard("open", ResultCode::CANTOPEN, |_| {
            vfs.open(name.as_ref(), flags)
        });
        match opened {
            Ok((f, out)) => {
                let raw_name = name.map_or(ptr::null(), |n| n.as_ptr());
                FileSlot::install(file, reg, raw_name, f);
                if !out_flags.is_null() {
                    *out_flags = out.bits();
                }
                ffi::SQLITE_OK
            }
            Err(code) => code,
        }
    }
}

unsafe extern "C" fn x_delete<V: Vfs>(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    // SAFETY: see above.
    unsafe {
        let reg = Registration::<V>::of(vfs);
        let path = path_of(name);
        let r = reg.guard("delete", ResultCode::IOERR_DELETE, |v| {
            v.delete(path, sync_dir != 0)
        });
        r.err().unwrap_or(ffi::SQLITE_OK)
    }
}

unsafe extern "C" fn x_access<V: Vfs>(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    flags: c_int,
    out: *mut c_int,
) -> c_int {
    // SAFETY: see above; `out` is a valid out pointer.
    unsafe {
        let reg = Registration::<V>::of(vfs);
        let path = path_of(name);
        let r = reg.guard("access", ResultCode::IOERR_ACCESS, |v| {
            let check = Access::from_raw(flags).ok_or_else(|| {
                crate::SqliteError::with_message(
                    ResultCode::MISUSE,
                    format!("unknown access check {flags}"),
                )
            })?;
            v.access(path, check)
        });
        match r {
            Ok(yes) => {
                *out = c_int::from(yes);
                ffi::SQLITE_OK
            }
            Err(code) => code,
        }
    }
}

unsafe extern "C" fn x_full_pathname<V: Vfs>(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    // SAFETY: see above; `out` holds `n` bytes.
    unsafe {
        let reg = Registration::<V>::of(vfs);
        let path = path_of(name);
        let r = reg.guard("full_pathname", ResultCode::CANTOPEN, |v| {
            let full = v.full_pathname(path)?;
            let bytes = full.path.as_os_str().as_bytes();
            if bytes.len() >= n.max(0) as usize || bytes.contains(&0) {
                return Err(crate::SqliteError::with_message(
                    ResultCode::CANTOPEN,
                    format!(
                        "the full pathname of {} is longer than the {n} bytes SQLite allows",
                        path.display()
                    ),
                ));
            }
            Ok((bytes.to_vec(), full.through_symlink))
        });
        match r {
            Ok((bytes, symlink)) => {
                ptr::copy_nonoverlapping(bytes.as_ptr(), out as *mut u8, bytes.len());
                *out.add(bytes.len()) = 0;
                if symlink {
                    ffi::SQLITE_OK_SYMLINK
                } else {
                    ffi::SQLITE_OK
                }
            }
            Err(code) => code,
        }
    }
}

/// The delegate's VFS object, if it has one (a panic in `delegate` counts as none).
///
/// # Safety
/// As for the callbacks.
unsafe fn delegate<V: Vfs>(vfs: *mut ffi::sqlite3_vfs) -> Option<*mut ffi::sqlite3_vfs> {
    // SAFETY: the caller's contract.
    let reg = unsafe { Registration::<V>::of(vfs) };
    let base = catch_unwind(AssertUnwindSafe(|| reg.vfs.delegate())).ok()??;
    Some(base.as_ptr())
}

/// One call forwarded unchanged to the delegate, `$missing` if there is none.
macro_rules! delegated {
    ($fn:ident, $field:ident, ($($arg:ident : $ty:ty),*) -> $ret:ty, $missing:expr) => {
        unsafe extern "C" fn $fn<V: Vfs>(vfs: *mut ffi::sqlite3_vfs, $($arg: $ty),*) -> $ret {
            // SAFETY: see above; the arguments go unchanged to the delegate's own method.
            unsafe {
                match delegate::<V>(vfs).and_then(|d| (*d).$field.map(|f| (d, f))) {
                    Some((d, f)) => f(d, $($arg),*),
                    None => $missing,
                }
            }
        }
    };
}

delegated!(x_dl_open, xDlOpen, (name: *const c_char) -> *mut c_void, ptr::null_mut());
delegated!(x_dl_error, xDlError, (n: c_int, msg: *mut c_char) -> (), ());
delegated!(x_dl_close, xDlClose, (handle: *mut c_void) -> (), ());
delegated!(x_randomness, xRandomness, (n: c_int, out: *mut c_char) -> c_int, 0);
delegated!(x_sleep, xSleep, (us: c_int) -> c_int, 0);
delegated!(x_current_time, xCurrentTime, (t: *mut f64) -> c_int, ffi::SQLITE_ERROR);
delegated!(x_get_last_error, xGetLastError, (n: c_int, msg: *mut c_char) -> c_int, 0);
delegated!(
    x_current_time_int64,
    xCurrentTimeInt64,
    (t: *mut ffi::sqlite3_int64) -> c_int,
    ffi::SQLITE_ERROR
);

delegated!(
    x_set_system_call,
    xSetSystemCall,
    (name: *const c_char, call: ffi::sqlite3_syscall_ptr) -> c_int,
    ffi::SQLITE_NOTFOUND
);
delegated!(
    x_get_system_call,
    xGetSystemCall,
    (name: *const c_char) -> ffi::sqlite3_syscall_ptr,
    None
);
delegated!(
    x_next_system_call,
    xNextSystemCall,
    (name: *const c_char) -> *const c_char,
    ptr::null()
);

/// A symbol from a library `xDlOpen` loaded.
type DlSym = unsafe extern "C" fn(*mut ffi::sqlite3_vfs, *mut c_void, *const c_char);

unsafe extern "C" fn x_dl_sym<V: Vfs>(
    vfs: *mut ffi::sqlite3_vfs,
    handle: *mut c_void,
    sym: *const c_char,
) -> Option<DlSym> {
    // SAFETY: see above; forwarded unchanged to the delegate.
    unsafe {
        let d = delegate::<V>(vfs)?;
        let f = (*d).xDlSym?;
        f(d, handle, sym)
    }
}
