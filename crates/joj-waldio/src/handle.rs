//! The Rust API of the waldio VFS: registering it (over `unix` or another VFS), its handle
//! (defaults, counters, taps, observers, last error), and opening a database through it.

use crate::counters::WaldioCounters;
use crate::io::Tap;
use crate::options::WaldioOptions;
use crate::{sqlite_header, vfs};
use joj_vfs::{BaseVfs, Registered, ResultCode, SqliteError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Name of the VFS [`register`] installs (over SQLite's `unix` VFS).
pub const VFS_NAME: &str = "waldio";

/// Errors of the waldio layer's Rust API.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaldioError {
    #[error("registering the waldio VFS: {0}")]
    Vfs(#[from] joj_vfs::VfsError),
    #[error(
        "{path} keeps {reserve} reserved bytes per page; waldio needs at least 24. Convert it \
         once with `joj waldio convert {path}` (or joj_waldio::convert)"
    )]
    NoReserve { path: String, reserve: u8 },
    #[error("{what}: {source}{}", detail.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Sqlite {
        what: String,
        source: SqliteError,
        /// What the VFS said about it, when it said something.
        detail: Option<String>,
    },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("{path} does not exist; fix: give the path of an existing SQLite database file")]
    NotFound { path: String },
    #[error(
        "{path} is not a regular file ({kind}): SQLite would open it as the database's {role} \
         (and wait for ever on a FIFO); nothing was changed; fix: move it away: SQLite makes its \
         {role} itself, always as a regular file"
    )]
    NotAFile {
        path: String,
        kind: &'static str,
        role: &'static str,
    },
    #[error(
        "{path} is not a regular file ({kind}): a SQLite database is one; nothing was changed; \
         fix: give the path of the database file itself"
    )]
    DatabaseNotAFile { path: String, kind: &'static str },
    #[error(
        "{path} is not a SQLite database (its first 16 bytes are not 'SQLite format 3'); nothing \
         was changed; fix: give a SQLite database file"
    )]
    NotSqlite { path: String },
    #[error(
        "{path}: its header gives pages of {page_size} B with {reserve} reserved bytes each, \
         leaving {usable} usable bytes, fewer than the 480 SQLite needs (SQLite cannot open it \
         either); nothing was changed; fix: restore the database from a backup (its header is \
         damaged), or give the database meant"
    )]
    TooFewUsableBytes {
        path: String,
        page_size: u32,
        reserve: u8,
        usable: u32,
    },
    #[error(
        "{path} is {size_bytes} bytes, shorter than the {page_size}-byte first page its header \
         gives: the file is cut short; nothing was changed; fix: restore the database from a \
         backup, or give the database meant"
    )]
    ShorterThanAPage {
        path: String,
        size_bytes: u64,
        page_size: u32,
    },
    #[error(
        "{what} {path}: {source}; nothing was changed; fix: check the database with SQLite \
         (`sqlite3 {path} 'PRAGMA integrity_check'`), or restore it from a backup"
    )]
    Unreadable {
        what: String,
        path: String,
        source: SqliteError,
    },
    #[error(
        "{path} is locked by another connection (SQLite waited 5 s while {what}); {state}; \
         fix: close the programs using it (`fuser {path}` lists them), then retry"
    )]
    Busy {
        path: String,
        what: String,
        /// What had been done when the lock stopped it.
        state: &'static str,
    },
}

impl WaldioError {
    /// [`WaldioError::Sqlite`], or [`WaldioError::Busy`] (with `state`, what had been done)
    /// when another connection holds `path`.
    pub(crate) fn sqlite(
        what: &str,
        path: &Path,
        state: &'static str,
        source: SqliteError,
    ) -> WaldioError {
        match source.code().primary() {
            // `what` reads before the database's name ("VACUUM (adds the reserve) of"): here
            // the name comes first, so "it" stands for it.
            ResultCode::BUSY | ResultCode::LOCKED => WaldioError::Busy {
                path: path.display().to_string(),
                what: format!("{what} it"),
                state,
            },
            // The VFS's own message says why (a refusal's reason and fix), and `state` what
            // it left.
            _ => WaldioError::Sqlite {
                what: format!("{what} {}", path.display()),
                source,
                detail: Some(match last_error_on_this_thread() {
                    Some(why) => format!("{why}; {state}"),
                    None => state.to_string(),
                }),
            },
        }
    }
}

