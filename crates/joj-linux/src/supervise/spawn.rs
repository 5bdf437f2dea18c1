//! Starting the supervised command: fork, then in the child only async-signal-safe calls —
//! `dup2`, `chdir`, `ptrace(PTRACE_TRACEME)`, `seccomp`, `sendmsg` (the filter's notification
//! listener goes to joj over a socket), `execv` — on memory prepared before the fork. A failed exec ends the child with the errno as its exit status, which the parent
//! reads at its first wait (a successful exec stops it with SIGTRAP first); a failed
//! `PTRACE_TRACEME` or `seccomp` with one of the statuses below, above every errno. `std::process`
//! cannot be used here: its child reports a failed exec by `write`, which the filter traps
//! before any tracer is ready, and then aborts.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::filter;

/// The program as `execvp` would find it: a name with a slash as a path (made absolute against
/// joj's working directory, since the command runs elsewhere), else the first executable
/// regular file of that name in `PATH`.
pub fn find_program(program: &OsStr) -> Option<PathBuf> {
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.as_bytes().contains(&b'/') {
        let p = std::path::absolute(program).ok()?;
        return executable(&p).then_some(p);
    }
    if program.is_empty() {
        return None;
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

fn cstring(s: &OsStr) -> std::io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "an argument holds a NUL byte",
        )
    })
}

/// The child's exit status when `PTRACE_TRACEME` failed: the child already has a tracer (joj
/// runs under `strace -f` or a debugger that follows children), and a process has one.
pub(crate) const TRACEME_FAILED: i32 = 250;
/// The child's exit status when installing the seccomp filter failed.
pub(crate) const SECCOMP_FAILED: i32 = 251;
/// The child's exit status when handing the filter's listener to joj failed.
pub(crate) const LISTENER_NOT_SENT: i32 = 252;

/// What the overlay is made of: `lower` (the directory the command starts in, which the overlay
/// then covers), `upper` and `work` (on the scratch filesystem).
///
/// `lower_dir` is the lower directory, held since joj checked it. The command's mount
/// namespace opens `lower` again (a descriptor of the host's namespace cannot be a layer or a
/// mount point there), with no symbolic link on its way, and goes on only if that is the same
/// directory (device and inode): whoever owns a directory on the way cannot swap another in
/// meanwhile. The overlay is then made of and mounted on that descriptor, and the command
/// starts from the mount's own root.
///
/// `copied`: `upper` is instead a copy of the lower directory ([`crate::start_copy`]), bind
/// mounted there (`nodev,nosuid` as the overlay) in place of the overlay; `work` is unused.
#[derive(Debug, Clone)]
pub struct Overlay {
    pub lower: PathBuf,
    pub lower_dir: std::sync::Arc<std::os::fd::OwnedFd>,
    pub upper: PathBuf,
    pub work: PathBuf,
    pub copied: bool,
}

/// The child's exit status when it could not mount the overlay (it sent joj the step and errno).
pub(crate) const OVERLAY_FAILED: i32 = 253;

/// The steps of mounting the overlay, as the child reports a failed one.
pub(crate) const OVERLAY_STEPS: [&str; 10] = [
    "unsharing the mount namespace",
    "making the mounts private",
    "opening the starting directory in the command's mount namespace (with no symbolic link on \
     its way, the very directory joj checked: ELOOP or ESTALE when one of its directories was \
     swapped since)",
    "opening an overlay filesystem context (fsopen)",
    "setting the overlay's layers (fsconfig lowerdir+, upperdir, workdir)",
    "creating the overlay (fsconfig create, fsmount)",
    "mounting the overlay on the directory (move_mount)",
    "cloning the copy of the directory as a mount (open_tree)",
    "making the copy's mount nodev,nosuid (mount_setattr)",
    "mounting the copy on the directory (move_mount)",
];

