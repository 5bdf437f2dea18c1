//! The extension's VFSs and SQL functions.
//!
//! | function | returns |
//! |---|---|
//! | `joj_version()` | the extension's version |
//! | `joj_counters()` | JSON: the accounting VFS `joj`'s counters since the extension was loaded |
//! | `waldio_state([path])` | JSON: waldio's default options, counters and last error; with a database path, its header as waldio sees it |
//! | `waldio_convert(path)` | JSON: gives an existing database waldio's 24-byte reserve (VACUUM) and puts it in WAL mode through waldio |
//! | `joj_make_default(vfs [, options])` | makes `waldio` or `joj` the process's default VFS; returns the previous default's name. For `waldio`, `options` (URI parameters, `&`-joined: `'waldio_journal=wal'`) become its defaults |
//!
//! Every function's work is a plain Rust function of its text arguments; one trampoline turns
//! it into a SQLite function.

use crate::sql;
use joj_vfs::BaseVfs;
use libsqlite3_sys as ffi;
use serde_json::json;
use std::ffi::{CString, c_char, c_int, c_void};
use std::path::Path;

/// Why a SQL function (or loading the extension) failed; the text is what SQLite reports.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExtError {
    #[error("joj: registering the accounting VFS joj: {0}")]
    AccountingVfs(joj_vfs::VfsError),
    #[error("joj: registering the waldio VFS: {0}")]
    WaldioVfs(joj_waldio::WaldioError),
    #[error("{function}: {source}")]
    Waldio {
        function: &'static str,
        source: joj_waldio::WaldioError,
    },
    #[error("waldio_state: reading {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("waldio_convert: give the database's path, e.g. waldio_convert('app.db')")]
    NoPath,
    #[error(
        "argument {index} holds a NUL byte: no path or option can; fix: pass the text without it"
    )]
    NulInArgument { index: usize },
    #[error(
        "argument {index} is not UTF-8 text: joj's functions take paths and options as UTF-8; \
         fix: rename the file, or pass its name as UTF-8"
    )]
    NotUtf8Argument { index: usize },
    #[error(
        "joj_make_default: {} is not one of joj's VFSs; give 'waldio' or 'joj'",
        joj_trace::input::quoted(.0)
    )]
    NotOurVfs(String),
    #[error("joj_make_default: {0}")]
    MakeDefault(joj_vfs::SqliteError),
    #[error(
        "joj_make_default: options are waldio's; give them only with 'waldio', e.g. \
         joj_make_default('waldio', 'waldio_journal=wal')"
    )]
    OptionsForJoj,
    #[error(
        "joj_make_default: {0}; options are URI parameters joined by &, e.g. 'waldio_journal=wal&waldio_sync=full'"
    )]
    Options(joj_waldio::OptionsError),
    #[error("joj: encoding JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("joj: internal error (a panic) in a SQL function")]
    Panic,
}

/// A SQL function's work: its arguments as text, its JSON or text result or the error.
type Work = fn(&[Option<String>]) -> Result<String, ExtError>;

struct Function {
    name: &'static str,
    /// Argument counts it accepts.
    args: &'static [c_int],
    /// Changes files or the process: not from triggers or views (`SQLITE_DIRECTONLY`).
    direct_only: bool,
    work: Work,
}

const FUNCTIONS: &[Function] = &[
    Function {
        name: "joj_version",
        args: &[0],
        direct_only: false,
        work: |_| Ok(env!("CARGO_PKG_VERSION").to_string()),
    },
    Function {
        name: "joj_counters",
        args: &[0],
        direct_only: false,
        work: |_| counters(),
    },
    Function {
        name: "waldio_state",
        args: &[0, 1],
        direct_only: false,
        work: waldio_state,
    },
    Function {
        name: "waldio_convert",
        args: &[1],
        direct_only: true,
        work: waldio_convert,
    },
    Function {
        name: "joj_make_default",
        args: &[1, 2],
        direct_only: true,
        work: make_default,
    },
];

