//! Pass-through methods shared by joj's VFSes (the accounting `joj` VFS and `waldio`): every
//! VFS and file method a VFS does not change is forwarded unchanged to the VFS or file below it.
//! One definition here, used by each VFS with its own way of finding what is below.

/// One VFS method forwarded to `$base(vfs)` (implementation detail of [`forward_vfs_calls`]).
#[doc(hidden)]
#[macro_export]
macro_rules! __forward_vfs_fn {
    ($base:path, $name:ident, $field:ident, ($($arg:ident : $ty:ty),*) -> $ret:ty, $default:expr) => {
        unsafe extern "C" fn $name(vfs: *mut ::libsqlite3_sys::sqlite3_vfs, $($arg: $ty),*) -> $ret {
            // SAFETY: forwards SQLite's arguments unchanged to the VFS below this one.
            unsafe {
                let base = $base(vfs);
                match (*base).$field {
                    Some(f) => f(base, $($arg),*),
                    None => $default,
                }
            }
        }
    };
}

/// Define `x_full_pathname`, `x_dl_open`, `x_dl_error`, `x_dl_sym`, `x_dl_close`,
/// `x_randomness`, `x_sleep`, `x_current_time`, `x_get_last_error` and `x_current_time_int64`,
/// each forwarding to the VFS `$base(vfs)` returns (`unsafe fn(*mut sqlite3_vfs) -> *mut
/// sqlite3_vfs`).
#[macro_export]
macro_rules! forward_vfs_calls {
    ($base:path) => {
        $crate::__forward_vfs_fn!($base, x_full_pathname, xFullPathname, (name: *const ::std::ffi::c_char, n: ::std::ffi::c_int, out: *mut ::std::ffi::c_char) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_ERROR);
        $crate::__forward_vfs_fn!($base, x_dl_open, xDlOpen, (name: *const ::std::ffi::c_char) -> *mut ::std::ffi::c_void, ::std::ptr::null_mut());
        $crate::__forward_vfs_fn!($base, x_dl_error, xDlError, (n: ::std::ffi::c_int, msg: *mut ::std::ffi::c_char) -> (), ());
        $crate::__forward_vfs_fn!($base, x_dl_close, xDlClose, (h: *mut ::std::ffi::c_void) -> (), ());
        $crate::__forward_vfs_fn!($base, x_randomness, xRandomness, (n: ::std::ffi::c_int, out: *mut ::std::ffi::c_char) -> ::std::ffi::c_int, 0);
        $crate::__forward_vfs_fn!($base, x_sleep, xSleep, (us: ::std::ffi::c_int) -> ::std::ffi::c_int, 0);
        $crate::__forward_vfs_fn!($base, x_current_time, xCurrentTime, (t: *mut f64) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_ERROR);
        $crate::__forward_vfs_fn!($base, x_get_last_error, xGetLastError, (n: ::std::ffi::c_int, msg: *mut ::std::ffi::c_char) -> ::std::ffi::c_int, 0);
        $crate::__forward_vfs_fn!($base, x_current_time_int64, xCurrentTimeInt64, (t: *mut ::libsqlite3_sys::sqlite3_int64) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_ERROR);

        #[allow(clippy::type_complexity)]
        unsafe extern "C" fn x_dl_sym(
            vfs: *mut ::libsqlite3_sys::sqlite3_vfs,
            h: *mut ::std::ffi::c_void,
            sym: *const ::std::ffi::c_char,
        ) -> Option<
            unsafe extern "C" fn(
                *mut ::libsqlite3_sys::sqlite3_vfs,
                *mut ::std::ffi::c_void,
                *const ::std::ffi::c_char,
            ),
        > {
            // SAFETY: forwards unchanged to the VFS below this one.
            unsafe {
                let base = $base(vfs);
                match (*base).xDlSym {
                    Some(f) => f(base, h, sym),
                    None => None,
                }
            }
        }
    };
}

/// One file method forwarded (implementation detail of [`forward_file_calls`]).
#[doc(hidden)]
#[macro_export]
macro_rules! __forward_file_fn {
    ($real:path, $methods:path, $name:ident, $field:ident, ($($arg:ident : $ty:ty),*) -> $ret:ty, $default:expr) => {
        unsafe extern "C" fn $name(file: *mut ::libsqlite3_sys::sqlite3_file, $($arg: $ty),*) -> $ret {
            // SAFETY: forwards SQLite's arguments unchanged to the file below this one.
            unsafe {
                match $methods(file).$field {
                    Some(f) => f($real(file), $($arg),*),
                    None => $default,
                }
            }
        }
    };
}

/// Define `f_file_size`, `f_lock`, `f_unlock`, `f_check_reserved_lock`, `f_file_control`,
/// `f_sector_size`, `f_device_characteristics`, `f_shm_map`, `f_shm_lock`, `f_shm_barrier`,
/// `f_shm_unmap`, `f_fetch` and `f_unfetch`, each forwarding to the file `$real(file)` with the
/// methods `$methods(file)` returns.
#[macro_export]
macro_rules! forward_file_calls {
    ($real:path, $methods:path) => {
        $crate::__forward_file_fn!($real, $methods, f_file_size, xFileSize, (size: *mut ::libsqlite3_sys::sqlite3_int64) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_IOERR_FSTAT);
        $crate::__forward_file_fn!($real, $methods, f_lock, xLock, (level: ::std::ffi::c_int) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_IOERR_LOCK);
        $crate::__forward_file_fn!($real, $methods, f_unlock, xUnlock, (level: ::std::ffi::c_int) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_IOERR_UNLOCK);
        $crate::__forward_file_fn!($real, $methods, f_check_reserved_lock, xCheckReservedLock, (out: *mut ::std::ffi::c_int) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_IOERR_CHECKRESERVEDLOCK);
        $crate::__forward_file_fn!($real, $methods, f_file_control, xFileControl, (op: ::std::ffi::c_int, arg: *mut ::std::ffi::c_void) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_NOTFOUND);
        $crate::__forward_file_fn!($real, $methods, f_sector_size, xSectorSize, () -> ::std::ffi::c_int, 4096);
        $crate::__forward_file_fn!($real, $methods, f_device_characteristics, xDeviceCharacteristics, () -> ::std::ffi::c_int, 0);
        $crate::__forward_file_fn!($real, $methods, f_shm_map, xShmMap, (pg: ::std::ffi::c_int, pgsz: ::std::ffi::c_int, extend: ::std::ffi::c_int, pp: *mut *mut ::std::ffi::c_void) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_IOERR_SHMMAP);
        $crate::__forward_file_fn!($real, $methods, f_shm_lock, xShmLock, (off: ::std::ffi::c_int, n: ::std::ffi::c_int, flags: ::std::ffi::c_int) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_IOERR_SHMLOCK);
        $crate::__forward_file_fn!($real, $methods, f_shm_barrier, xShmBarrier, () -> (), ());
        $crate::__forward_file_fn!($real, $methods, f_shm_unmap, xShmUnmap, (delete: ::std::ffi::c_int) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_OK);
        $crate::__forward_file_fn!($real, $methods, f_fetch, xFetch, (off: ::libsqlite3_sys::sqlite3_int64, amt: ::std::ffi::c_int, pp: *mut *mut ::std::ffi::c_void) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_OK);
        $crate::__forward_file_fn!($real, $methods, f_unfetch, xUnfetch, (off: ::libsqlite3_sys::sqlite3_int64, p: *mut ::std::ffi::c_void) -> ::std::ffi::c_int, ::libsqlite3_sys::SQLITE_OK);
    };
}
