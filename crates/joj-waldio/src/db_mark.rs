//! The database file's mark (`docs/formats/waldio.md`, "The database file's marker"): byte 19 of
//! the header, SQLite's file-format read version, is stored as [`MARK`] while the header says WAL
//! and the database keeps waldio's reserve, so that a SQLite without the waldio VFS refuses the
//! database (`SQLITE_NOTADB`) instead of reading it without the commits in the waldio WAL.
//! SQLite through waldio sees 2. Pure translations plus one durable marking of a file.

use crate::layout::RESERVE_NEEDED;
use std::path::Path;

/// The byte stored as the read version of a waldio database (`'W'`). Any value above 2 makes
/// SQLite refuse the file; this one is recognisable in a hex dump.
pub const MARK: u8 = 0x57;

/// Offset of the file-format write version (1 rollback, 2 WAL).
const WRITE_VERSION: usize = 18;
/// Offset of the file-format read version: where the mark goes.
const READ_VERSION: usize = 19;
/// Offset of the reserved bytes per page.
const RESERVE: usize = 20;
/// SQLite's file-format version for WAL mode.
const WAL: u8 = 2;

/// The index of byte `at` of the file in a buffer that starts at file offset `offset`.
fn index(len: usize, offset: u64, at: usize) -> Option<usize> {
    let i = (at as u64).checked_sub(offset)?;
    (i < len as u64).then_some(i as usize)
}

/// What SQLite is shown of a read at `offset`: the mark reads as 2.
pub fn show(buf: &mut [u8], offset: u64) {
    if let Some(i) = index(buf.len(), offset, READ_VERSION) {
        if buf[i] == MARK {
            buf[i] = WAL;
        }
    }
}

/// Whether `buf`, read at `offset` (after [`show`]), holds a header that says WAL mode.
pub fn reads_as_wal(buf: &[u8], offset: u64) -> bool {
    index(buf.len(), offset, WRITE_VERSION).is_some_and(|i| buf[i] == WAL)
}

/// What is stored for SQLite's write of `data` at `offset`: `Some(copy)` with the mark when the
/// write carries a WAL header (2/2) of a database with waldio's reserve; `None`: store `data`
/// as it is (rollback mode, no reserve — waldio never opens a WAL for it — or not the header).
pub fn stored(data: &[u8], offset: u64) -> Option<Vec<u8>> {
    let rv = index(data.len(), offset, READ_VERSION)?;
    let wv = index(data.len(), offset, WRITE_VERSION)?;
    let reserve = index(data.len(), offset, RESERVE)?;
    if data[rv] != WAL || data[wv] != WAL || data[reserve] < RESERVE_NEEDED {
        return None;
    }
    let mut out = data.to_vec();
    out[rv] = MARK;
    Some(out)
}

/// The reserve of a header write that says WAL (2/2) but keeps fewer than waldio's bytes per
/// page: `Some(reserve)` for a write whose WAL waldio could never open (`PRAGMA
/// journal_mode=WAL` on a database stock SQLite made, or a backup of one in WAL mode);
/// `None` otherwise, or when the write does not cover the three bytes.
pub fn wal_without_reserve(data: &[u8], offset: u64) -> Option<u8> {
    let rv = index(data.len(), offset, READ_VERSION)?;
    let wv = index(data.len(), offset, WRITE_VERSION)?;
    let reserve = index(data.len(), offset, RESERVE)?;
    (data[rv] == WAL && data[wv] == WAL && data[reserve] < RESERVE_NEEDED).then_some(data[reserve])
}

/// Offset of the file change counter, and of the "version valid for" number that must equal it.
const CHANGE_COUNTER: usize = 24;
const VERSION_VALID_FOR: usize = 92;

/// What is stored for SQLite's write of page 1 (`data` at offset 0) in a rollback-journal mode
/// when the database is to be switched to WAL (option `waldio_journal=wal`): `Some(copy)`
/// with the header as `PRAGMA journal_mode=WAL` leaves it (write and read versions 2, the read
/// version stored as the mark) and the change counter one higher than SQLite wrote — so that
/// every connection, this one included, drops its cached page 1 at its next transaction,
/// reads the header again and opens the WAL. `None` when the write is not a whole header of a
/// rollback-mode database with waldio's reserve (no reserve: the WAL could not be opened).
pub fn switched_to_wal(data: &[u8], offset: u64) -> Option<Vec<u8>> {
    if offset != 0 || data.len() < 100 || &data[..16] != b"SQLite format 3\0" {
        return None;
    }
    if data[WRITE_VERSION] != 1 || data[READ_VERSION] != 1 || data[RESERVE] < RESERVE_NEEDED {
        return None;
    }
    let mut out = data.to_vec();
    out[WRITE_VERSION] = WAL;
    out[READ_VERSION] = MARK;
    let counter = u32::from_be_bytes([
        data[CHANGE_COUNTER],
        data[CHANGE_COUNTER + 1],
        data[CHANGE_COUNTER + 2],
        data[CHANGE_COUNTER + 3],
    ])
    .wrapping_add(1)
    .to_be_bytes();
    out[CHANGE_COUNTER..CHANGE_COUNTER + 4].copy_from_slice(&counter);
    out[VERSION_VALID_FOR..VERSION_VALID_FOR + 4].copy_from_slice(&counter);
    Some(out)
}

