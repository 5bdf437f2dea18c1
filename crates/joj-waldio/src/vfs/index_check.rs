//! The wal-index must index the waldio WAL (`docs/formats/waldio.md`, "A wal-index a SQLite
//! without waldio built"): the `-shm` is shared with every SQLite that opens the database, and a
//! stock one rebuilds it from its own `-wal`, leaving a header SQLite accepts (it checks a header
//! only against itself) that names none of the waldio log's commits. After every wal-index lock
//! SQLite takes, and at the database's EXCLUSIVE lock, the header is read through the region
//! SQLite mapped and judged against the waldio WAL (`wal_index::judge`); a foreign one is made
//! all zeros — the torn state SQLite rebuilds from the WAL, under its write lock, before it acts
//! on the index. SQLite compares the header after each of these locks, so it sees the change.
//!
//! One [`IndexCheck`] per main database file (a connection's): it knows whether SQLite has the
//! shared memory open on it — the region is never mapped otherwise, which would open the `-shm`
//! and take its DMS lock — and the salts it last found to be the WAL's, so that a header of the
//! same epoch needs neither the WAL's state nor any I/O.

use super::db_files::FileKey;
use super::instance::{Waldio, lock};
use super::shared_wal::{self, SharedWal};
use crate::counters::bump;
use crate::wal::WalError;
use crate::wal_index::{self, BOTH_COPIES_WORDS, IndexHeader, Verdict};
use joj_vfs::{BaseFile, ResultCode, SharedBaseFile, ShmLockFlags, ShmView, SqliteError};
use std::path::Path;
use std::sync::Arc;

/// The wal-index lock slot of the write lock (`WAL_WRITE_LOCK`).
const WRITE_LOCK: u32 = 0;

/// What one database file's check keeps between calls.
#[derive(Debug, Default)]
pub(crate) struct IndexCheck {
    /// SQLite mapped shared memory on this file (its `xShmMap` succeeded), with regions of
    /// this many bytes; `None` before that and after its `xShmUnmap`.
    region_bytes: Option<u32>,
    /// The salts of the WAL header the index was last found to share.
    trusted_salts: Option<[u8; 8]>,
    /// An index of 0 frames under these salts (first), beside a WAL whose header has these
    /// (second), found under the write lock to hold no transaction (a new log's first frames
    /// spilled and rolled back): walked once, not at every lock while the two stay as they are.
    no_commit: Option<([u8; 8], [u8; 8])>,
}

