//! The `joj` VFS: SQLite's unix VFS behind a thin accounting layer.
//!
//! Each file SQLite opens through `joj` is laid out as
//!
//! ```text
//! | AcctFile header (pMethods = ACCT_METHODS, role, fd, ...) | unix VFS's sqlite3_file ... |
//! 0                                                         REAL_OFFSET
//! ```
//!
//! so `szOsFile = REAL_OFFSET + unix.szOsFile`. Every I/O method forwards to the unix file at
//! `REAL_OFFSET`, counting on the way. `xSync` and `xDelete` are not forwarded: joj issues the
//! sync itself on the unix file's descriptor, with the call the caller chose (fsync or
//! fdatasync), and repeats the unix VFS's directory sync after a journal is created (on the
//! first sync) or deleted. That is the only behaviour the shim adds; the rest is SQLite's.
//!
//! The descriptor is read from the unix VFS's `unixFile` (`pMethod, pVfs, pInode, int h`, the
//! same layout since SQLite 3.7) and checked with `fstat` against the path at open: if the
//! layout ever changed, opening fails with a clear error instead of syncing the wrong file.

use crate::counters::{AtomicCounters, IoCounters, SyncCall};
use joj_trace::FileRole;
use libsqlite3_sys as ffi;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// Name under which the accounting VFS is registered with SQLite.
pub const VFS_NAME: &str = "joj";

/// Errors of the VFS layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VfsError {
    #[error(
        "SQLite's unix VFS is not available in this build; joj needs it under the accounting shim"
    )]
    NoUnixVfs,
    #[error("sqlite3_vfs_register failed with code {0}")]
    Register(c_int),
}

/// When the observer is told something, and about which file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileEvent {
    /// A sync of the file is about to be issued.
    BeforeSync,
    /// The file's data was just made durable: its blocks are allocated now.
    AfterSync,
    /// The file is about to be deleted (its blocks are about to be freed).
    BeforeDelete,
    /// The file is about to be truncated to a smaller size.
    BeforeTruncate,
}

/// Told of file events while a workload runs, e.g. to record where a file's blocks are.
/// `fd` is an open descriptor of the file (valid only during the call); it is `None` for
/// `BeforeDelete`, where only the path is known.
pub trait FileObserver: Send + Sync {
    fn file_event(&self, event: FileEvent, path: &Path, role: FileRole, fd: Option<c_int>);
}

struct Shared {
    unix: *mut ffi::sqlite3_vfs,
    counters: AtomicCounters,
    observer: RwLock<Option<Arc<dyn FileObserver>>>,
}

// SAFETY: `unix` points at SQLite's static unix VFS object, which SQLite never frees and which
// is safe to call from any thread in a SQLITE_THREADSAFE=1 build (libsqlite3-sys sets it).
unsafe impl Send for Shared {}
// SAFETY: as above; all other fields are Sync.
unsafe impl Sync for Shared {}

/// Handle to the registered `joj` VFS: counters, sync call and observer.
#[derive(Clone, Copy)]
pub struct AccountingVfs {
    shared: &'static Shared,
}

impl AccountingVfs {
    /// The counters so far (take a snapshot before and after a run and use `delta`).
    pub fn counters(&self) -> IoCounters {
        self.shared.counters.snapshot()
    }

    /// Which call joj issues when SQLite syncs a file (process-wide for this VFS).
    pub fn set_sync_call(&self, call: SyncCall) {
        self.shared.counters.set_sync_call(call);
    }

    pub fn sync_call(&self) -> SyncCall {
        self.shared.counters.sync_call()
    }

    /// Install (or with `None`, remove) the observer of file events.
    pub fn set_observer(&self, observer: Option<Arc<dyn FileObserver>>) {
        let mut guard = match self.shared.observer.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        *guard = observer;
    }
}

static REGISTERED: OnceLock<Result<AccountingVfs, String>> = OnceLock::new();
static REGISTER_LOCK: Mutex<()> = Mutex::new(());

