//! Reading the start of a file SQLite may hold POSIX advisory locks on, from code that is not a
//! VFS call on it (a header check before an open, a diagnostic SQL function).
//!
//! On Linux a process's POSIX locks on a file belong to the process and the inode: closing *any*
//! descriptor of the file drops all of them, which is why SQLite's unix VFS keeps one record per
//! inode and defers closes. Opening a file only to read its header and closing it again would
//! silently release the locks of every connection of this process on it (a commit in another
//! process could then interleave with one in this process, and one of them be lost). So
//! [`read_head`] opens nothing while the process has a descriptor of the file: it reads through
//! that descriptor (`pread`, which touches no lock) and leaves it open. When the process has no
//! descriptor of the file, it opens, reads and closes one of its own on a thread with a
//! descriptor table of its own (`unshare(CLONE_FILES)`): a POSIX lock is owned by the table it
//! was taken from, and a close drops only the locks of the closing thread's table, so even a
//! connection that opens the file and locks it meanwhile keeps its locks. (It used to open in
//! the process's table and close only if no other descriptor had appeared by then: one that
//! appeared between that look and the close lost its locks; one that was there kept a
//! descriptor of ours open for good.)

use rustix::fs::{Mode, OFlags};
use std::os::fd::{AsFd, BorrowedFd, RawFd};
use std::path::Path;

fn same_file(fd: BorrowedFd<'_>, dev: u64, ino: u64) -> bool {
    rustix::fs::fstat(fd).is_ok_and(|st| st.st_dev == dev && st.st_ino == ino)
}

/// Descriptors of this process (other than `except`) that refer to the inode (`dev`, `ino`).
fn descriptors_of(dev: u64, ino: u64, except: Option<RawFd>) -> Vec<RawFd> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<RawFd>().ok())
        .filter(|&n| Some(n) != except)
        .filter(|&n| {
            // SAFETY: the number is only passed to fstat; a descriptor closed (or reused for
            // another file) meanwhile gives an error or another inode, both read as "not it".
            let fd = unsafe { BorrowedFd::borrow_raw(n) };
            same_file(fd, dev, ino)
        })
        .collect()
}

/// Read up to `buf.len()` bytes from the start of `path` without closing any descriptor of it
/// that this process had (see the module documentation); the number of bytes read.
pub fn read_head(path: &Path, buf: &mut [u8]) -> std::io::Result<usize> {
    let st = rustix::fs::stat(path)?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        // A FIFO would block the open, a device would be read as a database.
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    let (dev, ino) = (st.st_dev, st.st_ino);
    for n in descriptors_of(dev, ino, None) {
        // SAFETY: as in `descriptors_of`: the number is only read from with pread, and the
        // read is kept only if the descriptor still refers to the file afterwards.
        let fd = unsafe { BorrowedFd::borrow_raw(n) };
        if let Ok(got) = rustix::io::pread(fd, &mut *buf, 0) {
            if same_file(fd, dev, ino) {
                return Ok(got);
            }
        }
    }
    read_in_a_table_of_its_own(path, buf).unwrap_or_else(|| {
        in_the_process_table(path, OFlags::RDONLY, (dev, ino), |fd| {
            Ok(rustix::io::pread(fd, &mut *buf, 0)?)
        })
    })
}

/// Open `path`, read its start into `buf` and close it, on a thread whose descriptor table is
/// its own: the close drops no lock a descriptor of the process's table holds. `None` where
/// a thread may not have a table of its own (see [`in_a_table_of_its_own`]).
fn read_in_a_table_of_its_own(path: &Path, buf: &mut [u8]) -> Option<std::io::Result<usize>> {
    in_a_table_of_its_own(path, OFlags::RDONLY, |fd| {
        Ok(rustix::io::pread(fd, buf, 0)?)
    })
}

/// At most this much of `/proc/locks` is read (about 700,000 locks): a bound, not a limit met.
const PROC_LOCKS_MAX_BYTES: usize = 64 << 20;

