//! The two fields of a SQLite database header waldio depends on: the page size and the reserved
//! bytes per page (where the embedded frame headers live).

use std::path::Path;

/// The header fields waldio reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) page_size: u32,
    pub(crate) reserve: u8,
    /// The file-format write version is 2: the database is in WAL mode.
    pub(crate) wal_mode: bool,
}

/// Bytes of the header waldio reads.
pub(crate) const BYTES: usize = 100;
/// Offset of the reserved bytes per page in the header.
pub(crate) const RESERVE_OFFSET: usize = 20;

/// The header in the first bytes of a database file (`None`: shorter, or not SQLite's).
pub(crate) fn parse(h: &[u8]) -> Option<Header> {
    if h.len() < BYTES || &h[..16] != b"SQLite format 3\0" {
        return None;
    }
    let raw = u16::from_be_bytes([h[16], h[17]]) as u32;
    let page = if raw == 1 { 65536 } else { raw };
    Some(Header {
        page_size: page,
        reserve: h[RESERVE_OFFSET],
        wal_mode: h[18] == 2,
    })
}

/// The header of a database file (`None`: no file, or no SQLite header), read without closing
/// any descriptor of it this process has (`joj_vfs::locksafe`): the file may be a database
/// this process has open, with locks.
pub(crate) fn read(path: &Path) -> std::io::Result<Option<Header>> {
    let mut h = [0u8; BYTES];
    match joj_vfs::locksafe::read_head(path, &mut h) {
        Ok(n) => Ok(parse(&h[..n])),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}
