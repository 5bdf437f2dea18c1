//! The `xftl` VFS: SQLite's C interface over [`FlashFs`] on a transactional device — the
//! emulated eMMC of this process, or one served from another process (`remote`). How each
//! call maps: `docs/formats/xftl.md` §3.
//!
//! Every file of a registered instance lives in the one file layer attached to it; SQLite's
//! batch-atomic file controls become device transactions. Locks are in-process (one process
//! uses a device at a time), with SQLite's lock levels. The C callbacks are generic over the
//! device type and monomorphised per registered type.

use crate::flashfs::{FileId, FlashFs, FsError};
use joj_device::TransactionalDevice;
use libsqlite3_sys as ffi;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

joj_vfs::atomic_counter_set! {
    XftlCounters, Atomics;
    batch_begins: "`BEGIN_ATOMIC_WRITE`: SQLite chose the batch path.",
    batch_commits: "Batches committed (one device transaction each).",
    batch_rollbacks: "`ROLLBACK_ATOMIC_WRITE`, or a batch whose commit failed.",
    batch_commit_errors: "Commits of a batch that failed (SQLite then retries with a rollback journal).",
    journal_opens: "Rollback journals opened: SQLite took its journal path (first transaction on an empty database, a spilled journal, several databases, a failed batch, a hot journal).",
    db_syncs: "`xSync` of a main database outside a batch: commits (and recoveries) done the journal way, and the syncs SQLite makes after a batch commit.",
    journal_barriers: "Rollback journals the VFS synced before SQLite's first database write after a failed batch (SQLite's retry does not; `docs/formats/xftl.md` section 3).",
}

/// What a device under the VFS must be: transactional, and movable to the thread SQLite calls
/// from (the instance lives in a process-wide registry).
pub(crate) trait Device: TransactionalDevice + Send + 'static {}

impl<D: TransactionalDevice + Send + 'static> Device for D {}

fn bump(a: &AtomicU64) {
    a.fetch_add(1, Ordering::Relaxed);
}

#[derive(Debug, Default, Clone, Copy)]
struct FileLock {
    shared: u32,
    /// A handle holds RESERVED or more.
    writer: Option<u64>,
    pending: bool,
    exclusive: bool,
}

pub(crate) struct Mounted<D> {
    pub(crate) fs: FlashFs<D>,
    locks: HashMap<u32, FileLock>,
    open_handles: u64,
    /// Databases whose batch commit failed: their journal is synced before the next write.
    barrier: std::collections::HashSet<u32>,
}

/// One registered `xftl` VFS on devices of type `D`.
pub(crate) struct Instance<D> {
    pub(crate) name: CString,
    pub(crate) mounted: Mutex<Option<Mounted<D>>>,
    counters: Atomics,
    next_handle: AtomicU64,
    next_temp: AtomicU64,
    /// Fault injection: the next this many batch commits fail with an I/O error.
    pub(crate) fail_commits: AtomicU32,
}

impl<D: Device> Instance<D> {
    pub(crate) fn new(name: CString) -> Instance<D> {
        Instance {
            name,
            mounted: Mutex::new(None),
            counters: Atomics::default(),
            next_handle: AtomicU64::new(1),
            next_temp: AtomicU64::new(1),
            fail_commits: AtomicU32::new(0),
        }
    }

    pub(crate) fn counters(&self) -> XftlCounters {
        self.counters.snapshot()
    }

    /// Attach `fs`; `false` (and nothing changed) if files of the current one are open.
    pub(crate) fn attach(&self, fs: FlashFs<D>) -> bool {
        let mut m = lock(&self.mounted);
        if m.as_ref().is_some_and(|m| m.open_handles > 0) {
            return false;
        }
        *m = Some(Mounted {
            fs,
            locks: HashMap::new(),
            open_handles: 0,
            barrier: Default::default(),
        });
        true
    }