/// Whether the database file at `path` carries the mark (`false`: no file, or no header). Read
/// without closing any descriptor of the file this process has (`joj_vfs::locksafe`).
pub fn is_marked(path: &Path) -> std::io::Result<bool> {
    let mut h = [0u8; 100];
    match joj_vfs::locksafe::read_head(path, &mut h) {
        Ok(n) => Ok(n > READ_VERSION && h[READ_VERSION] == MARK),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether the database header `h` (its first 100 bytes, as on disk) is to be marked before its
/// WAL is used: it says WAL (2/2), unmarked, and the database has waldio's reserve.
pub fn needs_mark(h: &[u8; 100]) -> bool {
    &h[..16] == b"SQLite format 3\0" && stored(h, 0).is_some()
}

/// Mark the open database file `file` if its header says WAL (2/2) and it has the reserve: the
/// byte written through SQLite's own file (no descriptor of waldio's: closing one would drop
/// the process's locks), then synced, before this returns. `Ok(true)`: it was marked now;
/// `Ok(false)`: nothing to do (marked already, rollback mode, no header yet).
pub fn ensure(file: &mut joj_vfs::BaseFile) -> Result<bool, joj_vfs::SqliteError> {
    let mut h = [0u8; 100];
    if file.read(&mut h, 0)? == joj_vfs::ReadOutcome::Short || !needs_mark(&h) {
        return Ok(false);
    }
    file.write(&[MARK], READ_VERSION as u64)?;
    file.sync(joj_vfs::SyncFlags::from_raw(
        libsqlite3_sys::SQLITE_SYNC_NORMAL,
    ))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(wv: u8, rv: u8, reserve: u8) -> Vec<u8> {
        let mut h = vec![0u8; 100];
        h[..16].copy_from_slice(b"SQLite format 3\0");
        h[18] = wv;
        h[19] = rv;
        h[20] = reserve;
        h
    }

    #[test]
    fn a_wal_header_with_the_reserve_is_stored_marked_and_shown_unmarked() {
        let h = header(2, 2, 24);
        let mut on_disk = stored(&h, 0).expect("marked");
        assert_eq!(on_disk[19], MARK);
        assert_eq!(on_disk[18], 2, "the write version is SQLite's own");
        show(&mut on_disk, 0);
        assert_eq!(on_disk, h);
    }

    #[test]
    fn rollback_headers_and_databases_without_the_reserve_are_stored_as_they_are() {
        assert!(stored(&header(1, 1, 24), 0).is_none());
        assert!(stored(&header(2, 2, 0), 0).is_none());
        let mut other = header(2, 3, 24);
        show(&mut other, 0);
        assert_eq!(other[19], 3, "only the mark is translated");
    }

    #[test]
    fn writes_and_reads_that_do_not_cover_the_header_bytes_are_untouched() {
        let page = vec![2u8; 4096];
        assert!(
            stored(&page, 4096).is_none(),
            "page 2 holds 2s at its own byte 19"
        );
        let mut read = vec![MARK; 4096];
        show(&mut read, 4096);
        assert!(read.iter().all(|&b| b == MARK));
        // A read of bytes 10..30 covers byte 19 at index 9.
        let mut part = vec![0u8; 20];
        part[9] = MARK;
        show(&mut part, 10);
        assert_eq!(part[9], 2);
    }

    #[test]
    fn a_rollback_header_is_switched_to_wal_with_a_new_change_counter() {
        let mut h = header(1, 1, 24);
        h[24..28].copy_from_slice(&7u32.to_be_bytes());
        h[92..96].copy_from_slice(&7u32.to_be_bytes());
        let out = switched_to_wal(&h, 0).expect("switched");
        assert_eq!((out[18], out[19]), (2, MARK));
        assert_eq!(out[24..28], 8u32.to_be_bytes());
        assert_eq!(out[92..96], 8u32.to_be_bytes());
        let mut shown = out.clone();
        show(&mut shown, 0);
        assert_eq!((shown[18], shown[19]), (2, 2), "SQLite sees a WAL database");
        assert!(switched_to_wal(&header(1, 1, 0), 0).is_none(), "no reserve");
        assert!(
            switched_to_wal(&header(2, 2, 24), 0).is_none(),
            "WAL already"
        );
        assert!(switched_to_wal(&h[..50], 0).is_none(), "not a whole header");
        assert!(switched_to_wal(&h, 4096).is_none(), "not page 1");
    }

    #[test]
    fn a_wal_header_without_the_reserve_is_named_with_its_reserve() {
        assert_eq!(wal_without_reserve(&header(2, 2, 0), 0), Some(0));
        assert_eq!(wal_without_reserve(&header(2, 2, 8), 0), Some(8));
        assert_eq!(
            wal_without_reserve(&header(2, 2, 24), 0),
            None,
            "waldio's own"
        );
        assert_eq!(
            wal_without_reserve(&header(1, 1, 0), 0),
            None,
            "rollback mode"
        );
        assert_eq!(
            wal_without_reserve(&header(2, 2, 0)[..20], 0),
            None,
            "no reserve byte"
        );
    }

    #[test]
    fn is_marked_reads_the_mark_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        std::fs::write(&db, stored(&header(2, 2, 24), 0).unwrap()).unwrap();
        assert!(is_marked(&db).unwrap());
        let rb = dir.path().join("rb.db");
        std::fs::write(&rb, header(1, 1, 24)).unwrap();
        assert!(!is_marked(&rb).unwrap());
        assert!(!is_marked(&dir.path().join("missing.db")).unwrap());
        let short = dir.path().join("short.db");
        std::fs::write(&short, b"SQLite").unwrap();
        assert!(!is_marked(&short).unwrap());
    }
}
