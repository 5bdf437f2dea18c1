//! The `waldio` VFS: SQLite's C interface over [`WalState`], and a pass-through for every other
//! file (database, `-shm`, journals, temporary files) to a base VFS (`unix`, or joj's `joj`).
//!
//! Layout of the `sqlite3_file` SQLite allocates for us (`szOsFile` is the larger of the two):
//!
//! ```text
//! WAL file:    | WalHandle (pMethods = WAL_METHODS, Arc<SharedWal>) |
//! other files: | FwdFile (pMethods = FWD_METHODS, instance, path)   | base VFS's file ... |
//!              0                                                    FWD_OFFSET
//! ```
//!
//! One [`SharedWal`] exists per WAL file (device, inode) in the process; every connection's
//! handle points at it, so group-sync buffers and pending blocks are seen by all of them.

use crate::counters::AtomicWaldioCounters;
use crate::io::{DirectFile, Tap};
use crate::layout::RESERVE_NEEDED;
use crate::options::WaldioOptions;
use crate::wal::{ReadOutcome, WalError, WalState};
use joj_trace::FileRole;
use joj_vfs::{FileEvent, FileObserver};
use libsqlite3_sys as ffi;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak};

/// One registered waldio VFS (there may be several, over different base VFSes).
pub(crate) struct Instance {
    pub(crate) name: CString,
    pub(crate) base: *mut ffi::sqlite3_vfs,
    pub(crate) defaults: RwLock<WaldioOptions>,
    pub(crate) counters: Arc<AtomicWaldioCounters>,
    pub(crate) tap: RwLock<Option<Arc<dyn Tap>>>,
    pub(crate) observer: RwLock<Option<Arc<dyn FileObserver>>>,
}

// SAFETY: `base` points at a registered sqlite3_vfs that SQLite never frees; SQLite's VFS
// objects are safe to call from any thread in a threadsafe build. Other fields are Sync.
unsafe impl Send for Instance {}
// SAFETY: as above.
unsafe impl Sync for Instance {}

