//! Running a command under joj's supervision: every process and thread it starts is traced
//! with ptrace, and a seccomp filter stops them only at the system calls that decide where a
//! file's blocks belong or that make data durable ([`filter`]): unlink, rename, truncate,
//! fsync, fdatasync, sync_file_range, sync, syncfs, and writes (to find those on O_DSYNC /
//! O_SYNC descriptors or with RWF_DSYNC). At each stop the [`Observer`] is handed the file the
//! call is about, opened by joj — *before* an unlink, rename or truncate (so the extents of a
//! file the command deletes are known after it is gone), *after* a sync returned (when delayed
//! allocation has placed its blocks) — with the call's start and end on CLOCK_MONOTONIC, the
//! clock of the block trace.
//!
//! Why ptrace + seccomp rather than filesystem tracepoints or strace: it sees the same calls on
//! every filesystem (ext4, xfs and btrfs have no common tracepoint that names a path), the
//! command is stopped while joj reads the extents (a tracepoint fires after the fact, with an
//! inode number and no path), and other calls run at full speed (strace stops at every call and
//! gives text to parse). The cost, one stop per traced call, is counted in [`Supervision`].
//!
//! Two things the command can do out of joj's sight are made visible: opens that may write are
//! followed to their return, so a file written outside the scratch filesystem is reported by
//! its path ([`Observer::opened_for_writing`]); and io_uring's three calls stop, so a ring's use
//! is reported with what its submissions hold where they can be read ([`uring`],
//! [`Observer::io_uring`]) — a sync submitted on a ring is no system call joj stops at.
//!
//! Invariants: only this process's own children are traced; every tracee is registered in the
//! cleanup registry as it appears, so SIGINT / SIGTERM (and a run's error path) kill the command
//! before the filesystem it runs on is unmounted; a tracee is never left stopped.

mod filter;
mod spawn;
mod uring;

pub use spawn::find_program;
mod tracee;

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::cleanup;
use crate::tracefs::now_mono_ns;
use tracee::CallInfo;

/// A file the command is about to change or has synced, opened by joj.
#[derive(Debug)]
pub struct TouchedFile {
    /// The path the command named, made absolute (for a descriptor: what `/proc` says it is).
    pub path: PathBuf,
    pub file: File,
}

/// The sync-type system calls joj counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SyncKind {
    Fsync,
    Fdatasync,
    SyncFileRange,
    /// A write on an O_DSYNC / O_SYNC descriptor, or with RWF_DSYNC / RWF_SYNC.
    SyncWrite,
    /// `syncfs` or `sync`: no one file.
    WholeFs,
    /// `fsync` / `fdatasync` of a directory (SQLite's after creating or deleting a journal).
    Directory,
}

/// What the command is about to do to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// unlink, or a rename's source or replaced target: the path stops naming these blocks.
    Remove,
    Truncate,
}

/// What the command did with io_uring, as far as joj can see ([`uring`]).
#[derive(Debug)]
pub enum IoUring<'a> {
    /// A ring was set up (`io_uring_setup` returned).
    Setup,
    /// `io_uring_enter` with `submitted` new submissions; `unreadable` when what they are
    /// could not be read (a polled ring, a ring in the command's own memory, …).
    Enter { submitted: u32, unreadable: bool },
    /// `io_uring_register` (registered files are named by index, not descriptor).
    Register,
    /// A sync, or a write with `RWF_DSYNC` or on an `O_DSYNC` descriptor, submitted on a ring;
    /// `file` is `None` when its descriptor could not be resolved to a regular file.
    Sync {
        kind: SyncKind,
        file: Option<&'a TouchedFile>,
    },
    /// An open submitted on a ring: whether and where it writes is not seen.
    Open,
}

