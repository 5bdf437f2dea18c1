//! How a workload meets SQLite: [`SqliteSetup`] (the VFS its connections open through and the
//! pragmas that decide SQLite's log), opening and creating databases with it, and turning
//! SQLite's errors into [`WorkloadError`]s.

use crate::config::{SqliteJournal, Synchronous};
use crate::error::{ConfigError, WorkloadError};
use crate::made::{Made, MadeFile};
use rusqlite::{Connection, OpenFlags};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// What SQLite is told for a run. An experiment's stack resolves a journal mode into this; the
/// generators apply it as given and never look at the mode itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteSetup {
    /// The registered VFS every connection opens through (`unix`, joj's `joj`, `waldio`, ...).
    pub vfs: String,
    pub journal: SqliteJournal,
    pub synchronous: Synchronous,
}

impl SqliteSetup {
    /// SQLite's own journal mode `journal` on the VFS `vfs`.
    pub fn new(vfs: &str, journal: SqliteJournal, synchronous: Synchronous) -> SqliteSetup {
        SqliteSetup {
            vfs: vfs.to_string(),
            journal,
            synchronous,
        }
    }
}

/// Maps a SQLite error to a [`WorkloadError`] that says what was being done; a full disk
/// becomes [`WorkloadError::DiskFull`].
pub fn sql_err(what: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> WorkloadError {
    let what = what.into();
    move |source| {
        if source.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
            WorkloadError::DiskFull { what }
        } else {
            WorkloadError::Sqlite { what, source }
        }
    }
}

/// Open `path` read-write (created if missing) through `vfs`, one connection per thread.
pub fn open(path: &Path, vfs: &str) -> Result<Connection, WorkloadError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags_and_vfs(path, flags, vfs).map_err(|e| WorkloadError::Sqlite {
        what: format!("opening {}", path.display()),
        source: e,
    })
}

/// Whether anything — a file, a directory, a FIFO, a symbolic link even to nothing — is at
/// `path`.
pub fn taken(path: &Path) -> Result<bool, WorkloadError> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(WorkloadError::Io {
            what: format!("checking whether {} is free", path.display()),
            source,
        }),
    }
}

/// Refuses, before anything is made, databases `paths` of which any — or any file SQLite or
/// waldio would keep beside one of them ([`joj_waldio::COMPANIONS`]) — is already there: joj
/// never writes into a database it did not create, and SQLite rolls back, resets or deletes a
/// journal it finds beside a database, so every name a run may write or delete must be free.
pub fn check_free(paths: &[PathBuf]) -> Result<(), WorkloadError> {
    for database in paths {
        if taken(database)? {
            return Err(ConfigError::DatabaseExists(database.clone()).into());
        }
        for (suffix, role) in joj_waldio::COMPANIONS {
            let mut name = database.as_os_str().to_owned();
            name.push(suffix);
            let path = PathBuf::from(name);
            if taken(&path)? {
                return Err(ConfigError::CompanionExists {
                    path,
                    database: database.clone(),
                    role,
                }
                .into());
            }
        }
    }
    Ok(())
}

/// A new, empty database file at `path` with `page_size`, in WAL mode when the setup uses it.
/// joj never writes into a database it did not create (nor beside one: [`check_free`]).
pub fn create(
    path: &Path,
    setup: &SqliteSetup,
    page_size: u32,
) -> Result<Connection, WorkloadError> {
    create_made(path, setup, page_size, None)
}