/// Register the `joj` VFS with SQLite (once per process; later calls return the same handle).
/// It is not made the default VFS: open connections with the VFS name [`VFS_NAME`].
pub fn register() -> Result<AccountingVfs, VfsError> {
    let _guard = REGISTER_LOCK.lock();
    let result = REGISTERED.get_or_init(|| register_once().map_err(|e| e.to_string()));
    match result {
        Ok(vfs) => Ok(*vfs),
        Err(_) => {
            // Registration is deterministic; repeat it to get the structured error back.
            register_once()
        }
    }
}

const REAL_OFFSET: usize = (std::mem::size_of::<AcctFile>() + 15) & !15;

fn register_once() -> Result<AccountingVfs, VfsError> {
    // SAFETY: sqlite3_initialize is idempotent and thread-safe; vfs_find with a valid C string.
    let unix = unsafe {
        ffi::sqlite3_initialize();
        ffi::sqlite3_vfs_find(c"unix".as_ptr())
    };
    if unix.is_null() {
        return Err(VfsError::NoUnixVfs);
    }
    let shared: &'static Shared = Box::leak(Box::new(Shared {
        unix,
        counters: AtomicCounters::default(),
        observer: RwLock::new(None),
    }));
    // SAFETY: `unix` is non-null and points at a live sqlite3_vfs.
    let u = unsafe { &*unix };
    let vfs = Box::leak(Box::new(ffi::sqlite3_vfs {
        iVersion: 3,
        szOsFile: (REAL_OFFSET as c_int) + u.szOsFile,
        mxPathname: u.mxPathname,
        pNext: ptr::null_mut(),
        zName: c"joj".as_ptr(),
        pAppData: shared as *const Shared as *mut c_void,
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
    }));
    // SAFETY: `vfs` is a leaked, fully initialised sqlite3_vfs that lives forever.
    let rc = unsafe { ffi::sqlite3_vfs_register(vfs, 0) };
    if rc != ffi::SQLITE_OK {
        return Err(VfsError::Register(rc));
    }
    Ok(AccountingVfs { shared })
}

#[repr(C)]
struct AcctFile {
    base: ffi::sqlite3_file,
    shared: *const Shared,
    role: FileRole,
    /// Descriptor of the unix file (owned by the unix VFS).
    fd: c_int,
    /// A journal or WAL was created: sync its directory on the first sync (as unix VFS does).
    dirsync_pending: bool,
    /// A write or sync failed: refuse further writes and syncs.
    failed: bool,
    /// Path as SQLite named it; `None` for temporary files without a name.
    path: Option<PathBuf>,
}

// The unix VFS's `unixFile` starts with three pointers, then `int h`.
const UNIX_FD_OFFSET: usize = 3 * std::mem::size_of::<*const c_void>();

unsafe fn real(file: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    // SAFETY: SQLite allocated szOsFile bytes for `file`; the unix file starts at REAL_OFFSET.
    unsafe { (file as *mut u8).add(REAL_OFFSET) as *mut ffi::sqlite3_file }
}

unsafe fn acct<'a>(file: *mut ffi::sqlite3_file) -> &'a mut AcctFile {
    // SAFETY: every file whose pMethods is ACCT_METHODS was initialised by x_open as AcctFile.
    unsafe { &mut *(file as *mut AcctFile) }
}

unsafe fn shared_of<'a>(vfs: *mut ffi::sqlite3_vfs) -> &'a Shared {
    // SAFETY: pAppData was set to a leaked &'static Shared at registration.
    unsafe { &*((*vfs).pAppData as *const Shared) }
}

unsafe fn real_methods<'a>(file: *mut ffi::sqlite3_file) -> &'a ffi::sqlite3_io_methods {
    // SAFETY: the unix file was opened successfully (x_open only installs ACCT_METHODS then).
    unsafe { &*(*real(file)).pMethods }
}