/// What the supervisor reports while the command runs.
pub trait Observer {
    /// Just before the command unlinks, renames, replaces (as a rename's target) or truncates
    /// `file`.
    fn before_change(&mut self, change: Change, file: &TouchedFile);
    /// A sync-type call returned; `file` is `None` for `sync` / `syncfs` and directories.
    fn synced(&mut self, kind: SyncKind, file: Option<&TouchedFile>, start_ns: u64, end_ns: u64);
    /// An open with flags that may write (`O_WRONLY`, `O_RDWR`, `O_CREAT`, `O_TRUNC`, `creat`)
    /// returned `file`, a regular file (`file.path`: what `/proc` names it).
    fn opened_for_writing(&mut self, _file: &TouchedFile) {}
    /// The command used io_uring.
    fn io_uring(&mut self, _event: IoUring<'_>) {}
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildExit {
    Code(i32),
    Signal(i32),
}

impl ChildExit {
    pub fn success(self) -> bool {
        self == ChildExit::Code(0)
    }
}

impl std::fmt::Display for ChildExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChildExit::Code(c) => write!(f, "exit status {c}"),
            ChildExit::Signal(s) => write!(f, "killed by signal {s}"),
        }
    }
}

/// The command's end and what supervising it cost.
#[derive(Debug, Clone, Copy)]
pub struct Supervision {
    pub exit: ChildExit,
    /// Processes and threads traced (the command's own included).
    pub tasks: u64,
    /// Stops at traced system calls (a sync counts twice: before and after).
    pub stops: u64,
    /// Time joj spent handling stops while the stopped task waited, in nanoseconds.
    pub handling_ns: u64,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SuperviseError {
    #[error("no command given; fix: put the program and its arguments after `--`")]
    NoCommand,
    #[error(
        "command not found: {program:?}; fix: give a program on PATH or a path to it \
         (relative paths are taken from joj's working directory, not the scratch filesystem)"
    )]
    NotFound { program: OsString },
    #[error(
        "cannot start {program:?}: {source}; fix: check that it is an executable program and, \
         for a script, that the interpreter its `#!` line names exists"
    )]
    Spawn {
        program: OsString,
        source: std::io::Error,
    },
    #[error(
        "cannot supervise the command ({step}: {source}); fix: run joj as root on a kernel with \
         seccomp and ptrace allowed (not inside a sandbox that forbids them)"
    )]
    Ptrace {
        step: &'static str,
        source: std::io::Error,
    },
    /// `PTRACE_TRACEME` failed in the command: it already has a tracer, inherited from joj's.
    #[error(
        "cannot supervise {program:?}: it is already being traced — joj itself runs under a \
         tracer{} that follows its children (strace -f, a debugger), and a process can have only \
         one tracer, while joj trace needs to be the command's; fix: run joj trace outside \
         strace -f and debuggers (strace without -f traces joj alone)",
        .tracer.map_or_else(String::new, |p| format!(" (process {p})"))
    )]
    AlreadyTraced {
        program: OsString,
        tracer: Option<u32>,
    },
}

/// The pid of the process tracing joj, if one is (`TracerPid` of `/proc/self/status`).
fn own_tracer() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))
        .and_then(|p| p.trim().parse().ok())
        .filter(|&p| p != 0)
}

fn ptrace_err(step: &'static str) -> impl FnOnce(std::io::Error) -> SuperviseError {
    move |source| SuperviseError::Ptrace { step, source }
}

/// A sync call under way in one task: stopped before, to be completed at its exit stop.
struct Pending {
    kind: SyncKind,
    file: Option<TouchedFile>,
    start_ns: u64,
}

/// A call followed to its exit for what it returns.
enum Follow {
    /// A sync: told to the observer with its interval.
    Sync(Pending),
    /// An open that may write: the descriptor it returns names the file.
    Open,
    /// `io_uring_setup`, whose parameters (at this address) hold the ring's layout.
    RingSetup { params: u64 },
}

