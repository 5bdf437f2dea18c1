//! The system calls the accounting VFS makes itself (through rustix): `fsync` when an experiment
//! chose it over the unix VFS's `fdatasync`, a directory's sync, and the checks that a
//! descriptor is the file and that a directory is there. None opens a file SQLite may lock.

use crate::counters::SyncCall;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
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

/// Whether the directory of `path` exists (the unix VFS syncs it only if it can open it).
pub(super) fn directory_exists(path: &Path) -> bool {
    rustix::fs::stat(directory_of(path))
        .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir())
}

/// Whether `fd` is an open descriptor of `path`, or for a file without a name, of a regular
/// file. Guards the assumption about the unix VFS's file layout.
///
/// `path` may no longer lead to the file just opened: another process may have renamed a file
/// over it or unlinked it in between (stock SQLite opens then, so joj must too). So the path is
/// first compared by device and inode, and when that differs, by what the kernel says the
/// descriptor is (`/proc/self/fd`): the same path, or the same path marked `(deleted)`. A
/// descriptor of another file — what a different layout would give — is neither.
pub(super) fn fd_matches(fd: BorrowedFd<'_>, path: Option<&Path>) -> bool {
    let Ok(st) = rustix::fs::fstat(fd) else {
        return false;
    };
    let Some(path) = path else {
        return rustix::fs::FileType::from_raw_mode(st.st_mode)
            == rustix::fs::FileType::RegularFile;
    };
    if rustix::fs::stat(path).is_ok_and(|sp| st.st_dev == sp.st_dev && st.st_ino == sp.st_ino) {
        return true;
    }
    let Ok(named) = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())) else {
        return false;
    };
    let named = named.as_os_str().as_bytes();
    let path = path.as_os_str().as_bytes();
    named == path || named.strip_suffix(b" (deleted)") == Some(path)
}
