//! Running a command under joj's supervision, at close to its own speed. Four observers, each
//! doing what only it can:
//!
//! - **The kernel's syscall tracepoints** ([`crate::syscall_trace`]): every sync-type call
//!   (fsync, fdatasync, sync_file_range, sync, syncfs) with its start and end, every write
//!   (for O_DSYNC / RWF_DSYNC writes and bytes per file), every `ftruncate`, and every call that
//!   copies or closes a descriptor, for the command's processes and their descendants. Nobody is stopped; a
//!   thread of joj reads the events while the command runs and rebuilds the descriptor tables
//!   ([`fdtable`]), so each sync and write is put to the file its descriptor named.
//! - **A BPF observer of opens and unlinks** ([`bpf_opens`], `bpf/opens.bpf.c`): every open's
//!   path, flags, descriptor and file, every change of working directory and every unlink,
//!   read in the kernel at the call's exit into a ring buffer the events thread reads with the
//!   trace — the open's exit event in the trace is paired with its record. On ext4 the extents
//!   a file gives up are read as ext4 frees them ([`freed`]), so an unlink or an `ftruncate`
//!   needs no stop (the trace names an `ftruncate`'s file, by its descriptor).
//!   Nobody is stopped; whether the overlay copied a file up inside an open is read from the
//!   upper file afterwards. Without it (`JOJ_BPF=off`, or a kernel that refuses it) every open,
//!   unlink and truncate stops instead, as below.
//! - **Seccomp notifications** ([`notify`]): the command waits in the kernel at the calls joj
//!   must see before they happen — rename, `truncate` of a path, and unlink and `ftruncate` on
//!   xfs and btrfs (the file's extents are read before it gives up its blocks, so a rollback
//!   journal that DELETE mode removes still owns them), and the opens, unlinks and truncates
//!   when the BPF observer does not run. Reads, writes and syncs never stop; a SQLite commit on ext4 stops nowhere.
//! - **ptrace**, for what the others cannot do: following every process and thread to its
//!   end (joj waits for all, daemons included), killing them all if joj is killed
//!   (`PTRACE_O_EXITKILL`), and io_uring's calls, whose submission queue is read in the
//!   command's memory at `io_uring_enter` ([`uring`]) — a sync submitted on a ring is no
//!   system call.
//!
//! A file after a sync is mapped (FIEMAP) by the events thread shortly after the sync
//! returned, not while the command waits; before an unlink, rename or truncate that stops it is
//! mapped while the command waits. Files are named as the command names them; joj opens them through
//! [`TracedDir`] (with an overlay, the command's directory is joj's upper directory).
//!
//! Two things the command can do out of joj's sight are made visible: a file opened for
//! writing outside the traced directory is reported by its path
//! ([`Observer::opened_for_writing`]); a ring's use is reported with what its submissions
//! hold where they can be read ([`Observer::io_uring`]).
//!
//! Invariants: only this process's own children are traced; every task is registered in the
//! cleanup registry as it appears, so SIGINT / SIGTERM (and a run's error path) kill the
//! command before the filesystem it runs on is unmounted; a task is never left stopped or
//! waiting for a notification joj will not answer.

mod bpf_opens;
mod fdtable;
mod freed;
pub use freed::FreedBlocks;
mod paths;
pub use paths::TracedDir;
use paths::normalized;
mod sync_kind;
pub use sync_kind::SyncKind;
mod filter;
#[cfg(test)]
mod mapped_tests;
mod notify;
mod spawn;
#[cfg(test)]
mod truncated_tests;
mod uring;

pub use spawn::{Overlay, find_program};
mod tracee;

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::cleanup;
use crate::syscall_line::SysEvent;
use crate::syscall_trace::SyscallTracer;
use fdtable::{FdModel, OpenedFile, Seen};
use tracee::CallInfo;