/// [`create`]; with `made`, the file is first created here on the host (`O_EXCL`: never one
/// that appeared since [`check_free`] looked, nor through a link) and recorded in `made`, so
/// that the run can remove it at its end. `made` is for a database in a host directory only:
/// a VFS that keeps its files elsewhere (an emulated device) has no host file at `path`.
pub fn create_made(
    path: &Path,
    setup: &SqliteSetup,
    page_size: u32,
    made: Option<&mut Made>,
) -> Result<Connection, WorkloadError> {
    check_free(&[path.to_path_buf()])?;
    if let Some(made) = made {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(path)
            .map_err(|source| {
                if source.kind() == std::io::ErrorKind::AlreadyExists {
                    WorkloadError::from(ConfigError::DatabaseExists(path.to_path_buf()))
                } else {
                    WorkloadError::Io {
                        what: format!("creating {}", path.display()),
                        source,
                    }
                }
            })?;
        made.database(
            MadeFile::of(path, &file).map_err(|source| WorkloadError::Io {
                what: format!("reading what {} is", path.display()),
                source,
            })?,
        );
    }
    let conn = open(path, &setup.vfs)?;
    conn.execute_batch(&format!("PRAGMA page_size={page_size};"))
        .map_err(sql_err("setting page_size"))?;
    if setup.journal.is_wal() {
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .map_err(sql_err("setting journal_mode=WAL"))?;
    }
    Ok(conn)
}

/// Set the setup's journal mode and synchronous level on `schema` of `conn`.
pub fn apply(conn: &Connection, schema: &str, setup: &SqliteSetup) -> Result<(), WorkloadError> {
    let asked = setup.journal.pragma();
    let answered: String = conn
        .query_row(&format!("PRAGMA {schema}.journal_mode={asked}"), [], |r| {
            r.get(0)
        })
        .map_err(sql_err("setting journal_mode"))?;
    if !answered.eq_ignore_ascii_case(asked) {
        return Err(WorkloadError::JournalModeRefused {
            schema: schema.to_string(),
            asked,
            answered,
        });
    }
    conn.execute_batch(&format!(
        "PRAGMA {schema}.synchronous={};",
        setup.synchronous.pragma()
    ))
    .map_err(sql_err("setting synchronous"))
}

/// Turn SQLite's automatic WAL checkpoints off on `conn` (a WAL setup only); returns the
/// setting to restore with [`restart_wal`].
pub fn pause_autocheckpoint(
    conn: &Connection,
    setup: &SqliteSetup,
) -> Result<Option<i64>, WorkloadError> {
    if !setup.journal.is_wal() {
        return Ok(None);
    }
    let pages: i64 = conn
        .query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))
        .map_err(sql_err("reading wal_autocheckpoint"))?;
    conn.query_row("PRAGMA wal_autocheckpoint=0", [], |_| Ok(()))
        .map_err(sql_err("pausing wal_autocheckpoint"))?;
    Ok(Some(pages))
}

/// Checkpoint every schema's WAL and restart it, so the next commits overwrite it from its
/// start; then restore the automatic checkpoints [`pause_autocheckpoint`] turned off.
pub fn restart_wal(
    conn: &Connection,
    schemas: &[String],
    setup: &SqliteSetup,
    autocheckpoint: Option<i64>,
) -> Result<(), WorkloadError> {
    if !setup.journal.is_wal() {
        return Ok(());
    }
    for schema in schemas {
        conn.query_row(
            &format!("PRAGMA {schema}.wal_checkpoint(RESTART)"),
            [],
            |_| Ok(()),
        )
        .map_err(sql_err("checkpointing the warm-up"))?;
    }
    if let Some(pages) = autocheckpoint {
        conn.query_row(
            &format!("PRAGMA wal_autocheckpoint={pages}"),
            [],
            |_| Ok(()),
        )
        .map_err(sql_err("restoring wal_autocheckpoint"))?;
    }
    Ok(())
}

/// `PRAGMA integrity_check` on every database; `Ok` only if each answers `ok`.
pub fn integrity_check(paths: &[PathBuf], vfs: &str) -> Result<(), WorkloadError> {
    for p in paths {
        let conn = open(p, vfs)?;
        let answer: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(sql_err("integrity_check"))?;
        if answer != "ok" {
            return Err(WorkloadError::Integrity {
                path: p.clone(),
                answer,
            });
        }
    }
    Ok(())
}
