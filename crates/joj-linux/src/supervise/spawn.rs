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
#[derive(Debug, Clone)]
pub struct Overlay {
    pub lower: PathBuf,
    pub upper: PathBuf,
    pub work: PathBuf,
}

/// The child's exit status when it could not mount the overlay (it sent joj the step and errno).
pub(crate) const OVERLAY_FAILED: i32 = 253;

/// The steps of mounting the overlay, as the child reports a failed one.
pub(crate) const OVERLAY_STEPS: [&str; 6] = [
    "unsharing the mount namespace",
    "making the mounts private",
    "opening an overlay filesystem context (fsopen)",
    "setting the overlay's layers (fsconfig lowerdir+, upperdir, workdir)",
    "creating the overlay (fsconfig create, fsmount)",
    "mounting the overlay on the directory (move_mount)",
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

/// The overlay's strings, made before the fork.
struct OverlayC {
    lower: CString,
    upper: CString,
    work: CString,
}

/// Fork the command, traced by this thread and under the filter, in `cwd`; its pid.
pub(crate) fn fork_traced(l: &Launch<'_>) -> std::io::Result<libc::pid_t> {
    let exe = cstring(l.exe.as_os_str())?;
    let cwd = cstring(l.cwd.as_os_str())?;
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
    let overlay = match l.overlay {
        Some(o) => Some(OverlayC {
            lower: cstring(o.lower.as_os_str())?,
            upper: cstring(o.upper.as_os_str())?,
            work: cstring(o.work.as_os_str())?,
        }),
        None => None,
    };
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

/// In the child: a mount namespace of its own, every mount in it private (nothing it mounts
/// reaches the host's namespace), and the overlay mounted on `lower`. The layers are set one
/// path each (`lowerdir+`, Linux 6.8), so no path needs escaping. On failure: the step's
/// index in [`OVERLAY_STEPS`] and the errno.
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
        let fs = check(
            2,
            libc::syscall(libc::SYS_fsopen, c"overlay".as_ptr(), FSOPEN_CLOEXEC),
        )? as libc::c_int;
        for (key, value) in [
            (c"lowerdir+", &o.lower),
            (c"upperdir", &o.upper),
            (c"workdir", &o.work),
        ] {
            check(
                3,
                libc::syscall(
                    libc::SYS_fsconfig,
                    fs,
                    FSCONFIG_SET_STRING,
                    key.as_ptr(),
                    value.as_ptr(),
                    0,
                ),
            )?;
        }
        check(
            4,
            libc::syscall(
                libc::SYS_fsconfig,
                fs,
                FSCONFIG_CMD_CREATE,
                std::ptr::null::<libc::c_char>(),
                std::ptr::null::<libc::c_char>(),
                0,
            ),
        )?;
        let mnt = check(4, libc::syscall(libc::SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0))?;
        check(
            5,
            libc::syscall(
                libc::SYS_move_mount,
                mnt as libc::c_int,
                c"".as_ptr(),
                libc::AT_FDCWD,
                o.lower.as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH,
            ),
        )?;
        libc::close(mnt as libc::c_int);
        libc::close(fs);
    }
    Ok(())
}

/// Send descriptor `fd` over the socket `sock` (one byte with `SCM_RIGHTS`). Async-signal-safe:
/// the message lives on the stack.
fn send_fd(sock: std::os::fd::RawFd, fd: std::os::fd::RawFd) -> std::io::Result<()> {
    // SAFETY: CMSG_SPACE is a pure computation.
    const SPACE: usize = unsafe { libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) } as usize;
    let mut control = [0u8; SPACE];
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
    let mut control = [0u8; SPACE];
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
