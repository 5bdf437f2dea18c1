//! The player: re-executes recorded calls under a root directory, one OS thread per recorded
//! thread, each thread's calls in order, and across threads what the recording shows to have
//! happened first ([`Turn`]: the start order, and a call that ended before another started
//! ends first here too); with [`Timing::Recorded`] each call no earlier than its recorded
//! offset from the phase's start.
//!
//! Data is not recorded: writes carry a fixed pattern (`0x5a`), a database's first page the
//! 16-byte SQLite magic, so block volumes and SQLite roles are the original's. An observer is
//! told before a file loses blocks (unlink, rename, truncate), after every write and after
//! every sync, as the supervisor of `joj trace -- COMMAND` tells it, so the replay is
//! classified and counted the same way.
//! Descriptors live in a [`Player`] and outlast a phase: a file opened before the measured
//! window is used inside it.

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::check::{MAX_IO_BYTES, OPEN_FLAGS, WHENCES};
use super::error::SyscallsError;
use super::format::{Call, Op};
use crate::window::lock;

/// The byte every replayed write carries.
pub const FILL_BYTE: u8 = 0x5a;
/// The start of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// When each call starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// At its recorded offset from the phase's first call (think times kept).
    Recorded,
    /// As soon as the calls recorded before it have started.
    Fast,
}

/// What a call is about to do to a file's blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Remove,
    Truncate,
}

/// Which sync returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synced {
    Fsync,
    Fdatasync,
    /// A write on an `O_SYNC` / `O_DSYNC` descriptor.
    SyncWrite,
    /// `syncfs`.
    WholeFs,
    /// `fsync` (`datasync` false) or `fdatasync` of a directory.
    Directory {
        datasync: bool,
    },
}

/// Told of the replay's calls that move or settle blocks (times: CLOCK_MONOTONIC ns).
pub trait PlayObserver: Sync {
    fn before_change(&self, change: Change, path: &Path, file: &File);
    /// A `write` or `pwrite` returned `bytes` (what the kernel returned) on the file at `path`,
    /// the one its descriptor names, at `offset` for a `pwrite` — as the supervisor tells a
    /// command's. Told before the [`Synced::SyncWrite`] of a write on a synchronous descriptor.
    fn wrote(&self, path: &Path, bytes: u64, offset: Option<u64>);
    fn synced(&self, kind: Synced, file: Option<(&Path, &File)>, start_ns: u64, end_ns: u64);
}

/// CLOCK_MONOTONIC in nanoseconds (the block tracer's clock).
pub fn now_mono_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec.unsigned_abs() * 1_000_000_000 + ts.tv_nsec.unsigned_abs()
}

/// The file type bits of `f`, asked for without its timestamps: a `stat` returning mtime
/// would make the next write's mtime fine-grained (multigrain timestamps, Linux 6.13+), so
/// every write would change the inode and journal where the recorded program's did not.
fn file_type_quietly(f: &File) -> Option<u32> {
    // SAFETY: an all-zero statx is a valid value of the plain C struct.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: statx on an open descriptor with an empty path and AT_EMPTY_PATH writes one
    // struct statx to a valid pointer.
    let rc = unsafe {
        libc::statx(
            f.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_TYPE,
            &mut stx,
        )
    };
    (rc == 0).then_some(u32::from(stx.stx_mode) & libc::S_IFMT)
}

/// An open replayed descriptor.
struct Opened {
    /// When the open that returned it returned, in the recording: a descriptor number is
    /// reused, and a `close` on one thread can overlap the `open` on another that gets the
    /// number back ([`super::format::closes`]).
    opened_end_ns: u64,
    file: Arc<File>,
    path: PathBuf,
    sync_writes: bool,
    is_dir: bool,
}

/// What a phase did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlayReport {
    pub calls: u64,
    pub threads: u64,
    /// Calls that failed in the recording and succeeded in the replay.
    pub unexpected_successes: u64,
    /// Recorded gaps between one call's start and the next longer than [`MAX_GAP_NS`], each
    /// shortened to it ([`Timing::Recorded`]).
    pub capped_gaps: u64,
    /// The recorded idle time those gaps held beyond [`MAX_GAP_NS`], not replayed.
    pub cut_ns: u64,
}

