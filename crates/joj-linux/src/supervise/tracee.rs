//! Reading a stopped tracee: its system call (PTRACE_GET_SYSCALL_INFO, the same on every
//! architecture), a path string from its memory (`/proc/<tid>/mem`), what its descriptors and
//! working directory name (`/proc/<tid>/fd`, `/proc/<tid>/cwd`, `/proc/<tid>/fdinfo`), and the
//! file a path or descriptor names, opened by joj for FIEMAP.

use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The longest path read from a tracee (PATH_MAX).
const PATH_MAX: usize = 4096;
const PAGE: u64 = 4096;

/// A system call as the tracee is about to make it (seccomp stop) or has made it (exit).
#[derive(Debug, Clone, Copy)]
pub(crate) enum CallInfo {
    Seccomp {
        nr: i64,
        args: [u64; 6],
    },
    /// The call returned `rval` (a negative errno when `is_error`).
    Exit {
        rval: i64,
        is_error: bool,
    },
    Other,
}

pub(crate) fn call_info(tid: libc::pid_t) -> std::io::Result<CallInfo> {
    // SAFETY: all-zero bytes are a valid ptrace_syscall_info (integers and a union of them).
    let mut info: libc::ptrace_syscall_info = unsafe { std::mem::zeroed() };
    // SAFETY: the kernel writes at most `size_of` bytes into `info`.
    let rc = unsafe {
        libc::ptrace(
            libc::PTRACE_GET_SYSCALL_INFO,
            tid,
            std::mem::size_of::<libc::ptrace_syscall_info>(),
            &mut info as *mut libc::ptrace_syscall_info,
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(match info.op {
        libc::PTRACE_SYSCALL_INFO_SECCOMP => {
            // SAFETY: `op` says the seccomp member is the one the kernel filled.
            let s = unsafe { info.u.seccomp };
            CallInfo::Seccomp {
                nr: s.nr as i64,
                args: s.args,
            }
        }
        libc::PTRACE_SYSCALL_INFO_EXIT => {
            // SAFETY: `op` says the exit member is the one the kernel filled.
            let e = unsafe { info.u.exit };
            CallInfo::Exit {
                rval: e.sval,
                is_error: e.is_error != 0,
            }
        }
        _ => CallInfo::Other,
    })
}

/// The NUL-terminated string at `addr` in the tracee, read page by page so that a string
/// ending just before an unmapped page is still read.
pub(crate) fn read_path(tid: libc::pid_t, addr: u64) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let mem = File::open(format!("/proc/{tid}/mem")).ok()?;
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < PATH_MAX {
        let chunk = (PAGE - at % PAGE) as usize;
        let mut buf = vec![0u8; chunk];
        let n = mem.read_at(&mut buf, at).ok()?;
        if n == 0 {
            return None;
        }
        if let Some(end) = buf[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..end]);
            return Some(PathBuf::from(std::ffi::OsString::from_vec(out)));
        }
        out.extend_from_slice(&buf[..n]);
        at += n as u64;
    }
    None
}

/// What `/proc/<tid>/fd/<fd>` names, without the kernel's ` (deleted)` mark.
pub(crate) fn fd_path(tid: libc::pid_t, fd: u64) -> Option<PathBuf> {
    let link = std::fs::read_link(format!("/proc/{tid}/fd/{fd}")).ok()?;
    let s = link.to_string_lossy();
    Some(match s.strip_suffix(" (deleted)") {
        Some(p) => PathBuf::from(p),
        None => link,
    })
}

/// `path` made absolute the way the kernel resolves it for the tracee: against `dirfd`
/// (`AT_FDCWD`: the working directory).
pub(crate) fn resolve(tid: libc::pid_t, dirfd: u64, path: &Path) -> Option<PathBuf> {
    if path.is_absolute() {
        return Some(path.to_path_buf());
    }
    let base = if dirfd as i32 == libc::AT_FDCWD {
        std::fs::read_link(format!("/proc/{tid}/cwd")).ok()?
    } else {
        fd_path(tid, dirfd)?
    };
    Some(base.join(path))
}