fn role_of(flags: c_int) -> FileRole {
    if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
        FileRole::Database
    } else if flags & ffi::SQLITE_OPEN_WAL != 0 {
        FileRole::Wal
    } else if flags & ffi::SQLITE_OPEN_MAIN_JOURNAL != 0 {
        FileRole::RollbackJournal
    } else {
        FileRole::Other
    }
}

fn notify(shared: &Shared, event: FileEvent, path: &Path, role: FileRole, fd: Option<c_int>) {
    let guard = match shared.observer.read() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some(observer) = guard.as_ref() {
        observer.file_event(event, path, role, fd);
    }
}

/// Run the chosen sync call on `fd`, retrying on EINTR. Counts only calls that succeeded.
fn do_sync(shared: &Shared, fd: c_int, dir: bool) -> bool {
    let call = shared.counters.sync_call();
    loop {
        // SAFETY: plain system calls on a descriptor we own or the unix VFS keeps open.
        let rc = unsafe {
            match call {
                SyncCall::Fsync => libc::fsync(fd),
                SyncCall::Fdatasync => libc::fdatasync(fd),
            }
        };
        if rc == 0 {
            shared.counters.count_sync(call, dir);
            return true;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return false;
        }
    }
}

fn sync_directory_of(shared: &Shared, path: &Path) -> bool {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: valid C string; the descriptor is closed below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        // SQLite's unix VFS also ignores a directory it cannot open (e.g. no permission).
        return true;
    }
    let ok = do_sync(shared, fd, true);
    // SAFETY: fd was opened above.
    unsafe { libc::close(fd) };
    ok
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
        let shared = shared_of(vfs);
        let unix = &*shared.unix;
        let realf = real(file);
        (*realf).pMethods = ptr::null();
        (*file).pMethods = ptr::null();
        let Some(open) = unix.xOpen else {
            return ffi::SQLITE_CANTOPEN;
        };
        let rc = open(shared.unix, name, realf, flags, out_flags);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        if (*realf).pMethods.is_null() {
            return ffi::SQLITE_CANTOPEN;
        }
        let fd = *((realf as *const u8).add(UNIX_FD_OFFSET) as *const c_int);
        let path = if name.is_null() {
            None
        } else {
            Some(PathBuf::from(std::ffi::OsStr::from_bytes(
                CStr::from_ptr(name).to_bytes(),
            )))
        };
        if !fd_matches(fd, path.as_deref()) {
            if let Some(close) = (*(*realf).pMethods).xClose {
                close(realf);
            }
            (*file).pMethods = ptr::null();
            return ffi::SQLITE_CANTOPEN;
        }
        let role = role_of(flags);
        let creates_journal = flags & ffi::SQLITE_OPEN_CREATE != 0
            && flags
                & (ffi::SQLITE_OPEN_MAIN_JOURNAL
                    | ffi::SQLITE_OPEN_SUPER_JOURNAL
                    | ffi::SQLITE_OPEN_WAL)
                != 0;
        ptr::write(
            file as *mut AcctFile,
            AcctFile {
                base: ffi::sqlite3_file {
                    pMethods: &ACCT_METHODS,
                },
                shared,
                role,
                fd,
                dirsync_pending: creates_journal,
                failed: false,
                path,
            },
        );
        ffi::SQLITE_OK
    }
}

