//! The process-wide registry of live resources (mounts, loop devices, image files, scratch
//! directories, tracefs instances, host temporary directories) and the signal handler that
//! releases them.
//!
//! Every resource is created and recorded under the registry lock in one step, so a cleanup
//! that runs concurrently (from the signal thread) sees either nothing or the recorded
//! resource — never a resource created but not yet recorded. Releasing takes an entry *out* of
//! the registry first, so each entry is released exactly once, whoever gets there first. Only
//! what is in the registry is ever unmounted, detached or removed.
//!
//! [`install_cleanup_handler`] is explicit and idempotent: it makes SIGINT and SIGTERM release
//! everything and then exit with status 128 + signal (130 for Ctrl-C, 143 for SIGTERM). A second
//! signal during cleanup exits at once.
//!
//! Once a signal has arrived, the signal's cleanup decides how the process ends, whatever the
//! other threads do: the cleanup thread waits for every release another thread has under way
//! ([`release`]) before it exits, and a thread that would end the process meanwhile — with
//! the error the vanishing filesystem gave its workload, or a result — waits for it
//! ([`wait_if_cleaning`]) instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use crate::loopdev::LoopDevice;
use crate::names;

/// The pause between attempts at removing a busy tracefs instance.
const UNMOUNT_RETRY_DELAY: Duration = Duration::from_millis(50);

/// Resources of one scratch filesystem, tracer, recording disk or temporary directory, released
/// in reverse order of creation: tracefs instances, then mounts, then loop devices, then
/// recording disks' FUSE mounts, then files, then directories, then host temporary
/// directories.
#[derive(Debug, Default)]
pub(crate) struct Resources {
    /// Processes and threads of a supervised command, killed before anything else is released
    /// (they may be working in a mount).
    pub tasks: Vec<libc::pid_t>,
    pub trace_instances: Vec<PathBuf>,
    pub mounts: Vec<PathBuf>,
    pub loops: Vec<LoopDevice>,
    /// FUSE mounts of recording disks ([`crate::record`]): they serve the image files behind
    /// loop devices, so they go after every loop device — [`cleanup_all`] releases an entry
    /// holding one after all other entries.
    pub recording_mounts: Vec<PathBuf>,
    pub files: Vec<PathBuf>,
    /// tmpfs mounts holding images ([`crate::memory`]): unmounted after the loop devices on
    /// their files are detached and the files deleted, before the directories they are on.
    pub memory_mounts: Vec<PathBuf>,
    pub dirs: Vec<PathBuf>,
    /// Removed with the workload files in them ([`remove_temp_dir`]).
    pub temp_dirs: Vec<PathBuf>,
}

/// Something that could not be released.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CleanupProblem {
    #[error(transparent)]
    Unmount(#[from] crate::mounts::UnmountError),
    #[error(transparent)]
    Loop(#[from] crate::loopdev::LoopError),
    #[error("cannot remove {path}: {source}; fix: remove it by hand")]
    Remove {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot remove tracefs instance {path}: {source}; fix: close readers of its files, then \
         `rmdir {path}`"
    )]
    TraceInstance {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Resources {
    /// Releases everything, continuing past failures, and reports what could not be released.
    pub(crate) fn release(mut self) -> Vec<CleanupProblem> {
        let mut problems = Vec::new();
        kill_tasks(&std::mem::take(&mut self.tasks));
        for path in self.trace_instances.drain(..).rev() {
            if let Err(p) = remove_trace_instance(&path) {
                problems.push(p);
            }
        }
        for path in self.mounts.drain(..).rev() {
            if let Err(p) = unmount(&path) {
                problems.push(p);
            }
        }
        for lo in self.loops.drain(..).rev() {
            if let Err(e) = lo.detach() {
                problems.push(e.into());
            }
        }
        for path in self.recording_mounts.drain(..).rev() {
            if let Err(p) = unmount(&path) {
                problems.push(p);
            }
        }
        for path in self.files.drain(..).rev() {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    problems.push(CleanupProblem::Remove { path, source: e });
                }
                _ => {}
            }
        }
        for path in self.memory_mounts.drain(..).rev() {
            if let Err(p) = unmount(&path) {
                problems.push(p);
            }
        }
        // Never recursive: should an unmount have failed, a recursive removal would descend
        // into the still-mounted filesystem.
        for path in self.dirs.drain(..).rev() {
            match std::fs::remove_dir(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    problems.push(CleanupProblem::Remove { path, source: e });
                }
                _ => {}
            }
        }
        for path in self.temp_dirs.drain(..).rev() {
            if let Err(p) = remove_temp_dir(&path) {
                problems.push(p);
            }
        }
        problems
    }
}