/// Run `argv` in `cwd` with the environment of joj, supervised, and return when it and every
/// process it started have ended. With `stdout_to_stderr` the command writes its standard
/// output to joj's standard error.
pub fn supervise(
    argv: &[OsString],
    cwd: &Path,
    stdout_to_stderr: bool,
    observer: &mut dyn Observer,
) -> Result<Supervision, SuperviseError> {
    let (program, _) = argv.split_first().ok_or(SuperviseError::NoCommand)?;
    let exe = spawn::find_program(program).ok_or_else(|| SuperviseError::NotFound {
        program: program.clone(),
    })?;
    let mut guard = TaskGuard::new();
    let root = spawn::fork_traced(&exe, argv, cwd, stdout_to_stderr, &filter::program()).map_err(
        |source| SuperviseError::Spawn {
            program: program.clone(),
            source,
        },
    )?;
    guard.add(root);
    // The child stops with SIGTRAP once exec succeeded (PTRACE_TRACEME, no options yet).
    let status = wait(root).map_err(ptrace_err("waiting for the command to start"))?;
    if libc::WIFEXITED(status) {
        // The child exits with the errno of a failed exec, or a status of its own for a step
        // before it (see `spawn`).
        guard.remove(root);
        return Err(match libc::WEXITSTATUS(status) {
            spawn::TRACEME_FAILED => SuperviseError::AlreadyTraced {
                program: program.clone(),
                tracer: own_tracer(),
            },
            spawn::SECCOMP_FAILED => SuperviseError::Ptrace {
                step: "installing the seccomp filter in the command",
                source: std::io::Error::from_raw_os_error(libc::EPERM),
            },
            errno => SuperviseError::Spawn {
                program: program.clone(),
                source: std::io::Error::from_raw_os_error(errno),
            },
        });
    }
    if !libc::WIFSTOPPED(status) {
        guard.remove(root);
        return Err(SuperviseError::Spawn {
            program: program.clone(),
            source: std::io::Error::other(format!("it ended at once (wait status {status:#x})")),
        });
    }
    let options = libc::PTRACE_O_TRACESYSGOOD
        | libc::PTRACE_O_TRACESECCOMP
        | libc::PTRACE_O_TRACEFORK
        | libc::PTRACE_O_TRACEVFORK
        | libc::PTRACE_O_TRACECLONE
        | libc::PTRACE_O_TRACEEXEC
        | libc::PTRACE_O_EXITKILL;
    // SAFETY: ptrace requests on our own stopped tracee.
    if unsafe {
        libc::ptrace(
            libc::PTRACE_SETOPTIONS,
            root,
            0 as libc::c_long,
            options as libc::c_long,
        )
    } != 0
    {
        return Err(ptrace_err("PTRACE_SETOPTIONS")(
            std::io::Error::last_os_error(),
        ));
    }
    resume(root, libc::PTRACE_CONT, 0);
    Loop {
        root,
        observer,
        guard,
        pending: HashMap::new(),
        rings: uring::Rings::default(),
        started: std::collections::HashSet::from([root]),
        exit: None,
        stops: 0,
        handling_ns: 0,
    }
    .run()
}

struct Loop<'a> {
    root: libc::pid_t,
    observer: &'a mut dyn Observer,
    guard: TaskGuard,
    pending: HashMap<libc::pid_t, Follow>,
    rings: uring::Rings,
    started: std::collections::HashSet<libc::pid_t>,
    exit: Option<ChildExit>,
    stops: u64,
    handling_ns: u64,
}

