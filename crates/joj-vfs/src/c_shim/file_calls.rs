//! SQLite's io methods for the files of a registered `V: Vfs`.
//!
//! SQLite allocates `szOsFile = size_of::<FileSlot<V>>()` bytes per file (8-byte aligned) and
//! hands them to `xOpen`; the open file lives in that buffer:
//!
//! ```text
//! | sqlite3_file (pMethods) | &Registration<V> | poisoned | name | connection | V::File |
//! ```
//!
//! Written by `xOpen` once the Rust file exists (until then `pMethods` is NULL, so SQLite never
//! closes a file that failed to open), taken out and closed by `xClose`. Each method runs the
//! Rust one under `catch_unwind`: a panic becomes the method's I/O error and poisons the file,
//! which then answers every call but `xClose` with that error.
//!
//! Two file controls are the shim's own, for every file of every joj VFS, whatever VFS sits
//! above it (both pass through any VFS that forwards the controls it does not know, as SQLite's
//! own shims do):
//! - `SQLITE_FCNTL_PDB`, which SQLite sends every database file it opens (main, attached,
//!   temporary) with the address of the connection pointer of its B-tree: kept as `connection`
//!   (and passed on to the file). With it the shim gives a new database the reserved bytes its
//!   VFS asks for ([`VfsFile::reserve_bytes`]) at the first lock, while the file is still empty
//!   — on whichever connection, schema or stacked VFS opened it, and without running SQL.
//! - [`REGISTRATION_FCNTL`]: answers with the file's `Registration`, so the connect hook can
//!   tell that a connection opened on another VFS (one stacked over ours) has one of joj's VFSs
//!   below it.

use super::errors::panic_error;
use super::registration::Registration;
use crate::control::FileControl;
use crate::error::{ResultCode, SqliteError};
use crate::flags::{LockLevel, ShmLockFlags, SyncFlags};
use crate::outcome::ReadOutcome;
use crate::vfs::{Vfs, VfsFile};
use libsqlite3_sys as ffi;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

/// The buffer SQLite allocates for one open file of `V` (see the module documentation).
#[repr(C)]
pub(crate) struct FileSlot<V: Vfs> {
    base: ffi::sqlite3_file,
    reg: &'static Registration<V>,
    poisoned: bool,
    /// The reserve request is done (asked, or the database was found to exist already).
    reserve_settled: bool,
    /// The name SQLite passed to `xOpen` (valid until `xClose`), NULL for temporary files.
    name: ffi::sqlite3_filename,
    /// `SQLITE_FCNTL_PDB`'s argument: where the B-tree keeps its connection pointer (valid
    /// while the file is open); NULL until SQLite sent it.
    connection: *mut *mut ffi::sqlite3,
    file: ManuallyDrop<V::File>,
}

/// A file control of joj's own (outside SQLite's numbers): `arg` is a `*const c_void` out
/// pointer that receives the file's `Registration`.
pub(crate) const REGISTRATION_FCNTL: c_int = 0x6a6f_6a01;

impl<V: Vfs> FileSlot<V> {
    /// SQLite aligns the buffers it gives `xOpen` to 8 bytes only.
    pub(crate) const FITS_SQLITE_ALIGNMENT: () = assert!(
        std::mem::align_of::<FileSlot<V>>() <= 8,
        "a VFS file type must not need more than 8-byte alignment (box the over-aligned part)"
    );

    /// Put `file` into the buffer `at` that SQLite passed to `xOpen`.
    ///
    /// # Safety
    /// `at` is that buffer, `szOsFile = size_of::<FileSlot<V>>()` bytes, not holding a file.
    pub(crate) unsafe fn install(
        at: *mut ffi::sqlite3_file,
        reg: &'static Registration<V>,
        name: ffi::sqlite3_filename,
        file: V::File,
    ) {
        let methods = if file.has_shared_memory() {
            Tables::<V>::FULL
        } else if file.has_memory_map() {
            Tables::<V>::MAPPED
        } else {
            Tables::<V>::BASIC
        };
        let slot = FileSlot {
            base: ffi::sqlite3_file { pMethods: methods },
            reg,
            poisoned: false,
            reserve_settled: false,
            name,
            connection: ptr::null_mut(),
            file: ManuallyDrop::new(file),
        };
        // SAFETY: the caller's contract: a buffer of the right size, 8-byte aligned (checked by
        // FITS_SQLITE_ALIGNMENT at registration), holding nothing to drop.
        unsafe { ptr::write(at as *mut FileSlot<V>, slot) };
    }
}