    /// The file layer, if no file is open.
    pub(crate) fn detach(&self) -> Option<FlashFs<D>> {
        let mut m = lock(&self.mounted);
        if m.as_ref().is_some_and(|m| m.open_handles > 0) {
            return None;
        }
        m.take().map(|m| m.fs)
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

static LAST_ERROR: Mutex<Option<String>> = Mutex::new(None);

/// The last error the xftl VFS reported (SQLite only sees a result code).
pub fn last_error() -> Option<String> {
    lock(&LAST_ERROR).clone()
}

fn report(code: c_int, msg: String) -> c_int {
    if let Ok(c) = CString::new(format!("xftl: {msg}")) {
        // SAFETY: sqlite3_log with a "%s" format and a valid C string.
        unsafe { ffi::sqlite3_log(code, c"%s".as_ptr(), c.as_ptr()) };
    }
    *lock(&LAST_ERROR) = Some(msg);
    code
}

fn fs_code(e: &FsError, io: c_int) -> c_int {
    match e {
        FsError::FileTooLarge { .. } | FsError::NoFreeSlot { .. } => ffi::SQLITE_FULL,
        FsError::NoSuchFile(_) => ffi::SQLITE_CANTOPEN,
        _ => io,
    }
}

#[repr(C)]
struct XFile<D> {
    base: ffi::sqlite3_file,
    inst: *const Instance<D>,
    id: u32,
    handle: u64,
    level: c_int,
    delete_on_close: bool,
    main_db: bool,
    name: *mut c_char,
}

unsafe fn instance<'a, D>(vfs: *mut ffi::sqlite3_vfs) -> &'a Instance<D> {
    // SAFETY: pAppData of our VFS is a leaked Instance<D> (make_vfs::<D> set both).
    unsafe { &*((*vfs).pAppData as *const Instance<D>) }
}

unsafe fn xfile<'a, D>(file: *mut ffi::sqlite3_file) -> &'a mut XFile<D> {
    // SAFETY: SQLite allocated szOsFile = size_of::<XFile<D>>() and we initialised it in
    // x_open::<D>; the io-methods table that brought us here is Methods::<D>'s.
    unsafe { &mut *(file as *mut XFile<D>) }
}

/// Run `f` on the mounted file layer, or fail with `SQLITE_IOERR` if none is attached.
fn with_mounted<D, R>(
    inst: &Instance<D>,
    f: impl FnOnce(&mut Mounted<D>) -> R,
) -> Result<R, c_int> {
    let mut g = lock(&inst.mounted);
    match g.as_mut() {
        Some(m) => Ok(f(m)),
        None => Err(report(
            ffi::SQLITE_IOERR,
            format!(
                "no flash file layer attached to VFS {}: call XftlVfs::attach first",
                inst.name.to_string_lossy()
            ),
        )),
    }
}

unsafe extern "C" fn x_open<D: Device>(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite passes our vfs, a buffer of szOsFile bytes and a valid or null name.
    unsafe {
        let inst: &'static Instance<D> = instance(vfs);
        (*file).pMethods = ptr::null();
        let (path, temp) = if name.is_null() {
            let n = inst.next_temp.fetch_add(1, Ordering::Relaxed);
            (format!("xftl-temp-{}-{n}", std::process::id()), true)
        } else {
            (CStr::from_ptr(name).to_string_lossy().into_owned(), false)
        };
        let create = flags & ffi::SQLITE_OPEN_CREATE != 0;
        let r = with_mounted(inst, |m| {
            let id = m.fs.open(&path, create)?;
            m.open_handles += 1;
            Ok::<_, FsError>(id)
        });
        let id = match r {
            Err(code) => return code,
            Ok(Err(e)) => {
                return report(
                    fs_code(&e, ffi::SQLITE_CANTOPEN),
                    format!("open {path}: {e}"),
                );
            }
            Ok(Ok(id)) => id,
        };
        if path.ends_with("-journal") {
            bump(&inst.counters.journal_opens);
        }
        let xf = file as *mut XFile<D>;
        ptr::write(
            xf,
            XFile {
                base: ffi::sqlite3_file {
                    pMethods: Methods::<D>::IO,
                },
                inst,
                id: id.0,
                handle: inst.next_handle.fetch_add(1, Ordering::Relaxed),
                level: ffi::SQLITE_LOCK_NONE,
                delete_on_close: temp || flags & ffi::SQLITE_OPEN_DELETEONCLOSE != 0,
                main_db: flags & ffi::SQLITE_OPEN_MAIN_DB != 0,
                name: CString::new(path).unwrap_or_default().into_raw(),
            },
        );
        if !out_flags.is_null() {
            *out_flags = flags;
        }
        ffi::SQLITE_OK
    }
}

unsafe extern "C" fn x_delete<D: Device>(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    _sync_dir: c_int,
) -> c_int {
    // SAFETY: our vfs and a valid C string.
    unsafe {
        let inst = instance::<D>(vfs);
        let path = CStr::from_ptr(name).to_string_lossy().into_owned();
        match with_mounted(inst, |m| m.fs.delete(&path)) {
            Err(code) => code,
            Ok(Ok(())) => ffi::SQLITE_OK,
            Ok(Err(FsError::NoSuchFile(_))) => ffi::SQLITE_IOERR_DELETE_NOENT,
            Ok(Err(e)) => report(ffi::SQLITE_IOERR_DELETE, format!("delete {path}: {e}")),
        }
    }
}

unsafe extern "C" fn x_access<D: Device>(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    _flags: c_int,
    out: *mut c_int,
) -> c_int {
    // SAFETY: our vfs, a valid C string and an out pointer.
    unsafe {
        let inst = instance::<D>(vfs);
        let path = CStr::from_ptr(name).to_string_lossy().into_owned();
        match with_mounted(inst, |m| m.fs.lookup(&path).is_some()) {
            Err(code) => code,
            Ok(exists) => {
                *out = c_int::from(exists);
                ffi::SQLITE_OK
            }
        }
    }
}

unsafe fn default_vfs(_vfs: *mut ffi::sqlite3_vfs) -> *mut ffi::sqlite3_vfs {
    // SAFETY: the default VFS SQLite registers at initialisation (never freed).
    unsafe { ffi::sqlite3_vfs_find(ptr::null()) }
}

// Names are resolved by the default VFS (absolute paths), as are time, sleep and randomness; the
// files themselves never reach it.
joj_vfs::forward_vfs_calls!(default_vfs);

/// Build the sqlite3_vfs for `inst` (leaked by the caller's registration).
pub(crate) fn make_vfs<D: Device>(inst: &'static Instance<D>) -> ffi::sqlite3_vfs {
    ffi::sqlite3_vfs {
        iVersion: 2,
        szOsFile: std::mem::size_of::<XFile<D>>() as c_int,
        mxPathname: 512,
        pNext: ptr::null_mut(),
        zName: inst.name.as_ptr(),
        pAppData: inst as *const Instance<D> as *mut c_void,
        xOpen: Some(x_open::<D>),
        xDelete: Some(x_delete::<D>),
        xAccess: Some(x_access::<D>),
        xFullPathname: Some(x_full_pathname),
        xDlOpen: Some(x_dl_open),
        xDlError: Some(x_dl_error),
        xDlSym: Some(x_dl_sym),
        xDlClose: Some(x_dl_close),
        xRandomness: Some(x_randomness),
        xSleep: Some(x_sleep),
        xCurrentTime: Some(x_current_time),
        xGetLastError: Some(x_get_last_error),
        xCurrentTimeInt64: Some(x_current_time_int64),
        xSetSystemCall: None,
        xGetSystemCall: None,
        xNextSystemCall: None,
    }
}

/// The io-methods table of files on devices of type `D`. A `static` cannot be generic, so the
/// table is an associated constant holding a reference: the table is promoted to a `'static`
/// per `D` at monomorphisation, which is what SQLite's `pMethods` needs.
struct Methods<D>(PhantomData<D>);

impl<D: Device> Methods<D> {
    const IO: &'static ffi::sqlite3_io_methods = &ffi::sqlite3_io_methods {
        iVersion: 1,
        xClose: Some(f_close::<D>),
        xRead: Some(f_read::<D>),
        xWrite: Some(f_write::<D>),
        xTruncate: Some(f_truncate::<D>),
        xSync: Some(f_sync::<D>),
        xFileSize: Some(f_file_size::<D>),
        xLock: Some(f_lock::<D>),
        xUnlock: Some(f_unlock::<D>),
        xCheckReservedLock: Some(f_check_reserved::<D>),
        xFileControl: Some(f_file_control::<D>),
        xSectorSize: Some(f_sector_size::<D>),
        xDeviceCharacteristics: Some(f_device_characteristics),
        xShmMap: None,
        xShmLock: None,
        xShmBarrier: None,
        xShmUnmap: None,
        xFetch: None,
        xUnfetch: None,
    };
}

fn name_of<D>(f: &XFile<D>) -> String {
    // SAFETY: set from CString::into_raw in x_open, freed only in f_close.
    unsafe { CStr::from_ptr(f.name).to_string_lossy().into_owned() }
}

unsafe extern "C" fn f_close<D: Device>(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: a file we opened.
    unsafe {
        let f = xfile::<D>(file);
        let inst = &*f.inst;
        let name = name_of(f);
        let id = FileId(f.id);
        let handle = f.handle;
        let _ = with_mounted(inst, |m| {
            // A handle closed inside a batch (a process going away): the batch is aborted.
            if m.fs.in_batch(id) {
                m.fs.rollback_batch(id);
                bump(&inst.counters.batch_rollbacks);
            }
            release(m, f.id, handle, ffi::SQLITE_LOCK_NONE, &mut f.level);
            m.open_handles = m.open_handles.saturating_sub(1);
            if f.delete_on_close {
                let _ = m.fs.delete(&name);
            }
        });
        drop(CString::from_raw(f.name));
        f.name = ptr::null_mut();
        (*file).pMethods = ptr::null();
        ffi::SQLITE_OK
    }
}

unsafe extern "C" fn f_read<D: Device>(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: a file we opened and a buffer of amt bytes.
    unsafe {
        let f = xfile::<D>(file);
        let out = std::slice::from_raw_parts_mut(buf as *mut u8, amt as usize);
        match with_mounted(&*f.inst, |m| m.fs.read(FileId(f.id), offset as u64, out)) {
            Err(code) => code,
            Ok(Ok(n)) if n == out.len() => ffi::SQLITE_OK,
            Ok(Ok(_)) => ffi::SQLITE_IOERR_SHORT_READ,
            Ok(Err(e)) => report(ffi::SQLITE_IOERR_READ, format!("read {}: {e}", name_of(f))),
        }
    }
}

unsafe extern "C" fn f_write<D: Device>(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: a file we opened and a buffer of amt bytes.
    unsafe {
        let f = xfile::<D>(file);
        let data = std::slice::from_raw_parts(buf as *const u8, amt as usize);
        let inst = &*f.inst;
        let id = FileId(f.id);
        match with_mounted(inst, |m| {
            if m.barrier.remove(&id.0) && !m.fs.in_batch(id) {
                // SQLite's retry after a failed batch creates the journal from its in-memory
                // copy and writes database pages without syncing it first: make the journal
                // (data and size) durable before the first database page can reach flash.
                let journal = format!("{}-journal", m.fs.name(id));
                if let Some(j) = m.fs.lookup(&journal) {
                    m.fs.sync(j)?;
                    bump(&inst.counters.journal_barriers);
                }
            }
            m.fs.write(id, offset as u64, data)
        }) {
            Err(code) => code,
            Ok(Ok(())) => ffi::SQLITE_OK,
            Ok(Err(e)) => report(
                fs_code(&e, ffi::SQLITE_IOERR_WRITE),
                format!("write {}: {e}", name_of(f)),
            ),
        }
    }
}

unsafe extern "C" fn f_truncate<D: Device>(
    file: *mut ffi::sqlite3_file,
    size: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: a file we opened.
    unsafe {
        let f = xfile::<D>(file);
        match with_mounted(&*f.inst, |m| m.fs.truncate(FileId(f.id), size as u64)) {
            Err(code) => code,
            Ok(Ok(())) => ffi::SQLITE_OK,
            Ok(Err(e)) => report(
                fs_code(&e, ffi::SQLITE_IOERR_TRUNCATE),
                format!("truncate {}: {e}", name_of(f)),
            ),
        }
    }
}

unsafe extern "C" fn f_sync<D: Device>(file: *mut ffi::sqlite3_file, _flags: c_int) -> c_int {
    // SAFETY: a file we opened.
    unsafe {
        let f = xfile::<D>(file);
        let inst = &*f.inst;
        if f.main_db {
            bump(&inst.counters.db_syncs);
        }
        match with_mounted(inst, |m| m.fs.sync(FileId(f.id))) {
            Err(code) => code,
            Ok(Ok(())) => ffi::SQLITE_OK,
            Ok(Err(e)) => report(ffi::SQLITE_IOERR_FSYNC, format!("sync {}: {e}", name_of(f))),
        }
    }
}

unsafe extern "C" fn f_file_size<D: Device>(
    file: *mut ffi::sqlite3_file,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: a file we opened and an out pointer.
    unsafe {
        let f = xfile::<D>(file);
        match with_mounted(&*f.inst, |m| m.fs.size(FileId(f.id))) {
            Err(code) => code,
            Ok(n) => {
                *out = n as ffi::sqlite3_int64;
                ffi::SQLITE_OK
            }
        }
    }
}

/// Move handle `h` of file `id` down to `to` (≤ its level).
fn release<D>(m: &mut Mounted<D>, id: u32, h: u64, to: c_int, level: &mut c_int) {
    let l = m.locks.entry(id).or_default();
    if *level >= ffi::SQLITE_LOCK_RESERVED && to < ffi::SQLITE_LOCK_RESERVED && l.writer == Some(h)
    {
        l.writer = None;
        l.pending = false;
        l.exclusive = false;
    }
    if *level >= ffi::SQLITE_LOCK_SHARED && to == ffi::SQLITE_LOCK_NONE {
        l.shared = l.shared.saturating_sub(1);
    }
    *level = to;
}

unsafe extern "C" fn f_lock<D: Device>(file: *mut ffi::sqlite3_file, want: c_int) -> c_int {
    // SAFETY: a file we opened.
    unsafe {
        let f = xfile::<D>(file);
        let (id, h) = (f.id, f.handle);
        let level = &mut f.level;
        let r = with_mounted(&*f.inst, |m| {
            let l = m.locks.entry(id).or_default();
            if *level >= want {
                return ffi::SQLITE_OK;
            }
            let others_write = l.writer.is_some_and(|w| w != h);
            match want {
                ffi::SQLITE_LOCK_SHARED => {
                    if others_write && (l.pending || l.exclusive) {
                        return ffi::SQLITE_BUSY;
                    }
                    l.shared += 1;
                }
                ffi::SQLITE_LOCK_RESERVED => {
                    if others_write {
                        return ffi::SQLITE_BUSY;
                    }
                    l.writer = Some(h);
                }
                _ => {
                    // PENDING or EXCLUSIVE: this handle holds RESERVED.
                    if others_write {
                        return ffi::SQLITE_BUSY;
                    }
                    l.writer = Some(h);
                    l.pending = true;
                    if want == ffi::SQLITE_LOCK_EXCLUSIVE {
                        if l.shared > 1 {
                            *level = ffi::SQLITE_LOCK_PENDING;
                            return ffi::SQLITE_BUSY;
                        }
                        l.exclusive = true;
                    }
                }
            }
            *level = want;
            ffi::SQLITE_OK
        });
        r.unwrap_or_else(|code| code)
    }
}

unsafe extern "C" fn f_unlock<D: Device>(file: *mut ffi::sqlite3_file, to: c_int) -> c_int {
    // SAFETY: a file we opened.
    unsafe {
        let f = xfile::<D>(file);
        let (id, h) = (f.id, f.handle);
        let level = &mut f.level;
        with_mounted(&*f.inst, |m| {
            if *level > to {
                release(m, id, h, to, level);
            }
            ffi::SQLITE_OK
        })
        .unwrap_or_else(|code| code)
    }
}

unsafe extern "C" fn f_check_reserved<D: Device>(
    file: *mut ffi::sqlite3_file,
    out: *mut c_int,
) -> c_int {
    // SAFETY: a file we opened and an out pointer.
    unsafe {
        let f = xfile::<D>(file);
        let id = f.id;
        match with_mounted(&*f.inst, |m| {
            m.locks.get(&id).is_some_and(|l| l.writer.is_some())
        }) {
            Err(code) => code,
            Ok(r) => {
                *out = c_int::from(r);
                ffi::SQLITE_OK
            }
        }
    }
}

unsafe extern "C" fn f_file_control<D: Device>(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    _arg: *mut c_void,
) -> c_int {
    // SAFETY: a file we opened.
    unsafe {
        let f = xfile::<D>(file);
        let inst = &*f.inst;
        let id = FileId(f.id);
        match op {
            ffi::SQLITE_FCNTL_BEGIN_ATOMIC_WRITE => {
                bump(&inst.counters.batch_begins);
                match with_mounted(inst, |m| m.fs.begin_batch(id)) {
                    Err(code) => code,
                    Ok(Ok(())) => ffi::SQLITE_OK,
                    Ok(Err(e)) => report(ffi::SQLITE_IOERR, format!("begin batch: {e}")),
                }
            }
            ffi::SQLITE_FCNTL_COMMIT_ATOMIC_WRITE => {
                let inject = inst
                    .fail_commits
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                    .is_ok();
                let r = with_mounted(inst, |m| {
                    if inject {
                        m.fs.rollback_batch(id);
                        return Err("injected commit failure".to_string());
                    }
                    m.fs.commit_batch(id).map_err(|e| e.to_string())
                });
                match r {
                    Err(code) => code,
                    Ok(Ok(())) => {
                        bump(&inst.counters.batch_commits);
                        ffi::SQLITE_OK
                    }
                    Ok(Err(e)) => {
                        let _ = with_mounted(inst, |m| m.barrier.insert(id.0));
                        bump(&inst.counters.batch_commit_errors);
                        bump(&inst.counters.batch_rollbacks);
                        report(ffi::SQLITE_IOERR_WRITE, format!("commit batch: {e}"))
                    }
                }
            }
            ffi::SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE => {
                let _ = with_mounted(inst, |m| {
                    if m.fs.in_batch(id) {
                        m.fs.rollback_batch(id);
                        bump(&inst.counters.batch_rollbacks);
                    }
                });
                ffi::SQLITE_OK
            }
            ffi::SQLITE_FCNTL_SIZE_HINT => ffi::SQLITE_OK,
            _ => ffi::SQLITE_NOTFOUND,
        }
    }
}

unsafe extern "C" fn f_sector_size<D: Device>(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: a file we opened.
    unsafe {
        let f = xfile::<D>(file);
        with_mounted(&*f.inst, |m| m.fs.page_bytes() as c_int).unwrap_or(4096)
    }
}

unsafe extern "C" fn f_device_characteristics(_file: *mut ffi::sqlite3_file) -> c_int {
    ffi::SQLITE_IOCAP_BATCH_ATOMIC | ffi::SQLITE_IOCAP_POWERSAFE_OVERWRITE
}