/// A file the command is about to change or has synced, opened by joj.
#[derive(Debug)]
pub struct TouchedFile {
    /// The path as the command names it, absolute.
    pub path: PathBuf,
    /// The file, opened by joj where joj reaches it ([`TracedDir`]).
    pub file: File,
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

/// What the supervisor reports while the command runs. Called from joj's threads one at a
/// time (the supervisor holds a lock around every call), hence `Send`.
pub trait Observer: Send {
    /// Just before the command unlinks, renames, replaces (as a rename's target) or truncates
    /// `file`, which is in the traced directory; the command waits meanwhile.
    fn before_change(&mut self, change: Change, file: &TouchedFile);
    /// A sync-type call ran from `start_ns` to `end_ns`; `file` is `None` for `sync` /
    /// `syncfs` and directories. Only files in the traced directory are told.
    fn synced(&mut self, kind: SyncKind, file: Option<&TouchedFile>, start_ns: u64, end_ns: u64);
    /// A sync of `path` whose map was taken for an earlier sync of the same path, in the same
    /// batch of events (read at the same moment, so mapping it again would show the same), on
    /// device `dev` then: counted, not mapped again.
    fn synced_mapped(&mut self, kind: SyncKind, path: &Path, dev: u64, start_ns: u64, end_ns: u64) {
        let _ = (kind, path, dev, start_ns, end_ns);
    }
    /// A sync of `path` (in the traced directory) that joj could no longer open when it read
    /// the event (deleted or renamed since): counted, not mapped.
    fn synced_gone(&mut self, kind: SyncKind, path: &Path, start_ns: u64, end_ns: u64) {
        let _ = (kind, path, start_ns, end_ns);
    }
    /// An fsync or fdatasync of directory `path` (as the command names it) ran.
    fn synced_directory(&mut self, kind: SyncKind, path: &Path, start_ns: u64, end_ns: u64) {
        let _ = path;
        self.synced(kind, None, start_ns, end_ns);
    }
    /// A sync on a descriptor joj did not see opened and could not resolve through `/proc`.
    fn synced_unknown(&mut self, kind: SyncKind) {
        let _ = kind;
    }
    /// A write of `bytes` (what the call returned) to `path`, in the traced directory, at
    /// `offset` when the call said (`pwrite64`).
    fn wrote(&mut self, path: &Path, bytes: u64, offset: Option<u64>) {
        let _ = (path, bytes, offset);
    }
    /// An open with flags that may write (`O_WRONLY`, `O_RDWR`, `O_CREAT`, `O_TRUNC`, `creat`)
    /// returned a descriptor of `file`, a regular file outside the traced directory.
    fn opened_for_writing(&mut self, _file: &TouchedFile) {}
    /// The command used io_uring.
    fn io_uring(&mut self, _event: IoUring<'_>) {}
    /// Thread `tid` of the command wrote `text` to the trace's marker file (a joj VFS in it
    /// marking a commit or set-up work: `joj_vfs::marker`).
    fn marked(&mut self, tid: i32, time_ns: u64, text: &str) {
        let _ = (tid, time_ns, text);
    }
    /// The command unlinked `path` (in the traced directory), seen without a stop
    /// ([`FreedBlocks`]); the blocks it gave up come in [`Observer::freed`].
    fn unlinked(&mut self, path: &Path) {
        let _ = path;
    }
    /// The command truncated `path` (in the traced directory) with `ftruncate`, seen without a
    /// stop ([`FreedBlocks`]); the blocks it gave up come in [`Observer::freed`].
    fn truncated(&mut self, path: &Path) {
        let _ = path;
    }
    /// ext4 freed `extents` of the file the command unlinked (or truncated) as `path`, at
    /// `time_ns`: what a FIEMAP at the call's stop would have read before.
    fn freed(&mut self, path: &Path, extents: &[crate::Extent], time_ns: u64) {
        let _ = (path, extents, time_ns);
    }
    /// An open of `path` copied it up from the overlay's lower layer, from `start_ns` to
    /// `end_ns` (the kernel copies the whole file and syncs it inside the open).
    fn copied_up(&mut self, path: &Path, start_ns: u64, end_ns: u64) {
        let _ = (path, start_ns, end_ns);
    }
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
#[derive(Debug, Clone, Copy, Default)]
pub struct Supervision {
    pub exit: Option<ChildExit>,
    /// Processes and threads traced (the command's own included).
    pub tasks: u64,
    /// Times a task of the command waited for joj: opens, unlinks, renames, truncates
    /// (notifications) and io_uring calls (ptrace stops; one that is followed to its exit
    /// counts twice).
    pub stops: u64,
    /// Time joj spent handling stops while the stopped task waited, in nanoseconds.
    pub handling_ns: u64,
    /// Syscall trace events read (they cost the command no stop).
    pub events: u64,
    /// Times joj's events thread woke to read them while the command ran (each a wake-up on
    /// the command's CPUs; it reads when a CPU's buffer is a quarter full, at least every
    /// 100 ms), and once more at the end.
    pub event_reads: u64,
    /// The command's own run time, in nanoseconds: from its exec to its first process's exit
    /// (joj's setting up and removing of the trace before and after are not in it).
    pub ran_ns: Option<u64>,
    /// Opens the BPF observer saw (each without a stop); `None` when the
    /// observer could not start and every open stopped.
    pub opens_by_bpf: Option<u64>,
    /// Lookups of where those opens led (a walk of the path in the task's root, for an open
    /// that may write or one inside the traced directory): one per task and name per read of
    /// the records, not one per open.
    pub open_lookups: u64,
    /// Opens that returned a descriptor joj could not name: the observer lost the record, or
    /// a relative path had nothing joj could resolve it against. A sync or write on it is then
    /// resolved through `/proc` or counted as unresolved, as for an inherited descriptor.
    pub opens_unseen: u64,
    /// Unlinks the BPF observer saw without a stop ([`FreedBlocks`]) whose path joj could not
    /// name (relative to a directory nobody could name): not counted on any file.
    pub unlinks_unseen: u64,
    /// `ftruncate`s seen without a stop ([`FreedBlocks`]) on a descriptor joj could not name
    /// (not seen opened, and gone from `/proc` when read): not counted on any file; the blocks
    /// they freed are on none either.
    pub truncates_unseen: u64,
    /// What the BPF observer could not see: records the ring had no room for (an open, an
    /// unlink, an extent ext4 freed, …), tasks its maps had no room for, freed extents or
    /// unlinks joj could not keep for their pairing. Not 0: some figures may miss what it lost.
    pub bpf_lost: u64,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SuperviseError {
    #[error("no command given; fix: put the program and its arguments after `--`")]
    NoCommand,
    #[error(
        "command not found: {program:?}; fix: give a program on PATH or a path to it \
         (a relative path is taken from the directory joj trace was started in)"
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
    #[error(
        "cannot give the command its directory {dir} through an overlay or a copy ({step}: {source}); fix: \
         run on Linux 6.8 or later with overlayfs (`modprobe overlay`), from a directory on a \
         filesystem overlayfs accepts as a lower layer — or pass --empty to run the command in \
         an empty directory of the scratch filesystem"
    )]
    Overlay {
        step: &'static str,
        dir: PathBuf,
        source: std::io::Error,
    },
    /// The syscall trace failed (an instance that could not be made, events lost).
    #[error(transparent)]
    Trace(#[from] crate::tracefs::TraceError),
    /// The BPF observer of opens started but could not be given the command.
    #[error(transparent)]
    Bpf(#[from] bpf_opens::BpfError),
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

/// What to run and how.
#[derive(Debug, Clone)]
pub struct CommandSpec<'a> {
    pub argv: &'a [OsString],
    /// The directory it starts in, as it names it.
    pub cwd: &'a Path,
    /// Its standard output goes to joj's standard error.
    pub stdout_to_stderr: bool,
    /// Its standard error goes to this descriptor (joj keeps what it wrote), else to joj's.
    pub stderr_to: Option<std::os::fd::RawFd>,
    pub scope: TracedDir,
    /// Run in a mount namespace of its own with this overlay on its starting directory.
    pub overlay: Option<Overlay>,
    /// Per-CPU buffer of the syscall trace, KiB.
    pub trace_buffer_kb: u32,
    /// The traced filesystem, when it is ext4: its unlinks need no stop.
    pub freed_blocks: Option<FreedBlocks>,
}

/// What the threads share, behind one lock.
struct Shared<'o> {
    observer: &'o mut dyn Observer,
    /// The trace's marker file, which the command's joj VFSs open for writing: not an outside
    /// write of the command's.
    marker: PathBuf,
    model: FdModel,
    stops: u64,
    handling_ns: u64,
    /// The files mapped for a sync in the batch of events being applied, with the device
    /// each was on (`None`: gone when joj opened it). A later sync of the same path in the
    /// batch was made before joj read either, so the one map read now serves it too: opening
    /// and mapping the file at every sync made each sync of the command slower, by joj's work
    /// beside it. Only the device is kept, not the file: joj holds no descriptor of the
    /// command's files beyond one map (a batch may sync thousands of files). Emptied after
    /// each batch.
    mapped: HashMap<PathBuf, Option<u64>>,
    /// The unlinks and truncates seen without a stop, and the extents ext4 freed.
    unlinks: freed::Unlinks,
    /// The traced ext4, when its unlinks and `ftruncate`s need no stop ([`FreedBlocks`]).
    freed: Option<FreedBlocks>,
    /// `ftruncate`s without a stop on a descriptor joj could not name.
    unseen_truncates: u64,
}

/// How many events are applied under one taking of the lock: a stop (a rename, a truncate, an
/// unlink off ext4) waits for the lock, and so for at most this many events, not a batch of
/// up to 100 ms.
const EVENTS_PER_LOCK: usize = 256;

/// Apply one batch of events, in order, taking the lock [`EVENTS_PER_LOCK`] events at a time.
fn apply_batch(shared: &Mutex<Shared<'_>>, scope: &TracedDir, batch: &[SysEvent]) {
    for chunk in batch.chunks(EVENTS_PER_LOCK) {
        let mut sh = lock(shared);
        for e in chunk {
            seen(&mut sh, scope, e);
        }
    }
    let mut sh = lock(shared);
    sh.mapped.clear();
    if let Some(last) = batch.last() {
        sh.unlinks.applied_until(last.time_ns);
    }
}

/// The environment variable and value that keep the BPF observer of opens out.
pub const NO_BPF: (&str, &str) = ("JOJ_BPF", "off");

/// Run the command, supervised, and return when it and every process it started have ended.
pub fn supervise(
    spec: &CommandSpec<'_>,
    observer: &mut dyn Observer,
) -> Result<Supervision, SuperviseError> {
    let wake = wake_fd().map_err(ptrace_err("making the events thread's wake-up"))?;
    // The BPF observer first: which opens stop depends on whether it runs.
    let mut opens = SeenOpens::new(spec.freed_blocks);
    let mut tracer = SyscallTracer::create(spec.trace_buffer_kb)?;
    let Started {
        root,
        listener,
        guard,
    } = start(spec, &tracer.marker_path(), &opens)?;
    let model = opens.model_of(root)?;
    let pids = tracer.follow(root)?;
    set_options(root)?;
    let shared = Mutex::new(Shared {
        observer,
        marker: tracer.marker_path(),
        model,
        stops: 0,
        handling_ns: 0,
        mapped: HashMap::new(),
        unlinks: freed::Unlinks::default(),
        freed: opens.freed,
        unseen_truncates: 0,
    });
    let done = AtomicBool::new(false);
    let scope = &spec.scope;
    let (ended, served, followed) = std::thread::scope(|s| {
        let notifications = s.spawn(|| {
            notify::serve(&listener, &done, &mut |n| {
                let t0 = Instant::now();
                at_notified(&shared, scope, n);
                let mut sh = lock(&shared);
                sh.stops += 1;
                sh.handling_ns += t0.elapsed().as_nanos() as u64;
            })
        });
        let events =
            s.spawn(|| follow_events(&shared, scope, &mut tracer, &mut opens, &done, wake.as_fd()));
        let exec_at = Instant::now();
        resume(root, libc::PTRACE_CONT, 0);
        let ended = Loop {
            root,
            shared: &shared,
            scope,
            guard,
            pending: HashMap::new(),
            rings: uring::Rings::default(),
            started: std::collections::HashSet::from([root]),
            exit: None,
            exec_at,
            ran_ns: None,
            said_left_running: false,
            pids,
            pids_error: None,
        }
        .run();
        done.store(true, Ordering::Release);
        wake_up(wake.as_fd());
        let served = notifications.join();
        let followed = events.join();
        (ended, served, followed)
    });
    let mut sup = ended?;
    served
        .unwrap_or_else(|_| Err(std::io::Error::other("the notification thread panicked")))
        .map_err(ptrace_err("serving notifications"))?;
    sup.event_reads = followed.unwrap_or_else(|_| {
        Err(crate::tracefs::TraceError::Read {
            path: PathBuf::from("per_cpu"),
            source: std::io::Error::other("the events thread panicked"),
        })
    })?;
    read_the_rest(&mut sup, tracer, &mut opens, &shared, scope)?;
    Ok(sup)
}

/// Once the command has ended: the events and records still unread, and the counts.
fn read_the_rest(
    sup: &mut Supervision,
    tracer: SyscallTracer,
    opens: &mut SeenOpens,
    shared: &Mutex<Shared<'_>>,
    scope: &TracedDir,
) -> Result<(), SuperviseError> {
    let mut rest = Vec::new();
    let events = tracer.events;
    tracer.stop(&mut rest)?;
    opens.read_for(shared_model_waiting(shared), &rest, shared, scope);
    apply_batch(shared, scope, &rest);
    let sh = lock(shared);
    if let Some(o) = opens.observer.as_ref() {
        sup.opens_by_bpf = Some(opens.read);
        sup.open_lookups = opens.landed.lookups();
        sup.opens_unseen = sh.model.unseen_opens;
        sup.unlinks_unseen = sh.model.unseen_unlinks;
        sup.truncates_unseen = sh.unseen_truncates;
        sup.bpf_lost = o.lost() + sh.unlinks.dropped();
    }
    sup.stops = sh.stops;
    sup.handling_ns = sh.handling_ns;
    sup.events = events + rest.len() as u64;
    Ok(())
}

/// The command, forked and stopped at its exec, with the filter's notification listener.
struct Started {
    root: libc::pid_t,
    listener: std::os::fd::OwnedFd,
    guard: TaskGuard,
}

/// Fork the command under the filter and ptrace, receive the filter's listener, and wait until
/// the exec succeeded (or say why the command could not start).
fn start(
    spec: &CommandSpec<'_>,
    marker: &Path,
    opens: &SeenOpens,
) -> Result<Started, SuperviseError> {
    let (program, _) = spec.argv.split_first().ok_or(SuperviseError::NoCommand)?;
    let exe = spawn::find_program(program).ok_or_else(|| SuperviseError::NotFound {
        program: program.clone(),
    })?;
    let spawn_err = |source| SuperviseError::Spawn {
        program: program.clone(),
        source,
    };
    let (ours, theirs) = socket_pair().map_err(ptrace_err("making the listener's socket"))?;
    let mut guard = TaskGuard::new();
    let prog = filter::program(opens.observer.is_some(), opens.freed.is_some());
    let root = spawn::fork_traced(&spawn::Launch {
        exe: &exe,
        argv: spec.argv,
        cwd: spec.cwd,
        stdout_to_stderr: spec.stdout_to_stderr,
        stderr_to: spec.stderr_to,
        prog: &prog,
        listener_to: std::os::fd::AsRawFd::as_raw_fd(&theirs),
        overlay: spec.overlay.as_ref(),
        env: &[(
            OsString::from(joj_vfs_marker_env()),
            marker.as_os_str().to_owned(),
        )],
    })
    .map_err(spawn_err)?;
    drop(theirs);
    guard.add(root);
    let received = spawn::recv_fd(std::os::fd::AsRawFd::as_raw_fd(&ours))
        .map_err(ptrace_err("receiving the notification listener"))?;
    if let spawn::Received::OverlayFailed { step, errno } = received {
        let _ = wait(root);
        guard.remove(root);
        return Err(SuperviseError::Overlay {
            step: spawn::OVERLAY_STEPS
                .get(usize::from(step))
                .copied()
                .unwrap_or("mounting the overlay"),
            dir: spec.cwd.to_path_buf(),
            source: std::io::Error::from_raw_os_error(errno),
        });
    }
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
            spawn::SECCOMP_FAILED | spawn::LISTENER_NOT_SENT => SuperviseError::Ptrace {
                step: "installing the seccomp filter in the command",
                source: std::io::Error::from_raw_os_error(libc::EPERM),
            },
            errno => spawn_err(std::io::Error::from_raw_os_error(errno)),
        });
    }
    if !libc::WIFSTOPPED(status) {
        guard.remove(root);
        return Err(spawn_err(std::io::Error::other(format!(
            "it ended at once (wait status {status:#x})"
        ))));
    }
    let spawn::Received::Listener(listener) = received else {
        return Err(ptrace_err("receiving the notification listener")(
            std::io::Error::other("the command sent none"),
        ));
    };
    Ok(Started {
        root,
        listener,
        guard,
    })
}

