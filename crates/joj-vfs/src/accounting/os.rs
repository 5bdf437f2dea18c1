//! The system calls the accounting VFS makes itself (through rustix): the sync call of the
//! caller's choice, a directory's sync, unlink, and the check that a descriptor is the file.

use crate::counters::SyncCall;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

/// Run `call` on `fd`, retrying on `EINTR`; `true` once it returned success.
pub(super) fn sync_fd(call: SyncCall, fd: BorrowedFd<'_>) -> bool {
    loop {
        let r = match call {
            SyncCall::Fsync => rustix::fs::fsync(fd),
            SyncCall::Fdatasync => rustix::fs::fdatasync(fd),
        };
        match r {
            Ok(()) => return true,
            Err(Errno::INTR) => continue,
            Err(_) => return false,
        }
    }
}

/// The directory `path` is in (`.` for a bare name).
fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Sync the directory of `path` with `call`: `None` if the directory cannot be opened (SQLite's
/// unix VFS skips those too, e.g. without permission), else whether the sync succeeded.
pub(super) fn sync_directory_of(call: SyncCall, path: &Path) -> Option<bool> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let dir = rustix::fs::open(directory_of(path), flags, Mode::empty()).ok()?;
    Some(sync_fd(call, dir.as_fd()))
}

/// Why an unlink failed, as SQLite's delete codes tell it apart.
pub(super) enum UnlinkError {
    NotFound,
    Other,
}

pub(super) fn unlink(path: &Path) -> Result<(), UnlinkError> {
    rustix::fs::unlink(path).map_err(|e| {
        if e == Errno::NOENT {
            UnlinkError::NotFound
        } else {
            UnlinkError::Other
        }
    })
}

/// Whether `fd` is an open descriptor of `path` (same device and inode), or for a file without
/// a name, of a regular file. Guards the assumption about the unix VFS's file layout.
pub(super) fn fd_matches(fd: BorrowedFd<'_>, path: Option<&Path>) -> bool {
    let Ok(st) = rustix::fs::fstat(fd) else {
        return false;
    };
    let Some(path) = path else {
        return rustix::fs::FileType::from_raw_mode(st.st_mode)
            == rustix::fs::FileType::RegularFile;
    };
    let Ok(sp) = rustix::fs::stat(path) else {
        return false;
    };
    st.st_dev == sp.st_dev && st.st_ino == sp.st_ino
}
