//! The database file's mark (`docs/formats/waldio.md`, "The database file's marker"): byte 19 of
//! the header, SQLite's file-format read version, is stored as [`MARK`] while the header says WAL
//! and the database keeps waldio's reserve, so that a SQLite without the waldio VFS refuses the
//! database (`SQLITE_NOTADB`) instead of reading it without the commits in the waldio WAL.
//! SQLite through waldio sees 2. Pure translations plus one durable marking of a file.

use crate::layout::RESERVE_NEEDED;
use std::os::unix::fs::FileExt;
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

/// The first 100 bytes of the database file at `path` (`None`: no file, or shorter).
fn header(f: &std::fs::File) -> std::io::Result<Option<[u8; 100]>> {
    let mut h = [0u8; 100];
    match f.read_exact_at(&mut h, 0) {
        Ok(()) => Ok(Some(h)),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether the database file at `path` carries the mark (`false`: no file, or no header).
pub fn is_marked(path: &Path) -> std::io::Result<bool> {
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    Ok(header(&f)?.is_some_and(|h| h[READ_VERSION] == MARK))
}

/// Mark the database file at `path` if its header says WAL (2/2) and it has the reserve: the
/// byte written with `pwrite`, then `fdatasync`, before this returns. `Ok(true)`: it was
/// marked now; `Ok(false)`: nothing to do (marked already, rollback mode, no header yet).
pub fn ensure(path: &Path) -> std::io::Result<bool> {
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let Some(h) = header(&f)? else {
        return Ok(false);
    };
    if &h[..16] != b"SQLite format 3\0" || stored(&h, 0).is_none() {
        return Ok(false);
    }
    f.write_all_at(&[MARK], READ_VERSION as u64)?;
    f.sync_data()?;
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
    fn ensure_marks_a_wal_database_once_and_leaves_others_alone() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        std::fs::write(&db, header(2, 2, 24)).unwrap();
        assert!(ensure(&db).unwrap());
        assert_eq!(std::fs::read(&db).unwrap()[19], MARK);
        assert!(!ensure(&db).unwrap(), "already marked");
        assert!(is_marked(&db).unwrap());
        let rb = dir.path().join("rb.db");
        std::fs::write(&rb, header(1, 1, 24)).unwrap();
        assert!(!ensure(&rb).unwrap());
        assert_eq!(std::fs::read(&rb).unwrap()[19], 1);
        assert!(!is_marked(&rb).unwrap());
        assert!(!ensure(&dir.path().join("missing.db")).unwrap());
        let short = dir.path().join("short.db");
        std::fs::write(&short, b"SQLite").unwrap();
        assert!(!ensure(&short).unwrap());
    }
}