/// How to start the command.
pub(crate) struct Launch<'a> {
    pub(crate) exe: &'a Path,
    pub(crate) argv: &'a [OsString],
    pub(crate) cwd: &'a Path,
    pub(crate) stdout_to_stderr: bool,
    pub(crate) stderr_to: Option<std::os::fd::RawFd>,
    pub(crate) prog: &'a [libc::sock_filter],
    /// The socket the filter's listener (or an overlay failure) is sent over.
    pub(crate) listener_to: std::os::fd::RawFd,
    /// Run in a mount namespace of its own, with this overlay on `overlay.lower`.
    pub(crate) overlay: Option<&'a Overlay>,
    /// Variables set in the command's environment (joj's own environment otherwise).
    pub(crate) env: &'a [(OsString, OsString)],
}

impl Overlay {
    /// The starting directory `start` (absolute, as `getcwd` gives it), opened with no symbolic
    /// link followed on its way: the overlay is made of and mounted on this descriptor, so that
    /// whoever owns a directory on `start`'s way can no longer swap another one in by a link.
    pub fn open_lower(start: &Path) -> std::io::Result<std::os::fd::OwnedFd> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        Ok(rustix::fs::openat2(
            rustix::fs::CWD,
            start,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        )?)
    }

    /// The upper directory `upper` given the owner and mode of the lower one: the overlay's
    /// root shows the upper directory's, and a file the command makes there takes its group
    /// (set-group-ID) as in the directory itself.
    pub fn upper_like_lower(upper: &Path, lower: &std::os::fd::OwnedFd) -> std::io::Result<()> {
        let st = rustix::fs::fstat(lower)?;
        rustix::fs::chown(
            upper,
            Some(rustix::fs::Uid::from_raw(st.st_uid)),
            Some(rustix::fs::Gid::from_raw(st.st_gid)),
        )?;
        rustix::fs::chmod(upper, rustix::fs::Mode::from_raw_mode(st.st_mode & 0o7777))?;
        Ok(())
    }
}

/// The overlay's strings, made before the fork, and `lower_id`, the lower directory's device
/// and inode.
struct OverlayC {
    lower: CString,
    lower_id: (libc::dev_t, libc::ino_t),
    upper: CString,
    work: CString,
    copied: bool,
}

/// `/proc/self/fd/<fd>`, NUL-terminated, written into `buf` without allocating (between fork
/// and exec): the kernel resolves that magic link to the very directory open at `fd`.
fn proc_fd_path(fd: libc::c_int, buf: &mut [u8; 32]) -> *const libc::c_char {
    const PREFIX: &[u8] = b"/proc/self/fd/";
    buf[..PREFIX.len()].copy_from_slice(PREFIX);
    let mut digits = [0u8; 10];
    let mut n = fd.unsigned_abs();
    let mut k = digits.len();
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let end = PREFIX.len() + digits.len() - k;
    buf[PREFIX.len()..end].copy_from_slice(&digits[k..]);
    buf[end] = 0;
    buf.as_ptr().cast()
}

/// The overlay's strings and the directory the command starts in, made before the fork. Under
/// an overlay the command starts in its root (the mount's own descriptor), then in the
/// directory below it, by a relative path: its path is not resolved again from `/`.
fn prepared(l: &Launch<'_>) -> std::io::Result<(Option<OverlayC>, CString)> {
    let overlay = match l.overlay {
        Some(o) => {
            let st = rustix::fs::fstat(&*o.lower_dir)?;
            Some(OverlayC {
                lower: cstring(o.lower.as_os_str())?,
                lower_id: (st.st_dev, st.st_ino),
                upper: cstring(o.upper.as_os_str())?,
                work: cstring(o.work.as_os_str())?,
                copied: o.copied,
            })
        }
        None => None,
    };
    let cwd = match l.overlay {
        Some(o) => match l.cwd.strip_prefix(&o.lower) {
            Ok(rel) if rel.as_os_str().is_empty() => cstring(OsStr::new("."))?,
            Ok(rel) => cstring(rel.as_os_str())?,
            Err(_) => cstring(l.cwd.as_os_str())?,
        },
        None => cstring(l.cwd.as_os_str())?,
    };
    Ok((overlay, cwd))
}