impl Loop<'_> {
    fn run(mut self) -> Result<Supervision, SuperviseError> {
        loop {
            let mut status = 0;
            // SAFETY: waitpid writes one int.
            let tid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
            if tid < 0 {
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::ECHILD) => {
                        // Every task is reaped: ids still listed are stale (a thread that
                        // exec'd leaves no exit report) and may name someone else's process by
                        // now, so the guard must not kill them.
                        self.guard.forget_all();
                        break;
                    }
                    _ => return Err(ptrace_err("waitpid")(e)),
                }
            }
            if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
                self.pending.remove(&tid);
                self.guard.remove(tid);
                // Its id may be reused by a later task, whose first stop must count as new.
                self.started.remove(&tid);
                if tid == self.root {
                    self.exit = Some(if libc::WIFEXITED(status) {
                        ChildExit::Code(libc::WEXITSTATUS(status))
                    } else {
                        ChildExit::Signal(libc::WTERMSIG(status))
                    });
                }
                continue;
            }
            if !libc::WIFSTOPPED(status) {
                continue;
            }
            self.stopped(tid, status);
        }
        if cleanup::cleaning() {
            // A signal cleanup killed the command; it exits the process when done, and the
            // run must not go on to report the kill as the command's own end.
            loop {
                std::thread::park();
            }
        }
        Ok(Supervision {
            exit: self.exit.unwrap_or(ChildExit::Signal(libc::SIGKILL)),
            tasks: self.guard.seen,
            stops: self.stops,
            handling_ns: self.handling_ns,
        })
    }

    /// Handle one stop of `tid` and resume it.
    fn stopped(&mut self, tid: libc::pid_t, status: i32) {
        let sig = libc::WSTOPSIG(status);
        let event = status >> 16;
        if self.started.insert(tid) {
            // A new process or thread: its first stop is the SIGSTOP ptrace gives it.
            self.guard.add(tid);
            if sig == libc::SIGSTOP {
                self.cont(tid, 0);
                return;
            }
        }
        if sig == libc::SIGTRAP && event == libc::PTRACE_EVENT_SECCOMP {
            let t0 = Instant::now();
            self.stops += 1;
            let follow = match tracee::call_info(tid) {
                Ok(CallInfo::Seccomp { nr, args }) => self.at_call(tid, nr, args),
                _ => false,
            };
            self.handling_ns += t0.elapsed().as_nanos() as u64;
            // A sync is followed to its exit stop; everything else runs on.
            resume(
                tid,
                if follow {
                    libc::PTRACE_SYSCALL
                } else {
                    libc::PTRACE_CONT
                },
                0,
            );
        } else if sig == libc::SIGTRAP | 0x80 {
            let t0 = Instant::now();
            self.stops += 1;
            if let Ok(CallInfo::Exit { rval, is_error }) = tracee::call_info(tid)
                && let Some(follow) = self.pending.remove(&tid)
            {
                self.returned(tid, follow, (!is_error).then_some(rval));
            }
            self.handling_ns += t0.elapsed().as_nanos() as u64;
            self.cont(tid, 0);
        } else if sig == libc::SIGTRAP && event != 0 {
            // fork, vfork, clone, exec events: the new task reports its own first stop.
            self.cont(tid, 0);
        } else {
            // A signal for the tracee: deliver it. (A group-stop also lands here; resuming it
            // lets a stopped command go on, which a measurement run can live with.)
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: GETSIGINFO writes one siginfo_t.
            let is_signal = unsafe {
                libc::ptrace(
                    libc::PTRACE_GETSIGINFO,
                    tid,
                    0 as libc::c_long,
                    &mut info as *mut _,
                )
            } == 0;
            self.cont(tid, if is_signal { sig } else { 0 });
        }
    }

    /// Resume `tid`, following it to the exit of a sync under way.
    fn cont(&self, tid: libc::pid_t, sig: i32) {
        let req = if self.pending.contains_key(&tid) {
            libc::PTRACE_SYSCALL
        } else {
            libc::PTRACE_CONT
        };
        resume(tid, req, sig);
    }

    /// A followed call of `tid` returned `rval` (`None`: it failed).
    fn returned(&mut self, tid: libc::pid_t, follow: Follow, rval: Option<i64>) {
        match follow {
            Follow::Sync(p) => {
                self.observer
                    .synced(p.kind, p.file.as_ref(), p.start_ns, now_mono_ns());
            }
            Follow::Open => {
                let opened = rval.filter(|&fd| fd >= 0).and_then(|fd| {
                    let fd = fd as u64;
                    let path = tracee::fd_path(tid, fd)?;
                    tracee::open_fd(tid, fd).map(|file| TouchedFile { path, file })
                });
                if let Some(f) = opened {
                    self.observer.opened_for_writing(&f);
                }
            }
            Follow::RingSetup { params } => {
                let ring = rval
                    .and_then(|fd| i32::try_from(fd).ok())
                    .zip(tracee::tgid(tid))
                    .zip(uring::read_params(tid, params));
                if let Some(((fd, tgid), ring)) = ring {
                    self.rings.set_up(tgid, fd, ring);
                }
                self.observer.io_uring(IoUring::Setup);
            }
        }
    }

    /// `io_uring_enter` of `tid` on ring `fd` with `to_submit` entries: tell the observer what
    /// the submissions are, where they can be read.
    fn entering_ring(&mut self, tid: libc::pid_t, fd: u64, to_submit: u64) {
        let to_submit = u32::try_from(to_submit).unwrap_or(u32::MAX);
        let read = match (tracee::tgid(tid), i32::try_from(fd)) {
            (Some(tgid), Ok(fd)) => self.rings.entering(tid, tgid, fd, to_submit),
            _ => uring::Read {
                unreadable: to_submit > 0,
                ..Default::default()
            },
        };
        let at_fd = |fd: i32| {
            let fd = u64::try_from(fd).ok()?;
            let path = tracee::fd_path(tid, fd)?;
            tracee::open_fd(tid, fd).map(|file| TouchedFile { path, file })
        };
        for s in &read.submitted {
            match *s {
                uring::Submitted::Sync { kind, fd } => {
                    let kind = match kind {
                        uring::RingSync::Fsync => SyncKind::Fsync,
                        uring::RingSync::Fdatasync => SyncKind::Fdatasync,
                        uring::RingSync::SyncFileRange => SyncKind::SyncFileRange,
                        uring::RingSync::SyncWrite => SyncKind::SyncWrite,
                    };
                    let file = fd.and_then(at_fd);
                    self.observer.io_uring(IoUring::Sync {
                        kind,
                        file: file.as_ref(),
                    });
                }
                uring::Submitted::Open => self.observer.io_uring(IoUring::Open),
            }
        }
        for fd in &read.writes {
            let dsync = u64::try_from(*fd).is_ok_and(|fd| tracee::fd_is_dsync(tid, fd));
            if dsync {
                let file = at_fd(*fd);
                self.observer.io_uring(IoUring::Sync {
                    kind: SyncKind::SyncWrite,
                    file: file.as_ref(),
                });
            }
        }
        self.observer.io_uring(IoUring::Enter {
            submitted: to_submit,
            unreadable: read.unreadable,
        });
    }

    /// The tracee is about to make call `nr`: tell the observer, and return whether to follow
    /// the call to its exit (a sync, an open that may write, a ring's setup).
    fn at_call(&mut self, tid: libc::pid_t, nr: i64, a: [u64; 6]) -> bool {
        let at_path = |dirfd: u64, addr: u64| {
            tracee::read_path(tid, addr)
                .and_then(|p| tracee::resolve(tid, dirfd, &p))
                .and_then(|path| tracee::open_regular(&path).map(|file| TouchedFile { path, file }))
        };
        let at_fd = |fd: u64| {
            let path = tracee::fd_path(tid, fd)?;
            tracee::open_fd(tid, fd).map(|file| TouchedFile { path, file })
        };
        let cwd = libc::AT_FDCWD as u32 as u64;
        let mut change = |c: Change, f: Option<TouchedFile>| {
            if let Some(f) = f {
                self.observer.before_change(c, &f);
            }
        };
        let sync = |kind, file| {
            Follow::Sync(Pending {
                kind,
                file,
                start_ns: now_mono_ns(),
            })
        };
        let pending = match nr {
            libc::SYS_unlinkat if a[2] & libc::AT_REMOVEDIR as u64 == 0 => {
                change(Change::Remove, at_path(a[0], a[1]));
                None
            }
            libc::SYS_renameat2 | libc::SYS_renameat => {
                change(Change::Remove, at_path(a[0], a[1]));
                change(Change::Remove, at_path(a[2], a[3]));
                None
            }
            libc::SYS_truncate => {
                change(Change::Truncate, at_path(cwd, a[0]));
                None
            }
            libc::SYS_ftruncate => {
                change(Change::Truncate, at_fd(a[0]));
                None
            }
            libc::SYS_fsync | libc::SYS_fdatasync if tracee::fd_is_dir(tid, a[0]) => {
                Some(sync(SyncKind::Directory, None))
            }
            libc::SYS_fsync => Some(sync(SyncKind::Fsync, at_fd(a[0]))),
            libc::SYS_fdatasync => Some(sync(SyncKind::Fdatasync, at_fd(a[0]))),
            libc::SYS_sync_file_range => Some(sync(SyncKind::SyncFileRange, at_fd(a[0]))),
            libc::SYS_syncfs | libc::SYS_sync => Some(sync(SyncKind::WholeFs, None)),
            libc::SYS_write | libc::SYS_pwrite64 | libc::SYS_writev | libc::SYS_pwritev
                if tracee::fd_is_dsync(tid, a[0]) =>
            {
                Some(sync(SyncKind::SyncWrite, at_fd(a[0])))
            }
            libc::SYS_pwritev2 if tracee::fd_is_dsync(tid, a[0]) || a[5] & RWF_ANY_SYNC != 0 => {
                Some(sync(SyncKind::SyncWrite, at_fd(a[0])))
            }
            // The filter stops only the opens whose flags may write.
            libc::SYS_openat => Some(Follow::Open),
            libc::SYS_openat2 => tracee::open_how_flags(tid, a[2])
                .is_some_and(|f| f & u64::from(filter::WRITE_FLAGS) != 0)
                .then_some(Follow::Open),
            libc::SYS_io_uring_setup => Some(Follow::RingSetup { params: a[1] }),
            libc::SYS_io_uring_enter => {
                self.entering_ring(tid, a[0], a[1]);
                None
            }
            libc::SYS_io_uring_register => {
                self.observer.io_uring(IoUring::Register);
                None
            }
            _ => legacy_call(nr, a, &mut change, &at_path, cwd),
        };
        match pending {
            Some(p) => {
                self.pending.insert(tid, p);
                true
            }
            None => false,
        }
    }
}