/// The longest wait between the starts of two calls a recorded-time replay keeps: longer than
/// the kernel's writeback delay (dirty data expires after 30 s, the flusher wakes every 5 s),
/// so what the flusher would do in a longer idle gap still happens in the shortened one.
pub const MAX_GAP_NS: u64 = 60_000_000_000;

/// Each call's due time from the phase's start with every gap between consecutive starts cut
/// to [`MAX_GAP_NS`]; how many gaps were cut and by how much in all.
pub(super) fn due_times(calls: &[&Call]) -> (Vec<u64>, u64, u64) {
    let mut due = Vec::with_capacity(calls.len());
    let (mut at, mut capped, mut cut) = (0u64, 0u64, 0u64);
    let mut prev = calls.first().map_or(0, |c| c.start_ns);
    for c in calls {
        let gap = c.start_ns.saturating_sub(prev);
        if gap > MAX_GAP_NS {
            capped += 1;
            cut = cut.saturating_add(gap - MAX_GAP_NS);
        }
        at = at.saturating_add(gap.min(MAX_GAP_NS));
        prev = prev.max(c.start_ns);
        due.push(at);
    }
    (due, capped, cut)
}

/// How long replaying `calls` (one phase) at their recorded times waits at least: their
/// recorded span, marks left out and each gap longer than [`MAX_GAP_NS`] shortened to it, as
/// [`Player::play`] replays them (the calls' own time adds to it).
pub fn recorded_span_ns(calls: &[Call]) -> u64 {
    let refs: Vec<&Call> = calls
        .iter()
        .filter(|c| !matches!(c.op, Op::Mark { .. }))
        .collect();
    due_times(&refs).0.last().copied().unwrap_or(0)
}

/// Replays recorded calls under `root`, keeping their descriptors between phases.
pub struct Player {
    root: PathBuf,
    fds: Mutex<HashMap<i32, Opened>>,
    /// Each recorded thread's number, in the order the threads first called across the
    /// phases played so far: thread `n` keeps to the `n`-th CPU (`affinity`).
    thread_numbers: Mutex<HashMap<u64, u32>>,
}

/// The order a phase keeps across threads: call `i` starts once every call recorded before it
/// has started, and once every call that had *ended* before it started in the recording has
/// ended here — what the recording shows to have happened before it still does; calls that
/// overlapped in the recording may overlap in the replay. Every wait is for a call of smaller
/// index, so the waits cannot form a circle.
struct Turn {
    state: Mutex<TurnState>,
    cv: Condvar,
    failed: AtomicBool,
    /// For each call, how many calls come before it in end order (ended before it started).
    ended_before: Vec<usize>,
    /// Each call's position in end order.
    end_pos: Vec<usize>,
}

struct TurnState {
    next_start: usize,
    done: Vec<bool>,
    /// The calls in end order are all done up to here.
    done_prefix: usize,
}

impl Turn {
    fn new(calls: &[&Call]) -> Turn {
        let end = |c: &Call| c.start_ns.saturating_add(c.dur_ns);
        let mut by_end: Vec<usize> = (0..calls.len()).collect();
        by_end.sort_by_key(|&i| (end(calls[i]), i));
        let mut end_pos = vec![0; calls.len()];
        for (pos, &i) in by_end.iter().enumerate() {
            end_pos[i] = pos;
        }
        let keys: Vec<(u64, usize)> = by_end.iter().map(|&i| (end(calls[i]), i)).collect();
        let ended_before = (0..calls.len())
            .map(|i| keys.partition_point(|&k| k < (calls[i].start_ns, i)))
            .collect();
        Turn {
            state: Mutex::new(TurnState {
                next_start: 0,
                done: vec![false; calls.len()],
                done_prefix: 0,
            }),
            cv: Condvar::new(),
            failed: AtomicBool::new(false),
            ended_before,
            end_pos,
        }
    }

