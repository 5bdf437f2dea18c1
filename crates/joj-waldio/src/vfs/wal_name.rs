//! Where a waldio WAL lives: SQLite names it `<db>-wal`; waldio keeps it in `<db>-waldio`
//! (`docs/formats/waldio.md`, "File name"), so that a SQLite without the waldio VFS, which
//! deletes or resets a `-wal` it cannot read, never finds it. A waldio WAL still at `-wal` (made
//! before the rename) is moved; a stock WAL with frames at `-wal` is refused, as before.

use crate::layout::{Decoded, HeaderBlock, WAL_HEADER_BYTES};
use crate::wal::{IoOp, WalError};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The physical file of the WAL SQLite calls `logical` (`X-wal` → `X-waldio`).
pub(crate) fn physical(logical: &Path) -> PathBuf {
    let mut s = logical.as_os_str().to_owned();
    s.push("dio");
    PathBuf::from(s)
}

/// The database whose WAL SQLite calls `logical` (`X-wal` → `X`), as SQLite named it.
pub(crate) fn database(logical: &Path) -> PathBuf {
    let b = logical.as_os_str().as_bytes();
    PathBuf::from(std::ffi::OsStr::from_bytes(
        b.strip_suffix(b"-wal").unwrap_or(b),
    ))
}

/// What is at SQLite's `-wal` name.
enum AtLogical {
    /// Nothing, an empty file, or a stock WAL header without frames: nothing to keep.
    Nothing,
    /// A waldio WAL (our magic): one made before WALs moved to `-waldio`.
    Waldio,
}

fn inspect(logical: &Path) -> Result<AtLogical, WalError> {
    use std::os::unix::fs::OpenOptionsExt;
    // Without blocking (a FIFO there would hold the open for ever) and not through a symlink,
    // which is refused as stock SQLite refuses it (it opens its files with `O_NOFOLLOW`): a link
    // could hide a WAL with frames, and one planted there could point anywhere. Anything else
    // that is not a regular file holds no WAL and is left alone.
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(logical);
    let mut f = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(AtLogical::Nothing),
        Err(source) if source.raw_os_error() == Some(libc::ELOOP) => {
            return Err(WalError::Io {
                op: IoOp::Open,
                what: "the -wal name is a symbolic link, which waldio refuses as SQLite does",
                source,
            });
        }
        Err(source) => {
            return Err(WalError::Io {
                op: IoOp::Open,
                what: "opening the -wal file",
                source,
            });
        }
    };
    let io = |source| WalError::Io {
        op: IoOp::Read,
        what: "reading the -wal file",
        source,
    };
    let meta = f.metadata().map_err(io)?;
    let len = meta.len();
    if len == 0 || !meta.is_file() {
        return Ok(AtLogical::Nothing);
    }
    let mut head = vec![0u8; 512.min(len as usize)];
    f.read_exact(&mut head).map_err(io)?;
    match HeaderBlock::decode(&head) {
        // Zero: preallocated blocks whose header block was never written — waldio's too.
        Decoded::Waldio(_) | Decoded::Torn | Decoded::NewerVersion(_) | Decoded::Zero => {
            Ok(AtLogical::Waldio)
        }
        Decoded::SqliteWal if len <= WAL_HEADER_BYTES as u64 => Ok(AtLogical::Nothing),
        Decoded::SqliteWal => Err(WalError::StockWal),
        Decoded::Foreign => Err(WalError::Foreign),
        Decoded::Invalid { field, value } => Err(WalError::InvalidHeader { field, value }),
    }
}

/// Whether a regular file is at SQLite's `-wal` name `logical` (not followed through a link):
/// a SQLite without waldio that has the database open in WAL mode has one there (waldio's own
/// WAL is at `-waldio`, and what [`settle`] lets through at `-wal` holds no frame yet).
pub(crate) fn regular_file(logical: &Path) -> bool {
    std::fs::symlink_metadata(logical).is_ok_and(|m| m.is_file())
}