/// Follow the command's forks, clones and execs, and kill it if joj dies.
fn set_options(root: libc::pid_t) -> Result<(), SuperviseError> {
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
    Ok(())
}

/// The variable that names the trace's marker file for the command (`joj_vfs::marker::ENV`;
/// joj-linux sits below joj-vfs, so the name is repeated here).
fn joj_vfs_marker_env() -> &'static str {
    "JOJ_TRACE_MARKER"
}

fn lock<'a, 'o>(m: &'a Mutex<Shared<'o>>) -> std::sync::MutexGuard<'a, Shared<'o>> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn socket_pair() -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and ours.
    Ok(unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    })
}

/// About the longest the events of a running command wait to be read (plus the time the
/// previous batch took). A file is mapped when its sync call is read — the path as it is then
/// (in DELETE mode often a newer journal than the one synced) — and before every unlink,
/// rename and truncate, at their stops; the classifier does not need the first sooner, since
/// a file that let go of a sector is never given a later write to it that another file's map
/// claims (`joj_trace::classify`'s released snapshots). Each read is work beside the command
/// (a wake-up, the pages, a map of each file synced since the last read): with one map per file
/// per read, reading every 100 ms instead of every 20 took 8–19 points off a traced TRUNCATE
/// run's overhead here and 3–8 off WAL's, less than the sets' spread off DELETE's (2026-11-29,
/// docs/measurement.md, "Per-call costs"), with the same figures.
const READ_AT_LEAST_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// The shortest time between two reads: on kernels whose `poll` ignores the buffer's watermark
/// (before Linux 6.1), it reports a buffer readable at every event.
const READ_AT_MOST_EVERY: std::time::Duration = std::time::Duration::from_millis(1);

