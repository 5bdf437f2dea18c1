//! One-command conversion of an existing database for waldio: give every page the 24-byte
//! reserve the embedded frame headers need (`VACUUM` through SQLite's default VFS), then put
//! it in WAL mode through waldio. Nothing is lost: VACUUM is SQLite's own transactional copy.
//! It opens connections with [`RawConnection`], so it runs in the loadable extension too.

use crate::handle::{WaldioError, db_header, existing_db_header, register, uri};
use crate::layout;
use crate::options::WaldioOptions;
use joj_vfs::{RawConnection, ResultCode, SqliteError};
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

/// The files SQLite and waldio open beside a database, with what each is.
const COMPANIONS: [(&str, &str); 4] = [
    ("-journal", "rollback journal"),
    ("-wal", "WAL"),
    ("-shm", "WAL index"),
    ("-waldio", "waldio WAL"),
];

/// Refuse a companion name that holds anything but a regular file (a FIFO, a device, a
/// directory, a symbolic link): SQLite opens a `-journal` it finds to roll it back, and
/// opening a FIFO waits for a writer that never comes. Absent is fine.
fn check_companions(path: &Path) -> Result<(), WaldioError> {
    for (suffix, role) in COMPANIONS {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let companion = std::path::PathBuf::from(name);
        let kind = match std::fs::symlink_metadata(&companion) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => {
                return Err(WaldioError::Io {
                    what: format!("checking {}", companion.display()),
                    source,
                });
            }
            Ok(m) => {
                use std::os::unix::fs::FileTypeExt;
                let t = m.file_type();
                match () {
                    () if t.is_file() => continue,
                    () if t.is_symlink() => "a symbolic link",
                    () if t.is_fifo() => "a FIFO",
                    () if t.is_dir() => "a directory",
                    () if t.is_socket() => "a socket",
                    () => "a device",
                }
            }
        };
        return Err(WaldioError::NotAFile {
            path: companion.display().to_string(),
            kind,
            role,
        });
    }
    Ok(())
}

/// Convert `path` (which must exist and be a SQLite database) for use with waldio.
pub fn convert(path: &Path) -> Result<ConvertReport, WaldioError> {
    let (page_size, reserve_before) = existing_db_header(path)?;
    check_companions(path)?;
    const UNCHANGED: &str = "nothing was changed";
    const RESERVED: &str = "the reserve was added but WAL mode is not set yet: the database \
                            works as before; run the conversion again to finish";
    let sqlite = |what: &str, source| WaldioError::sqlite(what, path, UNCHANGED, source);
    let mut vacuumed = false;
    if reserve_before < layout::RESERVE_NEEDED {
        // The default VFS: a stock WAL, if any, is checkpointed by SQLite when leaving WAL mode.
        let mut conn = RawConnection::open(path, None).map_err(|e| sqlite("opening", e))?;
        conn.query("PRAGMA journal_mode=DELETE")
            .map_err(|e| sqlite("leaving WAL mode on", e))?;
        conn.set_reserve_bytes(layout::RESERVE_NEEDED)
            .map_err(|e| sqlite("setting the reserve of", e))?;
        conn.query("VACUUM")
            .map_err(|e| sqlite("VACUUM (adds the reserve) of", e))?;
        conn.close().map_err(|e| sqlite("closing", e))?;
        vacuumed = true;
    }
    let state = if vacuumed { RESERVED } else { UNCHANGED };
    let finishing = |what: &str, e| WaldioError::sqlite(what, path, state, e);
    let vfs = register()?;
    let name = uri(path, &WaldioOptions::default());
    let mut conn = RawConnection::open(Path::new(&name), Some(vfs.name()))
        .map_err(|e| finishing("opening through waldio", e))?;
    let mode = conn
        .query("PRAGMA journal_mode=WAL")
        .map_err(|e| finishing("setting WAL mode through waldio on", e))?;
    if !mode
        .as_deref()
        .is_some_and(|m| m.eq_ignore_ascii_case("wal"))
    {
        return Err(finishing(
            "setting WAL mode through waldio on",
            SqliteError::with_message(
                ResultCode::ERROR,
                format!("SQLite kept journal_mode={}", mode.unwrap_or_default()),
            ),
        ));
    }
    conn.close().map_err(|e| finishing("closing", e))?;
    let (_, reserve_after) = db_header(path)?.unwrap_or((page_size, 0));
    Ok(ConvertReport {
        reserve_before,
        reserve_after,
        page_size,
        vacuumed,
    })
}