/// RWF_DSYNC | RWF_SYNC of pwritev2.
const RWF_ANY_SYNC: u64 = 0x2 | 0x4;

/// The path-only calls x86-64 keeps besides their `*at` forms.
#[cfg(target_arch = "x86_64")]
fn legacy_call(
    nr: i64,
    a: [u64; 6],
    change: &mut dyn FnMut(Change, Option<TouchedFile>),
    at_path: &dyn Fn(u64, u64) -> Option<TouchedFile>,
    cwd: u64,
) -> Option<Follow> {
    match nr {
        libc::SYS_unlink => change(Change::Remove, at_path(cwd, a[0])),
        libc::SYS_rename => {
            change(Change::Remove, at_path(cwd, a[0]));
            change(Change::Remove, at_path(cwd, a[1]));
        }
        // The filter stops only the opens whose flags may write; creat always writes.
        libc::SYS_open | libc::SYS_creat => return Some(Follow::Open),
        _ => {}
    }
    None
}

#[cfg(not(target_arch = "x86_64"))]
fn legacy_call(
    _: i64,
    _: [u64; 6],
    _: &mut dyn FnMut(Change, Option<TouchedFile>),
    _: &dyn Fn(u64, u64) -> Option<TouchedFile>,
    _: u64,
) -> Option<Follow> {
    None
}

