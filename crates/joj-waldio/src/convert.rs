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

/// The files SQLite and waldio make beside a database, by the suffix appended to its name, with
/// what each is: every name a database's journal modes — stock or waldio — may create, roll
/// back, reset or delete. (SQLite's super-journal of a transaction over attached databases,
/// `-mj` and random hex digits, is not here: SQLite picks a name nothing has, and deletes only
/// that one.)
pub const COMPANIONS: [(&str, &str); 4] = [
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
            Ok(m) => match crate::handle::not_a_file(m.file_type()) {
                None => continue,
                Some(kind) => kind,
            },
        };
        return Err(WaldioError::NotAFile {
            path: companion.display().to_string(),
            kind,
            role,
        });
    }
    Ok(())
}

/// The fewest usable bytes per page (page size less reserve) SQLite opens a database with.
const MIN_USABLE_BYTES: u32 = 480;

/// Refuse, before anything is written, a header SQLite itself would refuse: too few usable
/// bytes per page, or a file shorter than its first page. Opening such a file through waldio
/// would mark its header and make a `-waldio` before SQLite said no.
fn check_header(path: &Path, page_size: u32, reserve: u8) -> Result<(), WaldioError> {
    let shown = || joj_trace::input::shown_path(path);
    let usable = page_size.saturating_sub(u32::from(reserve));
    if usable < MIN_USABLE_BYTES {
        return Err(WaldioError::TooFewUsableBytes {
            path: shown(),
            page_size,
            reserve,
            usable,
        });
    }
    let size_bytes = std::fs::metadata(path)
        .map_err(|source| WaldioError::Io {
            what: format!("reading {}", shown()),
            source,
        })?
        .len();
    if size_bytes < u64::from(page_size) {
        return Err(WaldioError::ShorterThanAPage {
            path: shown(),
            size_bytes,
            page_size,
        });
    }
    Ok(())
}

/// What the waldio step may change of a database that was not vacuumed, taken before it: the
/// header's read version (waldio marks a WAL database on open) and whether a `-waldio` was
/// there. [`Before::restore`] puts them back when the step fails.
struct Before {
    read_version: Option<u8>,
    waldio_existed: bool,
}

impl Before {
    const READ_VERSION: u64 = 19;

    fn take(path: &Path) -> Before {
        let mut h = [0u8; 100];
        let read_version = joj_vfs::locksafe::read_head(path, &mut h)
            .ok()
            .filter(|&n| n == h.len())
            .map(|_| h[Self::READ_VERSION as usize]);
        Before {
            read_version,
            waldio_existed: crate::wal_path(path).exists(),
        }
    }

    /// Best effort: the error being reported matters more than one failing here.
    fn restore(&self, path: &Path) {
        if let Some(rv) = self.read_version {
            if crate::db_mark::is_marked(path).unwrap_or(false) && rv != crate::db_mark::MARK {
                // Not through a descriptor of the process's own: run as an extension, the
                // application may hold locks on this file, which its close would drop.
                let _ = joj_vfs::locksafe::write_at(path, Self::READ_VERSION, &[rv]);
            }
        }
        let wal = crate::wal_path(path);
        if !self.waldio_existed
            && std::fs::metadata(&wal).is_ok_and(|m| m.is_file() && m.len() == 0)
        {
            let _ = std::fs::remove_file(&wal);
        }
    }
}

/// Convert `path` (which must exist and be a SQLite database) for use with waldio.
pub fn convert(path: &Path) -> Result<ConvertReport, WaldioError> {
    // An earlier, unrelated failure's message must not be given as this conversion's reason.
    crate::handle::clear_last_error_on_this_thread();
    let (page_size, reserve_before) = existing_db_header(path)?;
    check_header(path, page_size, reserve_before)?;
    check_companions(path)?;
    const UNCHANGED: &str = "nothing was changed";
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
    let before = (!vacuumed).then(|| Before::take(path));
    match to_wal(path, vacuumed) {
        Ok(()) => {}
        Err(e) => {
            if let Some(before) = &before {
                before.restore(path);
            }
            return Err(e);
        }
    }
    let (_, reserve_after) = db_header(path)?.unwrap_or((page_size, 0));
    Ok(ConvertReport {
        reserve_before,
        reserve_after,
        page_size,
        vacuumed,
    })
}

/// Put `path` in WAL mode through waldio. A database SQLite finds damaged is said as such,
/// with the fix, when nothing had been done before (`vacuumed` false).
fn to_wal(path: &Path, vacuumed: bool) -> Result<(), WaldioError> {
    const UNCHANGED: &str = "nothing was changed";
    const RESERVED: &str = "the reserve was added but WAL mode is not set yet: the database \
                            works as before; run the conversion again to finish";
    let state = if vacuumed { RESERVED } else { UNCHANGED };
    let finishing = |what: &str, e: SqliteError| match e.code().primary() {
        ResultCode::NOTADB | ResultCode::CORRUPT if !vacuumed => WaldioError::Unreadable {
            what: what.to_string(),
            path: path.display().to_string(),
            source: e,
        },
        _ => WaldioError::sqlite(what, path, state, e),
    };
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
    conn.close().map_err(|e| finishing("closing", e))
}