    /// Wait until call `i` may start; `false` when another thread failed.
    fn wait(&self, i: usize) -> bool {
        let mut st = lock(&self.state);
        loop {
            let failed = self.failed.load(Ordering::SeqCst);
            let due = st.next_start == i && st.done_prefix >= self.ended_before[i];
            if failed || due {
                break;
            }
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        if self.failed.load(Ordering::SeqCst) {
            return false;
        }
        st.next_start += 1;
        self.cv.notify_all();
        true
    }

    /// Call `i` has returned.
    fn done(&self, i: usize) {
        let mut st = lock(&self.state);
        st.done[self.end_pos[i]] = true;
        while st.done_prefix < st.done.len() && st.done[st.done_prefix] {
            st.done_prefix += 1;
        }
        self.cv.notify_all();
    }

    fn fail(&self) {
        self.failed.store(true, Ordering::SeqCst);
        let _guard = lock(&self.state);
        self.cv.notify_all();
    }
}

/// Options of one phase.
pub struct Phase<'a> {
    pub timing: Timing,
    pub observer: Option<&'a dyn PlayObserver>,
    /// Counts finished calls.
    pub progress: Option<&'a AtomicU64>,
}

/// The most threads a replay starts: one per recorded thread. A recording names its threads
/// itself, and each costs an OS thread of the host's shared limit (a recording of a few KB can
/// name thousands); SQLite applications do their I/O from a handful, Android ones from tens.
pub const MAX_REPLAY_THREADS: u64 = 1024;

impl Player {
    pub fn new(root: &Path) -> Player {
        Player {
            root: root.to_path_buf(),
            fds: Mutex::new(HashMap::new()),
            thread_numbers: Mutex::new(HashMap::new()),
        }
    }

    /// Replay `calls` (a phase of a checked recording) and return when all have. A thread
    /// that cannot be started stops the phase: the threads started are told to stop, and the
    /// error says why.
    pub fn play(&self, calls: &[Call], phase: &Phase) -> Result<PlayReport, SyscallsError> {
        let real: Vec<&Call> = calls
            .iter()
            .filter(|c| !matches!(c.op, Op::Mark { .. }))
            .collect();
        // One list per recorded thread, under its number: the order the threads first call,
        // over the phases played so far, so a thread keeps to the same CPU before and in the
        // window, and in every replay.
        let mut by_tid: BTreeMap<u32, Vec<(usize, &Call)>> = BTreeMap::new();
        {
            let mut numbers = lock(&self.thread_numbers);
            for (i, c) in real.iter().enumerate() {
                let next = numbers.len() as u32;
                let number = *numbers.entry(c.tid).or_insert(next);
                by_tid.entry(number).or_default().push((i, c));
            }
        }
        let turn = Turn::new(&real);
        let (due, capped_gaps, cut_ns) = match phase.timing {
            Timing::Recorded => due_times(&real),
            Timing::Fast => (vec![0; real.len()], 0, 0),
        };
        let started = Instant::now();
        let unexpected = AtomicU64::new(0);
        let errors: Mutex<Vec<SyscallsError>> = Mutex::new(vec![]);
        let (turn_ref, unexpected_ref, errors_ref, due_ref) = (&turn, &unexpected, &errors, &due);
        let threads = by_tid.len() as u64;
        if threads > MAX_REPLAY_THREADS {
            return Err(SyscallsError::TooManyThreads {
                threads,
                limit: MAX_REPLAY_THREADS,
            });
        }
        std::thread::scope(|s| {
            for (n, (number, list)) in by_tid.iter().enumerate() {
                let (turn, unexpected, errors, due) =
                    (turn_ref, unexpected_ref, errors_ref, due_ref);
                let spawned = std::thread::Builder::new()
                    .name(format!("replay-{n}"))
                    .spawn_scoped(s, move || {
                        // As `joj bench` keeps each workload thread to one CPU: ext4 takes a
                        // small file's blocks from the writing CPU's preallocation, and a
                        // thread that moves spreads them over two (`affinity`).
                        if let Err(source) = crate::affinity::keep_to_one_cpu(*number) {
                            lock(errors).push(SyscallsError::Affinity {
                                thread: u64::from(*number),
                                source,
                            });
                            turn.fail();
                            return;
                        }
                        self.play_thread(list, phase, due, started, turn, unexpected, errors);
                    });
                if let Err(source) = spawned {
                    lock(errors).push(SyscallsError::Thread {
                        started_plus_one: n as u64 + 1,
                        threads,
                        source,
                    });
                    turn.fail();
                    break;
                }
            }
        });
        if let Some(e) = lock(&errors).drain(..).next() {
            return Err(e);
        }
        Ok(PlayReport {
            calls: real.len() as u64,
            threads,
            unexpected_successes: unexpected.into_inner(),
            capped_gaps,
            cut_ns,
        })
    }