/// Fork the command, traced by this thread and under the filter, in `cwd`; its pid.
pub(crate) fn fork_traced(l: &Launch<'_>) -> std::io::Result<libc::pid_t> {
    let exe = cstring(l.exe.as_os_str())?;
    let (overlay, cwd) = prepared(l)?;
    let args: Vec<CString> = l
        .argv
        .iter()
        .map(|a| cstring(a))
        .collect::<Result<_, _>>()?;
    let mut arg_ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    arg_ptrs.push(std::ptr::null());
    let mut env: Vec<CString> = Vec::new();
    for (k, v) in std::env::vars_os().filter(|(k, _)| l.env.iter().all(|(set, _)| set != k)) {
        env.push(env_entry(&k, &v)?);
    }
    for (k, v) in l.env {
        env.push(env_entry(k, v)?);
    }
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());
    // The command starts with the signal state a shell would give it, not joj's (Rust ignores
    // SIGPIPE; joj's threads may block signals): an empty mask, prepared before the fork.
    // SAFETY: sigemptyset fills the set it is given.
    let empty = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        set
    };
    // SAFETY: fork; the child below makes only async-signal-safe calls and then execs or exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: the child: system calls on buffers made before the fork, then exec or _exit.
        unsafe {
            let fail = || libc::_exit(*libc::__errno_location());
            // Standard output to joj's standard error first, then standard error to joj's pipe.
            if l.stdout_to_stderr && libc::dup2(2, 1) < 0 {
                fail();
            }
            if let Some(fd) = l.stderr_to
                && libc::dup2(fd, 2) < 0
            {
                fail();
            }
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            if let Some(o) = &overlay
                && let Err((step, errno)) = mount_overlay(o)
            {
                let mut msg = [b'O', step, 0, 0, 0, 0];
                msg[2..].copy_from_slice(&errno.to_le_bytes());
                libc::send(l.listener_to, msg.as_ptr().cast(), msg.len(), 0);
                libc::_exit(OVERLAY_FAILED);
            }
            if libc::chdir(cwd.as_ptr()) != 0 {
                fail();
            }
            if libc::ptrace(
                libc::PTRACE_TRACEME,
                0,
                std::ptr::null_mut::<libc::c_void>(),
                std::ptr::null_mut::<libc::c_void>(),
            ) != 0
            {
                libc::_exit(TRACEME_FAILED);
            }
            let listener = match filter::install(l.prog) {
                Ok(fd) => fd,
                Err(_) => libc::_exit(SECCOMP_FAILED),
            };
            if send_fd(l.listener_to, listener).is_err() {
                libc::_exit(LISTENER_NOT_SENT);
            }
            libc::close(listener);
            libc::close(l.listener_to);
            libc::execve(exe.as_ptr(), arg_ptrs.as_ptr(), env_ptrs.as_ptr());
            fail();
        }
    }
    Ok(pid)
}

/// `KEY=VALUE` for the command's environment.
fn env_entry(k: &OsStr, v: &OsStr) -> std::io::Result<CString> {
    let mut bytes = k.as_bytes().to_vec();
    bytes.push(b'=');
    bytes.extend_from_slice(v.as_bytes());
    CString::new(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "an environment variable holds a NUL byte",
        )
    })
}

const FSOPEN_CLOEXEC: libc::c_uint = 1;
const FSCONFIG_SET_STRING: libc::c_uint = 1;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
const FSMOUNT_CLOEXEC: libc::c_uint = 1;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;
/// The overlay is mounted `nodev,nosuid`: a device node or a set-user-ID file in the starting
/// directory (a tree root unpacked from someone's archive keeps them) opens nothing of the host
/// and runs as no one else. Links are followed and programs run, as in the command's own
/// directory: a write through a link leading out of it is reported (`outside_writes`).
const MOUNT_ATTR_NOSUID: libc::c_uint = 0x2;
const MOUNT_ATTR_NODEV: libc::c_uint = 0x4;