/// Read the syscall trace while the command runs — when a CPU's buffer is a quarter full, at
/// least every [`READ_AT_LEAST_EVERY`] — and once more when it has ended (`done`, with `wake`
/// made readable).
fn follow_events(
    shared: &Mutex<Shared<'_>>,
    scope: &TracedDir,
    tracer: &mut SyscallTracer,
    opens: &mut SeenOpens,
    done: &AtomicBool,
    wake: std::os::fd::BorrowedFd<'_>,
) -> Result<u64, crate::tracefs::TraceError> {
    let mut batch = Vec::new();
    let mut reads = 0;
    loop {
        if cleanup::cleaning() {
            // A signal cleanup removes the instance, which the kernel refuses while its pipe
            // is open: let go of it (the process is about to exit).
            tracer.close_pipe();
            return Ok(reads);
        }
        let last = done.load(Ordering::Acquire);
        tracer.drain(&mut batch)?;
        reads += 1;
        opens.read_for(shared_model_waiting(shared), &batch, shared, scope);
        if !batch.is_empty() {
            apply_batch(shared, scope, &batch);
            batch.clear();
        }
        if last {
            return Ok(reads);
        }
        let read_at = Instant::now();
        tracer.wait(wake, READ_AT_LEAST_EVERY)?;
        if let Some(rest) = READ_AT_MOST_EVERY.checked_sub(read_at.elapsed()) {
            std::thread::sleep(rest);
        }
    }
}

/// The BPF observer, if it runs, and what the events thread keeps of its records.
struct SeenOpens {
    observer: Option<bpf_opens::OpenObserver>,
    cwds: bpf_opens::Cwds,
    /// Where the opens of the current read of the records led.
    landed: bpf_opens::Landed,
    /// Records of opens read.
    read: u64,
    /// The traced ext4, when its unlinks are taken.
    freed: Option<FreedBlocks>,
    /// The device of the filesystem the command starts on (the overlay's, or the scratch
    /// filesystem's): an open that reached another went out through a link.
    traced_dev: Option<u64>,
}

/// How long the events thread waits for the record of an open whose exit it has read: the
/// record is written at the same exit, so it is there or microseconds away.
const RECORD_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

fn shared_model_waiting<'m>(shared: &'m Mutex<Shared<'_>>) -> impl Fn(i32) -> usize + 'm {
    move |tid| lock(shared).model.recorded_waiting(tid)
}