/// # Safety
/// `file` is a file `V`'s `xOpen` installed and `xClose` has not taken.
unsafe fn slot<'a, V: Vfs>(file: *mut ffi::sqlite3_file) -> &'a mut FileSlot<V> {
    // SAFETY: the caller's contract; SQLite never calls two methods of one file at once.
    unsafe { &mut *(file as *mut FileSlot<V>) }
}

/// Run `f` on the Rust file behind `file`: its result, or the code SQLite gets.
///
/// # Safety
/// As for [`slot`].
unsafe fn call<V: Vfs, R>(
    file: *mut ffi::sqlite3_file,
    method: &str,
    code: ResultCode,
    f: impl FnOnce(&mut V::File) -> Result<R, SqliteError>,
) -> Result<R, c_int> {
    // SAFETY: the caller's contract.
    let s = unsafe { slot::<V>(file) };
    if s.poisoned {
        return Err(code.raw());
    }
    match catch_unwind(AssertUnwindSafe(|| f(&mut s.file))) {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(s.reg.errors.fail(&e)),
        Err(payload) => {
            s.poisoned = true;
            let err = panic_error(
                &format!("{}.{method}", s.reg.name),
                code,
                payload.as_ref(),
                "; the file refuses further calls until it is closed",
            );
            Err(s.reg.errors.fail(&err))
        }
    }
}

fn rc(r: Result<(), c_int>) -> c_int {
    r.err().unwrap_or(ffi::SQLITE_OK)
}

fn lock_level(raw: c_int) -> Result<LockLevel, SqliteError> {
    LockLevel::from_raw(raw).ok_or_else(|| {
        SqliteError::with_message(ResultCode::MISUSE, format!("unknown lock level {raw}"))
    })
}

// Every callback below: SQLite calls it with a file this VFS opened (pMethods is one of
// `Tables<V>`), one call at a time per file, and pointer arguments of the documented types.

unsafe extern "C" fn f_close<V: Vfs>(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: see above; xClose is the last call, so the file is taken out of the slot here.
    let (reg, f) = unsafe {
        let s = slot::<V>(file);
        let f = ManuallyDrop::take(&mut s.file);
        (*file).pMethods = ptr::null();
        (s.reg, f)
    };
    match catch_unwind(AssertUnwindSafe(|| f.close())) {
        Ok(Ok(())) => ffi::SQLITE_OK,
        Ok(Err(e)) => reg.errors.fail(&e),
        Err(payload) => {
            let method = format!("{}.close", reg.name);
            let err = panic_error(&method, ResultCode::IOERR_CLOSE, payload.as_ref(), "");
            reg.errors.fail(&err)
        }
    }
}

unsafe extern "C" fn f_read<V: Vfs>(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: see above; `buf` holds `amt` bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, amt.max(0) as usize) };
    // SAFETY: see above.
    let r = unsafe {
        call::<V, _>(file, "read", ResultCode::IOERR_READ, |f| {
            f.read(out, off as u64)
        })
    };
    match r {
        Ok(ReadOutcome::Full) => ffi::SQLITE_OK,
        Ok(ReadOutcome::Short) => ffi::SQLITE_IOERR_SHORT_READ,
        Err(code) => code,
    }
}

unsafe extern "C" fn f_write<V: Vfs>(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: see above; `buf` holds `amt` bytes.
    let data = unsafe { std::slice::from_raw_parts(buf as *const u8, amt.max(0) as usize) };
    // SAFETY: see above.
    rc(unsafe {
        call::<V, _>(file, "write", ResultCode::IOERR_WRITE, |f| {
            f.write(data, off as u64)
        })
    })
}