/// The page size and reserve of the existing SQLite database `path`; an error naming the fix
/// when it is missing or not a SQLite database.
pub fn existing_db_header(path: &Path) -> Result<(u32, u8), WaldioError> {
    let shown = || joj_trace::input::shown_path(path);
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(WaldioError::NotFound { path: shown() });
        }
        Err(source) => {
            return Err(WaldioError::Io {
                what: format!("reading {}", shown()),
                source,
            });
        }
        Ok(m) => {
            if let Some(kind) = not_a_file(m.file_type()) {
                return Err(WaldioError::DatabaseNotAFile {
                    path: shown(),
                    kind,
                });
            }
        }
    }
    db_header(path)?.ok_or_else(|| WaldioError::NotSqlite { path: shown() })
}

/// What a file of type `t` is when it is not a regular file, for a message.
pub(crate) fn not_a_file(t: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    match () {
        () if t.is_file() => None,
        () if t.is_symlink() => Some("a symbolic link"),
        () if t.is_fifo() => Some("a FIFO"),
        () if t.is_dir() => Some("a directory"),
        () if t.is_socket() => Some("a socket"),
        () => Some("a device"),
    }
}

/// Handle to one registered waldio VFS.
#[derive(Clone, Copy)]
pub struct WaldioVfs {
    reg: Registered<vfs::Waldio>,
}

impl WaldioVfs {
    fn inst(&self) -> &'static vfs::Waldio {
        self.reg.vfs()
    }

    /// The name to open connections with.
    pub fn name(&self) -> &'static str {
        self.reg.name()
    }

    /// Options for WALs whose name carries no `waldio_*` URI parameters.
    pub fn set_defaults(&self, opts: WaldioOptions) {
        vfs::write(&self.inst().defaults, opts);
    }

    pub fn defaults(&self) -> WaldioOptions {
        vfs::read(&self.inst().defaults)
    }

    /// Counters of every WAL this VFS handled (take a snapshot before and after, `delta`).
    pub fn counters(&self) -> WaldioCounters {
        self.inst().counters.snapshot()
    }

    /// See every physical write and sync (tests that rebuild crash states). `None` removes it.
    pub fn set_tap(&self, tap: Option<Arc<dyn Tap>>) {
        vfs::write(&self.inst().tap, tap);
    }

    /// Be told of WAL syncs (joj's measurement records file extents with it).
    pub fn set_observer(&self, observer: Option<Arc<dyn joj_vfs::FileObserver>>) {
        vfs::write(&self.inst().observer, observer);
    }

    /// The databases whose last log opened through this VFS was a rollback journal (not in WAL
    /// mode, so waldio is not in use for them), with how many rollback journals they opened
    /// (since they last opened a WAL, if they did). A database switched to WAL mode after its
    /// first journals (`PRAGMA journal_mode=WAL` is itself a rollback-journal transaction) is not
    /// listed.
    pub fn not_in_wal_mode(&self) -> Vec<(std::path::PathBuf, u64)> {
        joj_vfs::unpoisoned::lock(&self.inst().not_in_wal)
            .iter()
            .filter(|(_, logs)| !logs.wal_since)
            .map(|(p, logs)| (p.clone(), logs.rollback_journals))
            .collect()
    }

    /// The last error this VFS reported (SQLite only sees a result code).
    pub fn last_error(&self) -> Option<joj_vfs::LastError> {
        self.reg.errors().last()
    }
}

/// Every waldio VFS registered in this process.
static REGISTERED: Mutex<Vec<WaldioVfs>> = Mutex::new(Vec::new());

