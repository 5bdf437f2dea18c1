//! WALDIO (Lee et al., ATC '15) for unmodified SQLite, as a VFS named `waldio`.
//!
//! SQLite runs its own WAL mode; this VFS stores the WAL in a page-aligned physical layout
//! (each frame's 24-byte header embedded in its page's reserved bytes, the WAL header in a block
//! of its own), preallocates the WAL with written blocks made durable by one explicit
//! `fdatasync`, and writes each transaction's frames in one `O_DIRECT` write. A log commit is
//! then a non-allocating overwrite: the filesystem journals nothing for it. Durability options
//! `full` / `fua` / `normal` and opt-in group synchronization follow the paper's section 5.
//! The byte format and the crash argument: `docs/formats/waldio.md`.
//!
//! It is not a fork of SQLite and does not change SQLite's WAL logic, checksums, checkpoints or
//! locking: every file except the `-wal` passes through to a base VFS unchanged.
//!
//! Invariants: SQLite reads back exactly the logical WAL it wrote (checksums intact); without
//! group sync, a commit's frames are written before SQLite acknowledges it (and durable with
//! `full`/`fua`); the page bytes that hold frame headers are verified to be zero before use.

mod convert;
pub mod counters;
pub mod io;
pub mod layout;
pub mod options;
mod vfs;
pub mod wal;

pub use convert::{ConvertReport, convert};
pub use counters::{AtomicWaldioCounters, WaldioCounters};
pub use io::{AlignedBuf, DirectFile, Tap, WalIo};
pub use options::{GroupSync, SyncOption, WaldioOptions, group_due};
pub use vfs::last_error;
pub use wal::{WalError, WalState};

use libsqlite3_sys as ffi;
use rusqlite::{Connection, OpenFlags};
use std::ffi::{CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

/// Name of the VFS [`register`] installs (over SQLite's `unix` VFS).
pub const VFS_NAME: &str = "waldio";

/// Errors of the waldio layer's Rust API.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaldioError {
    #[error("base VFS {0:?} is not registered with SQLite")]
    NoBaseVfs(String),
    #[error("sqlite3_vfs_register({name:?}) failed with code {code}")]
    Register { name: String, code: c_int },
    #[error(
        "{path} keeps {reserve} reserved bytes per page; waldio needs at least 24. Convert it \
         once with `joj waldio convert {path}` (or joj_waldio::convert)"
    )]
    NoReserve { path: String, reserve: u8 },
    #[error("{what}: {source}{}", detail.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Sqlite {
        what: String,
        source: rusqlite::Error,
        /// What the VFS said about it, when it said something.
        detail: Option<String>,
    },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

/// Handle to one registered waldio VFS.
#[derive(Clone, Copy)]
pub struct WaldioVfs {
    inst: &'static vfs::Instance,
}

impl WaldioVfs {
    /// The name to open connections with.
    pub fn name(&self) -> &'static str {
        self.inst.name.to_str().unwrap_or(VFS_NAME)
    }

    /// Options for WALs whose name carries no `waldio_*` URI parameters.
    pub fn set_defaults(&self, opts: WaldioOptions) {
        match self.inst.defaults.write() {
            Ok(mut g) => *g = opts,
            Err(p) => *p.into_inner() = opts,
        }
    }

    pub fn defaults(&self) -> WaldioOptions {
        match self.inst.defaults.read() {
            Ok(g) => *g,
            Err(p) => *p.into_inner(),
        }
    }

    /// Counters of every WAL this VFS handled (take a snapshot before and after, `delta`).
    pub fn counters(&self) -> WaldioCounters {
        self.inst.counters.snapshot()
    }

    /// See every physical write and sync (tests that rebuild crash states). `None` removes it.
    pub fn set_tap(&self, tap: Option<Arc<dyn Tap>>) {
        match self.inst.tap.write() {
            Ok(mut g) => *g = tap,
            Err(p) => *p.into_inner() = tap,
        }
    }

    /// Be told of WAL syncs (joj's measurement records file extents with it).
    pub fn set_observer(&self, observer: Option<Arc<dyn joj_vfs::FileObserver>>) {
        match self.inst.observer.write() {
            Ok(mut g) => *g = observer,
            Err(p) => *p.into_inner() = observer,
        }
    }
}

static REGISTERED: Mutex<Vec<WaldioVfs>> = Mutex::new(Vec::new());

/// Register `waldio` over SQLite's `unix` VFS (once per process; later calls return it).
pub fn register() -> Result<WaldioVfs, WaldioError> {
    register_over(VFS_NAME, "unix")
}