unsafe extern "C" fn f_truncate<V: Vfs>(
    file: *mut ffi::sqlite3_file,
    size: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: see above.
    rc(unsafe {
        call::<V, _>(file, "truncate", ResultCode::IOERR_TRUNCATE, |f| {
            f.truncate(size.max(0) as u64)
        })
    })
}

unsafe extern "C" fn f_sync<V: Vfs>(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: see above.
    rc(unsafe {
        call::<V, _>(file, "sync", ResultCode::IOERR_FSYNC, |f| {
            f.sync(SyncFlags::from_raw(flags))
        })
    })
}

unsafe extern "C" fn f_file_size<V: Vfs>(
    file: *mut ffi::sqlite3_file,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: see above.
    let r = unsafe {
        call::<V, _>(file, "file_size", ResultCode::IOERR_FSTAT, |f| {
            f.file_size()
        })
    };
    match r {
        Ok(n) => {
            // SAFETY: a valid out pointer.
            unsafe { *out = n.min(i64::MAX as u64) as i64 };
            ffi::SQLITE_OK
        }
        Err(code) => code,
    }
}

unsafe extern "C" fn f_lock<V: Vfs>(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: see above.
    let r = unsafe {
        call::<V, _>(file, "lock", ResultCode::IOERR_LOCK, |f| {
            f.lock(lock_level(level)?)
        })
    };
    if r.is_ok() && level == ffi::SQLITE_LOCK_SHARED {
        // SAFETY: see above; SQLite is inside this connection's call that takes the lock.
        unsafe { settle_reserve::<V>(file) };
    }
    rc(r)
}

/// Give a database this file's VFS wants reserved bytes in the reserve, while it is still
/// empty: `SQLITE_FCNTL_RESERVE_BYTES` on the connection that is taking its first SHARED lock
/// (`lockBtree`, before it sizes the B-tree's cells and before `newDatabase` writes page 1).
/// The control is handled inside SQLite on that B-tree; it runs no SQL and reads no file. Once
/// the file holds a database its own reserve stands (SQLite changes it only with `VACUUM`).
///
/// # Safety
/// `file` is an open file of `V`, called from within SQLite's `xLock` on it (the connection's
/// mutex held by this thread, which SQLite's recursive mutexes allow to be taken again).
unsafe fn settle_reserve<V: Vfs>(file: *mut ffi::sqlite3_file) {
    {
        // SAFETY: the caller's contract.
        let s = unsafe { slot::<V>(file) };
        if s.reserve_settled || s.poisoned {
            return;
        }
    }
    // SAFETY: the caller's contract (a panic in the file's methods is caught there).
    let asked = unsafe {
        call::<V, _>(file, "lock", ResultCode::IOERR_LOCK, |f| {
            let want = f.reserve_bytes();
            Ok((want, if want == 0 { 0 } else { f.file_size()? }))
        })
    };
    // SAFETY: the caller's contract.
    let s = unsafe { slot::<V>(file) };
    let want = match asked {
        Ok((0, _)) | Ok((_, 1..)) => {
            s.reserve_settled = true;
            return;
        }
        Ok((want, 0)) if !s.name.is_null() => want,
        _ => return,
    };
    if s.connection.is_null() {
        return;
    }
    // SAFETY: PDB's pointer is valid while the file is open; the connection is the one whose
    // call this is.
    let db = unsafe { *s.connection };
    if db.is_null() {
        return;
    }
    // SAFETY: a live connection; every name and filename SQLite returns is valid during the
    // call, and our own name until xClose.
    unsafe {
        let ours = std::ffi::CStr::from_ptr(s.name);
        for i in 0.. {
            let schema = ffi::sqlite3_db_name(db, i);
            if schema.is_null() {
                break;
            }
            let fname = ffi::sqlite3_db_filename(db, schema);
            if fname.is_null() || std::ffi::CStr::from_ptr(fname) != ours {
                continue;
            }
            let mut n = c_int::from(want);
            ffi::sqlite3_file_control(
                db,
                schema,
                ffi::SQLITE_FCNTL_RESERVE_BYTES,
                &mut n as *mut c_int as *mut c_void,
            );
        }
    }
}