impl SeenOpens {
    /// The BPF observer, unless `JOJ_BPF=off` leaves it out (every open stops, as on a
    /// kernel without it: to compare the two) or it cannot start (said, once).
    fn new(freed: Option<FreedBlocks>) -> SeenOpens {
        let off = std::env::var_os(NO_BPF.0).is_some_and(|v| v == NO_BPF.1);
        let observer = if off {
            None
        } else {
            bpf_opens::OpenObserver::start(freed)
                .inspect_err(|e| {
                    eprintln!(
                        "joj: {e}; every open of the command stops instead (the same figures, \
                         slower)"
                    )
                })
                .ok()
        };
        SeenOpens {
            freed: freed.filter(|_| observer.is_some()),
            observer,
            cwds: bpf_opens::Cwds::default(),
            landed: bpf_opens::Landed::default(),
            read: 0,
            traced_dev: None,
        }
    }

    /// The descriptor model of the command `root`, which the observer (if any) now watches.
    fn model_of(&mut self, root: libc::pid_t) -> Result<FdModel, SuperviseError> {
        let model = FdModel::new(root);
        let Some(o) = self.observer.as_mut() else {
            return Ok(model);
        };
        o.watch(root)?;
        self.traced_dev = self.cwds.learn(root).map(|(dev, _)| dev);
        Ok(model.with_recorded_opens())
    }