/// In the child, in its own mount namespace: the lower directory opened again by its path,
/// with no symbolic link on its way, and only if it is the directory joj checked (`ESTALE`
/// otherwise); its descriptor.
///
/// # Safety
/// Between fork and exec: only system calls on the strings given.
unsafe fn open_lower_again(o: &OverlayC) -> Result<libc::c_int, (u8, i32)> {
    let failed = || (2, unsafe { *libc::__errno_location() });
    // SAFETY: plain system calls on a NUL-terminated string and structures on the stack.
    unsafe {
        let mut how: libc::open_how = std::mem::zeroed();
        how.flags = (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64;
        how.resolve = libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
        let lower = libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            o.lower.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        );
        if lower < 0 {
            return Err(failed());
        }
        let lower = lower as libc::c_int;
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(lower, &mut st) < 0 {
            return Err(failed());
        }
        if (st.st_dev, st.st_ino) != o.lower_id {
            return Err((2, libc::ESTALE));
        }
        Ok(lower)
    }
}

/// In the child: a mount namespace of its own, every mount in it private (nothing it mounts
/// reaches the host's namespace), the overlay mounted on the lower directory's descriptor, and
/// the working directory its root. The layers are set one path each (`lowerdir+`, Linux 6.8),
/// so no path needs escaping. On failure: the step's index in [`OVERLAY_STEPS`] and the errno.
///
/// # Safety
/// Between fork and exec: only system calls on the strings given.
unsafe fn mount_overlay(o: &OverlayC) -> Result<(), (u8, i32)> {
    let errno = || unsafe { *libc::__errno_location() };
    let check = |step: u8, rc: libc::c_long| if rc < 0 { Err((step, errno())) } else { Ok(rc) };
    // SAFETY: plain system calls on NUL-terminated strings made before the fork.
    unsafe {
        check(0, libc::unshare(libc::CLONE_NEWNS) as libc::c_long)?;
        check(
            1,
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) as libc::c_long,
        )?;
        let lower = open_lower_again(o)?;
        if o.copied {
            return bind_copy(o, lower);
        }
        let mut lower_at = [0u8; 32];
        let lower_at = proc_fd_path(lower, &mut lower_at);
        let fs = check(
            3,
            libc::syscall(libc::SYS_fsopen, c"overlay".as_ptr(), FSOPEN_CLOEXEC),
        )? as libc::c_int;
        for (key, value) in [
            (c"lowerdir+", lower_at),
            (c"upperdir", o.upper.as_ptr()),
            (c"workdir", o.work.as_ptr()),
        ] {
            check(
                4,
                libc::syscall(
                    libc::SYS_fsconfig,
                    fs,
                    FSCONFIG_SET_STRING,
                    key.as_ptr(),
                    value,
                    0,
                ),
            )?;
        }
        check(
            5,
            libc::syscall(
                libc::SYS_fsconfig,
                fs,
                FSCONFIG_CMD_CREATE,
                std::ptr::null::<libc::c_char>(),
                std::ptr::null::<libc::c_char>(),
                0,
            ),
        )?;
        let mnt = check(
            5,
            libc::syscall(
                libc::SYS_fsmount,
                fs,
                FSMOUNT_CLOEXEC,
                MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID,
            ),
        )?;
        check(
            6,
            libc::syscall(
                libc::SYS_move_mount,
                mnt as libc::c_int,
                c"".as_ptr(),
                lower,
                c"".as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
            ),
        )?;
        check(6, libc::fchdir(mnt as libc::c_int) as libc::c_long)?;
        libc::close(mnt as libc::c_int);
        libc::close(fs);
        libc::close(lower);
    }
    Ok(())
}

const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_EMPTY_PATH: libc::c_uint = 0x1000;