/// Whether `fd` is an open descriptor of `path` (same device and inode). Guards the
/// assumption about the unix VFS's file layout.
fn fd_matches(fd: c_int, path: Option<&Path>) -> bool {
    // SAFETY: fstat/stat write into zeroed, properly sized stat buffers.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if fd < 0 || libc::fstat(fd, &mut st) != 0 {
            return false;
        }
        let Some(path) = path else {
            return st.st_mode & libc::S_IFMT == libc::S_IFREG;
        };
        let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
            return false;
        };
        let mut sp: libc::stat = std::mem::zeroed();
        if libc::stat(c.as_ptr(), &mut sp) != 0 {
            return false;
        }
        st.st_dev == sp.st_dev && st.st_ino == sp.st_ino
    }
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    // SAFETY: SQLite passes our vfs and a valid path.
    unsafe {
        let shared = shared_of(vfs);
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(CStr::from_ptr(name).to_bytes()));
        let role = role_from_name(&path);
        notify(shared, FileEvent::BeforeDelete, &path, role, None);
        if libc::unlink(name) != 0 {
            let errno = std::io::Error::last_os_error().raw_os_error();
            return if errno == Some(libc::ENOENT) {
                ffi::SQLITE_IOERR_DELETE_NOENT
            } else {
                ffi::SQLITE_IOERR_DELETE
            };
        }
        shared.counters.count_delete();
        if sync_dir & 1 != 0 && !sync_directory_of(shared, &path) {
            return ffi::SQLITE_IOERR_DIR_FSYNC;
        }
        ffi::SQLITE_OK
    }
}

/// SQLite deletes only journals, WALs and super-journals by name; tell them apart by suffix.
fn role_from_name(path: &Path) -> FileRole {
    let s = path.as_os_str().as_bytes();
    if s.ends_with(b"-wal") {
        FileRole::Wal
    } else if s.ends_with(b"-journal") {
        FileRole::RollbackJournal
    } else {
        FileRole::Other
    }
}

unsafe fn base_of(vfs: *mut ffi::sqlite3_vfs) -> *mut ffi::sqlite3_vfs {
    // SAFETY: called only with our registered VFS.
    unsafe { shared_of(vfs).unix }
}

crate::forward_vfs_calls!(base_of);

unsafe extern "C" fn x_access(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    flags: c_int,
    out: *mut c_int,
) -> c_int {
    // SAFETY: forwards unchanged to the unix VFS.
    unsafe {
        let unix = base_of(vfs);
        match (*unix).xAccess {
            Some(f) => f(unix, name, flags, out),
            None => ffi::SQLITE_ERROR,
        }
    }
}

static ACCT_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
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

unsafe extern "C" fn f_close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: `file` is an AcctFile; drop its Rust fields after closing the unix file.
    unsafe {
        let realf = real(file);
        let rc = match real_methods(file).xClose {
            Some(close) => close(realf),
            None => ffi::SQLITE_OK,
        };
        ptr::drop_in_place(file as *mut AcctFile);
        (*file).pMethods = ptr::null();
        rc
    }
}

unsafe extern "C" fn f_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: forwards to the unix file.
    unsafe {
        let a = acct(file);
        (*a.shared).counters.count_read(amt.max(0) as u64);
        match real_methods(file).xRead {
            Some(f) => f(real(file), buf, amt, off),
            None => ffi::SQLITE_IOERR_READ,
        }
    }
}

unsafe extern "C" fn f_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: forwards to the unix file.
    unsafe {
        let a = acct(file);
        if a.failed {
            return ffi::SQLITE_IOERR_WRITE;
        }
        let rc = match real_methods(file).xWrite {
            Some(f) => f(real(file), buf, amt, off),
            None => ffi::SQLITE_IOERR_WRITE,
        };
        if rc == ffi::SQLITE_OK {
            (*a.shared).counters.count_write(a.role, amt.max(0) as u64);
        } else if rc & 0xff == ffi::SQLITE_IOERR {
            a.failed = true;
        }
        rc
    }
}

unsafe extern "C" fn f_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    // SAFETY: forwards to the unix file.
    unsafe {
        let a = acct(file);
        if let Some(path) = a.path.as_deref() {
            notify(
                &*a.shared,
                FileEvent::BeforeTruncate,
                path,
                a.role,
                Some(a.fd),
            );
        }
        (*a.shared).counters.count_truncate();
        match real_methods(file).xTruncate {
            Some(f) => f(real(file), size),
            None => ffi::SQLITE_IOERR_TRUNCATE,
        }
    }
}