/// Whether a SQLite without waldio may have the database `db` open in WAL mode now, judged
/// from outside SQLite's locking: a regular file at SQLite's `-wal` name while another process
/// holds a POSIX lock on the database or its `-shm` (every connection holds one while it has a
/// WAL-mode database open). Only for a WAL whose opener's lock was not seen (`mark::Unseen`):
/// otherwise the opener's EXCLUSIVE lock decides, which sees this process's connections too
/// and leaves no instant before the mark.
///
/// A false alarm is possible: an empty `-wal` a stock process left, while another waldio process
/// has the database open. The message says how to tell and what to do.
pub(crate) fn stock_wal_in_use(logical: &Path, db: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if !regular_file(logical) {
        return false;
    }
    let mut shm = db.as_os_str().to_owned();
    shm.push("-shm");
    [db, Path::new(&shm)]
        .iter()
        .any(|f| std::fs::metadata(f).is_ok_and(|m| locked_by_another_process(f, m.dev(), m.ino())))
}

/// The device number `/proc/locks` names the file `path` by: its filesystem's own
/// (`mountinfo`'s, found by the file's mount id), which on btrfs is not the subvolume's number
/// `stat` gives (`stat_dev`, used when the mount cannot be found).
fn lock_dev(path: &Path, stat_dev: u64) -> (u32, u32) {
    let of_stat = (rustix::fs::major(stat_dev), rustix::fs::minor(stat_dev));
    let Ok(stx) = rustix::fs::statx(
        rustix::fs::CWD,
        path,
        rustix::fs::AtFlags::empty(),
        rustix::fs::StatxFlags::MNT_ID,
    ) else {
        return of_stat;
    };
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return of_stat;
    };
    let id = stx.stx_mnt_id.to_string();
    info.lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .find(|f| f.first() == Some(&id.as_str()))
        .and_then(|f| {
            let (major, minor) = f.get(2)?.split_once(':')?;
            Some((major.parse().ok()?, minor.parse().ok()?))
        })
        .unwrap_or(of_stat)
}

/// Whether a process other than this one holds a POSIX (or open-file-description) lock on the
/// file `path` (`dev` and `ino` as `stat` gives them), as `/proc/locks` lists them (a waiter's
/// `->` lines are not held locks).
fn locked_by_another_process(path: &Path, dev: u64, ino: u64) -> bool {
    let me = std::process::id().to_string();
    let (major, minor) = lock_dev(path, dev);
    let id = format!("{major:02x}:{minor:02x}:{ino}");
    joj_vfs::locksafe::proc_locks_any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        matches!(f.get(1), Some(&"POSIX") | Some(&"OFDLCK"))
            && f.get(4).is_some_and(|pid| *pid != me)
            && f.get(5) == Some(&id.as_str())
    })
    .unwrap_or(false)
}