/// Both copies of the header, read copy 0 first, then copy 1 after a barrier, as SQLite does
/// (a writer writes copy 1 first): a header changing meanwhile reads as two different copies.
fn read_header(view: &ShmView<'_>) -> Option<[u32; BOTH_COPIES_WORDS]> {
    let mut w = [0u32; BOTH_COPIES_WORDS];
    let (a, b) = w.split_at_mut(wal_index::HEADER_WORDS);
    for (i, x) in a.iter_mut().enumerate() {
        *x = view.load(i)?;
    }
    view.fence();
    for (i, x) in b.iter_mut().enumerate() {
        *x = view.load(wal_index::HEADER_WORDS + i)?;
    }
    Some(w)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl IndexCheck {
    /// SQLite mapped (or asked for) a region of this file's shared memory.
    pub(crate) fn mapped(&mut self, region_bytes: u32) {
        self.region_bytes.get_or_insert(region_bytes);
    }

    /// SQLite unmapped this file's shared memory.
    pub(crate) fn unmapped(&mut self) {
        *self = IndexCheck::default();
    }

    /// Check the wal-index of `db` (its name, and its file when it opened; this connection's
    /// file `base`) against the waldio WAL, and
    /// invalidate it if it cannot index it. `write_held`: this connection holds the wal-index
    /// write lock, or the database's EXCLUSIVE lock (no other connection then has it open).
    /// Errors (only for a header the judgement found foreign): `SQLITE_BUSY` while another
    /// connection holds the write lock; the WAL could not be read; the write lock failed.
    pub(crate) fn run(
        &mut self,
        base: &SharedBaseFile,
        db: (&Path, Option<FileKey>),
        inst: &Waldio,
        write_held: bool,
        inherited: bool,
    ) -> Result<(), SqliteError> {
        let Some(region_bytes) = self.region_bytes else {
            return Ok(());
        };
        let checked = base
            .downgrade()
            .with(|f| self.check_file(f, region_bytes, db, inst, write_held, inherited));
        checked.unwrap_or(Ok(()))
    }

    fn check_file(
        &mut self,
        file: &mut BaseFile,
        region_bytes: u32,
        (db, db_key): (&Path, Option<FileKey>),
        inst: &Waldio,
        write_held: bool,
        inherited: bool,
    ) -> Result<(), SqliteError> {
        let Some(index) = valid_header(file, region_bytes) else {
            return Ok(());
        };
        if self.trusted_salts == Some(index.salts) {
            return Ok(());
        }
        // A WAL inherited across fork with group sync is not this process's to read (its
        // handles refuse every call): nothing to check it against.
        let Some(wal) = shared_wal::of_database(db_key, inherited)
            .filter(|w| w.usable_in_this_process().is_ok())
        else {
            return Ok(()); // no waldio WAL of this database open in the process
        };
        if self.foreign(&wal, &index, write_held)?.is_none() {
            return Ok(());
        }
        let exclusive = ShmLockFlags::from_raw(
            libsqlite3_sys::SQLITE_SHM_LOCK | libsqlite3_sys::SQLITE_SHM_EXCLUSIVE,
        );
        let took = if write_held {
            false
        } else {
            match file.shm_lock(WRITE_LOCK, 1, exclusive) {
                Ok(()) => true,
                // Another connection holds the write lock: a writer between its commit's write
                // to the log and its index update (a new log's first commit: its header is
                // newer than the index), or a connection rebuilding the index. Either ends
                // soon; SQLite tries its lock again (a reader: WAL_RETRY), rather than act on
                // an index that may not be of this log.
                // (No message: a retry, not an error to log or keep as the last one.)
                Err(e) if e.code().primary() == ResultCode::BUSY => {
                    return Err(SqliteError::new(ResultCode::BUSY));
                }
                Err(e) => return Err(e),
            }
        };
        let r = self.invalidate(file, region_bytes, db, inst, &wal);
        if took {
            let release = ShmLockFlags::from_raw(
                libsqlite3_sys::SQLITE_SHM_UNLOCK | libsqlite3_sys::SQLITE_SHM_EXCLUSIVE,
            );
            let _ = file.shm_lock(WRITE_LOCK, 1, release);
        }
        r
    }

    /// Why `index` cannot index the WAL `wal` (`None`: it can), by `wal_index::judge`, with the
    /// WAL's header read again when its salts are not the index's; remembers salts found right.
    /// `write_held`: the wal-index write lock (or the database's EXCLUSIVE lock) is held, so no
    /// connection is in the middle of a transaction.
    fn foreign(
        &mut self,
        wal: &SharedWal,
        index: &IndexHeader,
        write_held: bool,
    ) -> Result<Option<&'static str>, SqliteError> {
        let mut st = lock(&wal.state);
        let fail = |e: WalError| {
            SqliteError::with_message(
                shared_wal::code_of(&e, ResultCode::IOERR_SHMLOCK),
                format!(
                    "{}: checking the wal-index against the WAL: {e}",
                    wal.path.display()
                ),
            )
        };
        let cached = st.logical_header(false).map_err(fail)?;
        let wal_salts = |h: &[u8; 32]| {
            let mut salts = [0u8; 8];
            salts.copy_from_slice(&h[16..24]);
            salts
        };
        // A restart of the log this process knows needs no read: the writer that restarts it
        // writes the new log header only after the index (this process's own restarts, at
        // every checkpointed log's next commit, are judged before their header is written).
        if cached.is_some_and(|h| wal_index::restarts(index, &h)) {
            return Ok(None);
        }
        let header = match cached {
            Some(h) if h[16..24] == index.salts => Some(h),
            // Another process may have started a new epoch since this one read the header.
            _ => st.logical_header(true).map_err(fail)?,
        };
        // The same log found without a transaction before, under the write lock: its frames
        // were rolled back, and the next writer, finding the index at 0 frames, starts a new
        // header; so no commit comes under this one. (Judged without the write lock, the
        // frames may be a writer's transaction still under way, which then commits under this
        // very header: an index rebuilt to the pair later would hide its commits.)
        if let (Some(h), 0) = (header, index.max_frame) {
            if self.no_commit == Some((index.salts, wal_salts(&h))) {
                return Ok(None);
            }
        }
        let mut walked = false;
        let verdict = wal_index::judge(index, header.as_ref(), || {
            walked = true;
            match &header {
                Some(h) => wal_index::holds_a_commit(h, |i| st.frame(i)),
                None => Ok(false),
            }
        })
        .map_err(fail)?;
        match (header, verdict) {
            (Some(h), _) if wal_salts(&h) == index.salts => self.trusted_salts = Some(index.salts),
            (Some(h), Verdict::OfThisWal) if walked && write_held => {
                self.no_commit = Some((index.salts, wal_salts(&h)));
            }
            _ => {}
        }
        Ok(match verdict {
            Verdict::Foreign(why) => Some(why),
            Verdict::OfThisWal => None,
        })
    }

    /// Under the write lock: judge the header again (it may have been rebuilt meanwhile) and,
    /// still foreign, clear both copies, count it and say so.
    fn invalidate(
        &mut self,
        file: &mut BaseFile,
        region_bytes: u32,
        db: &Path,
        inst: &Waldio,
        wal: &Arc<SharedWal>,
    ) -> Result<(), SqliteError> {
        let Some(index) = valid_header(file, region_bytes) else {
            return Ok(());
        };
        let Some(why) = self.foreign(wal, &index, true)? else {
            return Ok(());
        };
        let Ok(Some(view)) = file.shm_view(0, region_bytes) else {
            return Ok(());
        };
        for i in 0..BOTH_COPIES_WORDS {
            view.store(i, 0);
        }
        view.fence();
        self.trusted_salts = None;
        self.no_commit = None;
        bump(&inst.counters.foreign_wal_indexes, 1);
        let wal_salts = lock(&wal.state)
            .logical_header(false)
            .ok()
            .flatten()
            .map_or("none (no log)".to_owned(), |h| hex(&h[16..24]));
        inst.errors.warn(&format!(
            "{}-shm held a wal-index that cannot index the waldio WAL {} ({why}: {} frames, \
             salts {}; the WAL's salts {wal_salts}): a SQLite without waldio built it from its own \
             {}-wal; it was invalidated, and SQLite rebuilds it from the waldio WAL \
             (docs/formats/waldio.md, \"A wal-index a SQLite without waldio built\")",
            db.display(),
            wal.path.display(),
            index.max_frame,
            hex(&index.salts),
            db.display(),
        ));
        Ok(())
    }
}

/// The wal-index header in region 0 of `file`'s shared memory, if SQLite would accept it and
/// the region may be written (a read-only one cannot be repaired: its connection writes
/// nothing). `None` also for a region not there yet: SQLite builds the index itself.
fn valid_header(file: &mut BaseFile, region_bytes: u32) -> Option<IndexHeader> {
    let view = file.shm_view(0, region_bytes).ok()??;
    if !view.writable() {
        return None;
    }
    IndexHeader::from_words(&read_header(&view)?)
}