/// Register a waldio VFS called `name` over the VFS `base` (e.g. joj's accounting `joj`).
pub fn register_over(name: &str, base: &str) -> Result<WaldioVfs, WaldioError> {
    let mut reg = match REGISTERED.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if let Some(v) = reg.iter().find(|v| v.name() == name) {
        return Ok(*v);
    }
    let base_c = CString::new(base).map_err(|_| WaldioError::NoBaseVfs(base.to_string()))?;
    // SAFETY: sqlite3_initialize is idempotent; vfs_find with a valid C string.
    let base_vfs = unsafe {
        ffi::sqlite3_initialize();
        ffi::sqlite3_vfs_find(base_c.as_ptr())
    };
    if base_vfs.is_null() {
        return Err(WaldioError::NoBaseVfs(base.to_string()));
    }
    let inst: &'static vfs::Instance = Box::leak(Box::new(vfs::Instance {
        name: CString::new(name).map_err(|_| WaldioError::Register {
            name: name.to_string(),
            code: ffi::SQLITE_MISUSE,
        })?,
        base: base_vfs,
        defaults: RwLock::new(WaldioOptions::default()),
        counters: Arc::default(),
        tap: RwLock::new(None),
        observer: RwLock::new(None),
    }));
    let v: &'static mut ffi::sqlite3_vfs = Box::leak(Box::new(vfs::make_vfs(inst)));
    // SAFETY: a leaked, fully initialised sqlite3_vfs that lives forever.
    let rc = unsafe { ffi::sqlite3_vfs_register(v, 0) };
    if rc != ffi::SQLITE_OK {
        return Err(WaldioError::Register {
            name: name.to_string(),
            code: rc,
        });
    }
    // SAFETY: registering a valid extern "C" entry point (idempotent in SQLite).
    // SAFETY: registering a valid extern "C" entry point (SQLite ignores duplicates).
    let rc = unsafe { ffi::sqlite3_auto_extension(Some(auto_extension)) };
    if rc != ffi::SQLITE_OK {
        return Err(WaldioError::Register {
            name: name.to_string(),
            code: rc,
        });
    }
    let handle = WaldioVfs { inst };
    reg.push(handle);
    Ok(handle)
}

/// Runs on every new connection: on a waldio connection, ask for the 24-byte reserve (new
/// databases get it) and set `PRAGMA synchronous` to what the durability option needs.
unsafe extern "C" fn auto_extension(
    db: *mut ffi::sqlite3,
    _err: *mut *mut c_char,
    _api: *const ffi::sqlite3_api_routines,
) -> c_int {
    // SAFETY: `db` is the connection being opened; file controls with valid out pointers.
    unsafe {
        let mut vfs_ptr: *mut ffi::sqlite3_vfs = std::ptr::null_mut();
        let rc = ffi::sqlite3_file_control(
            db,
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_VFS_POINTER,
            &mut vfs_ptr as *mut _ as *mut c_void,
        );
        if rc != ffi::SQLITE_OK || !vfs::is_waldio(vfs_ptr) {
            return ffi::SQLITE_OK;
        }
        let mut reserve: c_int = layout::RESERVE_NEEDED as c_int;
        ffi::sqlite3_file_control(
            db,
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_RESERVE_BYTES,
            &mut reserve as *mut c_int as *mut c_void,
        );
        let inst = &*((*vfs_ptr).pAppData as *const vfs::Instance);
        let defaults = match inst.defaults.read() {
            Ok(g) => *g,
            Err(p) => *p.into_inner(),
        };
        let fname = ffi::sqlite3_db_filename(db, c"main".as_ptr());
        let opts = if fname.is_null() {
            defaults
        } else {
            defaults
                .with_uri_params(|key| {
                    let k = CString::new(key).ok()?;
                    let v = ffi::sqlite3_uri_parameter(fname, k.as_ptr());
                    (!v.is_null())
                        .then(|| std::ffi::CStr::from_ptr(v).to_string_lossy().into_owned())
                })
                .unwrap_or(defaults)
        };
        let sql = format!("PRAGMA synchronous={}", opts.sqlite_synchronous());
        if let Ok(c) = CString::new(sql) {
            ffi::sqlite3_exec(
                db,
                c.as_ptr(),
                None,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
        }
        ffi::SQLITE_OK
    }
}

/// `file:` URI for `path` with `opts` as parameters.
pub fn uri(path: &Path, opts: &WaldioOptions) -> String {
    let mut s = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match *b {
            b'%' | b'?' | b'#' | b'&' => s.push_str(&format!("%{b:02X}")),
            _ => s.push(*b as char),
        }
    }
    s.push('?');
    s.push_str(&opts.uri_params());
    s
}

/// Open `path` through `vfs` in WAL mode with `opts`. A database without the reserve is
/// refused before SQLite touches it.
pub fn open_with(
    vfs: WaldioVfs,
    path: &Path,
    opts: &WaldioOptions,
) -> Result<Connection, WaldioError> {
    // A message from an earlier, unrelated failure must not be attached to this open's error.
    vfs::clear_last_error();
    if let Some((_, reserve)) = vfs::db_header(path).map_err(|source| WaldioError::Io {
        what: format!("reading the header of {}", path.display()),
        source,
    })? {
        if reserve < layout::RESERVE_NEEDED {
            return Err(WaldioError::NoReserve {
                path: path.display().to_string(),
                reserve,
            });
        }
    }
    let sqlite = |what: &str, source: rusqlite::Error| WaldioError::Sqlite {
        what: format!("{what} {}", path.display()),
        source,
        detail: last_error(),
    };
    let conn = Connection::open_with_flags_and_vfs(
        uri(path, opts),
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        vfs.name(),
    )
    .map_err(|e| sqlite("opening", e))?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .map_err(|e| sqlite("setting journal_mode=WAL on", e))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(WaldioError::Sqlite {
            what: format!("setting journal_mode=WAL on {}", path.display()),
            source: rusqlite::Error::InvalidQuery,
            detail: Some(format!("SQLite kept journal_mode={mode}")),
        });
    }
    Ok(conn)
}

/// [`open_with`] on the default `waldio` VFS.
pub fn open(path: &Path, opts: &WaldioOptions) -> Result<Connection, WaldioError> {
    open_with(register()?, path, opts)
}

/// Page size and reserved bytes per page from a database file's header (`None`: no header).
pub fn db_header(path: &Path) -> Result<Option<(u32, u8)>, WaldioError> {
    vfs::db_header(path).map_err(|source| WaldioError::Io {
        what: format!("reading the header of {}", path.display()),
        source,
    })
}

/// The path of a database's WAL.
pub fn wal_path(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push("-wal");
    PathBuf::from(s)
}