/// Register `joj` (accounting) and `waldio` (over SQLite's `unix`) in the loading SQLite, once.
pub(crate) fn register_vfss() -> Result<(), ExtError> {
    joj_vfs::register().map_err(ExtError::AccountingVfs)?;
    joj_waldio::register().map_err(ExtError::WaldioVfs)?;
    Ok(())
}

fn json_text(v: serde_json::Value) -> Result<String, ExtError> {
    Ok(serde_json::to_string(&v)?)
}

fn counters() -> Result<String, ExtError> {
    let vfs = joj_vfs::register().map_err(ExtError::AccountingVfs)?;
    json_text(json!({
        "vfs": joj_vfs::VFS_NAME,
        "sync_call": vfs.sync_call(),
        "counters": vfs.counters(),
    }))
}

fn waldio_state(args: &[Option<String>]) -> Result<String, ExtError> {
    let vfs = joj_waldio::register().map_err(ExtError::WaldioVfs)?;
    let mut state = json!({
        "vfs": vfs.name(),
        "defaults": vfs.defaults(),
        "counters": vfs.counters(),
        "last_error": vfs.last_error().map(|e| e.message().to_string()),
        // Databases that committed through a rollback journal under waldio: not in WAL mode,
        // so waldio is not in use for them.
        "not_in_wal_mode": vfs
            .not_in_wal_mode()
            .into_iter()
            .map(|(path, n)| json!({ "path": path, "rollback_journal_opens": n }))
            .collect::<Vec<_>>(),
    });
    if let Some(Some(path)) = args.first() {
        let path = Path::new(path);
        // The header only: the database may be large.
        let marked = joj_waldio::db_mark::is_marked(path).map_err(|source| ExtError::Read {
            path: joj_trace::input::shown_path(path),
            source,
        })?;
        let header = joj_waldio::db_header(path).map_err(|source| ExtError::Waldio {
            function: "waldio_state",
            source,
        })?;
        let wal = joj_waldio::wal_path(path);
        state["database"] = json!({
            "path": path,
            "page_size": header.map(|h| h.0),
            "reserve": header.map(|h| h.1),
            "marked": marked,
            "wal_bytes": std::fs::metadata(&wal).map(|m| m.len()).ok(),
        });
    }
    json_text(state)
}

fn waldio_convert(args: &[Option<String>]) -> Result<String, ExtError> {
    let Some(Some(path)) = args.first() else {
        return Err(ExtError::NoPath);
    };
    let report = joj_waldio::convert(Path::new(path)).map_err(|source| ExtError::Waldio {
        function: "waldio_convert",
        source,
    })?;
    json_text(json!(report))
}

fn make_default(args: &[Option<String>]) -> Result<String, ExtError> {
    let name = args.first().cloned().flatten().unwrap_or_default();
    let vfs = match BaseVfs::find(&name) {
        Some(v) if name == joj_waldio::VFS_NAME || name == joj_vfs::VFS_NAME => v,
        _ => return Err(ExtError::NotOurVfs(name)),
    };
    if let Some(Some(options)) = args.get(1) {
        if name != joj_waldio::VFS_NAME {
            return Err(ExtError::OptionsForJoj);
        }
        let waldio = joj_waldio::register().map_err(ExtError::WaldioVfs)?;
        let pairs: Vec<(&str, &str)> = options
            .split('&')
            .filter(|kv| !kv.is_empty())
            .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
            .collect();
        if let Some((key, _)) = pairs
            .iter()
            .find(|(k, _)| !joj_waldio::options::URI_KEYS.contains(k))
        {
            return Err(ExtError::Options(joj_waldio::OptionsError::UnknownKey {
                key: key.to_string(),
            }));
        }
        joj_waldio::options::check_uri_keys(pairs.iter().map(|(k, _)| *k))
            .map_err(ExtError::Options)?;
        let defaults = waldio
            .defaults()
            .with_uri_params(|key| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, v)| v.to_string())
            })
            .map_err(ExtError::Options)?;
        waldio.set_defaults(defaults);
    }
    let previous = BaseVfs::default_vfs().map(|v| v.name()).unwrap_or_default();
    vfs.make_default().map_err(ExtError::MakeDefault)?;
    Ok(previous)
}

