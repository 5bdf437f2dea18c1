//! Every file but the WAL (database, `-shm` through it, journals, temporary files): the base
//! VFS's file, unchanged but for the main database's header mark (`db_mark`). A test's tap sees
//! its writes (as SQLite gave them), syncs and truncates after they succeed.
//!
//! A main database's file is shared (`db_files`): the WAL's open reads and marks the header
//! through it rather than through a descriptor of its own. It asks for waldio's reserve when
//! SQLite creates the database (`reserve_bytes`), and it tells the WAL when SQLite ends a write
//! transaction (the write lock of the wal-index released, or in exclusive locking mode the
//! database's EXCLUSIVE lock: frames a rolled-back transaction spilled are dropped) and before
//! SQLite backfills a checkpoint (`SQLITE_FCNTL_CKPT_START`: a commit sync waldio's option
//! skipped is made first). After every wal-index lock SQLite takes, and at the database's
//! EXCLUSIVE lock, it checks that the wal-index indexes the waldio WAL (`index_check`).

use super::db_files;
use super::direct_check;
use super::index_check::IndexCheck;
use super::instance::Waldio;
use super::mark;
use super::opener_check;
use super::shared_wal;
use crate::db_mark;
use crate::layout::RESERVE_NEEDED;
use joj_vfs::{
    FileControl, ReadOutcome, ResultCode, SharedBaseFile, ShmLockFlags, SqliteError, SyncFlags,
    VfsFile,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `SQLITE_FCNTL_CKPT_START`: SQLite is about to copy WAL frames into the database.
const CKPT_START: i32 = 39;
/// `SQLITE_FCNTL_COMMIT_PHASETWO`: sent to the main database after every commit.
const COMMIT_PHASETWO: i32 = 22;
/// `SQLITE_FCNTL_PERSIST_WAL`: keep the WAL after the last connection closes.
const PERSIST_WAL: i32 = 10;
/// The wal-index lock slot of the WAL write lock (`WAL_WRITE_LOCK` in SQLite's `wal.c`).
const WAL_WRITE_LOCK: u32 = 0;

pub(crate) struct PassThrough {
    pub(crate) inst: &'static Waldio,
    pub(crate) base: SharedBaseFile,
    pub(crate) path: Option<PathBuf>,
    /// The main database: its header's read version is marked on disk (`db_mark`).
    pub(crate) main_db: bool,
    /// Switch the database to WAL mode at its next commit in a rollback-journal mode (option
    /// `waldio_journal=wal`); cleared once this handle saw the database in WAL mode (switched,
    /// or read so): a rollback-mode header it writes after that is the application's own
    /// `PRAGMA journal_mode=DELETE` (or another rollback mode), which stays.
    pub(crate) to_wal: bool,
    /// This handle holds an EXCLUSIVE lock on the file.
    exclusive: bool,
    /// This handle holds at least a SHARED lock on the file.
    locked: bool,
    /// The main database's name, shared with the lock this thread last took (`mark::locked`):
    /// how the open of its WAL finds the connection's file.
    db_name: Option<Arc<Path>>,
    /// The main database's file (device, inode) when it opened: how it reaches its WAL, also
    /// once another file has taken its name.
    db_key: Option<db_files::FileKey>,
    /// The check that the wal-index SQLite maps on this file indexes the waldio WAL.
    index: IndexCheck,
    /// SQLite holds the wal-index write lock through this file.
    holds_write_lock: bool,
    /// The directory was found to take waldio's WAL (`direct_check`), or the database on disk
    /// is marked already: a header write that marks it needs no check.
    wal_can_be_kept: bool,
    /// The process that opened this file (a child forked with it open inherits it).
    opened_by: u32,
}

impl PassThrough {
    pub(crate) fn new(
        inst: &'static Waldio,
        base: joj_vfs::BaseFile,
        path: Option<PathBuf>,
        main_db: bool,
    ) -> PassThrough {
        let base = SharedBaseFile::new(base);
        // The file SQLite has just opened under that name.
        let db_key = path
            .as_deref()
            .filter(|_| main_db)
            .and_then(db_files::key_of);
        if let (true, Some(p)) = (main_db, path.as_deref()) {
            db_files::add(p, db_key, base.downgrade());
        }
        let db_name = path.as_deref().filter(|_| main_db).map(Arc::from);
        PassThrough {
            inst,
            base,
            path,
            main_db,
            to_wal: false,
            exclusive: false,
            locked: false,
            db_name,
            db_key,
            index: IndexCheck::default(),
            holds_write_lock: false,
            wal_can_be_kept: false,
            opened_by: std::process::id(),
        }
    }

    /// Tell the instance's tap, if a test taps the VFS and the file has a name.
    fn tap(&self, f: impl FnOnce(&dyn crate::io::Tap, &std::path::Path)) {
        if let (Some(tap), Some(path)) = (self.inst.tap(), self.path.as_deref()) {
            f(tap.as_ref(), path);
        }
    }

    /// Before a header write that marks the database: if it is not marked on disk yet, its
    /// directory must take waldio's WAL (`direct_check`), or the mark would leave it without
    /// a way in.
    fn check_before_the_first_mark(&mut self) -> Result<(), SqliteError> {
        if self.wal_can_be_kept {
            return Ok(());
        }
        let Some(db) = self.database().map(Path::to_path_buf) else {
            return Ok(());
        };
        let mut h = [0u8; 100];
        let on_disk = self.base.read(&mut h, 0)?;
        let marked = on_disk == ReadOutcome::Full && h[19] == db_mark::MARK;
        if !marked {
            direct_check::takes_the_wal(&db)?;
        }
        self.wal_can_be_kept = true;
        Ok(())
    }

    /// The refusal of a header write that says WAL with `reserve` bytes per page.
    fn wal_without_reserve(&self, reserve: u8) -> SqliteError {
        let db = self
            .database()
            .map_or_else(|| "the database".to_string(), |p| p.display().to_string());
        SqliteError::with_message(
            ResultCode::IOERR_WRITE,
            format!(
                "{db}: not put in WAL mode through waldio: the header SQLite wrote keeps \
                 {reserve} reserved bytes per page, and waldio's WAL keeps each frame's header \
                 in the last {RESERVE_NEEDED} (PRAGMA journal_mode=WAL on a database stock SQLite \
                 made, or a backup of one in WAL mode); nothing was written and the database \
                 stays as it was; fix: convert the database first (joj waldio convert DB, or \
                 SELECT waldio_convert(...)), or for a backup convert its source, or open it \
                 without vfs=waldio"
            ),
        )
    }

    /// This file was inherited across fork (opened by an ancestor of this process).
    fn inherited(&self) -> bool {
        self.opened_by != std::process::id()
    }

    /// The main database's name (`None` for every other file).
    fn database(&self) -> Option<&std::path::Path> {
        self.path.as_deref().filter(|_| self.main_db)
    }
}

impl VfsFile for PassThrough {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError> {
        let out = self.base.read(buf, offset)?;
        if self.main_db {
            db_mark::show(buf, offset);
            // Only a header read under a lock is the database's state: SQLite's first read of
            // a new connection takes none, and may see a switch whose commit a crash cut off
            // (its hot journal rolls it back).
            if self.to_wal && self.locked && db_mark::reads_as_wal(buf, offset) {
                self.to_wal = false;
            }
        }
        Ok(out)
    }

    fn write(&mut self, data: &[u8], offset: u64) -> Result<(), SqliteError> {
        // A header that puts a database without waldio's reserve in WAL mode: its WAL could
        // never be opened through waldio, and the connection would fail every statement after.
        // Refused before it is stored, so SQLite rolls the switch (or the backup) back.
        if let Some(reserve) = self
            .main_db
            .then(|| db_mark::wal_without_reserve(data, offset))
            .flatten()
        {
            return Err(self.wal_without_reserve(reserve));
        }
        // Page 1 of a rollback-mode commit, with the database to be switched: the header as
        // PRAGMA journal_mode=WAL leaves it (the commit's journal still holds the old one).
        let mut switched = (self.main_db && self.to_wal)
            .then(|| db_mark::switched_to_wal(data, offset))
            .flatten();
        if switched.is_some() {
            self.to_wal = false;
            // The option's switch is waldio's own: where the WAL cannot be kept it is not
            // made, and the write (a commit's, or a hot journal's rollback) goes on as SQLite
            // asked it, in the rollback mode. The application's own switch is refused below.
            match self.check_before_the_first_mark() {
                Ok(()) => crate::counters::bump(&self.inst.counters.switched_to_wal, 1),
                Err(e) => {
                    self.inst.switch_not_made(&e);
                    switched = None;
                }
            }
        }
        let marked = switched.or_else(|| {
            self.main_db
                .then(|| db_mark::stored(data, offset))
                .flatten()
        });
        if marked.is_some() {
            self.check_before_the_first_mark()?;
        }
        match &marked {
            Some(marked) => self.base.write(marked, offset)?,
            None => self.base.write(data, offset)?,
        }
        // A header that says WAL written (a checkpoint's page 1, the application's own switch):
        // the database is in WAL mode, as the handle's page-1 reads may never show it (they come
        // from the WAL once page 1 is in it).
        if marked.is_some() {
            self.to_wal = false;
        }
        self.tap(|t, p| t.write(p, offset, data, false));
        Ok(())
    }

    fn truncate(&mut self, size: u64) -> Result<(), SqliteError> {
        self.base.truncate(size)?;
        self.tap(|t, p| t.truncate(p, size));
        Ok(())
    }

    fn sync(&mut self, flags: SyncFlags) -> Result<(), SqliteError> {
        self.base.sync(flags)?;
        self.tap(|t, p| t.sync(p));
        Ok(())
    }

    fn file_size(&mut self) -> Result<u64, SqliteError> {
        self.base.file_size()
    }

    fn lock(&mut self, level: joj_vfs::LockLevel) -> Result<(), SqliteError> {
        self.base.lock(level)?;
        let inherited = self.inherited();
        if let Some(db) = &self.db_name {
            // EXCLUSIVE with the wal-index mapped: the close that checkpoints and deletes the
            // WAL, or exclusive locking mode, neither of which takes a wal-index lock. No other
            // connection has the database open now. A check that fails (the WAL could not be
            // read) fails the lock, back at SHARED, whence WAL mode asks EXCLUSIVE: a close that
            // went on would checkpoint what a foreign index names — nothing — and delete the log
            // with every commit in it; refused its lock, `sqlite3WalClose` keeps the log.
            if level == joj_vfs::LockLevel::Exclusive {
                if let Err(e) =
                    self.index
                        .run(&self.base, (db, self.db_key), self.inst, true, inherited)
                {
                    self.inst.errors.report(&e);
                    let _ = self.base.unlock(joj_vfs::LockLevel::Shared);
                    return Err(e);
                }
            }
            mark::locked(db, self.db_key, self.base.downgrade(), level);
        }
        self.exclusive |= level == joj_vfs::LockLevel::Exclusive;
        self.locked = true;
        Ok(())
    }

    fn unlock(&mut self, level: joj_vfs::LockLevel) -> Result<(), SqliteError> {
        // In `locking_mode=EXCLUSIVE` SQLite takes no wal-index locks, so the write lock's
        // release below never comes; its EXCLUSIVE lock on the database kept every other
        // connection out instead, and a rolled-back transaction's frames are dropped when it
        // lets go of it, before anyone else can write (`docs/formats/waldio.md`, rule 2).
        // Holding EXCLUSIVE, no other connection holds even SHARED: none has frames pending.
        if self.exclusive && level < joj_vfs::LockLevel::Exclusive {
            if self.database().is_some() {
                shared_wal::write_transaction_ended(self.db_key);
            }
            self.exclusive = false;
        }
        self.base.unlock(level)?;
        self.locked = level >= joj_vfs::LockLevel::Shared;
        if let Some(db) = &self.db_name {
            mark::locked(db, self.db_key, self.base.downgrade(), level);
        }
        Ok(())
    }

    fn check_reserved_lock(&mut self) -> Result<bool, SqliteError> {
        self.base.check_reserved_lock()
    }

    fn file_control(&mut self, control: FileControl<'_>) -> Result<(), SqliteError> {
        if self.main_db && matches!(&control, FileControl::Other(o) if o.op() == PERSIST_WAL) {
            // Not supported, as by a VFS without the control: SQLite then deletes the WAL at
            // the last close (waldio marks its log absent; the file stays). A log kept with its
            // frames outlived `PRAGMA journal_mode=DELETE`: the database was unmarked and
            // written by stock SQLite, which cannot see `-waldio`, and waldio's next open
            // replayed the stale frames over those commits (docs/formats/waldio.md, "File
            // name"; robustness H154).
            return Err(SqliteError::not_found());
        }
        let ckpt = matches!(&control, FileControl::Other(o) if o.op() == CKPT_START);
        if ckpt && self.database().is_some() {
            // Before the first page is copied: the frames must be durable in the WAL first.
            shared_wal::checkpoint_starts(self.db_key, self.inherited())?;
        }
        let commit = matches!(&control, FileControl::Other(o) if o.op() == COMMIT_PHASETWO);
        // Over joj's accounting VFS, that VFS marks the commit itself.
        if let (true, Some(db), false) = (
            commit,
            self.database(),
            self.inst.base.name() == joj_vfs::VFS_NAME,
        ) {
            joj_vfs::marker::commit(db);
        }
        self.base.file_control(control)
    }

    fn sector_size(&mut self) -> u32 {
        self.base.sector_size()
    }

    fn device_characteristics(&mut self) -> joj_vfs::DeviceCharacteristics {
        if let Some(db) = &self.db_name {
            // Right after a WAL's open, SQLite asks the opener's database file (`opener_check`).
            opener_check::device_characteristics_asked(db, self.db_key);
        }
        self.base.device_characteristics()
    }

    fn has_shared_memory(&self) -> bool {
        self.base.has_shared_memory()
    }

    fn has_memory_map(&self) -> bool {
        self.base.has_memory_map()
    }

    fn reserve_bytes(&self) -> u8 {
        if self.main_db { RESERVE_NEEDED } else { 0 }
    }

    fn shm_map(
        &mut self,
        region: u32,
        region_bytes: u32,
        extend: bool,
    ) -> Result<joj_vfs::ShmMapping, SqliteError> {
        let mapping = self.base.shm_map(region, region_bytes, extend)?;
        if self.main_db {
            self.index.mapped(region_bytes);
            // SQLite maps a wal-index only with a WAL open on the connection, which it opens
            // under its SHARED lock: the database is in WAL mode now. Its page-1 reads may all
            // come from the WAL (page 1 in it), never through this file: without this, the
            // option stayed on and turned the application's own PRAGMA journal_mode=DELETE
            // back into WAL (a review of H151's fix, 2026-11-29).
            self.to_wal = false;
        }
        Ok(mapping)
    }

    fn shm_lock(
        &mut self,
        offset: u32,
        count: u32,
        flags: ShmLockFlags,
    ) -> Result<(), SqliteError> {
        // The write lock is slot 0, so a range holds it when it starts there.
        let write_lock_released =
            !flags.lock() && flags.exclusive() && offset == WAL_WRITE_LOCK && count > 0;
        // The ended transaction's uncommitted frames are dropped while this connection still
        // holds the write lock: the process's connections share one state of the WAL, and
        // another thread's connection that takes the lock next writes its frames into it —
        // dropped after the release, they were its frames too (reads saw old pages, the
        // database was corrupted; `waldio_threads_of_one_process_keep_every_commit`).
        if write_lock_released && self.database().is_some() {
            shared_wal::write_transaction_ended(self.db_key);
        }
        self.base.shm_lock(offset, count, flags)?;
        if offset == WAL_WRITE_LOCK && count > 0 && flags.exclusive() {
            self.holds_write_lock = flags.lock();
        }
        // A lock taken: SQLite compares the wal-index header after it with the one it read
        // before, so a foreign index invalidated now is rebuilt before SQLite acts on it.
        if let (true, Some(db)) = (flags.lock(), self.db_name.as_deref()) {
            let write_held = self.holds_write_lock;
            let inherited = self.inherited();
            if let Err(e) = self.index.run(
                &self.base,
                (db, self.db_key),
                self.inst,
                write_held,
                inherited,
            ) {
                let release = libsqlite3_sys::SQLITE_SHM_UNLOCK
                    | (flags.bits()
                        & (libsqlite3_sys::SQLITE_SHM_SHARED
                            | libsqlite3_sys::SQLITE_SHM_EXCLUSIVE));
                let _ = self
                    .base
                    .shm_lock(offset, count, ShmLockFlags::from_raw(release));
                if offset == WAL_WRITE_LOCK && flags.exclusive() {
                    self.holds_write_lock = false;
                }
                return Err(e);
            }
        }
        Ok(())
    }

    fn shm_barrier(&mut self) {
        self.base.shm_barrier()
    }

    fn shm_unmap(&mut self, delete: bool) -> Result<(), SqliteError> {
        self.index.unmapped();
        self.base.shm_unmap(delete)
    }

    fn fetch(
        &mut self,
        offset: u64,
        amount: usize,
    ) -> Result<Option<joj_vfs::FetchedPage>, SqliteError> {
        self.base.fetch(offset, amount)
    }

    fn unfetch(
        &mut self,
        offset: u64,
        page: Option<joj_vfs::FetchedPage>,
    ) -> Result<(), SqliteError> {
        self.base.unfetch(offset, page)
    }

    fn close(self) -> Result<(), SqliteError> {
        let r = self.base.close();
        if let Some(db) = self.path.as_deref().filter(|_| self.main_db) {
            db_files::prune(db);
        }
        r
    }
}