    /// One recorded thread's calls, each at its turn (and due time); the first error stops
    /// every thread.
    #[allow(clippy::too_many_arguments)]
    fn play_thread(
        &self,
        list: &[(usize, &Call)],
        phase: &Phase,
        due: &[u64],
        started: Instant,
        turn: &Turn,
        unexpected: &AtomicU64,
        errors: &Mutex<Vec<SyscallsError>>,
    ) {
        let mut buf = AlignedBuf::default();
        for (i, c) in list {
            if phase.timing == Timing::Recorded {
                let at = Duration::from_nanos(due[*i]);
                if let Some(wait) = at.checked_sub(started.elapsed()) {
                    std::thread::sleep(wait);
                }
            }
            if !turn.wait(*i) {
                return;
            }
            let res = self.exec(c, &mut buf, phase.observer);
            turn.done(*i);
            match res {
                Ok(surprise) => {
                    unexpected.fetch_add(u64::from(surprise), Ordering::Relaxed);
                }
                Err(e) => {
                    lock(errors).push(e);
                    turn.fail();
                    return;
                }
            }
            if let Some(p) = phase.progress {
                p.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The absolute path of a recorded relative one.
    fn abs(&self, rel: &str) -> PathBuf {
        if rel == "." {
            self.root.clone()
        } else {
            self.root.join(rel)
        }
    }

    /// The descriptor's file and path (the recording was checked: every descriptor used was
    /// opened; one whose open failed here too stops the replay).
    fn fd(&self, c: &Call, fd: i32) -> Result<(Arc<File>, PathBuf, bool, bool), SyscallsError> {
        let fds = lock(&self.fds);
        match fds.get(&fd) {
            Some(o) => Ok((o.file.clone(), o.path.clone(), o.sync_writes, o.is_dir)),
            None => Err(diverged(c, format!("descriptor {fd}"), None)),
        }
    }
}

/// The replayed call's outcome differs from the recorded one; `got` is the replay's error
/// (`None`: a descriptor whose open failed in the replay), which decides the fix.
pub(super) fn diverged(c: &Call, path: String, got: Option<&std::io::Error>) -> SyscallsError {
    let fix = match got.and_then(std::io::Error::raw_os_error) {
        Some(libc::ENOSPC | libc::EDQUOT) => {
            "the scratch filesystem is full: replay on a larger one (--image-mib)"
        }
        Some(libc::EMFILE | libc::ENFILE) => {
            "the replay has more files open than the descriptor limit allows: raise it \
             (`ulimit -n`) and replay again"
        }
        Some(libc::EFBIG) => {
            "the call's offset or size is more than this filesystem kind allows in one file: \
             replay on one that allows it (--fs xfs or btrfs)"
        }
        _ => {
            "replay on a fresh filesystem (joj syscalls replay makes one); a recording made on \
             another filesystem kind may depend on its behaviour"
        }
    };
    SyscallsError::Diverged {
        seq: c.seq,
        call: c.op.name(),
        path,
        recorded: c.errno.clone().map_or_else(
            || format!("success ({})", c.ret),
            |e| joj_trace::input::quoted(&e),
        ),
        got: got.map_or_else(|| "no such descriptor".into(), ToString::to_string),
        fix: fix.to_string(),
    }
}

/// When a replayed write ran, and where a `pwrite` wrote.
struct Written {
    start_ns: u64,
    end_ns: u64,
    offset: Option<u64>,
}

/// Tell the observer of a replayed write that succeeded — the bytes the kernel returned, on
/// the file its descriptor names — and, on a synchronous descriptor, of its sync; the write's
/// outcome.
fn tell_wrote(
    obs: Option<&dyn PlayObserver>,
    r: std::io::Result<usize>,
    path: &Path,
    f: &File,
    sync: bool,
    w: Written,
) -> std::io::Result<()> {
    let bytes = r?;
    if let Some(o) = obs {
        o.wrote(path, bytes as u64, w.offset);
        if sync {
            o.synced(Synced::SyncWrite, Some((path, f)), w.start_ns, w.end_ns);
        }
    }
    Ok(())
}

/// Room for joj's own descriptors (trace files, loop devices, the tracer's buffers) besides a
/// recording's, when the descriptor limit is raised for a replay.
pub const OWN_DESCRIPTORS: u64 = 256;

/// Make sure this process may open `needed` descriptors at once besides its own
/// ([`OWN_DESCRIPTORS`]): the soft limit is raised up to the hard one when it is lower; a hard
/// limit too low is an error naming it.
pub fn allow_open_descriptors(needed: u64) -> Result<(), SyscallsError> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let want = needed.saturating_add(OWN_DESCRIPTORS);
    let lim = getrlimit(Resource::Nofile);
    if lim.current.is_none_or(|cur| cur >= want) {
        return Ok(());
    }
    if lim.maximum.is_some_and(|hard| hard < want) {
        return Err(SyscallsError::TooManyDescriptors {
            needed,
            margin: OWN_DESCRIPTORS,
            hard: lim.maximum.unwrap_or(0),
        });
    }
    let raised = Rlimit {
        current: Some(want),
        maximum: lim.maximum,
    };
    // A soft limit up to the hard one is always allowed; should the kernel still refuse, the
    // limit in force is the one to name.
    setrlimit(Resource::Nofile, raised).map_err(|_| SyscallsError::TooManyDescriptors {
        needed,
        margin: OWN_DESCRIPTORS,
        hard: lim.current.unwrap_or(0),
    })
}

/// A reusable buffer aligned for `O_DIRECT`.
#[derive(Default)]
struct AlignedBuf {
    raw: Vec<u8>,
}

const ALIGN: usize = 4096;

impl AlignedBuf {
    /// `len` bytes of the pattern, aligned; `None` past [`MAX_IO_BYTES`] (a checked recording
    /// holds no such call).
    fn get(&mut self, len: u64, sqlite_header: bool) -> Option<&mut [u8]> {
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l as u64 <= MAX_IO_BYTES)?;
        let size = len.checked_add(ALIGN)?;
        if self.raw.len() < size {
            self.raw = vec![FILL_BYTE; size];
        }
        let start = self.raw.as_ptr().align_offset(ALIGN);
        let buf = &mut self.raw[start..start + len];
        buf.fill(FILL_BYTE);
        if sqlite_header && len >= SQLITE_MAGIC.len() {
            buf[..SQLITE_MAGIC.len()].copy_from_slice(SQLITE_MAGIC);
        }
        Some(buf)
    }
}

/// A buffer for a call of `len` bytes, or the call refused (see [`AlignedBuf::get`]).
fn buffer<'a>(
    buf: &'a mut AlignedBuf,
    c: &Call,
    len: u64,
    sqlite_header: bool,
) -> Result<&'a mut [u8], SyscallsError> {
    buf.get(len, sqlite_header)
        .ok_or_else(|| SyscallsError::OutOfBounds {
            what: "the replay".into(),
            line: c.seq + 2,
            why: format!(
                "{} of {len} bytes, more than joj replays in one call ({MAX_IO_BYTES} bytes)",
                c.op.name()
            ),
        })
}