/// Whether a line of `/proc/locks` satisfies `held`, read so that a lock held throughout is
/// not missed while other locks come and go.
///
/// The kernel serves `/proc/locks` a record at a time by its index in the list, taking the
/// list's lock for one `read` call only. A caller that reads it in small pieces (as
/// `std::fs::read_to_string` does: a 32-byte probe first) gets the next piece by index after
/// locks earlier in the list were dropped or added, and skips or repeats a line: measured here,
/// a lock held throughout was missing from 12-32 % of such reads while four threads took and
/// dropped locks. One `read` of a large buffer gets up to a page of records under the list's
/// lock, which is the whole list below about 60 locks; a longer list is still read in pages, so
/// the search is made up to three times before the answer is no.
pub fn proc_locks_any(held: impl Fn(&str) -> bool) -> std::io::Result<bool> {
    use std::io::Read;
    for _ in 0..3 {
        let mut f = std::fs::File::open("/proc/locks")?;
        let mut text = Vec::new();
        let mut piece = vec![0u8; 1 << 16];
        loop {
            let n = f.read(&mut piece)?;
            if n == 0 || text.len() + n > PROC_LOCKS_MAX_BYTES {
                break;
            }
            text.extend_from_slice(&piece[..n]);
        }
        if String::from_utf8_lossy(&text).lines().any(&held) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Where no thread may have a descriptor table of its own: `work` on `path` opened in the
/// process's table (it had no descriptor of the file a moment ago, so no lock on it); if one
/// appeared meanwhile (another thread opened the file), ours is left open rather than closed,
/// so that no lock taken through it since is dropped.
fn in_the_process_table<T>(
    path: &Path,
    access: OFlags,
    (dev, ino): (u64, u64),
    work: impl FnOnce(BorrowedFd<'_>) -> std::io::Result<T>,
) -> std::io::Result<T> {
    let own = opened_regular(path, access)?;
    let own_raw = std::os::fd::AsRawFd::as_raw_fd(&own);
    let out = if same_file(own.as_fd(), dev, ino) {
        work(own.as_fd())
    } else {
        Err(std::io::Error::other(format!(
            "{} was replaced while it was read",
            path.display()
        )))
    };
    if !descriptors_of(dev, ino, Some(own_raw)).is_empty() {
        std::mem::forget(own);
    }
    out
}

/// Write `data` at `offset` of the regular file `path` and sync it, through a descriptor opened
/// and closed on a thread whose descriptor table is its own: the close drops no lock the
/// process holds on the file (a connection of the application, when joj runs in it as an
/// extension).
pub fn write_at(path: &Path, offset: u64, data: &[u8]) -> std::io::Result<()> {
    let write = |fd: BorrowedFd<'_>| {
        let n = rustix::io::pwrite(fd, data, offset)?;
        if n != data.len() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::WriteZero,
                format!("{} of {} bytes written", n, data.len()),
            ));
        }
        Ok(rustix::fs::fsync(fd)?)
    };
    in_a_table_of_its_own(path, OFlags::WRONLY, write).unwrap_or_else(|| {
        let st = rustix::fs::stat(path)?;
        in_the_process_table(path, OFlags::WRONLY, (st.st_dev, st.st_ino), write)
    })
}

/// Run `work` on `path` opened with `access` (a regular file only: not through a final link,
/// without blocking), on a thread that first takes a descriptor table of its own. `None` when
/// the thread may not (`unshare` refused: Docker's and Kubernetes' default seccomp profiles
/// allow it only with `CAP_SYS_ADMIN`).
fn in_a_table_of_its_own<T: Send>(
    path: &Path,
    access: OFlags,
    work: impl FnOnce(BorrowedFd<'_>) -> std::io::Result<T> + Send,
) -> Option<std::io::Result<T>> {
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: this thread uses only the descriptor it opens below, never one of the
            // process's table, and hands back bytes, not descriptors.
            match unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::FILES) } {
                Ok(()) => {}
                Err(rustix::io::Errno::PERM | rustix::io::Errno::NOSYS) => return None,
                Err(e) => return Some(Err(e.into())),
            }
            Some(opened_regular(path, access).and_then(|own| work(own.as_fd())))
        })
        .join()
        .unwrap_or_else(|_| {
            Some(Err(std::io::Error::other(
                "the thread on its own table panicked",
            )))
        })
    })
}