unsafe extern "C" fn f_sync(file: *mut ffi::sqlite3_file, _flags: c_int) -> c_int {
    // SAFETY: `file` is an AcctFile whose fd the unix VFS keeps open until xClose.
    unsafe {
        let a = acct(file);
        let shared = &*a.shared;
        if a.failed {
            return ffi::SQLITE_IOERR_FSYNC;
        }
        if let Some(path) = a.path.as_deref() {
            notify(shared, FileEvent::BeforeSync, path, a.role, Some(a.fd));
        }
        if !do_sync(shared, a.fd, false) {
            a.failed = true;
            return ffi::SQLITE_IOERR_FSYNC;
        }
        if a.dirsync_pending {
            if let Some(path) = a.path.as_deref() {
                if !sync_directory_of(shared, path) {
                    a.failed = true;
                    return ffi::SQLITE_IOERR_DIR_FSYNC;
                }
            }
            a.dirsync_pending = false;
        }
        if let Some(path) = a.path.as_deref() {
            notify(shared, FileEvent::AfterSync, path, a.role, Some(a.fd));
        }
        ffi::SQLITE_OK
    }
}

crate::forward_file_calls!(real, real_methods);

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::{Connection, OpenFlags};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn open(path: &Path) -> Connection {
        let vfs = register().expect("register");
        let _ = vfs;
        Connection::open_with_flags_and_vfs(path, OpenFlags::default(), VFS_NAME).expect("open")
    }

    #[test]
    fn wal_insert_counts_wal_bytes_and_one_sync_per_commit() {
        let dir = tempfile::tempdir().unwrap();
        let vfs = register().unwrap();
        let db = open(&dir.path().join("t.db"));
        db.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE t(v);")
            .unwrap();
        let before = vfs.counters();
        for _ in 0..10 {
            db.execute("INSERT INTO t VALUES(?1)", ["x".repeat(100)])
                .unwrap();
        }
        let d = vfs.counters().delta(&before);
        // Each commit appends one frame (24-byte header + 4096-byte page) and syncs the WAL.
        // Other tests in this process may run concurrently and add to the shared counters,
        // so the assertions are lower bounds that only this workload can satisfy.
        assert!(d.wal_bytes >= 10 * (24 + 4096), "{d:?}");
        assert!(d.fdatasync + d.fsync >= 10, "{d:?}");
    }

    struct CountingObserver(AtomicUsize, AtomicUsize);
    impl FileObserver for CountingObserver {
        fn file_event(&self, event: FileEvent, path: &Path, role: FileRole, fd: Option<c_int>) {
            if !path.to_string_lossy().contains("observed") {
                return;
            }
            match event {
                FileEvent::AfterSync => {
                    assert!(fd.is_some());
                    self.0.fetch_add(1, Ordering::SeqCst);
                }
                FileEvent::BeforeDelete => {
                    assert_eq!(role, FileRole::RollbackJournal);
                    self.1.fetch_add(1, Ordering::SeqCst);
                }
                FileEvent::BeforeTruncate | FileEvent::BeforeSync => {}
            }
        }
    }

    #[test]
    fn delete_mode_reports_journal_deletes_and_syncs_to_the_observer() {
        let dir = tempfile::tempdir().unwrap();
        let vfs = register().unwrap();
        let obs = Arc::new(CountingObserver(AtomicUsize::new(0), AtomicUsize::new(0)));
        vfs.set_observer(Some(obs.clone()));
        let db = open(&dir.path().join("observed.db"));
        db.execute_batch("PRAGMA journal_mode=DELETE; CREATE TABLE t(v);")
            .unwrap();
        for _ in 0..5 {
            db.execute("INSERT INTO t VALUES(1)", []).unwrap();
        }
        vfs.set_observer(None);
        assert!(
            obs.1.load(Ordering::SeqCst) >= 5,
            "journal deleted after each commit"
        );
        assert!(
            obs.0.load(Ordering::SeqCst) >= 10,
            "journal and database synced per commit"
        );
        let n: i64 = db
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 5);
    }
}
