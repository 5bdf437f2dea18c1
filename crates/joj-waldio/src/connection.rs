//! Opening a database through waldio with rusqlite (the Rust API; the loadable extension has no
//! rusqlite and opens through the loading SQLite).

use crate::handle::{
    WaldioError, WaldioVfs, clear_last_error_on_this_thread, db_header, last_error_on_this_thread,
    register, uri,
};
use crate::layout;
use crate::options::WaldioOptions;
use joj_vfs::{ResultCode, SqliteError};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// rusqlite's error as the code and message SQLite gave.
pub(crate) fn from_rusqlite(e: rusqlite::Error) -> SqliteError {
    match &e {
        rusqlite::Error::SqliteFailure(f, msg) => SqliteError::with_message(
            ResultCode::from_raw(f.extended_code),
            msg.clone().unwrap_or_else(|| f.to_string()),
        ),
        _ => SqliteError::with_message(ResultCode::ERROR, e.to_string()),
    }
}

/// Open `path` through `vfs` in WAL mode with `opts`. A database without the reserve is
/// refused before SQLite touches it.
pub fn open_with(
    vfs: WaldioVfs,
    path: &Path,
    opts: &WaldioOptions,
) -> Result<Connection, WaldioError> {
    // A message from an earlier, unrelated failure must not be attached to this open's error,
    // nor one another thread met meanwhile: the VFS runs this open's calls on this thread.
    clear_last_error_on_this_thread();
    if let Some((_, reserve)) = db_header(path)? {
        if reserve < layout::RESERVE_NEEDED {
            return Err(WaldioError::NoReserve {
                path: path.display().to_string(),
                reserve,
            });
        }
    }
    let sqlite = |what: &str, source: rusqlite::Error| WaldioError::Sqlite {
        what: format!("{what} {}", path.display()),
        source: from_rusqlite(source),
        detail: last_error_on_this_thread(),
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
            source: SqliteError::new(ResultCode::ERROR),
            detail: Some(format!("SQLite kept journal_mode={mode}")),
        });
    }
    Ok(conn)
}

/// [`open_with`] on the default `waldio` VFS.
pub fn open(path: &Path, opts: &WaldioOptions) -> Result<Connection, WaldioError> {
    open_with(register()?, path, opts)
}