    /// Read the records of every open whose exit is in `batch` (and any others written), and
    /// give them to the model, before the batch is applied.
    fn read_for(
        &mut self,
        waiting: impl Fn(i32) -> usize,
        batch: &[SysEvent],
        shared: &Mutex<Shared<'_>>,
        scope: &TracedDir,
    ) {
        let Some(observer) = self.observer.as_mut() else {
            return;
        };
        // Exits of opens in the batch, by thread.
        let mut exits: HashMap<i32, usize> = HashMap::new();
        for e in batch {
            if let crate::syscall_line::SysEventKind::Exit { call, .. } = &e.kind {
                if matches!(call.as_str(), "openat" | "open" | "creat" | "openat2") {
                    *exits.entry(e.tid).or_default() += 1;
                }
            }
        }
        let mut records = Vec::new();
        let began = Instant::now();
        loop {
            observer.drain(&mut records);
            let short = exits.iter().any(|(tid, n)| {
                waiting(*tid)
                    + records
                        .iter()
                        .filter(|r| r.tid == *tid && r.kind == bpf_opens::Kind::Open)
                        .count()
                    < *n
            });
            if !short || began.elapsed() > RECORD_WAIT {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        self.landed.clear();
        // The lock is taken a chunk of records at a time, as for events (`apply_batch`).
        let mut records = records.into_iter().peekable();
        while records.peek().is_some() {
            let mut sh = lock(shared);
            for r in records.by_ref().take(EVENTS_PER_LOCK) {
                self.record_read(&mut sh, r, scope);
            }
        }
    }

    /// One record of the observer's, in the order the kernel wrote them: a task's chdir before
    /// its next open, the extents an unlink freed before its own record.
    fn record_read(&mut self, sh: &mut Shared<'_>, r: bpf_opens::OpenRecord, scope: &TracedDir) {
        match r.kind {
            bpf_opens::Kind::Chdir => self.cwds.changed(&r),
            bpf_opens::Kind::Open => {
                self.read += 1;
                let r = bpf_opens::resolved(
                    r,
                    &mut self.cwds,
                    &mut self.landed,
                    scope,
                    self.traced_dev,
                );
                sh.model.open_recorded(r);
            }
            bpf_opens::Kind::Unlink => self.unlinked(sh, &r, scope),
            bpf_opens::Kind::Freed => {
                let e = freed::FreedExtent {
                    time_ns: r.exit_ns,
                    tid: r.tid,
                    ino: r.ino,
                    physical_block: r.flags,
                    logical_block: r.cwd_ino,
                    blocks: r.ret.unsigned_abs(),
                };
                let extent = e.extent(self.block_bytes());
                if let Some(path) = sh.unlinks.freed(r.ino, e) {
                    sh.observer.freed(path, &[extent], e.time_ns);
                }
            }
            bpf_opens::Kind::InodeFreed => sh.unlinks.inode_freed(r.ino, r.exit_ns),
        }
    }

    fn block_bytes(&self) -> u64 {
        self.freed.map_or(0, |f| f.block_bytes)
    }

    /// An unlink the observer saw: counted on its file, which claims the extents ext4 freed
    /// of the inode it unlinked.
    fn unlinked(&mut self, sh: &mut Shared<'_>, r: &bpf_opens::OpenRecord, scope: &TracedDir) {
        // An unlinkat from a directory descriptor stopped (the filter): its stop counted it.
        if r.ret != 0 || r.flags & libc::AT_REMOVEDIR as u64 != 0 || r.dirfd != libc::AT_FDCWD {
            return;
        }
        let Some(path) = bpf_opens::unlinked_path(r, &mut self.cwds) else {
            sh.model.unseen_unlinks += 1;
            return;
        };
        if !scope.contains(&path) {
            return;
        }
        sh.observer.unlinked(&path);
        if r.ino == 0 {
            return;
        }
        let mine = sh.unlinks.unlinked(&path, r.ino, r.enter_ns);
        if let Some(last) = mine.last() {
            let extents: Vec<_> = mine.iter().map(|e| e.extent(self.block_bytes())).collect();
            sh.observer.freed(&path, &extents, last.time_ns);
        }
    }
}

/// An eventfd that [`wake_up`] makes readable for good: how the end of the command reaches the
/// events thread while it waits.
fn wake_fd() -> std::io::Result<std::os::fd::OwnedFd> {
    Ok(rustix::event::eventfd(
        0,
        rustix::event::EventfdFlags::CLOEXEC,
    )?)
}

fn wake_up(fd: std::os::fd::BorrowedFd<'_>) {
    // A failure leaves the events thread to its timeout.
    let _ = rustix::io::write(fd, &1u64.to_ne_bytes());
}

/// Open the command's `path` where joj reaches it: a regular file, not following a final
/// symlink, without blocking.
fn open_in_scope(scope: &TracedDir, path: &Path) -> Option<File> {
    tracee::open_regular(&scope.joj_path(path))
}

/// One syscall trace event: the model's answer, told to the observer.
fn seen(sh: &mut Shared<'_>, scope: &TracedDir, e: &SysEvent) {
    let Some(s) = sh.model.apply(e) else { return };
    match s {
        Seen::Marked { tid, time_ns, text } => sh.observer.marked(tid, time_ns, &text),
        Seen::Opened { file, end_ns } => {
            // With the BPF observer the open did not stop: whether it copied the file up is
            // read now, from the upper file.
            let copy_up = file.copy_up
                || (sh.model.opens_recorded()
                    && bpf_opens::copied_up(
                        file.flags,
                        file.stopped_ns,
                        end_ns,
                        scope,
                        &file.path,
                    ));
            if copy_up {
                sh.observer.copied_up(&file.path, file.stopped_ns, end_ns);
            }
            if file.may_write && !scope.contains(&file.path) && file.path != sh.marker {
                if let Some(f) = tracee::open_regular(&file.path) {
                    let t = TouchedFile {
                        path: file.path.clone(),
                        file: f,
                    };
                    sh.observer.opened_for_writing(&t);
                }
            }
        }
        Seen::Wrote {
            file,
            bytes,
            offset,
            sync,
            start_ns,
            end_ns,
        } => {
            if scope.contains(&file.path) {
                sh.observer.wrote(&file.path, bytes, offset);
                if sync {
                    synced_file(sh, scope, SyncKind::SyncWrite, &file, start_ns, end_ns);
                }
            }
        }
        Seen::Synced {
            kind,
            file,
            tid,
            fd,
            start_ns,
            end_ns,
        } => match (kind, file) {
            (SyncKind::Directory { .. }, Some(dir)) => sh
                .observer
                .synced_directory(kind, &dir.path, start_ns, end_ns),
            (SyncKind::WholeFs | SyncKind::Directory { .. }, _) => {
                sh.observer.synced(kind, None, start_ns, end_ns)
            }
            (_, Some(file)) => synced_file(sh, scope, kind, &file, start_ns, end_ns),
            (_, None) => synced_unseen_fd(sh, scope, kind, tid, fd, start_ns, end_ns),
        },
        Seen::Truncated {
            file,
            tid,
            fd,
            start_ns,
            end_ns,
        } => truncated(sh, scope, file.as_deref(), tid, fd, start_ns, end_ns),
    }
}

/// An `ftruncate` read from the trace. Where it stopped (the traced filesystem is not ext4, or
/// the BPF observer does not run), its stop counted it and mapped the file before it ran; where
/// it did not, it is counted on its file now, and the extents its thread freed inside it are
/// that file's.
fn truncated(
    sh: &mut Shared<'_>,
    scope: &TracedDir,
    file: Option<&OpenedFile>,
    tid: i32,
    fd: i32,
    start_ns: u64,
    end_ns: u64,
) {
    let Some(freed) = sh.freed else { return };
    if file.is_some_and(|f| f.directory) {
        return;
    }
    let extents = sh.unlinks.truncated(tid, start_ns, end_ns);
    let path = match file {
        Some(f) => Some(f.path.clone()),
        // What the descriptor names now, read after the call: the file it truncated only if
        // it is the inode ext4 freed the blocks of (the number may have been closed and reused
        // meanwhile; with nothing freed, only the count is at stake).
        None => u64::try_from(fd)
            .ok()
            .and_then(|fd| tracee::fd_path(tid, fd).map(|p| (fd, p)))
            .filter(|(fd, _)| {
                extents.first().is_none_or(|e| {
                    std::fs::metadata(format!("/proc/{tid}/fd/{fd}"))
                        .is_ok_and(|m| std::os::unix::fs::MetadataExt::ino(&m) == e.ino)
                })
            })
            .map(|(_, p)| p),
    };
    let Some(path) = path else {
        sh.unseen_truncates += 1;
        return;
    };
    if !scope.contains(&path) {
        return;
    }
    sh.observer.truncated(&path);
    if let Some(last) = extents.last() {
        let v: Vec<_> = extents
            .iter()
            .map(|e| e.extent(freed.block_bytes))
            .collect();
        sh.observer.freed(&path, &v, last.time_ns);
    }
}

fn synced_file(
    sh: &mut Shared<'_>,
    scope: &TracedDir,
    kind: SyncKind,
    file: &OpenedFile,
    start_ns: u64,
    end_ns: u64,
) {
    if !scope.contains(&file.path) {
        return;
    }
    let Shared {
        observer, mapped, ..
    } = sh;
    if let Some(before) = mapped.get(&file.path) {
        return match before {
            Some(dev) => observer.synced_mapped(kind, &file.path, *dev, start_ns, end_ns),
            None => observer.synced_gone(kind, &file.path, start_ns, end_ns),
        };
    }
    let dev = match open_in_scope(scope, &file.path) {
        Some(f) => {
            let dev = device_of(&f);
            let t = TouchedFile {
                path: file.path.clone(),
                file: f,
            };
            observer.synced(kind, Some(&t), start_ns, end_ns);
            dev
        }
        None => {
            observer.synced_gone(kind, &file.path, start_ns, end_ns);
            None
        }
    };
    mapped.insert(file.path.clone(), dev);
}

/// The device a file is on, asked for without its timestamps (a stat that returns the mtime
/// would make the file's next write take a fine-grained one, and its next sync journal it).
fn device_of(f: &File) -> Option<u64> {
    let st = rustix::fs::statx(
        f,
        "",
        rustix::fs::AtFlags::EMPTY_PATH,
        rustix::fs::StatxFlags::TYPE,
    )
    .ok()?;
    Some(libc::makedev(st.stx_dev_major, st.stx_dev_minor))
}

/// A sync on a descriptor the command did not open while joj watched (inherited, received over
/// a socket): what `/proc` says it is now, if the process still has it.
fn synced_unseen_fd(
    sh: &mut Shared<'_>,
    scope: &TracedDir,
    kind: SyncKind,
    tid: i32,
    fd: i32,
    start_ns: u64,
    end_ns: u64,
) {
    let Ok(fd) = u64::try_from(fd) else {
        return sh.observer.synced_unknown(kind);
    };
    if tracee::fd_is_dir(tid, fd) {
        let kind = SyncKind::Directory {
            datasync: kind == SyncKind::Fdatasync,
        };
        return sh.observer.synced(kind, None, start_ns, end_ns);
    }
    match tracee::fd_path(tid, fd) {
        Some(path) if scope.contains(&path) => {
            let file = OpenedFile {
                path,
                directory: false,
                dsync: false,
                may_write: true,
                flags: 0,
                copy_up: false,
                stopped_ns: start_ns,
            };
            synced_file(sh, scope, kind, &file, start_ns, end_ns);
        }
        Some(_) => {}
        None => sh.observer.synced_unknown(kind),
    }
}

/// A task waits at call `n`: read what joj must know before the kernel runs it.
fn at_notified(shared: &Mutex<Shared<'_>>, scope: &TracedDir, n: notify::Notified) {
    let (tid, a) = (n.tid, n.args);
    let cwd = libc::AT_FDCWD as u32 as u64;
    if let Some((dirfd, addr, flags)) = open_call(tid, n.nr, a) {
        let Some(named) =
            tracee::read_path(tid, addr).and_then(|p| tracee::resolve(tid, dirfd, &p))
        else {
            return;
        };
        let may_write = flags & u64::from(filter::WRITE_FLAGS) != 0;
        // Where the open leads, not only what it names: a link in the command's directory may
        // lead out of it (its writes are then not on the traced filesystem, and are reported
        // as writes outside), or into it.
        let path = normalized(&named);
        let path = if may_write || scope.contains(&path) {
            let excl = (libc::O_CREAT | libc::O_EXCL) as u64;
            let follow_last = flags & libc::O_NOFOLLOW as u64 == 0 && flags & excl != excl;
            tracee::leads_to(tid, &named, follow_last).map_or(path, |p| normalized(&p))
        } else {
            path
        };
        let tmpfile = flags & libc::O_TMPFILE as u64 == libc::O_TMPFILE as u64;
        // Only a read-only open can be of a directory (and O_TMPFILE names one, for a file).
        let directory = !may_write
            && !tmpfile
            && std::fs::metadata(tracee::in_root(tid, &path)).is_ok_and(|m| m.is_dir());
        // An overlay copies a file up from the starting directory inside the open that first
        // may write it (the data too, unless the open truncates it).
        let copy_up = may_write
            && flags & libc::O_TRUNC as u64 == 0
            && scope.is_overlay()
            && scope.contains(&path)
            && std::fs::symlink_metadata(scope.joj_path(&path)).is_err()
            && std::fs::metadata(tracee::in_root(tid, &path)).is_ok_and(|m| m.is_file());
        let file = OpenedFile {
            path,
            directory,
            dsync: flags & libc::O_DSYNC as u64 != 0,
            may_write,
            flags,
            copy_up,
            stopped_ns: crate::tracefs::now_mono_ns(),
        };
        lock(shared).model.open_stopped(tid, file);
        return;
    }
    let at_path = |dirfd: u64, addr: u64| {
        let path = tracee::read_path(tid, addr).and_then(|p| resolved(tid, dirfd, &p))?;
        if !scope.contains(&path) {
            return None;
        }
        open_in_scope(scope, &path).map(|file| TouchedFile { path, file })
    };
    let at_fd = |fd: u64| {
        let path = normalized(&tracee::fd_path(tid, fd)?);
        if !scope.contains(&path) {
            return None;
        }
        open_in_scope(scope, &path).map(|file| TouchedFile { path, file })
    };
    let change = |c: Change, f: Option<TouchedFile>| {
        if let Some(f) = f {
            lock(shared).observer.before_change(c, &f);
        }
    };
    match n.nr {
        libc::SYS_unlinkat if a[2] & libc::AT_REMOVEDIR as u64 == 0 => {
            change(Change::Remove, at_path(a[0], a[1]))
        }
        libc::SYS_renameat2 | libc::SYS_renameat => {
            change(Change::Remove, at_path(a[0], a[1]));
            change(Change::Remove, at_path(a[2], a[3]));
        }
        libc::SYS_truncate => change(Change::Truncate, at_path(cwd, a[0])),
        libc::SYS_ftruncate => change(Change::Truncate, at_fd(a[0])),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_unlink => change(Change::Remove, at_path(cwd, a[0])),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_rename => {
            change(Change::Remove, at_path(cwd, a[0]));
            change(Change::Remove, at_path(cwd, a[1]));
        }
        _ => {}
    }
}

/// An open's directory descriptor, path address and flags.
fn open_call(tid: i32, nr: i64, a: [u64; 6]) -> Option<(u64, u64, u64)> {
    let cwd = libc::AT_FDCWD as u32 as u64;
    match nr {
        libc::SYS_openat => Some((a[0], a[1], a[2])),
        libc::SYS_openat2 => Some((a[0], a[1], tracee::open_how_flags(tid, a[2])?)),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open => Some((cwd, a[0], a[1])),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_creat => Some((
            cwd,
            a[0],
            (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64,
        )),
        _ => {
            let _ = cwd;
            None
        }
    }
}

/// `path` made absolute as the kernel resolves it for the task, then normalized.
fn resolved(tid: i32, dirfd: u64, path: &Path) -> Option<PathBuf> {
    tracee::resolve(tid, dirfd, path).map(|p| normalized(&p))
}

/// A call followed to its exit for what it returns.
enum Follow {
    /// `io_uring_setup`, whose parameters (at this address) hold the ring's layout.
    RingSetup { params: u64 },
}

struct Loop<'a, 'o> {
    root: libc::pid_t,
    shared: &'a Mutex<Shared<'o>>,
    scope: &'a TracedDir,
    guard: TaskGuard,
    pending: HashMap<libc::pid_t, Follow>,
    rings: uring::Rings,
    started: std::collections::HashSet<libc::pid_t>,
    exit: Option<ChildExit>,
    /// When the command's exec was let go, and how long it then ran to its first process's
    /// exit.
    exec_at: Instant,
    ran_ns: Option<u64>,
    /// Whether [`Loop::say_left_running`] has said it.
    said_left_running: bool,
    /// The syscall trace's list of the command's tasks ([`crate::syscall_pids`]).
    pids: crate::syscall_pids::PidFilter,
    /// The first failure to list or unlist a task: the run fails with it at the end (the
    /// task's calls may be missing from the figures).
    pids_error: Option<crate::tracefs::TraceError>,
}

impl Loop<'_, '_> {
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
                // Its id may be reused by a later task, whose first stop must count as new,
                // and whose calls are not the command's unless it is.
                self.started.remove(&tid);
                if let Err(e) = self.pids.remove(tid) {
                    self.pids_error.get_or_insert(e);
                }
                if tid == self.root {
                    self.ran_ns = Some(self.exec_at.elapsed().as_nanos() as u64);
                    self.exit = Some(if libc::WIFEXITED(status) {
                        ChildExit::Code(libc::WEXITSTATUS(status))
                    } else {
                        ChildExit::Signal(libc::WTERMSIG(status))
                    });
                    self.say_left_running();
                }
                continue;
            }
            if !libc::WIFSTOPPED(status) {
                continue;
            }
            if self.exit.is_some() {
                // A task stops after the first process ended: one it left running (its first
                // stop may come only now).
                self.say_left_running();
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
        if let Some(e) = self.pids_error {
            return Err(e.into());
        }
        Ok(Supervision {
            exit: Some(self.exit.unwrap_or(ChildExit::Signal(libc::SIGKILL))),
            tasks: self.guard.seen,
            ran_ns: self
                .ran_ns
                .or(Some(self.exec_at.elapsed().as_nanos() as u64)),
            ..Supervision::default()
        })
    }

    /// Once the command's first process has ended while tasks it started live on (a daemon, a
    /// background job), say why joj goes on waiting: once.
    fn say_left_running(&mut self) {
        if self.said_left_running {
            return;
        }
        let left = cleanup::track(self.guard.id, |r| r.tasks.len()).unwrap_or(0);
        if left > 0 {
            self.said_left_running = true;
            eprintln!(
                "joj: the command's first process ended after {:.3} s; waiting for the task(s) \
                 it left running (a daemon, a background job: their I/O is part of the run; \
                 Ctrl-C stops them all)",
                self.ran_ns.unwrap_or(0) as f64 / 1e9
            );
        }
    }

    /// `tid` execed. A thread other than the leader that execs takes the leader's id, and its
    /// own is gone without an exit report: no longer the command's, it may name another
    /// process from now on.
    fn execed(&mut self, tid: libc::pid_t) {
        let mut former: libc::c_ulong = 0;
        // SAFETY: GETEVENTMSG writes one unsigned long.
        let ok = unsafe {
            libc::ptrace(
                libc::PTRACE_GETEVENTMSG,
                tid,
                0 as libc::c_long,
                &mut former as *mut libc::c_ulong,
            )
        } == 0;
        let Ok(former) = libc::pid_t::try_from(former) else {
            return;
        };
        if ok && former != tid {
            self.started.remove(&former);
            if let Err(e) = self.pids.remove(former) {
                self.pids_error.get_or_insert(e);
            }
        }
    }

    fn count_stop(&self, t0: Instant) {
        let mut sh = lock(self.shared);
        sh.stops += 1;
        sh.handling_ns += t0.elapsed().as_nanos() as u64;
    }

    /// Handle one stop of `tid` and resume it.
    fn stopped(&mut self, tid: libc::pid_t, status: i32) {
        let sig = libc::WSTOPSIG(status);
        let event = status >> 16;
        if self.started.insert(tid) {
            // A new process or thread: its first stop is the SIGSTOP ptrace gives it, before it
            // has run any code of its own; its calls are recorded from here on.
            self.guard.add(tid);
            if let Err(e) = self.pids.add(tid) {
                self.pids_error.get_or_insert(e);
            }
            if sig == libc::SIGSTOP {
                self.cont(tid, 0);
                return;
            }
        }
        if sig == libc::SIGTRAP && event == libc::PTRACE_EVENT_SECCOMP {
            let t0 = Instant::now();
            let follow = match tracee::call_info(tid) {
                Ok(CallInfo::Seccomp { nr, args }) => self.at_ring_call(tid, nr, args),
                _ => false,
            };
            self.count_stop(t0);
            // A ring's setup is followed to its exit stop; everything else runs on.
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
            if let Ok(CallInfo::Exit { rval, is_error }) = tracee::call_info(tid)
                && let Some(follow) = self.pending.remove(&tid)
            {
                self.returned(tid, follow, (!is_error).then_some(rval));
            }
            self.count_stop(t0);
            self.cont(tid, 0);
        } else if sig == libc::SIGTRAP && event != 0 {
            // fork, vfork, clone, exec events: the new task reports its own first stop.
            if event == libc::PTRACE_EVENT_EXEC {
                self.execed(tid);
            }
            self.cont(tid, 0);
        } else {
            // A signal for the tracee: deliver it. (A group-stop also lands here; resuming it
            // lets a stopped command go on, which a measurement run can live with.)
            // SAFETY: an all-zero siginfo_t is valid for GETSIGINFO to fill.
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

    /// Resume `tid`, following it to the exit of a call under way.
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
            Follow::RingSetup { params } => {
                let ring = rval
                    .and_then(|fd| i32::try_from(fd).ok())
                    .zip(tracee::tgid(tid))
                    .zip(uring::read_params(tid, params));
                if let Some(((fd, tgid), ring)) = ring {
                    self.rings.set_up(tgid, fd, ring);
                }
                lock(self.shared).observer.io_uring(IoUring::Setup);
            }
        }
    }

    /// An io_uring call of `tid`: tell the observer, and return whether to follow the call to
    /// its exit (a ring's setup).
    fn at_ring_call(&mut self, tid: libc::pid_t, nr: i64, a: [u64; 6]) -> bool {
        match nr {
            libc::SYS_io_uring_setup => {
                self.pending.insert(tid, Follow::RingSetup { params: a[1] });
                true
            }
            libc::SYS_io_uring_enter => {
                self.entering_ring(tid, a[0], a[1]);
                false
            }
            libc::SYS_io_uring_register => {
                lock(self.shared).observer.io_uring(IoUring::Register);
                false
            }
            _ => false,
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
        let scope = self.scope;
        let at_fd = |fd: i32| {
            let fd = u64::try_from(fd).ok()?;
            let path = normalized(&tracee::fd_path(tid, fd)?);
            // A file of the traced directory is opened where joj reaches it (through an
            // overlay's upper directory); another through /proc.
            let file = if scope.contains(&path) {
                open_in_scope(scope, &path)
            } else {
                tracee::open_fd(tid, fd)
            };
            file.map(|file| TouchedFile { path, file })
        };
        let mut sh = lock(self.shared);
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
                    sh.observer.io_uring(IoUring::Sync {
                        kind,
                        file: file.as_ref(),
                    });
                }
                uring::Submitted::Open => sh.observer.io_uring(IoUring::Open),
            }
        }
        for fd in &read.writes {
            let dsync = u64::try_from(*fd).is_ok_and(|fd| tracee::fd_is_dsync(tid, fd));
            if dsync {
                let file = at_fd(*fd);
                sh.observer.io_uring(IoUring::Sync {
                    kind: SyncKind::SyncWrite,
                    file: file.as_ref(),
                });
            }
        }
        sh.observer.io_uring(IoUring::Enter {
            submitted: to_submit,
            unreadable: read.unreadable,
        });
    }
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
        for p in cleanup::release(self.id) {
            eprintln!("joj-linux: {p}");
        }
    }
}
