//! The two fields of a SQLite database header waldio depends on: the page size and the reserved
//! bytes per page (where the embedded frame headers live).

use std::io::Read;
use std::path::Path;

/// The header fields waldio reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) page_size: u32,
    pub(crate) reserve: u8,
    /// The file-format write version is 2: the database is in WAL mode.
    pub(crate) wal_mode: bool,
}

/// The header of a database file (`None`: no file, or no SQLite header).
pub(crate) fn read(path: &Path) -> std::io::Result<Option<Header>> {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut h = [0u8; 100];
    let mut got = 0;
    while got < h.len() {
        let n = f.read(&mut h[got..])?;
        if n == 0 {
            break;
        }
        got += n;
    }
    if got < 100 || &h[..16] != b"SQLite format 3\0" {
        return Ok(None);
    }
    let raw = u16::from_be_bytes([h[16], h[17]]) as u32;
    let page = if raw == 1 { 65536 } else { raw };
    Ok(Some(Header {
        page_size: page,
        reserve: h[20],
        wal_mode: h[18] == 2,
    }))
}