/// `path` opened with `access`, if it is a regular file: not through a final link, without
/// blocking on a FIFO, checked on the descriptor.
fn opened_regular(path: &Path, access: OFlags) -> std::io::Result<rustix::fd::OwnedFd> {
    let own = rustix::fs::open(
        path,
        access | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let st = rustix::fs::fstat(&own)?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(own)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_through_an_open_descriptor_without_closing_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"hello world").unwrap();
        let held = std::fs::File::open(&p).unwrap();
        let mut buf = [0u8; 5];
        assert_eq!(read_head(&p, &mut buf).unwrap(), 5);
        assert_eq!(&buf, b"hello");
        // The held descriptor is still open and usable.
        let st = rustix::fs::fstat(&held).unwrap();
        assert_eq!(st.st_size, 11);
    }

    #[test]
    fn reads_a_file_nobody_has_open() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g");
        std::fs::write(&p, b"abc").unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(read_head(&p, &mut buf).unwrap(), 3);
        assert_eq!(&buf[..3], b"abc");
        assert!(read_head(&dir.path().join("missing"), &mut buf).is_err());
    }

    /// The process's POSIX write lock on `inode` of `path`, as `/proc/locks` lists it.
    fn locked_here(path: &Path) -> bool {
        let st = rustix::fs::stat(path).unwrap();
        let id = format!(
            " {} {:02x}:{:02x}:{} ",
            std::process::id(),
            rustix::fs::major(st.st_dev),
            rustix::fs::minor(st.st_dev),
            st.st_ino
        );
        proc_locks_any(|l| l.contains("POSIX") && l.contains("WRITE") && l.contains(&id)).unwrap()
    }

    /// A lock held throughout is found in every read of `/proc/locks` while four threads take
    /// and drop locks of their own (read in small pieces, 12-32 % of reads missed it).
    #[test]
    fn a_lock_held_throughout_is_found_while_others_come_and_go() {
        use std::sync::atomic::{AtomicBool, Ordering};
        /// Stops the churning threads when the test ends, by a failed assertion too (else the
        /// scope would wait for them for ever).
        struct StopOnDrop<'a>(&'a AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for t in 0..4 {
                let (stop, p) = (&stop, dir.path().join(format!("churn{t}")));
                s.spawn(move || {
                    std::fs::write(&p, b"x").unwrap();
                    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
                    while !stop.load(Ordering::Relaxed) {
                        use rustix::fs::FlockOperation::{
                            NonBlockingLockExclusive, NonBlockingUnlock,
                        };
                        rustix::fs::fcntl_lock(&f, NonBlockingLockExclusive).unwrap();
                        rustix::fs::fcntl_lock(&f, NonBlockingUnlock).unwrap();
                    }
                });
            }
            let _stop = StopOnDrop(&stop);
            let (p, _held) = a_locked_database(dir.path());
            let missed = (0..1000).filter(|_| !locked_here(&p)).count();
            assert_eq!(
                missed, 0,
                "reads of /proc/locks that missed a held lock, of 1000"
            );
        });
    }

    /// `dir/db`, held open and locked by the process (F_SETLK on the whole file: a POSIX lock,
    /// owned by the process's descriptor table), as a connection of the application holds it.
    fn a_locked_database(dir: &Path) -> (std::path::PathBuf, std::fs::File) {
        let p = dir.join("db");
        std::fs::write(&p, b"SQLite format 3").unwrap();
        let held = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        rustix::fs::fcntl_lock(&held, rustix::fs::FlockOperation::NonBlockingLockExclusive)
            .unwrap();
        assert!(locked_here(&p));
        (p, held)
    }

    /// A connection of this process that opened the file and locked it while `read_head` had
    /// found no descriptor of it: the read's own descriptor is closed in a table of its own,
    /// and the lock stays.
    #[test]
    fn a_lock_taken_meanwhile_is_kept_when_the_reads_descriptor_closes() {
        let dir = tempfile::tempdir().unwrap();
        let (p, _held) = a_locked_database(dir.path());
        let mut buf = [0u8; 6];
        let read = read_in_a_table_of_its_own(&p, &mut buf).expect(
            "a thread with a descriptor table of its own: unshare(CLONE_FILES) is refused here",
        );
        assert_eq!(read.unwrap(), 6);
        assert_eq!(&buf, b"SQLite");
        assert!(
            locked_here(&p),
            "the lock of the process's own descriptor stays"
        );
    }

    /// Where no thread may have a table of its own (a container's seccomp profile refuses
    /// `unshare`), the read opens in the process's table and, with another descriptor of the
    /// file there, leaves its own open instead of closing it: the lock stays.
    #[test]
    fn without_a_table_of_its_own_the_read_keeps_its_descriptor_open_beside_another() {
        let dir = tempfile::tempdir().unwrap();
        let (p, _held) = a_locked_database(dir.path());
        let st = rustix::fs::stat(&p).unwrap();
        let mut buf = [0u8; 6];
        let got = in_the_process_table(&p, OFlags::RDONLY, (st.st_dev, st.st_ino), |fd| {
            Ok(rustix::io::pread(fd, &mut buf, 0)?)
        })
        .unwrap();
        assert_eq!((got, &buf), (6, b"SQLite"));
        assert!(
            locked_here(&p),
            "the lock of the process's own descriptor stays"
        );
    }

    #[test]
    fn a_fifo_or_a_device_is_refused_unopened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let mut buf = [0u8; 8];
        let e = read_head(&fifo, &mut buf).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
        let e = read_head(Path::new("/dev/zero"), &mut buf).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
}
