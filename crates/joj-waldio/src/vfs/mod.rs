//! The `waldio` VFS on joj-vfs's seam: the `-wal` file is a [`WalFile`] over the process's one
//! [`WalState`](crate::WalState) of that file (`shared_wal`); every other file passes through to
//! the base VFS (`unix`, or joj's accounting `joj`) unchanged. New connections get the 24-byte
//! reserve and the `PRAGMA synchronous` their durability option needs (`on_connect`).

mod file;
mod instance;
mod pass_through;
mod shared_wal;
mod wal_file;
mod wal_name;

pub(crate) use wal_name::physical as physical_wal;

pub(crate) use instance::{Waldio, lock, read, write};

use crate::db_mark;
use crate::layout::RESERVE_NEEDED;
use crate::options;
use crate::sqlite_header;
use crate::wal::WalError;
use file::WaldioFile;
use joj_vfs::{
    Access, BaseVfs, Connecting, FileKind, FileName, OpenFlags, ResultCode, SqliteError, Vfs,
};
use pass_through::PassThrough;
use shared_wal::{open_shared, with_existing_wal};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use wal_file::WalFile;

/// Why a database without the reserve cannot have a waldio WAL, and the fixes.
fn no_reserve_message(db: &Path, page_size: u32, reserve: u8) -> String {
    format!(
        "{} keeps {reserve} reserved bytes per page; waldio needs at least {RESERVE_NEEDED} for \
         the embedded frame headers (page size {page_size}). Convert it once with `joj waldio \
         convert {}` or the extension's `SELECT waldio_convert('{}')` from a connection not on \
         waldio (VACUUM with a 24-byte reserve), or open it without the waldio VFS",
        db.display(),
        db.display(),
        db.display()
    )
}

fn is_wal_name(path: &Path) -> bool {
    path.as_os_str().as_bytes().ends_with(b"-wal")
}

impl Waldio {
    fn open_wal(
        &'static self,
        name: &FileName<'_>,
        flags: OpenFlags,
    ) -> Result<WalFile, SqliteError> {
        let opts = self
            .options_for(name)
            .map_err(|e| SqliteError::with_message(ResultCode::CANTOPEN, e.to_string()))?;
        // The database must keep the reserve the frame headers live in.
        let mut mode = 0o644;
        if let Some(db_path) = name.database_path() {
            match sqlite_header::read(&db_path) {
                Ok(Some(h)) if h.reserve < RESERVE_NEEDED => {
                    return Err(SqliteError::with_message(
                        ResultCode::CANTOPEN,
                        no_reserve_message(&db_path, h.page_size, h.reserve),
                    ));
                }
                Ok(_) => {}
                Err(e) => {
                    return Err(SqliteError::with_message(
                        ResultCode::CANTOPEN,
                        format!("reading the header of {}: {e}", db_path.display()),
                    ));
                }
            }
            if let Ok(md) = std::fs::metadata(&db_path) {
                use std::os::unix::fs::PermissionsExt;
                mode = md.permissions().mode() & 0o777;
            }
        }
        // Only now (the database may have this WAL): move an old one, refuse a stock one.
        let logical = name.path();
        let physical = wal_name::settle(logical).map_err(|e| {
            SqliteError::with_message(
                shared_wal::code_of(&e, ResultCode::CANTOPEN),
                format!("{}: {e}", logical.display()),
            )
        })?;
        let shared = open_shared(self, &physical, flags.create(), mode, opts)?;
        // The WAL is waldio's (or new): mark the database before any frame can be written.
        if let Some(db_path) = name.database_path() {
            db_mark::ensure(&db_path).map_err(|e| {
                SqliteError::with_message(
                    ResultCode::CANTOPEN,
                    format!(
                        "marking {} as a waldio database (byte 19 of its header, so that a \
                         SQLite without waldio refuses it): {e}; fix: make the database file \
                         writable",
                        db_path.display()
                    ),
                )
            })?;
        }
        Ok(WalFile { inst: self, shared })
    }
}

impl Vfs for Waldio {
    type File = WaldioFile;

