//! One-command conversion of an existing database for waldio: give every page the 24-byte
//! reserve the embedded frame headers need (`VACUUM` through SQLite's default VFS), then put
//! it in WAL mode through waldio. Nothing is lost: VACUUM is SQLite's own transactional copy.

use crate::handle::{WaldioError, db_header, existing_db_header, open};
use crate::layout;
use crate::options::WaldioOptions;
use libsqlite3_sys as ffi;
use rusqlite::Connection;
use std::ffi::{c_int, c_void};
use std::path::Path;

/// What [`convert`] found and did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ConvertReport {
    pub reserve_before: u8,
    pub reserve_after: u8,
    pub page_size: u32,
    /// `false` if the database already had the reserve (only the journal mode was set).
    pub vacuumed: bool,
}

/// Convert `path` (which must exist and be a SQLite database) for use with waldio.
pub fn convert(path: &Path) -> Result<ConvertReport, WaldioError> {
    let (page_size, reserve_before) = existing_db_header(path)?;
    const UNCHANGED: &str = "nothing was changed";
    const RESERVED: &str = "the reserve was added but WAL mode is not set yet: the database \
                            works as before; run the conversion again to finish";
    let sqlite = |what: &str, source| WaldioError::sqlite(what, path, UNCHANGED, source);
    let mut vacuumed = false;
    if reserve_before < layout::RESERVE_NEEDED {
        // The default VFS: a stock WAL, if any, is checkpointed by SQLite when leaving WAL mode.
        let conn = Connection::open(path).map_err(|e| sqlite("opening", e))?;
        conn.query_row("PRAGMA journal_mode=DELETE", [], |r| r.get::<_, String>(0))
            .map_err(|e| sqlite("leaving WAL mode on", e))?;
        let mut n: c_int = layout::RESERVE_NEEDED as c_int;
        // SAFETY: a live connection handle and a valid int out/in pointer.
        let rc = unsafe {
            ffi::sqlite3_file_control(
                conn.handle(),
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_RESERVE_BYTES,
                &mut n as *mut c_int as *mut c_void,
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(sqlite(
                "setting the reserve of",
                rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None),
            ));
        }
        conn.execute_batch("VACUUM")
            .map_err(|e| sqlite("VACUUM (adds the reserve) of", e))?;
        conn.close().map_err(|(_, e)| sqlite("closing", e))?;
        vacuumed = true;
    }
    let state = if vacuumed { RESERVED } else { UNCHANGED };
    let finishing = |what: &str, e: WaldioError| match e {
        WaldioError::Sqlite { source, .. } => WaldioError::sqlite(what, path, state, source),
        other => other,
    };
    let conn = open(path, &WaldioOptions::default())
        .map_err(|e| finishing("setting WAL mode through waldio on", e))?;
    conn.close()
        .map_err(|(_, e)| WaldioError::sqlite("closing", path, state, e))?;
    let (_, reserve_after) = db_header(path)?.unwrap_or((page_size, 0));
    Ok(ConvertReport {
        reserve_before,
        reserve_after,
        page_size,
        vacuumed,
    })
}