/// `path` (absolute) as the task sees it, reached from joj: through `/proc/<tid>/root`, which
/// also enters the task's mount namespace.
pub(crate) fn in_root(tid: libc::pid_t, path: &Path) -> PathBuf {
    let rel = path.strip_prefix("/").unwrap_or(path);
    PathBuf::from(format!("/proc/{tid}/root")).join(rel)
}

/// Most symbolic links followed in finding where an open leads (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// Most times one lookup is tried again after a racing mount or rename made it fail (EAGAIN):
/// a lookup loses such a race rarely (some 4 % of them while another thread mounts and unmounts
/// as fast as it can, the test below), so this many in a row do not happen.
const LOOKUP_TRIES: u32 = 64;

/// Where the task's open of `path` (absolute as the task names it, `..` not yet taken out)
/// leads: the path of the file it opens or creates, every symbolic link followed as the kernel
/// follows it for the task — in the task's root and mount namespace (`/proc/<tid>/root`, as
/// the root of the lookup) — the last one only when `follow_last` (no `O_NOFOLLOW`, not
/// `O_CREAT | O_EXCL`). `None` when it cannot be told (the task is gone, a directory on the way
/// is missing or unreadable), or when the path leads into `/proc` (`/dev/stdout`, `/dev/fd/N`,
/// `/proc/self/…`): those name the task's own descriptors and process, which a lookup made by
/// joj would take for joj's (no magic link is followed either). A path with no link on its
/// way is answered by one lookup.
///
/// A command run on an overlay of its directory writes through a link there to wherever it
/// points, as it would without joj: this is how joj tells such a write from one that lands on
/// the traced filesystem.
pub(crate) fn leads_to(tid: libc::pid_t, path: &Path, follow_last: bool) -> Option<PathBuf> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let root = rustix::fs::open(
        format!("/proc/{tid}/root"),
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let lookup = |p: &Path, flags: OFlags, resolve: ResolveFlags| {
        let rel = p.strip_prefix("/").unwrap_or(p);
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        // A `..` followed beneath a root fails with EAGAIN when a mount or rename anywhere on
        // the machine raced the lookup (openat2(2)): tried again, it is not "cannot be told".
        let mut tries = 0;
        loop {
            match rustix::fs::openat2(
                &root,
                rel,
                OFlags::PATH | OFlags::CLOEXEC | flags,
                Mode::empty(),
                ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS | resolve,
            ) {
                Err(rustix::io::Errno::AGAIN) if tries < LOOKUP_TRIES => tries += 1,
                done => return done,
            }
        }
    };
    let into_proc = |p: &Path| p.starts_with("/proc") || p.starts_with("/dev/fd");
    if into_proc(path) {
        return None;
    }
    // No link on the way (the file, or the directory a new one is made in): the path itself.
    let plain = ResolveFlags::NO_SYMLINKS;
    match lookup(path, OFlags::NOFOLLOW, plain) {
        Ok(fd) => {
            let st = rustix::fs::fstat(&fd).ok()?;
            if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::Symlink {
                return Some(path.to_path_buf());
            }
        }
        Err(rustix::io::Errno::NOENT) => {
            if lookup(path.parent()?, OFlags::empty(), plain).is_ok() {
                return Some(path.to_path_buf());
            }
        }
        Err(_) => {}
    }
    // Links on the way: followed by the kernel, the final one by hand when it dangles (an
    // open that may create makes its target).
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if into_proc(&path) {
            return None;
        }
        let last = if follow_last {
            OFlags::empty()
        } else {
            OFlags::NOFOLLOW
        };
        if let Ok(fd) = lookup(&path, last, ResolveFlags::empty()) {
            return fd_target(&fd).filter(|p| !into_proc(p));
        }
        let dir = fd_target(&lookup(path.parent()?, OFlags::empty(), ResolveFlags::empty()).ok()?)?;
        if into_proc(&dir) {
            return None;
        }
        let name = path.file_name()?;
        let at = dir.join(name);
        let Ok(link) = lookup(&at, OFlags::NOFOLLOW, ResolveFlags::empty()) else {
            return Some(at);
        };
        let target = rustix::fs::readlinkat(&link, "", Vec::new()).ok()?;
        let target = Path::new(std::ffi::OsStr::from_bytes(target.as_bytes()));
        path = if target.is_absolute() {
            target.to_path_buf()
        } else {
            dir.join(target)
        };
    }
    None
}