fn read<T: Clone>(l: &RwLock<T>) -> T {
    match l.read() {
        Ok(g) => g.clone(),
        Err(p) => p.into_inner().clone(),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

static LAST_ERROR: Mutex<Option<String>> = Mutex::new(None);

/// The last error the waldio VFS reported (SQLite only sees a result code).
pub fn last_error() -> Option<String> {
    lock(&LAST_ERROR).clone()
}

pub(crate) fn clear_last_error() {
    *lock(&LAST_ERROR) = None;
}

fn report(code: c_int, msg: String) -> c_int {
    if let Ok(c) = CString::new(format!("waldio: {msg}")) {
        // SAFETY: sqlite3_log with a "%s" format and a valid C string.
        unsafe { ffi::sqlite3_log(code, c"%s".as_ptr(), c.as_ptr()) };
    }
    *lock(&LAST_ERROR) = Some(msg);
    code
}

fn code_of(e: &WalError, default: c_int) -> c_int {
    match e {
        WalError::Full(_) => ffi::SQLITE_FULL,
        WalError::StockWal | WalError::Foreign | WalError::NewerVersion(_) => ffi::SQLITE_CANTOPEN,
        _ => default,
    }
}

/// The shared state of one WAL file in this process.
pub(crate) struct SharedWal {
    pub(crate) state: Mutex<WalState<DirectFile>>,
    path: PathBuf,
    key: (u64, u64),
}

/// Every WAL open in this process, by (device, inode).
type WalRegistry = HashMap<(u64, u64), Weak<SharedWal>>;
static WALS: Mutex<Option<WalRegistry>> = Mutex::new(None);

fn file_key(fd: std::os::fd::BorrowedFd<'_>) -> std::io::Result<(u64, u64)> {
    let st = rustix::fs::fstat(fd)?;
    Ok((st.st_dev, st.st_ino))
}

/// Take an OFD lock on byte 0 of the WAL: exclusive for group sync (its buffer lives in this
/// process only), shared otherwise. Fails at once on conflict.
fn ofd_lock(fd: i32, exclusive: bool) -> std::io::Result<()> {
    // SAFETY: zeroed flock is a valid value; fcntl with F_OFD_SETLK on our descriptor.
    unsafe {
        let mut fl: libc::flock = std::mem::zeroed();
        fl.l_type = if exclusive {
            libc::F_WRLCK as libc::c_short
        } else {
            libc::F_RDLCK as libc::c_short
        };
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = 0;
        fl.l_len = 1;
        if libc::fcntl(fd, libc::F_OFD_SETLK, &fl) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn open_shared(
    inst: &'static Instance,
    path: &Path,
    create: bool,
    mode: u32,
    opts: WaldioOptions,
) -> Result<Arc<SharedWal>, c_int> {
    let tap = read(&inst.tap);
    let file = DirectFile::open(path, create, mode, tap).map_err(|e| {
        report(
            ffi::SQLITE_CANTOPEN,
            format!(
                "cannot open the WAL {} for direct I/O: {e} (is the directory writable, and \
                 does the filesystem support O_DIRECT?)",
                path.display()
            ),
        )
    })?;
    let key = file_key(file.fd()).map_err(|e| {
        report(
            ffi::SQLITE_CANTOPEN,
            format!("fstat of {}: {e}", path.display()),
        )
    })?;
    let mut wals = lock(&WALS);
    let map = wals.get_or_insert_with(HashMap::new);
    if let Some(existing) = map.get(&key).and_then(Weak::upgrade) {
        let theirs = *lock(&existing.state).options();
        if theirs != opts {
            return Err(report(
                ffi::SQLITE_CANTOPEN,
                format!(
                    "{} is already open in this process with waldio options {} ({:?}); a \
                     second connection asked for {} ({:?}); open it with the same options",
                    path.display(),
                    theirs.label(),
                    theirs,
                    opts.label(),
                    opts
                ),
            ));
        }
        return Ok(existing);
    }
    if let Err(e) = ofd_lock(file.raw_fd(), opts.group.is_some()) {
        let why = if opts.group.is_some() {
            "group sync needs the WAL to itself, but another process has it open"
        } else {
            "another process uses this WAL with group sync (its buffer is in that process)"
        };
        return Err(report(
            ffi::SQLITE_BUSY,
            format!("{}: {why} ({e})", path.display()),
        ));
    }
    let state = WalState::open(file, opts, inst.counters.clone()).map_err(|e| {
        report(
            code_of(&e, ffi::SQLITE_CANTOPEN),
            format!("{}: {e}", path.display()),
        )
    })?;
    let shared = Arc::new(SharedWal {
        state: Mutex::new(state),
        path: path.to_path_buf(),
        key,
    });
    map.insert(key, Arc::downgrade(&shared));
    drop(wals);
    if let Some(g) = opts.group {
        start_group_timer(Arc::downgrade(&shared), g.interval_ms);
    }
    Ok(shared)
}

/// Group sync's timer: writes a buffer whose oldest commit reached the interval. It holds only
/// a weak reference and ends when the last handle of the WAL closes.
fn start_group_timer(wal: Weak<SharedWal>, interval_ms: u64) {
    let tick = std::time::Duration::from_micros((interval_ms * 1000 / 2).max(100));
    let spawned = std::thread::Builder::new()
        .name("waldio-group".into())
        .spawn(move || {
            loop {
                std::thread::sleep(tick);
                let Some(w) = wal.upgrade() else { return };
                let mut st = lock(&w.state);
                if let Err(e) = st.group_tick() {
                    report(
                        ffi::SQLITE_IOERR,
                        format!("group write of {}: {e}", w.path.display()),
                    );
                }
            }
        });
    if let Err(e) = spawned {
        report(
            ffi::SQLITE_IOERR,
            format!("cannot start the group-sync timer: {e}"),
        );
    }
}

#[repr(C)]
struct WalHandle {
    base: ffi::sqlite3_file,
    inst: &'static Instance,
    shared: Arc<SharedWal>,
}

#[repr(C)]
struct FwdFile {
    base: ffi::sqlite3_file,
    inst: &'static Instance,
    path: Option<PathBuf>,
}

impl FwdFile {
    /// The instance's tap and this file's path, when a test taps the VFS.
    fn tap(&self) -> Option<(Arc<dyn Tap>, &Path)> {
        Some((read(&self.inst.tap)?, self.path.as_deref()?))
    }
}

const FWD_OFFSET: usize = (std::mem::size_of::<FwdFile>() + 15) & !15;

pub(crate) fn os_file_size(base: &ffi::sqlite3_vfs) -> c_int {
    let wal = std::mem::size_of::<WalHandle>() as c_int;
    wal.max(FWD_OFFSET as c_int + base.szOsFile)
}

unsafe fn instance<'a>(vfs: *mut ffi::sqlite3_vfs) -> &'a Instance {
    // SAFETY: pAppData was set to a leaked &'static Instance at registration.
    unsafe { &*((*vfs).pAppData as *const Instance) }
}

unsafe fn c_path(name: *const c_char) -> Option<PathBuf> {
    if name.is_null() {
        return None;
    }
    // SAFETY: SQLite passes NUL-terminated names.
    let bytes = unsafe { CStr::from_ptr(name) }.to_bytes();
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
}

/// Options for a WAL: the instance defaults overridden by the WAL name's URI parameters.
unsafe fn options_for(
    inst: &Instance,
    name: ffi::sqlite3_filename,
) -> Result<WaldioOptions, String> {
    let defaults = read(&inst.defaults);
    defaults.with_uri_params(|key| {
        let k = CString::new(key).ok()?;
        // SAFETY: `name` is a filename SQLite passed to xOpen (WAL names carry URI params).
        let v = unsafe { ffi::sqlite3_uri_parameter(name, k.as_ptr()) };
        if v.is_null() {
            None
        } else {
            // SAFETY: SQLite returns a NUL-terminated string.
            Some(unsafe { CStr::from_ptr(v) }.to_string_lossy().into_owned())
        }
    })
}

/// Page size and reserve from a database file header, if it has one.
pub(crate) fn db_header(path: &Path) -> std::io::Result<Option<(u32, u8)>> {
    use std::io::Read;
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut h = [0u8; 100];
    let mut got = 0;
    while got < h.len() {
        let n = f.read(&mut h[got..])?;
        if n == 0 {
            break;
        }
        got += n;
    }
    if got < 100 || &h[..16] != b"SQLite format 3\0" {
        return Ok(None);
    }
    let raw = u16::from_be_bytes([h[16], h[17]]) as u32;
    let page = if raw == 1 { 65536 } else { raw };
    Ok(Some((page, h[20])))
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite passes our vfs, a buffer of szOsFile bytes and a valid or null name.
    unsafe {
        let inst: &'static Instance = instance(vfs);
        (*file).pMethods = ptr::null();
        if flags & ffi::SQLITE_OPEN_WAL != 0 {
            if let Some(path) = c_path(name) {
                return open_wal(inst, name, &path, file, flags, out_flags);
            }
        }
        let base = &*inst.base;
        let Some(open) = base.xOpen else {
            return ffi::SQLITE_CANTOPEN;
        };
        let realf = (file as *mut u8).add(FWD_OFFSET) as *mut ffi::sqlite3_file;
        (*realf).pMethods = ptr::null();
        let rc = open(inst.base, name, realf, flags, out_flags);
        if rc != ffi::SQLITE_OK || (*realf).pMethods.is_null() {
            return if rc == ffi::SQLITE_OK {
                ffi::SQLITE_CANTOPEN
            } else {
                rc
            };
        }
        ptr::write(
            file as *mut FwdFile,
            FwdFile {
                base: ffi::sqlite3_file {
                    pMethods: &FWD_METHODS,
                },
                inst,
                path: c_path(name),
            },
        );
        ffi::SQLITE_OK
    }
}

unsafe fn open_wal(
    inst: &'static Instance,
    name: ffi::sqlite3_filename,
    path: &Path,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: arguments as in x_open.
    unsafe {
        let opts = match options_for(inst, name) {
            Ok(o) => o,
            Err(msg) => return report(ffi::SQLITE_CANTOPEN, msg),
        };
        // The database must keep the reserve the frame headers live in.
        let db_name = ffi::sqlite3_filename_database(name);
        let mut mode = 0o644;
        if let Some(db_path) = c_path(db_name) {
            match db_header(&db_path) {
                Ok(Some((page, reserve))) if reserve < RESERVE_NEEDED => {
                    return report(
                        ffi::SQLITE_CANTOPEN,
                        format!(
                            "{} keeps {reserve} reserved bytes per page; waldio needs at least \
                             {RESERVE_NEEDED} for the embedded frame headers (page size {page}). \
                             Convert it once with `joj waldio convert {}` (VACUUM with a \
                             24-byte reserve), or open it without the waldio VFS",
                            db_path.display(),
                            db_path.display()
                        ),
                    );
                }
                Ok(_) => {}
                Err(e) => {
                    return report(
                        ffi::SQLITE_CANTOPEN,
                        format!("reading the header of {}: {e}", db_path.display()),
                    );
                }
            }
            if let Ok(md) = std::fs::metadata(&db_path) {
                use std::os::unix::fs::PermissionsExt;
                mode = md.permissions().mode() & 0o777;
            }
        }
        let create = flags & ffi::SQLITE_OPEN_CREATE != 0;
        let shared = match open_shared(inst, path, create, mode, opts) {
            Ok(s) => s,
            Err(rc) => return rc,
        };
        if !out_flags.is_null() {
            *out_flags = flags;
        }
        ptr::write(
            file as *mut WalHandle,
            WalHandle {
                base: ffi::sqlite3_file {
                    pMethods: &WAL_METHODS,
                },
                inst,
                shared,
            },
        );
        ffi::SQLITE_OK
    }
}

fn is_wal_name(path: &Path) -> bool {
    path.as_os_str().as_bytes().ends_with(b"-wal")
}

/// Open a waldio WAL that may already be open in this process, for delete and access checks.
fn with_existing_wal<R>(
    inst: &'static Instance,
    path: &Path,
    f: impl FnOnce(&mut WalState<DirectFile>) -> Result<R, WalError>,
) -> Result<Option<R>, WalError> {
    let file = match DirectFile::open(path, false, 0o644, read(&inst.tap)) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(WalError::Io {
                what: "opening the WAL",
                source: e,
            });
        }
    };
    let key = file_key(file.fd()).map_err(|e| WalError::Io {
        what: "fstat of the WAL",
        source: e,
    })?;
    let existing = lock(&WALS)
        .as_ref()
        .and_then(|m| m.get(&key).and_then(Weak::upgrade));
    match existing {
        Some(shared) => {
            let mut st = lock(&shared.state);
            f(&mut st).map(Some)
        }
        None => {
            let mut st = WalState::open(file, read(&inst.defaults), inst.counters.clone())?;
            f(&mut st).map(Some)
        }
    }
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    // SAFETY: SQLite passes our vfs and a valid path.
    unsafe {
        let inst: &'static Instance = instance(vfs);
        if let Some(path) = c_path(name) {
            if is_wal_name(&path) {
                match with_existing_wal(inst, &path, |st| st.mark_absent()) {
                    Ok(Some(())) => return ffi::SQLITE_OK,
                    Ok(None) => return ffi::SQLITE_IOERR_DELETE_NOENT,
                    // Not a waldio file (a stock WAL SQLite wants gone): the base VFS deletes it.
                    Err(WalError::StockWal | WalError::Foreign) => {}
                    Err(e) => {
                        return report(
                            ffi::SQLITE_IOERR_DELETE,
                            format!("marking {} absent: {e}", path.display()),
                        );
                    }
                }
            }
        }
        let base = inst.base;
        let rc = match (*base).xDelete {
            Some(f) => f(base, name, sync_dir),
            None => ffi::SQLITE_IOERR_DELETE,
        };
        if rc == ffi::SQLITE_OK {
            if let (Some(tap), Some(path)) = (read(&inst.tap), c_path(name)) {
                tap.delete(&path);
            }
        }
        rc
    }
}

unsafe extern "C" fn x_access(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    flags: c_int,
    out: *mut c_int,
) -> c_int {
    // SAFETY: SQLite passes our vfs, a valid path and an out pointer.
    unsafe {
        let inst: &'static Instance = instance(vfs);
        if flags == ffi::SQLITE_ACCESS_EXISTS {
            if let Some(path) = c_path(name) {
                if is_wal_name(&path) {
                    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                    if size == 0 {
                        *out = 0;
                        return ffi::SQLITE_OK;
                    }
                    match with_existing_wal(inst, &path, |st| st.exists()) {
                        Ok(v) => {
                            *out = c_int::from(v.unwrap_or(false));
                            return ffi::SQLITE_OK;
                        }
                        // Someone else's WAL: report it present so opening it gives the error.
                        Err(WalError::StockWal | WalError::Foreign | WalError::NewerVersion(_)) => {
                            *out = 1;
                            return ffi::SQLITE_OK;
                        }
                        Err(e) => {
                            return report(
                                ffi::SQLITE_IOERR_ACCESS,
                                format!("checking {}: {e}", path.display()),
                            );
                        }
                    }
                }
            }
        }
        let base = inst.base;
        match (*base).xAccess {
            Some(f) => f(base, name, flags, out),
            None => ffi::SQLITE_ERROR,
        }
    }
}

unsafe fn base_of(vfs: *mut ffi::sqlite3_vfs) -> *mut ffi::sqlite3_vfs {
    // SAFETY: called only with a registered waldio VFS.
    unsafe { instance(vfs).base }
}

joj_vfs::forward_vfs_calls!(base_of);

/// Build the sqlite3_vfs for `inst` (leaked by the caller's registration).
pub(crate) fn make_vfs(inst: &'static Instance) -> ffi::sqlite3_vfs {
    // SAFETY: inst.base is a live registered VFS.
    let base = unsafe { &*inst.base };
    ffi::sqlite3_vfs {
        iVersion: 3,
        szOsFile: os_file_size(base),
        mxPathname: base.mxPathname,
        pNext: ptr::null_mut(),
        zName: inst.name.as_ptr(),
        pAppData: inst as *const Instance as *mut c_void,
        xOpen: Some(x_open),
        xDelete: Some(x_delete),
        xAccess: Some(x_access),
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

/// Is `vfs` one of ours? (All instances share `x_open`.)
pub(crate) fn is_waldio(vfs: *const ffi::sqlite3_vfs) -> bool {
    if vfs.is_null() {
        return false;
    }
    // SAFETY: a VFS pointer SQLite handed out.
    let open = unsafe { (*vfs).xOpen };
    open.map(|f| f as *const () as usize) == Some(x_open as *const () as usize)
}

// ---- WAL file methods ----

static WAL_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(w_close),
    xRead: Some(w_read),
    xWrite: Some(w_write),
    xTruncate: Some(w_truncate),
    xSync: Some(w_sync),
    xFileSize: Some(w_file_size),
    xLock: Some(w_lock),
    xUnlock: Some(w_lock),
    xCheckReservedLock: Some(w_check_reserved),
    xFileControl: Some(w_file_control),
    xSectorSize: Some(w_sector_size),
    xDeviceCharacteristics: Some(w_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

unsafe fn wal<'a>(file: *mut ffi::sqlite3_file) -> &'a WalHandle {
    // SAFETY: files with WAL_METHODS were initialised as WalHandle by open_wal.
    unsafe { &*(file as *const WalHandle) }
}

unsafe extern "C" fn w_close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: `file` is a WalHandle; it is dropped here and never used again.
    unsafe {
        let h = wal(file);
        let mut rc = ffi::SQLITE_OK;
        {
            let mut st = lock(&h.shared.state);
            if let Err(e) = st.close() {
                rc = report(
                    ffi::SQLITE_IOERR_CLOSE,
                    format!("{}: {e}", h.shared.path.display()),
                );
            }
        }
        let key = h.shared.key;
        ptr::drop_in_place(file as *mut WalHandle);
        (*file).pMethods = ptr::null();
        let mut wals = lock(&WALS);
        if let Some(map) = wals.as_mut() {
            if map.get(&key).is_some_and(|w| w.strong_count() == 0) {
                map.remove(&key);
            }
        }
        rc
    }
}

unsafe extern "C" fn w_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: SQLite passes a buffer of `amt` bytes.
    unsafe {
        let h = wal(file);
        let out = std::slice::from_raw_parts_mut(buf as *mut u8, amt.max(0) as usize);
        let mut st = lock(&h.shared.state);
        match st.read(off as u64, out) {
            Ok(ReadOutcome::Full) => ffi::SQLITE_OK,
            Ok(ReadOutcome::Short) => ffi::SQLITE_IOERR_SHORT_READ,
            Err(e) => report(
                code_of(&e, ffi::SQLITE_IOERR_READ),
                format!("{}: {e}", h.shared.path.display()),
            ),
        }
    }
}

unsafe extern "C" fn w_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: SQLite passes a buffer of `amt` bytes.
    unsafe {
        let h = wal(file);
        let data = std::slice::from_raw_parts(buf as *const u8, amt.max(0) as usize);
        let mut st = lock(&h.shared.state);
        match st.write(off as u64, data) {
            Ok(()) => ffi::SQLITE_OK,
            Err(e) => report(
                code_of(&e, ffi::SQLITE_IOERR_WRITE),
                format!("{}: {e}", h.shared.path.display()),
            ),
        }
    }
}

unsafe extern "C" fn w_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    // SAFETY: `file` is a WalHandle.
    unsafe {
        let h = wal(file);
        if size > 0 {
            return ffi::SQLITE_OK; // blocks stay; frames past the log are stale by their salts
        }
        let mut st = lock(&h.shared.state);
        match st.mark_absent() {
            Ok(()) => ffi::SQLITE_OK,
            Err(e) => report(
                ffi::SQLITE_IOERR_TRUNCATE,
                format!("{}: {e}", h.shared.path.display()),
            ),
        }
    }
}

fn notify(inst: &Instance, event: FileEvent, path: &Path, fd: i32) {
    if let Some(o) = read(&inst.observer) {
        o.file_event(event, path, FileRole::Wal, Some(fd));
    }
}

unsafe extern "C" fn w_sync(file: *mut ffi::sqlite3_file, _flags: c_int) -> c_int {
    // SAFETY: `file` is a WalHandle.
    unsafe {
        let h = wal(file);
        let mut st = lock(&h.shared.state);
        let fd = st.io().raw_fd();
        notify(h.inst, FileEvent::BeforeSync, &h.shared.path, fd);
        let r = st.sync();
        notify(h.inst, FileEvent::AfterSync, &h.shared.path, fd);
        match r {
            Ok(()) => ffi::SQLITE_OK,
            Err(e) => report(
                code_of(&e, ffi::SQLITE_IOERR_FSYNC),
                format!("{}: {e}", h.shared.path.display()),
            ),
        }
    }
}

unsafe extern "C" fn w_file_size(
    file: *mut ffi::sqlite3_file,
    size: *mut ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: `file` is a WalHandle; `size` is a valid out pointer.
    unsafe {
        let h = wal(file);
        let mut st = lock(&h.shared.state);
        match st.logical_size() {
            Ok(n) => {
                *size = n as ffi::sqlite3_int64;
                ffi::SQLITE_OK
            }
            Err(e) => report(
                ffi::SQLITE_IOERR_FSTAT,
                format!("{}: {e}", h.shared.path.display()),
            ),
        }
    }
}

unsafe extern "C" fn w_lock(_file: *mut ffi::sqlite3_file, _level: c_int) -> c_int {
    ffi::SQLITE_OK // SQLite never locks the WAL file itself (its locks are in the -shm)
}

unsafe extern "C" fn w_check_reserved(_file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    // SAFETY: valid out pointer.
    unsafe { *out = 0 };
    ffi::SQLITE_OK
}

unsafe extern "C" fn w_file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: `file` is a WalHandle; arg types per SQLite's documentation of each op.
    unsafe {
        if op == ffi::SQLITE_FCNTL_VFSNAME {
            let h = wal(file);
            let name = format!(
                "waldio({})",
                h.shared
                    .state
                    .lock()
                    .map(|s| s.options().label())
                    .unwrap_or_default()
            );
            if let Ok(c) = CString::new(name) {
                *(arg as *mut *mut c_char) = ffi::sqlite3_mprintf(c"%s".as_ptr(), c.as_ptr());
                return ffi::SQLITE_OK;
            }
        }
        ffi::SQLITE_NOTFOUND
    }
}

