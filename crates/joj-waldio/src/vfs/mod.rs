//! The `waldio` VFS on joj-vfs's seam: the `-wal` file is a [`WalFile`] over the process's one
//! [`WalState`](crate::WalState) of that file (`shared_wal`); every other file passes through to
//! the base VFS (`unix`, or joj's accounting `joj`) unchanged. A new database gets the 24-byte
//! reserve when SQLite creates it (`PassThrough::reserve_bytes`); a new connection's URI
//! options and database header are checked (`on_connect`), without SQL and without a
//! descriptor of waldio's own on the database (docs/formats/waldio.md, "Locks").

mod db_files;
mod direct_check;
mod file;
mod fork_guard;
mod index_check;
mod instance;
mod mark;
mod opener_check;
mod pass_through;
mod shared_wal;
mod wal_file;
mod wal_name;

pub(crate) use wal_name::physical as physical_wal;

pub(crate) use instance::{Waldio, lock, read, write};

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

/// Why a database whose reserved bytes another layer writes cannot have a waldio WAL.
fn reserve_in_use_message(db: &Path) -> String {
    format!(
        "{}: the last {RESERVE_NEEDED} bytes of its first page hold data, so its reserved bytes \
         are written by something else (a VFS stacked above waldio, such as a checksum VFS, or \
         an encryption codec); waldio keeps its frame headers there and cannot share them. Open \
         it without that VFS, or without waldio",
        db.display()
    )
}

fn is_wal_name(path: &Path) -> bool {
    path.as_os_str().as_bytes().ends_with(b"-wal")
}

/// The database of a WAL being opened: its metadata and its file (device, inode). As SQLite's
/// unix VFS opens a WAL, the database must still be at its name (the WAL's mode is taken from
/// it), else `SQLITE_IOERR_FSTAT`. The WAL at that name is the log of the file now there, and
/// is bound to it. A connection whose own database was renamed or deleted while open, and
/// another took its name, must not use it: stock does, writes its frames into the other
/// database's log and leaves them for that database's next open to replay. The open cannot
/// tell the opener (in exclusive locking mode it makes no call on its database before, and the
/// thread's last lock may be another connection's); the WAL handle learns it from the opener's
/// next call and then refuses every read and write (`opener_check`; docs/formats/waldio.md, "A
/// database and its log are tied by the database's file"; docs/robustness.md H146).
fn wal_database(db_path: &Path) -> Result<(std::fs::Metadata, db_files::FileKey), SqliteError> {
    use std::os::unix::fs::MetadataExt;
    let db_meta = std::fs::metadata(db_path).map_err(|e| {
        SqliteError::with_message(
            ResultCode::IOERR_FSTAT,
            format!(
                "{}: the database is no longer at its name ({e}), and its WAL is named after it: \
                 SQLite refuses the WAL's open so too",
                db_path.display()
            ),
        )
    })?;
    let at_name = (db_meta.dev(), db_meta.ino());
    Ok((db_meta, at_name))
}

/// The refusal of a WAL whose database file at the name is not open through waldio in this
/// process: another file took the name of one open here, or none is open.
fn no_database_file(db_path: &Path) -> SqliteError {
    if db_files::with_database_of(db_path, None, |_| ()).is_some() {
        // Open here under that name, but another file: renamed or deleted meanwhile.
        return SqliteError::with_message(
            ResultCode::IOERR_FSTAT,
            format!(
                "{}: another file has this name now than the database open under it here \
                 (renamed or deleted while open); the WAL named after it is that file's log: \
                 not opened, lest this connection's frames be replayed onto the other database; \
                 fix: close the connection, and open the database by the name it has now",
                db_path.display()
            ),
        );
    }
    SqliteError::with_message(
        ResultCode::CANTOPEN,
        format!(
            "{}: the WAL is opened without its database open through {} in this process",
            db_path.display(),
            crate::VFS_NAME
        ),
    )
}

