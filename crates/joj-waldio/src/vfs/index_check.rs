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

use super::instance::{Waldio, lock};
use super::shared_wal;
use crate::counters::bump;
use crate::wal::WalError;
use crate::wal_index::{self, BOTH_COPIES_WORDS, IndexHeader, Verdict};
use joj_vfs::{BaseFile, ResultCode, SharedBaseFile, ShmView, SqliteError};
use std::path::Path;

/// What one database file's check keeps between calls.
#[derive(Debug, Default)]
pub(crate) struct IndexCheck {
    /// SQLite mapped shared memory on this file (its `xShmMap` succeeded), with regions of
    /// this many bytes; `None` before that and after its `xShmUnmap`.
    region_bytes: Option<u32>,
    /// The salts of the WAL header the index was last found to share.
    trusted_salts: Option<[u8; 8]>,
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

    /// Check the wal-index of `db` (this connection's file `base`) against the waldio WAL, and
    /// invalidate it if it cannot index it. Errors: the WAL could not be read (only for a
    /// header whose salts are not the ones last found right).
    pub(crate) fn run(
        &mut self,
        base: &SharedBaseFile,
        db: &Path,
        inst: &Waldio,
    ) -> Result<(), SqliteError> {
        let Some(region_bytes) = self.region_bytes else {
            return Ok(());
        };
        let checked = base
            .downgrade()
            .with(|f| self.check_file(f, region_bytes, db, inst));
        checked.unwrap_or(Ok(()))
    }

    fn check_file(
        &mut self,
        file: &mut BaseFile,
        region_bytes: u32,
        db: &Path,
        inst: &Waldio,
    ) -> Result<(), SqliteError> {
        // A region not there yet, or shared memory SQLite could not map: SQLite builds the
        // index itself. A read-only one cannot be changed: its connection writes nothing.
        let Ok(Some(view)) = file.shm_view(0, region_bytes) else {
            return Ok(());
        };
        if !view.writable() {
            return Ok(());
        }
        let Some(words) = read_header(&view) else {
            return Ok(());
        };
        let Some(index) = IndexHeader::from_words(&words) else {
            return Ok(()); // torn or unset: SQLite rebuilds it
        };
        if self.trusted_salts == Some(index.salts) {
            return Ok(());
        }
        let Some(wal) = shared_wal::of_database(db) else {
            return Ok(()); // no waldio WAL of this database open in the process
        };
        let (verdict, wal_header) = {
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
            let header = match cached {
                Some(h) if h[16..24] == index.salts => Some(h),
                // Another process may have started a new epoch since this one read the header.
                _ => st.logical_header(true).map_err(fail)?,
            };
            let verdict = wal_index::judge(&index, header.as_ref(), || {
                let frame = st.first_frame()?;
                Ok(match (&header, frame) {
                    (Some(h), Some(f)) => wal_index::first_frame_is_valid(h, &f),
                    _ => false,
                })
            })
            .map_err(fail)?;
            (verdict, header)
        };
        match verdict {
            Verdict::OfThisWal => {
                if wal_header.is_some_and(|h| h[16..24] == index.salts) {
                    self.trusted_salts = Some(index.salts);
                }
            }
            Verdict::Foreign(why) => {
                self.trusted_salts = None;
                // Only the header judged: one that changed meanwhile is someone else's now.
                if read_header(&view) == Some(words) {
                    for i in 0..BOTH_COPIES_WORDS {
                        view.store(i, 0);
                    }
                    view.fence();
                }
                bump(&inst.counters.foreign_wal_indexes, 1);
                let wal_salts = wal_header.map_or("none (no log)".to_owned(), |h| hex(&h[16..24]));
                inst.errors.warn(&format!(
                    "{}-shm held a wal-index that cannot index the waldio WAL {} ({why}: {} \
                     frames, salts {}; the WAL's salts {wal_salts}): a SQLite without waldio \
                     built it from its own {}-wal; it was invalidated, and SQLite rebuilds it \
                     from the waldio WAL (docs/formats/waldio.md, \"A wal-index a SQLite \
                     without waldio built\")",
                    db.display(),
                    wal.path.display(),
                    index.max_frame,
                    hex(&index.salts),
                    db.display(),
                ));
            }
        }
        Ok(())
    }
}