unsafe extern "C" fn w_sector_size(_file: *mut ffi::sqlite3_file) -> c_int {
    512
}

unsafe extern "C" fn w_device_characteristics(_file: *mut ffi::sqlite3_file) -> c_int {
    // A frame write changes only its own blocks, torn or not: powersafe overwrite (no padding).
    ffi::SQLITE_IOCAP_POWERSAFE_OVERWRITE
}

// ---- pass-through file methods (database, -shm, journals) ----

static FWD_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(f_close),
    xRead: Some(f_read),
    xWrite: Some(f_write),
    xTruncate: Some(f_truncate),
    xSync: Some(f_sync),
    xFileSize: Some(f_file_size),
    xLock: Some(f_lock),
    xUnlock: Some(f_unlock),
    xCheckReservedLock: Some(f_check_reserved_lock),
    xFileControl: Some(f_file_control),
    xSectorSize: Some(f_sector_size),
    xDeviceCharacteristics: Some(f_device_characteristics),
    xShmMap: Some(f_shm_map),
    xShmLock: Some(f_shm_lock),
    xShmBarrier: Some(f_shm_barrier),
    xShmUnmap: Some(f_shm_unmap),
    xFetch: Some(f_fetch),
    xUnfetch: Some(f_unfetch),
};

unsafe fn real(file: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    // SAFETY: the base file starts at FWD_OFFSET of the buffer SQLite allocated.
    unsafe { (file as *mut u8).add(FWD_OFFSET) as *mut ffi::sqlite3_file }
}