unsafe extern "C" fn f_unlock<V: Vfs>(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: see above.
    rc(unsafe {
        call::<V, _>(file, "unlock", ResultCode::IOERR_UNLOCK, |f| {
            f.unlock(lock_level(level)?)
        })
    })
}

unsafe extern "C" fn f_check_reserved_lock<V: Vfs>(
    file: *mut ffi::sqlite3_file,
    out: *mut c_int,
) -> c_int {
    let code = ResultCode::IOERR_CHECKRESERVEDLOCK;
    // SAFETY: see above.
    let r = unsafe {
        call::<V, _>(file, "check_reserved_lock", code, |f| {
            f.check_reserved_lock()
        })
    };
    match r {
        Ok(held) => {
            // SAFETY: a valid out pointer.
            unsafe { *out = c_int::from(held) };
            ffi::SQLITE_OK
        }
        Err(code) => code,
    }
}

unsafe extern "C" fn f_file_control<V: Vfs>(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    match op {
        REGISTRATION_FCNTL if !arg.is_null() => {
            // SAFETY: see above; joj's own control passes a `*const c_void` out pointer.
            unsafe {
                let s = slot::<V>(file);
                *(arg as *mut *const c_void) = s.reg as *const Registration<V> as *const c_void;
            }
            return ffi::SQLITE_OK;
        }
        ffi::SQLITE_FCNTL_PDB if !arg.is_null() => {
            // SAFETY: see above; PDB's argument is the B-tree's `sqlite3 **`.
            unsafe { slot::<V>(file).connection = arg as *mut *mut ffi::sqlite3 };
        }
        _ => {}
    }
    // SAFETY: see above; `arg` is what SQLite passes with `op`.
    let control = unsafe { FileControl::from_raw(op, arg) };
    // SAFETY: see above.
    rc(unsafe {
        call::<V, _>(file, "file_control", ResultCode::ERROR, |f| {
            f.file_control(control)
        })
    })
}

unsafe extern "C" fn f_sector_size<V: Vfs>(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: see above.
    let r = unsafe {
        call::<V, _>(file, "sector_size", ResultCode::IOERR, |f| {
            Ok(f.sector_size())
        })
    };
    r.map_or(4096, |n| n.min(c_int::MAX as u32) as c_int)
}

unsafe extern "C" fn f_device_characteristics<V: Vfs>(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: see above.
    let r = unsafe {
        call::<V, _>(file, "device_characteristics", ResultCode::IOERR, |f| {
            Ok(f.device_characteristics())
        })
    };
    r.map_or(0, |d| d.bits())
}

unsafe extern "C" fn f_shm_map<V: Vfs>(
    file: *mut ffi::sqlite3_file,
    region: c_int,
    region_bytes: c_int,
    extend: c_int,
    pp: *mut *mut c_void,
) -> c_int {
    // SAFETY: see above.
    let r = unsafe {
        call::<V, _>(file, "shm_map", ResultCode::IOERR_SHMMAP, |f| {
            f.shm_map(
                region.max(0) as u32,
                region_bytes.max(0) as u32,
                extend != 0,
            )
        })
    };
    let (p, code) = match r {
        Ok(m) => (m.region, m.code),
        Err(code) => (ptr::null_mut(), code),
    };
    // SAFETY: a valid out pointer.
    unsafe { *pp = p };
    code
}

unsafe extern "C" fn f_shm_lock<V: Vfs>(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    // SAFETY: see above.
    rc(unsafe {
        call::<V, _>(file, "shm_lock", ResultCode::IOERR_SHMLOCK, |f| {
            f.shm_lock(
                offset.max(0) as u32,
                n.max(0) as u32,
                ShmLockFlags::from_raw(flags),
            )
        })
    })
}

unsafe extern "C" fn f_shm_barrier<V: Vfs>(file: *mut ffi::sqlite3_file) {
    // SAFETY: see above. A barrier has no result; a panic is reported and poisons the file.
    let _ = unsafe {
        call::<V, _>(file, "shm_barrier", ResultCode::IOERR, |f| {
            f.shm_barrier();
            Ok(())
        })
    };
}