/// How long a killed task may take to let go of its working directory and files.
const TASK_EXIT_ATTEMPTS: u32 = 200;

/// SIGKILL each task, then wait until each has released its files (`/proc/<pid>/cwd` becomes
/// unreadable once a task has exited, zombie or not), so that an unmount after this is not
/// refused for them.
fn kill_tasks(tasks: &[libc::pid_t]) {
    for &t in tasks {
        // SAFETY: kill with a pid of a task this process started (a supervised command).
        unsafe { libc::kill(t, libc::SIGKILL) };
    }
    for &t in tasks {
        for _ in 0..TASK_EXIT_ATTEMPTS {
            if std::fs::read_link(format!("/proc/{t}/cwd")).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Attempts at removing a host temporary directory that a running workload keeps adding to.
const TEMP_DIR_ATTEMPTS: u32 = 50;
const TEMP_DIR_RETRY_DELAY: Duration = Duration::from_millis(10);

/// Removes a host temporary directory of joj's: the workload files directly in it (names
/// `joj-*`, see [`names::is_workload_file`]), then the directory. Nothing else is removed, so a
/// directory holding anything joj did not put there stays (and is reported). A signal cleanup
/// races the workload, which may create a file (a journal) between the listing and the
/// `rmdir`: a directory found not empty is tried again.
pub(crate) fn remove_temp_dir(path: &Path) -> Result<(), CleanupProblem> {
    let mut attempt = 1;
    loop {
        match remove_workload_files_and_dir(path) {
            Err(e)
                if e.kind() == std::io::ErrorKind::DirectoryNotEmpty
                    && attempt < TEMP_DIR_ATTEMPTS =>
            {
                attempt += 1;
                std::thread::sleep(TEMP_DIR_RETRY_DELAY);
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(CleanupProblem::Remove {
                    path: path.into(),
                    source: e,
                });
            }
            _ => return Ok(()),
        }
    }
}

fn remove_workload_files_and_dir(path: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        let ours = entry
            .file_name()
            .to_str()
            .is_some_and(names::is_workload_file);
        if ours && entry.file_type()?.is_file() {
            match std::fs::remove_file(entry.path()) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
    }
    std::fs::remove_dir(path)
}

/// Syncs and unmounts `path`, retrying while busy, lazily as a last resort (with a warning).
pub(crate) fn unmount(path: &Path) -> Result<(), CleanupProblem> {
    Ok(crate::mounts::unmount(path)?)
}

/// Attempts at removing a busy tracefs instance, `UNMOUNT_RETRY_DELAY` apart.
const TRACE_RMDIR_ATTEMPTS: u32 = 100;

/// Stops and removes one of our tracefs instances. The kernel refuses (EBUSY) while any file of
/// the instance is open — for instance while another thread of this process is still writing
/// its configuration (a signal cleanup can run in the middle of `BlockTracer::start`, whose
/// `buffer_size_kb` write takes long under load) — so a busy instance is retried for up to
/// 5 s.
pub(crate) fn remove_trace_instance(path: &Path) -> Result<(), CleanupProblem> {
    let mut attempt = 1;
    loop {
        let _ = std::fs::write(path.join("tracing_on"), "0");
        match std::fs::remove_dir(path) {
            Err(e)
                if e.raw_os_error() == Some(rustix::io::Errno::BUSY.raw_os_error())
                    && attempt < TRACE_RMDIR_ATTEMPTS =>
            {
                attempt += 1;
                std::thread::sleep(UNMOUNT_RETRY_DELAY);
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(CleanupProblem::TraceInstance {
                    path: path.into(),
                    source: e,
                });
            }
            _ => return Ok(()),
        }
    }
}

#[derive(Default)]
struct Registry {
    next_id: u64,
    entries: BTreeMap<u64, Resources>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    next_id: 0,
    entries: BTreeMap::new(),
});

fn registry() -> MutexGuard<'static, Registry> {
    // A panic while holding the lock leaves the map consistent (every change is one insert or
    // remove), so a poisoned lock is still safe to use — and cleanup must go on after panics.
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Opens a new, empty registry entry and returns its id.
pub(crate) fn open_entry() -> u64 {
    let mut reg = registry();
    let id = reg.next_id;
    reg.next_id += 1;
    reg.entries.insert(id, Resources::default());
    id
}

/// Runs `create` under the registry lock with entry `id`'s resources, so whatever it creates
/// and records is never seen half-done by a concurrent cleanup. `None` if the entry is gone
/// (a signal cleanup released it): the caller must stop.
pub(crate) fn track<T>(id: u64, create: impl FnOnce(&mut Resources) -> T) -> Option<T> {
    let mut reg = registry();
    reg.entries.get_mut(&id).map(create)
}

/// Releases entry `id` (nothing if a signal cleanup, or an earlier call, already took it) and
/// reports what could not be released. The entry is taken out and counted as being released in
/// one step under the registry lock, so a signal cleanup that finds the registry empty still
/// waits for this release to end before it exits the process.
pub(crate) fn release(id: u64) -> Vec<CleanupProblem> {
    let taken = {
        let mut reg = registry();
        let taken = reg.entries.remove(&id);
        if taken.is_some() {
            RELEASING.fetch_add(1, Ordering::SeqCst);
        }
        taken
    };
    let Some(res) = taken else {
        return Vec::new();
    };
    /// Uncounts the release when it ends, also by a panic.
    struct Released;
    impl Drop for Released {
        fn drop(&mut self) {
            RELEASING.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let _released = Released;
    res.release()
}

/// Releases under way in threads other than the signal's cleanup ([`release`]).
static RELEASING: AtomicUsize = AtomicUsize::new(0);

/// How often the signal's cleanup looks whether the other threads' releases have ended.
const RELEASING_POLL: Duration = Duration::from_millis(10);

/// Waits until no thread is releasing an entry: the process must not exit in the middle of one
/// (a second signal still exits at once).
fn wait_for_other_releases() {
    while RELEASING.load(Ordering::SeqCst) > 0 {
        std::thread::sleep(RELEASING_POLL);
    }
}

/// Releases every live resource of this process (supervised tasks of all entries first, so none
/// keeps a mount busy, then tracefs instances, so no trace keeps a device busy, and recording
/// disks last, so that every loop device on their files is gone first). Returns what could not
/// be released.
pub fn cleanup_all() -> Vec<CleanupProblem> {
    let entries = std::mem::take(&mut registry().entries);
    let mut instances = Vec::new();
    let mut tasks = Vec::new();
    let mut rest = Vec::new();
    let mut recording = Vec::new();
    for (_, mut res) in entries {
        instances.append(&mut res.trace_instances);
        tasks.append(&mut res.tasks);
        if res.recording_mounts.is_empty() {
            rest.push(res);
        } else {
            recording.push(res);
        }
    }
    rest.extend(recording);
    let mut problems = Resources {
        tasks,
        trace_instances: instances,
        ..Resources::default()
    }
    .release();
    for res in rest {
        problems.extend(res.release());
    }
    // Taken out under the lock, run outside it: a hook may take locks of its own.
    let taken = std::mem::take(&mut *hooks());
    for (_, hook) in taken {
        hook();
    }
    problems
}

/// A release this crate has no kind of resource for (a run's own files in a directory the
/// user named, each removed only if it is still the file the run made: the caller knows how),
/// run by [`cleanup_all`] after every registered resource is released.
type Hook = Box<dyn FnOnce() + Send>;

/// The hooks of [`on_cleanup`], by id.
static HOOKS: Mutex<BTreeMap<u64, Hook>> = Mutex::new(BTreeMap::new());
static NEXT_HOOK: AtomicUsize = AtomicUsize::new(0);

/// While held, [`cleanup_all`] (a SIGINT / SIGTERM cleanup) runs the hook; dropped, it is
/// forgotten unrun (the owner released the thing itself).
#[derive(Debug)]
#[must_use = "the hook is forgotten when the guard is dropped"]
pub struct CleanupHook(u64);

/// Runs `release` at a signal's cleanup, unless the returned guard is dropped first.
pub fn on_cleanup(release: impl FnOnce() + Send + 'static) -> CleanupHook {
    let id = NEXT_HOOK.fetch_add(1, Ordering::SeqCst) as u64;
    hooks().insert(id, Box::new(release));
    CleanupHook(id)
}

impl Drop for CleanupHook {
    fn drop(&mut self) {
        hooks().remove(&self.0);
    }
}

fn hooks() -> MutexGuard<'static, BTreeMap<u64, Hook>> {
    // Each change is one insert or remove: a poisoned map is still whole.
    HOOKS.lock().unwrap_or_else(PoisonError::into_inner)
}

static HANDLER: OnceLock<Result<(), HandlerError>> = OnceLock::new();

/// Set by the first SIGINT/SIGTERM; a second one then exits at once.
static CLEANING: AtomicBool = AtomicBool::new(false);

/// Whether a SIGINT / SIGTERM cleanup is under way (the process is about to exit with 128 +
/// signal). Code that would notice the cleanup's effects — a supervised command killed under
/// it — waits instead of reporting them as its own failure.
pub fn cleaning() -> bool {
    CLEANING.load(Ordering::SeqCst)
}

/// If a SIGINT / SIGTERM cleanup is under way, never returns: the cleanup exits the process
/// with 128 + signal once everything is released. What a thread has at hand then — the error
/// the vanishing filesystem gave its workload, a result — is a consequence of the signal, not
/// the run's outcome; so it is neither reported nor allowed to end the process before the
/// cleanup has finished. Returns at once when no signal has arrived.
pub fn wait_if_cleaning() {
    while cleaning() {
        std::thread::park();
    }
}

/// Could not install the signal handler: which step failed, and the OS error.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "cannot install the SIGINT/SIGTERM cleanup handler ({step}: {source}); fix: install it once, early, before other code claims these signals"
)]
pub struct HandlerError {
    pub step: &'static str,
    /// Shared, so the first call's outcome can be returned to every later caller.
    pub source: std::sync::Arc<std::io::Error>,
}

/// Makes SIGINT and SIGTERM release every registered resource and exit with 128 + signal.
/// Idempotent: later calls return the first call's outcome.
pub fn install_cleanup_handler() -> Result<(), HandlerError> {
    HANDLER.get_or_init(install).clone()
}

fn install() -> Result<(), HandlerError> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use std::io::Write;
    let failed = |step| {
        move |e: std::io::Error| HandlerError {
            step,
            source: std::sync::Arc::new(e),
        }
    };
    for sig in [SIGINT, SIGTERM] {
        // Order matters: the conditional exit must run before the flag is armed.
        signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, &CLEANING)
            .map_err(failed("registering the second-signal exit"))?;
        signal_hook::flag::register(sig, &CLEANING).map_err(failed("registering the flag"))?;
    }
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .map_err(failed("opening the signal iterator"))?;
    std::thread::Builder::new()
        .name("joj-cleanup".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                CLEANING.store(true, Ordering::SeqCst);
                let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
                // Said first: what the cleanup may warn of next is part of stopping, not a
                // fault of the run. Written straight to descriptor 2, not through the stderr
                // lock, which a main thread blocked on a stalled pipe may hold (the cleanup
                // must not wait for it); a failed write is ignored (stderr may be closed).
                let said = format!(
                    "joj: interrupted ({name}): the run stops here, unfinished, and its result \
                     is not written; releasing what it made (filesystems, loop devices, trace \
                     instances, a --dir run's files)\n"
                );
                // SAFETY: a valid buffer of that length.
                let _ = unsafe { libc::write(2, said.as_ptr().cast(), said.len()) };
                let problems = cleanup_all();
                wait_for_other_releases();
                for p in &problems {
                    let _ = writeln!(std::io::stderr(), "joj-linux: cleanup after {name}: {p}");
                }
                std::process::exit(128 + sig);
            }
        })
        .map_err(failed("starting the cleanup thread"))?;
    Ok(())
}