/// The path descriptor `fd` of joj's names (`/proc/self/fd`), as the namespace it is in sees it.
fn fd_target(fd: &std::os::fd::OwnedFd) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()
}

/// The process (thread group) `tid` belongs to, from `/proc/<tid>/status`.
pub(crate) fn tgid(tid: libc::pid_t) -> Option<libc::pid_t> {
    crate::syscall_trace::proc_tgid(tid)
}

/// The `flags` of the `struct open_how` at `addr` in the tracee (openat2's third argument).
pub(crate) fn open_how_flags(tid: libc::pid_t, addr: u64) -> Option<u64> {
    let mem = File::open(format!("/proc/{tid}/mem")).ok()?;
    let mut b = [0u8; 8];
    mem.read_exact_at(&mut b, addr).ok()?;
    Some(u64::from_le_bytes(b))
}

/// Whether descriptor `fd` of the tracee was opened with O_DSYNC (O_SYNC includes it), from
/// the `flags:` line of `/proc/<tid>/fdinfo/<fd>` (octal).
pub(crate) fn fd_is_dsync(tid: libc::pid_t, fd: u64) -> bool {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{tid}/fdinfo/{fd}")) else {
        return false;
    };
    text.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u64::from_str_radix(f.trim(), 8).ok())
        .is_some_and(|flags| flags & libc::O_DSYNC as u64 != 0)
}

/// Whether descriptor `fd` of the tracee is a directory.
pub(crate) fn fd_is_dir(tid: libc::pid_t, fd: u64) -> bool {
    std::fs::metadata(format!("/proc/{tid}/fd/{fd}")).is_ok_and(|m| m.is_dir())
}

/// The regular file at `path`, opened read-only without following a final symlink (unlink and
/// rename act on the link itself) and without blocking; `None` for anything else.
pub(crate) fn open_regular(path: &Path) -> Option<File> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()
}

/// The regular file behind descriptor `fd` of the tracee, opened anew through `/proc` (this
/// works also for a file already unlinked); `None` for anything else.
pub(crate) fn open_fd(tid: libc::pid_t, fd: u64) -> Option<File> {
    let link = format!("/proc/{tid}/fd/{fd}");
    if !std::fs::metadata(&link).ok()?.is_file() {
        return None;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&link)
        .ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A lookup beneath a root that follows `..` (a link `sub -> ../victim`) fails with EAGAIN
    /// when any mount or rename happens on the machine meanwhile (openat2(2)); it used to be
    /// taken for "cannot be told", and the open was put on the traced filesystem by the name
    /// the command gave (a CI run, while other tests mounted their filesystems).
    #[test]
    fn a_link_through_dot_dot_is_followed_while_something_mounts() {
        if !crate::testgate::root_test() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        let project = tmp.path().join("project");
        let mnt = tmp.path().join("mnt");
        for d in [&victim, &project, &mnt] {
            std::fs::create_dir(d).unwrap();
        }
        std::os::unix::fs::symlink("../victim", project.join("sub")).unwrap();
        let stop = AtomicBool::new(false);
        let tid = rustix::thread::gettid().as_raw_nonzero().get();
        let (resolved, tries) = std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    rustix::mount::mount(
                        "joj-test",
                        &mnt,
                        "tmpfs",
                        rustix::mount::MountFlags::empty(),
                        None,
                    )
                    .unwrap();
                    rustix::mount::unmount(&mnt, rustix::mount::UnmountFlags::DETACH).unwrap();
                }
            });
            let tries = 20_000;
            let resolved = (0..tries)
                .filter(|_| {
                    leads_to(tid, &project.join("sub/new.db"), true) == Some(victim.join("new.db"))
                })
                .count();
            stop.store(true, Ordering::Relaxed);
            (resolved, tries)
        });
        assert_eq!(resolved, tries);
    }
}