/// An argument's text, whole: text holding a NUL byte, or bytes that are not UTF-8, is refused
/// naming the argument (`i` from 0). (Read as a C string, a path `'a.db' || char(0) || '.x'`
/// named `a.db`; with its bytes replaced, a name that is not UTF-8 named another file.)
fn arg_text(bytes: Option<Vec<u8>>, i: usize) -> Result<Option<String>, ExtError> {
    let Some(bytes) = bytes else {
        return Ok(None);
    };
    if bytes.contains(&0) {
        return Err(ExtError::NulInArgument { index: i + 1 });
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| ExtError::NotUtf8Argument { index: i + 1 })
}

/// The one C entry point of every function: runs its [`Work`] (the user data) on the
/// arguments, returns its text or its error.
unsafe extern "C" fn trampoline(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: the user data registered with this function is its `Work`.
    let work: Work =
        unsafe { std::mem::transmute::<*mut c_void, Work>(ffi::sqlite3_user_data(ctx)) };
    let n = usize::try_from(argc).unwrap_or(0);
    // SAFETY: SQLite passes `argc` values.
    let args: Result<Vec<Option<String>>, ExtError> = (0..n)
        .map(|i| arg_text(unsafe { sql::arg_bytes(argv, i) }, i))
        .collect();
    let out = args
        .and_then(|args| std::panic::catch_unwind(|| work(&args)).unwrap_or(Err(ExtError::Panic)));
    // SAFETY: the current call's context.
    unsafe {
        match out {
            Ok(text) => sql::result_text(ctx, &text),
            Err(e) => sql::result_error(ctx, &e.to_string()),
        }
    }
}

/// Add every function to `db`.
///
/// # Safety
/// `db` is a live connection; `err` is null or SQLite's error out pointer.
pub(crate) unsafe fn add_to(db: *mut ffi::sqlite3, err: *mut *mut c_char) -> c_int {
    for f in FUNCTIONS {
        let name = CString::new(f.name).expect("function names have no NUL");
        let flags = ffi::SQLITE_UTF8
            | if f.direct_only {
                ffi::SQLITE_DIRECTONLY
            } else {
                0
            };
        for &n in f.args {
            // SAFETY: a live connection, a static function pointer as user data, no destructor.
            let rc = unsafe {
                ffi::sqlite3_create_function_v2(
                    db,
                    name.as_ptr(),
                    n,
                    flags,
                    f.work as *mut c_void,
                    Some(trampoline),
                    None,
                    None,
                    None,
                )
            };
            // SQLITE_BUSY: the function exists on this connection and a statement is running
            // (the extension loaded again from SQL): the one there stays.
            if rc != ffi::SQLITE_OK && rc != ffi::SQLITE_BUSY {
                // SAFETY: as the caller promised.
                unsafe {
                    sql::set_error(
                        err,
                        &format!("joj: registering {}(): SQLite code {rc}", f.name),
                    )
                };
                return rc;
            }
        }
    }
    ffi::SQLITE_OK
}

/// For connections opened later: add the functions.
unsafe extern "C" fn on_new_connection(
    db: *mut ffi::sqlite3,
    err: *mut *mut c_char,
    _api: *const ffi::sqlite3_api_routines,
) -> c_int {
    // SAFETY: the connection SQLite is opening.
    unsafe { add_to(db, err) }
}

/// Register [`on_new_connection`] as an auto-extension.
///
/// # Safety
/// The API table is bound.
pub(crate) unsafe fn install_for_new_connections() {
    // SAFETY: the table declares the entry point as `void (*)(void)`, as sqlite3.h does; SQLite
    // calls it with the auto-extension signature it has.
    unsafe {
        ffi::sqlite3_auto_extension(Some(std::mem::transmute::<
            unsafe extern "C" fn(
                *mut ffi::sqlite3,
                *mut *mut c_char,
                *const ffi::sqlite3_api_routines,
            ) -> c_int,
            unsafe extern "C" fn(),
        >(on_new_connection)));
    }
}