unsafe extern "C" fn f_shm_unmap<V: Vfs>(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    // SAFETY: see above.
    rc(unsafe {
        call::<V, _>(file, "shm_unmap", ResultCode::IOERR_SHMMAP, |f| {
            f.shm_unmap(delete != 0)
        })
    })
}

unsafe extern "C" fn f_fetch<V: Vfs>(
    file: *mut ffi::sqlite3_file,
    off: ffi::sqlite3_int64,
    amt: c_int,
    pp: *mut *mut c_void,
) -> c_int {
    // SAFETY: see above.
    let r = unsafe {
        call::<V, _>(file, "fetch", ResultCode::IOERR_READ, |f| {
            f.fetch(off.max(0) as u64, amt.max(0) as usize)
        })
    };
    let (p, code) = match r {
        Ok(page) => (
            page.map_or(ptr::null_mut(), |pg| pg.ptr.as_ptr()),
            ffi::SQLITE_OK,
        ),
        Err(code) => (ptr::null_mut(), code),
    };
    // SAFETY: a valid out pointer.
    unsafe { *pp = p };
    code
}

unsafe extern "C" fn f_unfetch<V: Vfs>(
    file: *mut ffi::sqlite3_file,
    off: ffi::sqlite3_int64,
    p: *mut c_void,
) -> c_int {
    let page = ptr::NonNull::new(p).map(|ptr| crate::outcome::FetchedPage { ptr });
    // SAFETY: see above; `p` came from this file's xFetch (or is NULL).
    rc(unsafe {
        call::<V, _>(file, "unfetch", ResultCode::IOERR, |f| {
            f.unfetch(off.max(0) as u64, page)
        })
    })
}

/// The io-method tables of `V`'s files: `FULL` (version 3: shared memory and memory-mapped
/// pages) for files with shared memory, `MAPPED` (version 3 without the shared-memory methods,
/// which SQLite checks before it uses WAL: memory-mapped pages only, as the unix VFS gives a
/// temporary database) for files that can map pages, `BASIC` (version 1) for the rest. A
/// `static` cannot be generic, so each is an associated constant holding a reference,
/// promoted to `'static` per `V` at monomorphisation: what SQLite's `pMethods` needs.
pub(crate) struct Tables<V>(PhantomData<V>);

const fn table<V: Vfs>(version: c_int, shm: bool) -> ffi::sqlite3_io_methods {
    ffi::sqlite3_io_methods {
        iVersion: version,
        xClose: Some(f_close::<V>),
        xRead: Some(f_read::<V>),
        xWrite: Some(f_write::<V>),
        xTruncate: Some(f_truncate::<V>),
        xSync: Some(f_sync::<V>),
        xFileSize: Some(f_file_size::<V>),
        xLock: Some(f_lock::<V>),
        xUnlock: Some(f_unlock::<V>),
        xCheckReservedLock: Some(f_check_reserved_lock::<V>),
        xFileControl: Some(f_file_control::<V>),
        xSectorSize: Some(f_sector_size::<V>),
        xDeviceCharacteristics: Some(f_device_characteristics::<V>),
        xShmMap: if shm { Some(f_shm_map::<V>) } else { None },
        xShmLock: if shm { Some(f_shm_lock::<V>) } else { None },
        xShmBarrier: if shm { Some(f_shm_barrier::<V>) } else { None },
        xShmUnmap: if shm { Some(f_shm_unmap::<V>) } else { None },
        xFetch: if version >= 3 {
            Some(f_fetch::<V>)
        } else {
            None
        },
        xUnfetch: if version >= 3 {
            Some(f_unfetch::<V>)
        } else {
            None
        },
    }
}

impl<V: Vfs> Tables<V> {
    const BASIC: &'static ffi::sqlite3_io_methods = &table::<V>(1, false);
    const MAPPED: &'static ffi::sqlite3_io_methods = &table::<V>(3, false);
    const FULL: &'static ffi::sqlite3_io_methods = &table::<V>(3, true);
}