unsafe fn fwd<'a>(file: *mut ffi::sqlite3_file) -> &'a FwdFile {
    // SAFETY: files with FWD_METHODS were initialised as FwdFile by x_open.
    unsafe { &*(file as *const FwdFile) }
}

unsafe fn real_methods<'a>(file: *mut ffi::sqlite3_file) -> &'a ffi::sqlite3_io_methods {
    // SAFETY: x_open installs FWD_METHODS only after the base file opened.
    unsafe { &*(*real(file)).pMethods }
}

unsafe extern "C" fn f_close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: close the base file, then drop our fields.
    unsafe {
        let rc = match real_methods(file).xClose {
            Some(c) => c(real(file)),
            None => ffi::SQLITE_OK,
        };
        ptr::drop_in_place(file as *mut FwdFile);
        (*file).pMethods = ptr::null();
        rc
    }
}

unsafe extern "C" fn f_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: forwards to the base file; `buf` holds `amt` bytes.
    unsafe {
        let rc = match real_methods(file).xWrite {
            Some(f) => f(real(file), buf, amt, off),
            None => ffi::SQLITE_IOERR_WRITE,
        };
        let h = fwd(file);
        if rc == ffi::SQLITE_OK {
            if let Some((tap, path)) = h.tap() {
                let data = std::slice::from_raw_parts(buf as *const u8, amt.max(0) as usize);
                tap.write(path, off as u64, data, false);
            }
        }
        rc
    }
}

unsafe extern "C" fn f_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: forwards to the base file.
    unsafe {
        let rc = match real_methods(file).xSync {
            Some(f) => f(real(file), flags),
            None => ffi::SQLITE_IOERR_FSYNC,
        };
        let h = fwd(file);
        if rc == ffi::SQLITE_OK {
            if let Some((tap, path)) = h.tap() {
                tap.sync(path);
            }
        }
        rc
    }
}

unsafe extern "C" fn f_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    // SAFETY: forwards to the base file.
    unsafe {
        let rc = match real_methods(file).xTruncate {
            Some(f) => f(real(file), size),
            None => ffi::SQLITE_IOERR_TRUNCATE,
        };
        let h = fwd(file);
        if rc == ffi::SQLITE_OK {
            if let Some((tap, path)) = h.tap() {
                tap.truncate(path, size as u64);
            }
        }
        rc
    }
}

unsafe extern "C" fn f_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: forwards to the base file.
    unsafe {
        match real_methods(file).xRead {
            Some(f) => f(real(file), buf, amt, off),
            None => ffi::SQLITE_IOERR_READ,
        }
    }
}

joj_vfs::forward_file_calls!(real, real_methods);
