//! What VFS calls return besides errors: a read's outcome, a full pathname, and the opaque
//! memory handles of shared memory and memory-mapped pages (which only a base VFS can make: a
//! Rust VFS either forwards them or tells SQLite it has none).

use std::ffi::{c_int, c_void};
use std::path::PathBuf;
use std::ptr::NonNull;

/// How a read went. SQLite's contract for a short read: the bytes the file did not supply are
/// zero and the result is `SQLITE_IOERR_SHORT_READ` (SQLite reads a new database's header that
/// way). [`ReadOutcome::from_filled`] keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum ReadOutcome {
    /// Every byte of the buffer came from the file.
    Full,
    /// The file ended inside the range; every byte it did not supply is zero.
    Short,
}

impl ReadOutcome {
    /// The outcome of a read whose first `filled` bytes came from the file: zeroes the rest of
    /// `buf` and says `Short` if there is a rest.
    pub fn from_filled(buf: &mut [u8], filled: usize) -> ReadOutcome {
        if filled >= buf.len() {
            return ReadOutcome::Full;
        }
        buf[filled..].fill(0);
        ReadOutcome::Short
    }
}

/// The answer of `xFullPathname`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullPathname {
    pub path: PathBuf,
    /// The name went through a symbolic link (`SQLITE_OK_SYMLINK`: SQLite refuses it with
    /// `SQLITE_OPEN_NOFOLLOW`).
    pub through_symlink: bool,
}

impl FullPathname {
    pub fn new(path: PathBuf) -> FullPathname {
        FullPathname {
            path,
            through_symlink: false,
        }
    }
}

/// The answer of `xShmMap`: a region of the shared-memory index, or none (it does not exist
/// and SQLite did not ask to extend). Only a base file makes a mapped one.
#[derive(Debug)]
pub struct ShmMapping {
    pub(crate) region: *mut c_void,
    /// `SQLITE_OK`, or a `SQLITE_READONLY*` code that comes with a usable region.
    pub(crate) code: c_int,
}

impl ShmMapping {
    /// No region (`*pp = NULL`, `SQLITE_OK`).
    pub fn unmapped() -> ShmMapping {
        ShmMapping {
            region: std::ptr::null_mut(),
            code: libsqlite3_sys::SQLITE_OK,
        }
    }

    pub fn is_mapped(&self) -> bool {
        !self.region.is_null()
    }
}

/// A page `xFetch` mapped into memory; given back with `xUnfetch`. Only a base file makes one.
#[derive(Debug)]
pub struct FetchedPage {
    pub(crate) ptr: NonNull<c_void>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_read_zeroes_what_the_file_did_not_supply() {
        let mut buf = [7u8; 8];
        assert_eq!(ReadOutcome::from_filled(&mut buf, 3), ReadOutcome::Short);
        assert_eq!(buf, [7, 7, 7, 0, 0, 0, 0, 0]);
        let mut full = [7u8; 4];
        assert_eq!(ReadOutcome::from_filled(&mut full, 4), ReadOutcome::Full);
        assert_eq!(full, [7; 4]);
        assert_eq!(ReadOutcome::from_filled(&mut [], 0), ReadOutcome::Full);
    }
}