    fn open(
        &'static self,
        name: Option<&FileName<'_>>,
        flags: OpenFlags,
    ) -> Result<(WaldioFile, OpenFlags), SqliteError> {
        if let (FileKind::Wal, Some(name)) = (flags.kind(), name) {
            return Ok((WaldioFile::Wal(self.open_wal(name, flags)?), flags));
        }
        let (base, out) = self.base.open(name, flags)?;
        let file = PassThrough {
            inst: self,
            base,
            path: name.map(|n| n.path().to_path_buf()),
            main_db: flags.kind() == FileKind::MainDb,
        };
        Ok((WaldioFile::PassThrough(file), out))
    }

    fn delete(&self, path: &Path, sync_dir: bool) -> Result<(), SqliteError> {
        if is_wal_name(path) {
            match with_existing_wal(self, &wal_name::physical(path), |st| st.mark_absent()) {
                Ok(Some(())) => return Ok(()),
                // No waldio WAL, or not a waldio file: the base VFS deletes what is at SQLite's
                // name, as SQLite asked (or answers that nothing is there).
                Ok(None) | Err(WalError::StockWal | WalError::Foreign) => {}
                Err(e) => {
                    return Err(SqliteError::with_message(
                        ResultCode::IOERR_DELETE,
                        format!("marking {} absent: {e}", path.display()),
                    ));
                }
            }
        }
        self.base.delete(path, sync_dir)?;
        if let Some(tap) = self.tap() {
            tap.delete(path);
        }
        Ok(())
    }

    fn access(&self, path: &Path, check: Access) -> Result<bool, SqliteError> {
        if check == Access::Exists && is_wal_name(path) {
            let physical = wal_name::physical(path);
            let size = std::fs::metadata(&physical).map(|m| m.len()).unwrap_or(0);
            if size == 0 {
                // Something at SQLite's own name (an old waldio WAL to move, a stock WAL to
                // refuse) is present: opening it settles which.
                let there = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
                return Ok(there > 0);
            }
            return match with_existing_wal(self, &physical, |st| st.exists()) {
                Ok(v) => Ok(v.unwrap_or(false)),
                // Someone else's WAL: report it present so opening it gives the error.
                Err(WalError::StockWal | WalError::Foreign | WalError::NewerVersion(_)) => Ok(true),
                Err(e) => Err(SqliteError::with_message(
                    ResultCode::IOERR_ACCESS,
                    format!("checking {}: {e}", path.display()),
                )),
            };
        }
        self.base.access(path, check)
    }

    fn delegate(&self) -> Option<BaseVfs> {
        Some(self.base)
    }

    /// Ask for the 24-byte reserve (new databases get it) and set `PRAGMA synchronous` to what
    /// the durability option needs. Refused here, with the message as the open's error: options
    /// waldio cannot use, and a database in WAL mode without the reserve (its WAL could never
    /// be opened).
    fn on_connect(&self, conn: &mut Connecting<'_>) -> Result<(), SqliteError> {
        conn.request_reserve_bytes(RESERVE_NEEDED);
        let refused = |m: String| SqliteError::with_message(ResultCode::CANTOPEN, m);
        let keys = conn.uri_keys();
        let opts = options::check_uri_keys(keys.iter().map(String::as_str))
            .and_then(|()| {
                self.defaults()
                    .with_uri_params(|key| conn.uri_parameter(key))
            })
            .map_err(|e| refused(e.to_string()))?;
        if let Some(db) = conn.database_path() {
            if let Ok(Some(h)) = sqlite_header::read(&db) {
                if h.wal_mode && h.reserve < RESERVE_NEEDED {
                    return Err(refused(no_reserve_message(&db, h.page_size, h.reserve)));
                }
            }
        }
        // The pragma reads the schema, so it fails on a database or WAL waldio refuses. The
        // open goes on: the application's first statement meets the same refusal, with the
        // VFS's message as the last error (failing here would replace it with this one).
        let _ = conn.execute(&format!("PRAGMA synchronous={}", opts.sqlite_synchronous()));
        Ok(())
    }
}