/// The last error any waldio VFS of this process reported (SQLite only sees a result code).
pub fn last_error() -> Option<String> {
    let reg = vfs::lock(&REGISTERED);
    reg.iter()
        .filter_map(WaldioVfs::last_error)
        .reduce(|a, b| if b.is_newer_than(&a) { b } else { a })
        .map(|e| e.message().to_string())
}

/// The last error any waldio VFS reported on the calling thread: what this thread's last failed
/// SQLite call through waldio was told, whatever other threads met since (as `errno`).
/// [`last_error`] is the process's newest, which in a program of several threads may be
/// another thread's.
pub fn last_error_on_this_thread() -> Option<String> {
    let reg = vfs::lock(&REGISTERED);
    reg.iter()
        .filter_map(|v| v.reg.errors().last_on_this_thread())
        .reduce(|a, b| if b.is_newer_than(&a) { b } else { a })
        .map(|e| e.message().to_string())
}

/// Forget the last errors every waldio VFS reported on the calling thread (before an open
/// whose error gets the message; other threads' errors are theirs to read).
pub(crate) fn clear_last_error_on_this_thread() {
    for v in vfs::lock(&REGISTERED).iter() {
        v.reg.errors().clear_on_this_thread();
    }
}

/// Register `waldio` over SQLite's `unix` VFS (once per process; later calls return it).
pub fn register() -> Result<WaldioVfs, WaldioError> {
    register_over(VFS_NAME, "unix")
}

/// Register a waldio VFS called `name` over the VFS `base` (e.g. joj's accounting `joj`).
/// New databases on it get the 24-byte reserve when SQLite creates them. Calling it again
/// (after `sqlite3_shutdown`, which clears SQLite's auto-extensions) installs joj-vfs's connect
/// hook again.
pub fn register_over(name: &str, base: &str) -> Result<WaldioVfs, WaldioError> {
    let mut reg = vfs::lock(&REGISTERED);
    if let Some(v) = reg.iter().find(|v| v.name() == name) {
        // Registering again installs joj-vfs's connect hook again (after sqlite3_shutdown).
        joj_vfs::register_vfs(name, |errors| vfs::Waldio::new(v.reg.vfs().base, errors))?;
        return Ok(*v);
    }
    let base_vfs = BaseVfs::find(base).ok_or_else(|| joj_vfs::VfsError::NoBaseVfs {
        name: base.to_string(),
    })?;
    let handle = WaldioVfs {
        reg: joj_vfs::register_vfs(name, |errors| vfs::Waldio::new(base_vfs, errors))?,
    };
    reg.push(handle);
    Ok(handle)
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

/// Page size and reserved bytes per page from a database file's header (`None`: no header).
pub fn db_header(path: &Path) -> Result<Option<(u32, u8)>, WaldioError> {
    let header = sqlite_header::read(path).map_err(|source| WaldioError::Io {
        what: format!(
            "reading the header of {}",
            joj_trace::input::shown_path(path)
        ),
        source,
    })?;
    Ok(header.map(|h| (h.page_size, h.reserve)))
}

/// The file waldio keeps a database's WAL in: `<db>-waldio` (SQLite calls it `<db>-wal`, see
/// [`sqlite_wal_path`]; the VFS maps one to the other).
pub fn wal_path(db: &Path) -> PathBuf {
    vfs::physical_wal(&sqlite_wal_path(db))
}

/// The name SQLite gives a database's WAL, `<db>-wal`: where a stock SQLite keeps its WAL.
pub fn sqlite_wal_path(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push("-wal");
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock met while converting reads as a sentence (it read "while VACUUM (adds the
    /// reserve) of)", the object missing; found by a VFS-contract probe of 2026-11-29).
    #[test]
    fn a_busy_database_is_named_in_a_whole_sentence() {
        let e = WaldioError::sqlite(
            "VACUUM (adds the reserve) of",
            Path::new("/tmp/b.db"),
            "nothing was changed",
            SqliteError::new(ResultCode::BUSY),
        )
        .to_string();
        assert!(e.contains("while VACUUM (adds the reserve) of it);"), "{e}");
    }
}