fn wait(pid: libc::pid_t) -> std::io::Result<i32> {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes one int.
        if unsafe { libc::waitpid(pid, &mut status, libc::__WALL) } >= 0 {
            return Ok(status);
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Resume a stopped tracee. A failure means it was killed meanwhile (ESRCH); its exit is
/// reported by waitpid.
fn resume(tid: libc::pid_t, req: libc::c_uint, sig: i32) {
    // SAFETY: a ptrace resume request on our tracee; `sig` is passed as data.
    unsafe {
        libc::ptrace(req, tid, 0 as libc::c_long, sig as libc::c_long);
    }
}

/// The command's tasks in the cleanup registry: a signal cleanup kills them before it unmounts
/// the filesystem they work in; dropping the guard (joj's error path) kills what is left.
struct TaskGuard {
    id: u64,
    seen: u64,
}

impl TaskGuard {
    fn new() -> TaskGuard {
        TaskGuard {
            id: cleanup::open_entry(),
            seen: 0,
        }
    }

    fn add(&mut self, tid: libc::pid_t) {
        self.seen += 1;
        cleanup::track(self.id, |r| r.tasks.push(tid));
    }

    fn remove(&self, tid: libc::pid_t) {
        cleanup::track(self.id, |r| r.tasks.retain(|t| *t != tid));
    }

    fn forget_all(&self) {
        cleanup::track(self.id, |r| r.tasks.clear());
    }
}

impl Drop for TaskGuard {
    fn drop(&mut self) {
        if let Some(res) = cleanup::take(self.id) {
            for p in res.release() {
                eprintln!("joj-linux: {p}");
            }
        }
    }
}