/// The physical WAL for SQLite's `logical` name, after moving a waldio WAL found at the logical
/// name (rename, then the directory synced) and refusing a stock WAL with frames there.
///
/// Openers of one database in several threads and processes may settle it at once, with no
/// lock between them (SQLite holds only a shared lock here): the move is one rename that will not
/// replace a file, so exactly one of them moves it, and the others find it gone, which is as
/// good. Two WALs is only a WAL at each name at the same moment.
pub(crate) fn settle(logical: &Path) -> Result<PathBuf, WalError> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    use rustix::io::Errno;
    let phys = physical(logical);
    if let AtLogical::Waldio = inspect(logical)? {
        let io = |what, source| WalError::Io {
            op: IoOp::Write,
            what,
            source,
        };
        let two = || WalError::TwoWals {
            old: logical.to_path_buf(),
            new: phys.clone(),
        };
        let moved = match renameat_with(CWD, logical, CWD, &phys, RenameFlags::NOREPLACE) {
            Ok(()) => true,
            // Another opener moved it first: the same file (its directory sync may still be
            // under way; a crash before it leaves the file at the old name, found again).
            Err(Errno::NOENT) => false,
            Err(Errno::EXIST) => return Err(two()),
            // A filesystem without the no-replace rename: look, then rename. A WAL at the new
            // name is two WALs only while the old name still holds one too (else another opener
            // has just moved it).
            Err(Errno::INVAL | Errno::NOSYS) if phys.exists() => match inspect(logical)? {
                AtLogical::Waldio => return Err(two()),
                AtLogical::Nothing => false,
            },
            Err(Errno::INVAL | Errno::NOSYS) => match std::fs::rename(logical, &phys) {
                Ok(()) => true,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
                Err(e) => return Err(io("moving the WAL to its -waldio name", e)),
            },
            Err(e) => return Err(io("moving the WAL to its -waldio name", e.into())),
        };
        if let (true, Some(dir)) = (moved, phys.parent()) {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            std::fs::File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| io("syncing the directory after moving the WAL", e))?;
        }
    }
    Ok(phys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_physical_name_is_the_logical_one_with_dio_appended() {
        assert_eq!(
            physical(Path::new("/d/app.db-wal")),
            Path::new("/d/app.db-waldio")
        );
    }

    #[test]
    fn nothing_or_an_empty_file_at_the_logical_name_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join("a.db-wal");
        assert_eq!(settle(&wal).unwrap(), dir.path().join("a.db-waldio"));
        std::fs::write(&wal, b"").unwrap();
        assert_eq!(settle(&wal).unwrap(), dir.path().join("a.db-waldio"));
        assert!(wal.exists(), "an empty file is not ours to remove");
    }

    #[test]
    fn a_fifo_at_the_logical_name_is_left_alone_without_blocking_and_a_symlink_refused() {
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join("a.db-wal");
        let c = std::ffi::CString::new(wal.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(settle(&wal).unwrap(), dir.path().join("a.db-waldio"));
        std::fs::remove_file(&wal).unwrap();
        // A link (here to an old waldio WAL elsewhere) is refused, and nothing is moved.
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, vec![0u8; 4096]).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &wal).unwrap();
        let refused = settle(&wal).unwrap_err().to_string();
        assert!(refused.contains("symbolic link"), "{refused}");
        assert!(elsewhere.exists() && !dir.path().join("a.db-waldio").exists());
    }

    #[test]
    fn openers_settling_one_old_wal_at_once_all_find_it_moved() {
        use std::sync::{Arc, Barrier};
        for _ in 0..40 {
            let dir = tempfile::tempdir().unwrap();
            let wal = dir.path().join("a.db-wal");
            // Zeros: a preallocated waldio WAL whose header block was never written.
            std::fs::write(&wal, vec![0u8; 4096]).unwrap();
            let barrier = Arc::new(Barrier::new(8));
            let openers: Vec<_> = (0..8)
                .map(|_| {
                    let (wal, barrier) = (wal.clone(), Arc::clone(&barrier));
                    std::thread::spawn(move || {
                        barrier.wait();
                        settle(&wal).map_err(|e| e.to_string())
                    })
                })
                .collect();
            let phys = dir.path().join("a.db-waldio");
            for o in openers {
                assert_eq!(o.join().unwrap(), Ok(phys.clone()));
            }
            assert!(!wal.exists());
            assert_eq!(std::fs::metadata(&phys).unwrap().len(), 4096);
        }
        // A WAL at both names at once is still two WALs.
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join("a.db-wal");
        std::fs::write(&wal, vec![0u8; 4096]).unwrap();
        std::fs::write(dir.path().join("a.db-waldio"), vec![0u8; 4096]).unwrap();
        assert!(matches!(settle(&wal), Err(WalError::TwoWals { .. })));
    }

    #[test]
    fn a_stock_wal_with_frames_or_foreign_bytes_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join("a.db-wal");
        let mut stock = vec![0u8; 4096];
        stock[..4].copy_from_slice(&0x377f_0682u32.to_be_bytes());
        std::fs::write(&wal, &stock).unwrap();
        assert!(matches!(settle(&wal), Err(WalError::StockWal)));
        std::fs::write(&wal, &stock[..32]).unwrap();
        assert!(
            settle(&wal).is_ok(),
            "a stock header without frames holds nothing"
        );
        std::fs::write(&wal, b"not a wal at all").unwrap();
        assert!(matches!(settle(&wal), Err(WalError::Foreign)));
    }
}
