//! Starting the supervised command: fork, then in the child only async-signal-safe calls —
//! `dup2`, `chdir`, `ptrace(PTRACE_TRACEME)`, `seccomp`, `execv` — on memory prepared before
//! the fork. A failed exec ends the child with the errno as its exit status, which the parent
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

/// Fork the command, traced by this thread and under the filter, in `cwd`; its pid.
pub(crate) fn fork_traced(
    exe: &Path,
    argv: &[OsString],
    cwd: &Path,
    stdout_to_stderr: bool,
    prog: &[libc::sock_filter],
) -> std::io::Result<libc::pid_t> {
    let exe = cstring(exe.as_os_str())?;
    let cwd = cstring(cwd.as_os_str())?;
    let args: Vec<CString> = argv.iter().map(|a| cstring(a)).collect::<Result<_, _>>()?;
    let mut arg_ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    arg_ptrs.push(std::ptr::null());
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
            if stdout_to_stderr && libc::dup2(2, 1) < 0 {
                fail();
            }
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
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
            if filter::install(prog).is_err() {
                libc::_exit(SECCOMP_FAILED);
            }
            libc::execv(exe.as_ptr(), arg_ptrs.as_ptr());
            fail();
        }
    }
    Ok(pid)
}