fn open_options(flags: &[String], mode: u32) -> OpenOptions {
    let has = |f: &str| flags.iter().any(|x| x == f);
    let mut o = OpenOptions::new();
    let (read, write) = if has("O_RDWR") {
        (true, true)
    } else if has("O_WRONLY") {
        (false, true)
    } else {
        (true, false)
    };
    o.read(read).write(write).mode(mode);
    let mut custom = libc::O_CLOEXEC;
    for (name, bit) in OPEN_FLAGS {
        if has(name) {
            custom |= bit;
        }
    }
    o.custom_flags(custom);
    o
}

/// `lseek(2)` with the recorded `whence` (a checked recording names one of [`WHENCES`]) and
/// offset as they are: a negative offset fails as it failed when recorded.
fn lseek(f: &File, whence: &str, off: i64) -> std::io::Result<()> {
    let Some(&(_, w)) = WHENCES.iter().find(|(n, _)| *n == whence) else {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    };
    // SAFETY: lseek on a descriptor this player keeps open.
    if unsafe { libc::lseek(f.as_raw_fd(), off, w) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl Player {
    /// Execute one call; `Ok(true)` when it failed in the recording and succeeded here.
    fn exec(
        &self,
        c: &Call,
        buf: &mut AlignedBuf,
        obs: Option<&dyn PlayObserver>,
    ) -> Result<bool, SyscallsError> {
        // long: one arm per recorded call, each its system call and what the observer is told;
        // the table reads best whole.
        let res: std::io::Result<()> = match &c.op {
            Op::Open {
                path,
                flags,
                mode,
                fd,
            } => {
                let abs = self.abs(path);
                match open_options(flags, *mode).open(&abs) {
                    // An open that failed in the recording and succeeds here is closed at once.
                    Ok(f) if !c.failed() => {
                        let sync_writes = flags.iter().any(|f| f == "O_SYNC" || f == "O_DSYNC");
                        let is_dir = file_type_quietly(&f) == Some(libc::S_IFDIR);
                        let mut fds = lock(&self.fds);
                        // A newer open of the same number may have come first here.
                        if fds.get(fd).is_none_or(|o| o.opened_end_ns <= c.end_ns()) {
                            fds.insert(
                                *fd,
                                Opened {
                                    opened_end_ns: c.end_ns(),
                                    file: Arc::new(f),
                                    path: abs,
                                    sync_writes,
                                    is_dir,
                                },
                            );
                        }
                        Ok(())
                    }
                    Ok(_) => Ok(()),
                    Err(e) => Err(e),
                }
            }
            Op::Close { fd } => {
                let mut fds = lock(&self.fds);
                // Only the descriptor this close closed in the recording: one whose open was
                // still running when the close began (it got the number back) stays.
                if fds
                    .get(fd)
                    .is_some_and(|o| super::format::closes(o.opened_end_ns, c))
                {
                    fds.remove(fd);
                }
                Ok(())
            }
            Op::Read { fd, len } => {
                let (f, ..) = self.fd(c, *fd)?;
                let b = buffer(buf, c, *len, false)?;
                (&*f).read(b).map(drop)
            }
            Op::Pread { fd, off, len } => {
                let (f, ..) = self.fd(c, *fd)?;
                let b = buffer(buf, c, *len, false)?;
                f.read_at(b, *off).map(drop)
            }
            Op::Write { fd, len } => {
                let (f, path, sync, _) = self.fd(c, *fd)?;
                let b = buffer(buf, c, *len, false)?;
                let start = now_mono_ns();
                let r = (&*f).write(b);
                let written = Written {
                    start_ns: start,
                    end_ns: now_mono_ns(),
                    offset: None,
                };
                tell_wrote(obs, r, &path, &f, sync, written)
            }
            Op::Pwrite {
                fd,
                off,
                len,
                sqlite_header,
            } => {
                let (f, path, sync, _) = self.fd(c, *fd)?;
                let b = buffer(buf, c, *len, *sqlite_header)?;
                let start = now_mono_ns();
                let r = f.write_at(b, *off);
                let written = Written {
                    start_ns: start,
                    end_ns: now_mono_ns(),
                    offset: Some(*off),
                };
                tell_wrote(obs, r, &path, &f, sync, written)
            }
            Op::Lseek { fd, off, whence: w } => {
                let (f, ..) = self.fd(c, *fd)?;
                lseek(&f, w, *off)
            }
            Op::Fsync { fd } | Op::Fdatasync { fd } => {
                let (f, path, _, is_dir) = self.fd(c, *fd)?;
                let data_only = matches!(c.op, Op::Fdatasync { .. });
                let start = now_mono_ns();
                let r = if data_only {
                    f.sync_data()
                } else {
                    f.sync_all()
                };
                if let (Some(o), true) = (obs, r.is_ok()) {
                    let end = now_mono_ns();
                    match (is_dir, data_only) {
                        (true, datasync) => {
                            o.synced(Synced::Directory { datasync }, None, start, end)
                        }
                        (false, true) => o.synced(Synced::Fdatasync, Some((&path, &f)), start, end),
                        (false, false) => o.synced(Synced::Fsync, Some((&path, &f)), start, end),
                    }
                }
                r
            }
            Op::Syncfs { fd } => {
                let (f, ..) = self.fd(c, *fd)?;
                let start = now_mono_ns();
                // SAFETY: syncfs on a descriptor this player keeps open.
                let r = if unsafe { libc::syncfs(f.as_raw_fd()) } == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                };
                if let (Some(o), true) = (obs, r.is_ok()) {
                    o.synced(Synced::WholeFs, None, start, now_mono_ns());
                }
                r
            }
            Op::Ftruncate { fd, len } => {
                let (f, path, ..) = self.fd(c, *fd)?;
                if let Some(o) = obs {
                    o.before_change(Change::Truncate, &path, &f);
                }
                f.set_len(*len)
            }
            Op::Truncate { path, len } => {
                let abs = self.abs(path);
                self.tell_before(obs, Change::Truncate, &abs);
                OpenOptions::new()
                    .write(true)
                    .open(&abs)
                    .and_then(|f| f.set_len(*len))
            }
            Op::Fallocate { fd, mode, off, len } => {
                let (f, ..) = self.fd(c, *fd)?;
                // SAFETY: fallocate on a descriptor this player keeps open.
                let rc = unsafe {
                    libc::fallocate(
                        f.as_raw_fd(),
                        *mode,
                        *off as libc::off_t,
                        *len as libc::off_t,
                    )
                };
                if rc == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            }
            Op::Unlink { path } => {
                let abs = self.abs(path);
                self.tell_before(obs, Change::Remove, &abs);
                std::fs::remove_file(&abs)
            }
            Op::Rmdir { path } => std::fs::remove_dir(self.abs(path)),
            Op::Rename { from, to } => {
                let (from, to) = (self.abs(from), self.abs(to));
                self.tell_before(obs, Change::Remove, &from);
                self.tell_before(obs, Change::Remove, &to);
                std::fs::rename(&from, &to)
            }
            Op::Mkdir { path, mode } => {
                std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), *mode)
                    .create(self.abs(path))
            }
            // A stat is replayed for its side effect: on Linux 6.13+ (multigrain timestamps) a
            // file whose mtime was read gets a fine-grained new one at its next write, so the
            // inode changes, and the next sync journals, where it would not have otherwise.
            Op::Stat { path } => std::fs::metadata(self.abs(path)).map(drop),
            Op::Fstat { fd } => self.fd(c, *fd)?.0.metadata().map(drop),
            Op::Fchown { fd, uid, gid } => {
                let f = self.fd(c, *fd)?.0;
                std::os::unix::fs::fchown(&*f, Some(*uid), Some(*gid))
            }
            Op::Chown { path, uid, gid } => {
                std::os::unix::fs::chown(self.abs(path), Some(*uid), Some(*gid))
            }
            Op::Fchmod { fd, mode } => {
                let f = self.fd(c, *fd)?.0;
                f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(*mode))
            }
            Op::Chmod { path, mode } => std::fs::set_permissions(
                self.abs(path),
                std::os::unix::fs::PermissionsExt::from_mode(*mode),
            ),
            Op::Mark { .. } => Ok(()),
        };
        self.outcome(c, res)
    }

    /// Tell the observer about a file by path, when it exists.
    fn tell_before(&self, obs: Option<&dyn PlayObserver>, change: Change, abs: &Path) {
        if let Some(o) = obs
            && let Ok(f) = File::open(abs)
            && file_type_quietly(&f) == Some(libc::S_IFREG)
        {
            o.before_change(change, abs, &f);
        }
    }

    /// Compare the replayed outcome with the recorded one.
    fn outcome(&self, c: &Call, res: std::io::Result<()>) -> Result<bool, SyscallsError> {
        let where_ = || {
            c.op.paths()
                .first()
                .map(|p| joj_trace::input::quoted(p))
                .or_else(|| c.op.fd().map(|fd| format!("descriptor {fd}")))
                .unwrap_or_default()
        };
        match (res, c.failed()) {
            (Ok(()), false) | (Err(_), true) => Ok(false),
            (Ok(()), true) => Ok(true),
            (Err(e), false) => Err(diverged(c, where_(), Some(&e))),
        }
    }
}