/// `struct mount_attr` (linux/mount.h) of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// In the child, in its own mount namespace: the copy of the directory (`o.upper`) cloned as a
/// mount, made `nodev,nosuid`, mounted on the directory (`lower`), and the working directory
/// its root.
///
/// # Safety
/// Between fork and exec: only system calls on the strings given.
unsafe fn bind_copy(o: &OverlayC, lower: libc::c_int) -> Result<(), (u8, i32)> {
    let errno = || unsafe { *libc::__errno_location() };
    let check = |step: u8, rc: libc::c_long| if rc < 0 { Err((step, errno())) } else { Ok(rc) };
    let attr = MountAttr {
        attr_set: u64::from(MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID),
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: plain system calls on NUL-terminated strings made before the fork and a
    // structure on the stack.
    unsafe {
        let tree = check(
            7,
            libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                o.upper.as_ptr(),
                OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint,
            ),
        )? as libc::c_int;
        check(
            8,
            libc::syscall(
                libc::SYS_mount_setattr,
                tree,
                c"".as_ptr(),
                AT_EMPTY_PATH,
                &attr as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            ),
        )?;
        check(
            9,
            libc::syscall(
                libc::SYS_move_mount,
                tree,
                c"".as_ptr(),
                lower,
                c"".as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
            ),
        )?;
        check(9, libc::fchdir(tree) as libc::c_long)?;
        libc::close(tree);
        libc::close(lower);
    }
    Ok(())
}

/// Send descriptor `fd` over the socket `sock` (one byte with `SCM_RIGHTS`). Async-signal-safe:
/// the message lives on the stack.
fn send_fd(sock: std::os::fd::RawFd, fd: std::os::fd::RawFd) -> std::io::Result<()> {
    // SAFETY: CMSG_SPACE is a pure computation.
    const SPACE: usize = unsafe { libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) } as usize;
    // u64s: the buffer is read as a `cmsghdr`, which is 8-byte aligned (bytes would not be).
    let mut control = [0u64; SPACE.div_ceil(8)];
    let mut byte = [b'L'];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: an all-zero msghdr is valid; every pointer set below outlives the sendmsg.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = SPACE as _;
    // SAFETY: the control buffer has room for one header carrying one int.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<i32>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>(), fd);
    }
    // SAFETY: a message on the stack over a socket descriptor.
    if unsafe { libc::sendmsg(sock, &msg, 0) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// What the child sent over the socket.
pub(crate) enum Received {
    /// The filter's notification listener.
    Listener(std::os::fd::OwnedFd),
    /// The overlay could not be mounted: at step `step` of [`OVERLAY_STEPS`], with `errno`.
    OverlayFailed { step: u8, errno: i32 },
    /// Nothing: the child ended before it sent anything.
    Nothing,
}

/// Receive what the child sent: the descriptor [`send_fd`] sent, or an overlay failure.
pub(crate) fn recv_fd(sock: std::os::fd::RawFd) -> std::io::Result<Received> {
    use std::os::fd::FromRawFd;
    // SAFETY: CMSG_SPACE is a pure computation.
    const SPACE: usize = unsafe { libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) } as usize;
    // u64s: the buffer is read as a `cmsghdr`, which is 8-byte aligned (bytes would not be).
    let mut control = [0u64; SPACE.div_ceil(8)];
    let mut data = [0u8; 6];
    let mut iov = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: data.len(),
    };
    // SAFETY: an all-zero msghdr is valid; every pointer set below outlives the recvmsg.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = SPACE as _;
    let n = loop {
        // SAFETY: receiving into buffers on the stack.
        let n = unsafe { libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 {
            break n as usize;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    if n == 0 {
        return Ok(Received::Nothing);
    }
    if data[0] == b'O' && n == data.len() {
        let errno = i32::from_le_bytes([data[2], data[3], data[4], data[5]]);
        return Ok(Received::OverlayFailed {
            step: data[1],
            errno,
        });
    }
    // SAFETY: the kernel filled the control buffer; a header, if any, lies within it.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Ok(Received::Nothing);
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>());
        Ok(Received::Listener(std::os::fd::OwnedFd::from_raw_fd(fd)))
    }
}