impl Waldio {
    fn open_wal(
        &'static self,
        name: &FileName<'_>,
        flags: OpenFlags,
    ) -> Result<(WalFile, bool), SqliteError> {
        let opts = self
            .options_for(name)
            .map_err(|e| SqliteError::with_message(ResultCode::CANTOPEN, e.to_string()))?;
        let cantopen = |m: String| SqliteError::with_message(ResultCode::CANTOPEN, m);
        let db_path = name.database_path().ok_or_else(|| {
            cantopen(format!(
                "{}: SQLite named no database for this WAL",
                name.path().display()
            ))
        })?;
        let (db_meta, bound) = wal_database(&db_path)?;
        let db_key = Some(bound);
        // The database must keep the reserve the frame headers live in. Its header is read
        // through the file SQLite has open (a descriptor of waldio's own, once closed, would
        // drop the process's locks on the database).
        let header = db_files::with_database_of(&db_path, db_key, |db| {
            let mut h = [0u8; sqlite_header::BYTES];
            db.read(&mut h, 0).map(|_| sqlite_header::parse(&h))
        })
        .ok_or_else(|| no_database_file(&db_path))?
        .map_err(|e| cantopen(format!("reading the header of {}: {e}", db_path.display())))?;
        if let Some(h) = header {
            if h.reserve < RESERVE_NEEDED {
                return Err(cantopen(no_reserve_message(
                    &db_path,
                    h.page_size,
                    h.reserve,
                )));
            }
            // The reserve must be waldio's alone: a layer above that writes into it (a checksum
            // VFS, a codec) would have every frame refused; refuse before any is written.
            let tail = db_files::with_database_of(&db_path, db_key, |db| {
                let mut t = [0u8; RESERVE_NEEDED as usize];
                let at = u64::from(h.page_size) - u64::from(RESERVE_NEEDED);
                db.read(&mut t, at).map(|_| t.iter().any(|&b| b != 0))
            });
            if let Some(Ok(true)) = tail {
                return Err(cantopen(reserve_in_use_message(&db_path)));
            }
        }
        let mode = {
            use std::os::unix::fs::PermissionsExt;
            db_meta.permissions().mode() & 0o777
        };
        // Only now (the database may have this WAL): move an old one, refuse a stock one.
        let logical = name.path();
        let physical = wal_name::settle(logical).map_err(|e| {
            SqliteError::with_message(
                shared_wal::code_of(&e, ResultCode::CANTOPEN),
                format!("{}: {e}", logical.display()),
            )
        })?;
        // A database to be marked is held EXCLUSIVE from here to its mark (`mark`): no SQLite
        // without waldio has it open, and none can open it before the mark is there.
        let exclusion = mark::exclude(&db_path, logical)?;
        let shared = open_shared(
            self,
            &physical,
            (&db_path, db_key),
            flags.create(),
            mode,
            opts,
        )?;
        if shared.read_only() {
            // A WAL this process may only read: SQLite is told so and writes nothing to it (nor
            // to the database, which it cannot write either); nothing to mark.
            self.wal_of(&db_path);
            let opener = opener_check::expect(&db_path, bound);
            return Ok((WalFile::new(shared, opener), true));
        }
        // The WAL is waldio's (or new): mark the database before any frame can be written.
        exclusion.mark(&db_path, self.tap())?;
        self.wal_of(&db_path);
        let opener = opener_check::expect(&db_path, bound);
        Ok((WalFile::new(shared, opener), false))
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
            let (wal, read_only) = self.open_wal(name, flags)?;
            // As SQLite's unix VFS answers for a file it could only open for reading.
            let out = if read_only {
                flags.opened_read_only()
            } else {
                flags
            };
            return Ok((WaldioFile::Wal(wal), out));
        }
        // The connection's options (a URI parameter of the database's name, else the defaults).
        let to_wal = name
            .and_then(|n| self.options_for(n).ok())
            .unwrap_or_else(|| self.defaults())
            .wal_mode;
        if let (FileKind::MainJournal, Some(db)) =
            (flags.kind(), name.and_then(|n| n.database_path()))
        {
            // A database without the reserve cannot be switched: it stays in its mode.
            let reserve = db_files::with_database(&db, |f| {
                let mut h = [0u8; sqlite_header::BYTES];
                f.read(&mut h, 0).map(|_| sqlite_header::parse(&h))
            })
            .and_then(Result::ok)
            .flatten()
            .map(|h| h.reserve);
            self.rollback_journal_of(&db, to_wal, reserve);
        }
        let (base, out) = self.base.open(name, flags)?;
        let mut file = PassThrough::new(
            self,
            base,
            name.map(|n| n.path().to_path_buf()),
            flags.kind() == FileKind::MainDb,
        );
        file.to_wal = to_wal && flags.kind() == FileKind::MainDb;
        Ok((WaldioFile::PassThrough(file), out))
    }

    fn delete(&self, path: &Path, sync_dir: bool) -> Result<(), SqliteError> {
        if is_wal_name(path) {
            let db = wal_name::database(path);
            // The connection deleting its WAL holds its database EXCLUSIVE on this thread, and
            // has just closed its WAL on it. If another database file has taken the name since
            // (this one deleted, renamed away or replaced), the WAL at the name is this
            // connection's only if it is the one it closed (the database file alone was
            // replaced: forgotten, as always, or the other database would read this one's
            // frames); else it is the other database's and is left alone (stock SQLite unlinks
            // the name, and the other database keeps its log through its open descriptors; a
            // header block written here would forget its commits).
            let (mine, now) = (mark::opener_key(&db), db_files::key_of(&db));
            if matches!((mine, now), (Some(m), Some(n)) if m != n) {
                let here = std::fs::symlink_metadata(wal_name::physical(path))
                    .ok()
                    .map(|m| {
                        use std::os::unix::fs::MetadataExt;
                        (m.dev(), m.ino())
                    });
                let own = shared_wal::closed_on_this_thread(mine);
                if own.is_none() || own != here {
                    return Ok(());
                }
            }
            // The state-0 header block forgets the log: the database first (`sync_database`).
            shared_wal::sync_database_of(&db, mine.or(now), self.tap())?;
            match with_existing_wal(self, &wal_name::physical(path), |st| st.mark_absent()) {
                Ok(Some(())) => return Ok(()),
                // No waldio WAL, or not a waldio file: the base VFS deletes what is at SQLite's
                // name, as SQLite asked (or answers that nothing is there).
                Ok(None)
                | Err(WalError::StockWal | WalError::Foreign | WalError::InvalidHeader { .. }) => {}
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
            let meta = std::fs::symlink_metadata(&physical).ok();
            if meta.as_ref().is_some_and(|m| !m.is_file()) {
                // A directory, link, FIFO or device where waldio keeps its WAL: present, so
                // that opening it refuses it, naming it (as stock SQLite refuses a directory
                // at its `-wal`), and never opened here.
                return Ok(true);
            }
            let size = meta.map_or(0, |m| m.len());
            if size == 0 {
                // Something at SQLite's own name (an old waldio WAL to move, a stock WAL to
                // refuse) is present: opening it settles which.
                let there = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
                return Ok(there > 0);
            }
            return match with_existing_wal(self, &physical, |st| st.exists()) {
                Ok(v) => Ok(v.unwrap_or(false)),
                // Someone else's WAL: report it present so opening it gives the error.
                Err(
                    WalError::StockWal
                    | WalError::Foreign
                    | WalError::InvalidHeader { .. }
                    | WalError::NewerVersion(_),
                ) => Ok(true),
                Err(e) => Err(SqliteError::with_message(
                    ResultCode::IOERR_ACCESS,
                    format!("checking {}: {e}", physical.display()),
                )),
            };
        }
        self.base.access(path, check)
    }

    fn delegate(&self) -> Option<BaseVfs> {
        Some(self.base)
    }

    /// Check a new connection before the application gets it, with the message as the open's
    /// error: URI options waldio cannot use, and a database in WAL mode whose WAL could never be
    /// opened (no reserve, or a reserve something else writes). Runs no SQL and touches no
    /// file: the header is read through the connection's own file (`sqlite3_open` itself reads
    /// nothing), so every open stock SQLite allows is allowed here, whatever locks others hold.
    fn on_connect(&self, conn: &mut Connecting<'_>) -> Result<(), SqliteError> {
        let refused = |m: String| SqliteError::with_message(ResultCode::CANTOPEN, m);
        let keys = conn.uri_keys();
        options::check_uri_keys(keys.iter().map(String::as_str))
            .and_then(|()| {
                self.defaults()
                    .with_uri_params(|key| conn.uri_parameter(key))
            })
            .map_err(|e| refused(e.to_string()))?;
        let Some(db) = conn.database_path() else {
            return Ok(());
        };
        let mut h = [0u8; sqlite_header::BYTES];
        if !conn.read_main_database(&mut h, 0).unwrap_or(false) {
            return Ok(());
        }
        let Some(h) = sqlite_header::parse(&h) else {
            return Ok(());
        };
        if h.wal_mode && h.reserve < RESERVE_NEEDED {
            return Err(refused(no_reserve_message(&db, h.page_size, h.reserve)));
        }
        if h.wal_mode && page_tail_in_use(conn, h.page_size) {
            return Err(refused(reserve_in_use_message(&db)));
        }
        Ok(())
    }
}

/// Whether the last [`RESERVE_NEEDED`] bytes of page 1, as SQLite reads them, are not zero. The
/// B-tree never writes a page's reserved bytes, so under waldio they stay zero unless a layer
/// above writes them.
fn page_tail_in_use(conn: &Connecting<'_>, page_size: u32) -> bool {
    let mut tail = [0u8; RESERVE_NEEDED as usize];
    let at = u64::from(page_size) - u64::from(RESERVE_NEEDED);
    conn.read_main_database(&mut tail, at).unwrap_or(false) && tail.iter().any(|&b| b != 0)
}
