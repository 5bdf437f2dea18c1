//! Any program as a workload (`joj trace -- COMMAND`): it runs with its working directory on a
//! scratch filesystem made for it, under joj-linux's supervisor, while every block request of
//! the scratch devices is traced. The supervisor stops the program's processes only at the
//! calls that move blocks between files (unlink, rename, truncate) and at sync-type calls; at
//! each, the file's extents are read (FIEMAP) — before an unlink, so a rollback journal that
//! DELETE mode removes every transaction still owns its blocks afterwards — and each sync call
//! is kept with its file and interval. Classification is then exactly that of
//! `joj bench --trace`: FS journal, a file's data by the snapshot nearest in time, else
//! metadata.
//!
//! The window: `syncfs`, then the tracer starts, then the program runs to the end of its last
//! process; then `syncfs` again (so data it left dirty is written and counted) and the tracer
//! stops. A file's SQLite role comes from its name (`-wal`, `-journal`, `-shm`) or, for a
//! database, from the SQLite header at its start, whatever its name.

use std::collections::BTreeMap;

use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use joj_linux::diskstats::DiskStats;
use joj_linux::{BlockTracer, SyncKind, TouchedFile};
use joj_trace::FileRole;
use joj_trace::classify::data_by_path;

use super::classify::{classify_window, journal_layout};
pub use super::command_doc::CommandOptions;
use super::command_doc::{Measured, command_label, document, model_command};
use super::emit::write_trace_and_plot;
use super::extents::{ExtentRecorder, SyncInterval};
use super::place::Place;
use crate::error::ExperimentError;
use crate::result::{
    BioIntent, CommandReport, FULL_BELOW_BYTES, FileReport, IoUringReport, OUTSIDE_PATHS_KEPT,
    RunResult, SetupReport, SetupWork,
};
use crate::stack::Storage;

/// `-shm`: SQLite's WAL index, shared memory (counted with `other` by role); `-waldio`: the
/// file waldio keeps SQLite's WAL in.
fn kind_of(path: &Path, header_is_sqlite: bool) -> (&'static str, FileRole) {
    let s = path.to_string_lossy();
    if s.ends_with("-wal") || s.ends_with("-waldio") {
        ("wal", FileRole::Wal)
    } else if s.ends_with("-journal") {
        ("rollback_journal", FileRole::RollbackJournal)
    } else if s.ends_with("-shm") {
        ("shm", FileRole::Other)
    } else if header_is_sqlite {
        ("database", FileRole::Database)
    } else {
        ("other", FileRole::Other)
    }
}

/// The size of SQLite's WAL header.
const WAL_HEADER_BYTES: u64 = 32;

/// SQLite's file header starts with these 16 bytes.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Whether `f` starts with SQLite's header. It is read through a descriptor of its own opened
/// with `O_NOATIME` (joj runs as root, who may): a plain read would update the file's atime
/// — after every write, under `relatime` — and the filesystem would journal that inode change,
/// FS journal the program never caused.
fn has_sqlite_header(f: &std::fs::File) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let proc_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(f));
    let quiet = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOATIME)
        .open(proc_path);
    let Ok(quiet) = quiet else { return false };
    let mut buf = [0u8; 16];
    matches!(quiet.read_at(&mut buf, 0), Ok(16)) && &buf == SQLITE_HEADER
}

/// The device number of the filesystem `f` is on, asked for without its timestamps: on this
/// kernel (6.13 and later: multigrain timestamps on ext4, xfs, btrfs) a `stat` that returns a
/// file's mtime makes the next write give it a fine-grained new one, so every write after a
/// `stat` changes the inode and the following `fsync` commits a journal transaction the
/// program alone would often not have caused.
fn device_quietly(f: &std::fs::File) -> Option<u64> {
    // SAFETY: an all-zero statx is a valid value of the plain C struct.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: statx on an open descriptor with an empty path and AT_EMPTY_PATH writes one
    // struct statx to a valid pointer.
    let rc = unsafe {
        libc::statx(
            std::os::fd::AsRawFd::as_raw_fd(f),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_TYPE,
            &mut stx,
        )
    };
    (rc == 0).then(|| libc::makedev(stx.stx_dev_major, stx.stx_dev_minor))
}

/// On ext4, the BPF observer takes the extents an unlinked file gives up as ext4 frees them,
/// and the unlink needs no stop: the scratch filesystem's device and block size.
fn freed_blocks(fs: joj_linux::FsKind, st_dev: u64, dir: &Path) -> Option<joj_linux::FreedBlocks> {
    if fs != joj_linux::FsKind::Ext4 {
        return None;
    }
    let block_bytes = rustix::fs::statvfs(dir).ok()?.f_bsize;
    Some(joj_linux::FreedBlocks {
        dev: st_dev,
        block_bytes,
    })
}

/// What the supervisor reports, kept for the run's files on the scratch filesystem.
pub(super) struct Watcher {
    recorder: Arc<ExtentRecorder>,
    /// The scratch filesystem's device number: files elsewhere are not the run's.
    st_dev: u64,
    files: BTreeMap<PathBuf, FileReport>,
    /// Paths seen with a SQLite header.
    databases: std::collections::BTreeSet<PathBuf>,
    syncs: Vec<(PathBuf, SyncInterval)>,
    pub(super) whole_fs_syncs: u64,
    /// Directory syncs: `fsync` and `fdatasync` calls.
    pub(super) dir_fsyncs: u64,
    pub(super) dir_fdatasyncs: u64,
    /// Syncs on descriptors joj never saw opened and could not resolve.
    pub(super) unresolved_syncs: u64,
    /// Regular files off the scratch filesystem opened for writing (the first
    /// [`OUTSIDE_PATHS_KEPT`]), and how many there were.
    pub(super) outside: std::collections::BTreeSet<PathBuf>,
    pub(super) outside_total: u64,
    pub(super) io_uring: Option<IoUringReport>,
    /// Directory syncs by directory, as the command names it.
    dir_syncs_of: BTreeMap<PathBuf, u64>,
    /// Commits a joj VFS in the command marked, by database path as the command names it.
    commits_marked: BTreeMap<PathBuf, u64>,
    /// Set-up work: what, the file, start and end (CLOCK_MONOTONIC ns).
    setup: Vec<(String, Option<PathBuf>, u64, u64)>,
    /// Set-up work begun and not yet ended, by thread.
    setup_open: BTreeMap<i32, (String, u64)>,
}

impl Watcher {
    /// Whether `f` is on the scratch filesystem; notes a SQLite header.
    fn ours(&mut self, f: &TouchedFile) -> bool {
        let on_scratch = device_quietly(&f.file) == Some(self.st_dev);
        // Only a file whose name gives no role is read (reading updates its atime, which the
        // filesystem then journals), and only until it is known to be a database.
        if on_scratch
            && kind_of(&f.path, false).0 == "other"
            && !self.databases.contains(&f.path)
            && has_sqlite_header(&f.file)
        {
            self.databases.insert(f.path.clone());
        }
        on_scratch
    }

    fn role(&self, path: &Path) -> FileRole {
        kind_of(path, self.databases.contains(path)).1
    }

    fn entry(&mut self, path: &Path) -> &mut FileReport {
        self.files.entry(path.to_path_buf()).or_default()
    }
}

impl joj_linux::Observer for Watcher {
    fn opened_for_writing(&mut self, f: &TouchedFile) {
        if device_quietly(&f.file) == Some(self.st_dev) {
            return;
        }
        if self.outside.contains(&f.path) {
            return;
        }
        self.outside_total += 1;
        if self.outside.len() < OUTSIDE_PATHS_KEPT {
            self.outside.insert(f.path.clone());
        }
    }

    fn io_uring(&mut self, event: joj_linux::IoUring<'_>) {
        let r = self.io_uring.get_or_insert_with(IoUringReport::default);
        match event {
            joj_linux::IoUring::Setup => r.rings += 1,
            joj_linux::IoUring::Register => {}
            joj_linux::IoUring::Open => r.opens += 1,
            joj_linux::IoUring::Enter {
                submitted,
                unreadable,
            } => {
                r.enters += 1;
                r.submissions += u64::from(submitted);
                r.unreadable_enters += u64::from(unreadable);
            }
            joj_linux::IoUring::Sync { file, .. } => {
                r.syncs += 1;
                match file {
                    Some(f) if self.ours(f) => self.entry(&f.path).io_uring_syncs += 1,
                    Some(_) => {}
                    None => {
                        if let Some(r) = self.io_uring.as_mut() {
                            r.syncs_of_unknown_files += 1;
                        }
                    }
                }
            }
        }
    }

    fn before_change(&mut self, change: joj_linux::Change, f: &TouchedFile) {
        if !self.ours(f) {
            return;
        }
        let role = self.role(&f.path);
        self.recorder.record_file(&f.path, role, &f.file, true);
        let e = self.entry(&f.path);
        match change {
            joj_linux::Change::Remove => {
                e.removals += 1;
                // A file that exists at the end is not deleted: the end of the run settles it.
                e.deleted = true;
            }
            joj_linux::Change::Truncate => e.truncates += 1,
        }
    }

    fn unlinked(&mut self, path: &Path) {
        let e = self.entry(path);
        e.removals += 1;
        // A file that exists at the end is not deleted: the end of the run settles it.
        e.deleted = true;
    }

    fn truncated(&mut self, path: &Path) {
        self.entry(path).truncates += 1;
    }

    fn freed(&mut self, path: &Path, extents: &[joj_linux::Extent], time_ns: u64) {
        let role = self.role(path);
        self.recorder.record_freed(path, role, extents, time_ns);
    }

    fn synced(&mut self, kind: SyncKind, f: Option<&TouchedFile>, start_ns: u64, end_ns: u64) {
        let Some(f) = f else {
            match kind {
                SyncKind::Directory { datasync: true } => self.dir_fdatasyncs += 1,
                SyncKind::Directory { datasync: false } => self.dir_fsyncs += 1,
                SyncKind::WholeFs => self.whole_fs_syncs += 1,
                _ => {}
            }
            return;
        };
        if !self.ours(f) {
            return;
        }
        let role = self.role(&f.path);
        self.recorder.record_file(&f.path, role, &f.file, false);
        self.count_sync(kind, &f.path, start_ns, end_ns);
    }

    fn synced_mapped(&mut self, kind: SyncKind, path: &Path, dev: u64, start_ns: u64, end_ns: u64) {
        // Whether it is a database was asked at the sync that mapped it, moments ago.
        if dev == self.st_dev {
            self.count_sync(kind, path, start_ns, end_ns);
        }
    }

    fn synced_directory(&mut self, kind: SyncKind, path: &Path, start_ns: u64, end_ns: u64) {
        *self.dir_syncs_of.entry(path.to_path_buf()).or_default() += 1;
        self.synced(kind, None, start_ns, end_ns);
    }

    fn synced_gone(&mut self, kind: SyncKind, path: &Path, start_ns: u64, end_ns: u64) {
        self.count_sync(kind, path, start_ns, end_ns);
    }

    fn synced_unknown(&mut self, _kind: SyncKind) {
        self.unresolved_syncs += 1;
    }

    fn marked(&mut self, tid: i32, time_ns: u64, text: &str) {
        let Some(text) = text.strip_prefix("joj ") else {
            return;
        };
        if let Some(db) = text.strip_prefix("commit ") {
            *self.commits_marked.entry(PathBuf::from(db)).or_default() += 1;
        } else if let Some(what) = text.strip_prefix("setup-begin ") {
            self.setup_open.insert(tid, (what.to_string(), time_ns));
        } else if text == "setup-end" {
            if let Some((what, start)) = self.setup_open.remove(&tid) {
                self.setup.push((what, None, start, time_ns));
            }
        }
    }

    fn copied_up(&mut self, path: &Path, start_ns: u64, end_ns: u64) {
        self.setup.push((
            "overlay copy-up".into(),
            Some(path.to_path_buf()),
            start_ns,
            end_ns,
        ));
    }

    fn wrote(&mut self, path: &Path, bytes: u64, offset: Option<u64>) {
        let wal = kind_of(path, false).0 == "wal";
        let e = self.entry(path);
        e.write_calls += 1;
        e.write_bytes += bytes;
        // SQLite's WAL header: 32 bytes at the start, written each time a WAL (re)starts.
        if wal && offset == Some(0) && bytes == WAL_HEADER_BYTES {
            e.wal_header_writes += 1;
        }
    }
}

impl Watcher {
    /// A sync call on `path` (a file of the run), with its interval.
    fn count_sync(&mut self, kind: SyncKind, path: &Path, start_ns: u64, end_ns: u64) {
        let role = self.role(path);
        let e = self.entry(path);
        match kind {
            SyncKind::Fsync => e.fsync += 1,
            SyncKind::Fdatasync => e.fdatasync += 1,
            SyncKind::SyncFileRange => e.sync_file_range += 1,
            SyncKind::SyncWrite => e.sync_writes += 1,
            SyncKind::WholeFs | SyncKind::Directory { .. } => return,
        }
        self.syncs.push((
            path.to_path_buf(),
            SyncInterval {
                role,
                start_ns,
                end_ns,
            },
        ));
    }
}

/// The directory the command runs in: `dir` under `top`, which must be a plain relative path.
fn command_dir(top: &Path, dir: Option<&Path>) -> Result<PathBuf, ExperimentError> {
    let Some(dir) = dir else {
        return Ok(top.to_path_buf());
    };
    let bad = |why| ExperimentError::CommandDir {
        dir: dir.to_path_buf(),
        why,
    };
    if dir.as_os_str().is_empty() {
        return Err(bad("is empty"));
    }
    let mut at = top.to_path_buf();
    for c in dir.components() {
        match c {
            // `.` adds nothing (`top/.` is a name `create_dir_all` cannot make when `top` is
            // missing: it makes the parent of `top/.`, which is `top`'s, and fails).
            Component::CurDir => {}
            Component::Normal(name) => at.push(name),
            Component::RootDir | Component::Prefix(_) => {
                return Err(bad(
                    "is absolute, but the command runs on a scratch filesystem joj makes, \
                     not in a directory of the host",
                ));
            }
            Component::ParentDir => return Err(bad("leaves the scratch filesystem with `..`")),
        }
    }
    Ok(at)
}

/// Check the options that need nothing made (before any filesystem is).
pub fn check_command(opts: &CommandOptions) -> Result<(), ExperimentError> {
    let Some(program) = opts.argv.first() else {
        return Err(joj_linux::SuperviseError::NoCommand.into());
    };
    if joj_linux::supervise::find_program(program).is_none() {
        return Err(joj_linux::SuperviseError::NotFound {
            program: program.clone(),
        }
        .into());
    }
    if let Some(start) = &opts.start_dir {
        open_start_dir(start)?;
    }
    command_dir(Path::new("/"), opts.dir.as_deref()).map(drop)
}

/// The starting directory `start` (absolute, as `getcwd` gives it), opened with no symbolic
/// link followed on its way, and checked to have no mount below it. The overlay is made of and
/// mounted on this descriptor: whoever owns a directory on `start`'s way can no longer swap
/// another one in by a link once it is open.
fn open_start_dir(start: &Path) -> Result<std::os::fd::OwnedFd, ExperimentError> {
    let fd = joj_linux::Overlay::open_lower(start).map_err(io(format!(
        "opening the starting directory {} (no symbolic link on its way: one there now was put \
         there since joj started)",
        start.display()
    )))?;
    let info = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(io("reading /proc/self/mountinfo".into()))?;
    let mounts = joj_linux::mounts::mounts_below(&info, start);
    if !mounts.is_empty() || start == Path::new("/") {
        return Err(ExperimentError::StartDirHasMounts {
            dir: start.to_path_buf(),
            mounts,
        });
    }
    Ok(fd)
}

/// Run the command on a scratch filesystem, traced, and return its result document.
pub fn run_command(opts: &CommandOptions) -> Result<RunResult, ExperimentError> {
    check_command(opts)?;
    let place = Place::make(&Storage::Scratch {
        kind: opts.fs,
        image_bytes: opts.image_size_bytes,
        image_dir: None,
        direct_io: false,
    })?;
    let result = traced(&place, opts);
    let closed = place.close();
    let result = result?;
    closed?;
    Ok(result)
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> ExperimentError {
    move |source| ExperimentError::Io { what, source }
}

fn syncfs(dir: &Path) -> Result<(), ExperimentError> {
    let f = std::fs::File::open(dir).map_err(io(format!("opening {}", dir.display())))?;
    // SAFETY: syncfs on an open descriptor.
    if unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&f)) } != 0 {
        return Err(io(format!("syncfs on {}", dir.display()))(
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

/// How the command saw its starting directory: copied, or (why not) through an overlay.
type StartView = Result<joj_linux::start_copy::Copied, String>;

/// The starting directory `start` made the command's: copied onto the scratch filesystem
/// when small enough (and not `--overlay`), synced before the window, else an overlay's upper
/// and work directories there. Returns the command's directory, joj's view of it, the mount to
/// make, and how it was made.
fn start_dir_view(
    place: &Place,
    opts: &CommandOptions,
    start: &Path,
) -> Result<(PathBuf, joj_linux::TracedDir, joj_linux::Overlay, StartView), ExperimentError> {
    let mkdir =
        |d: &Path| std::fs::create_dir_all(d).map_err(io(format!("creating {}", d.display())));
    let lower_dir = std::sync::Arc::new(open_start_dir(start)?);
    let copy = place.dir.join("copy");
    let work = place.dir.join("work");
    let view = if opts.overlay {
        Err("--overlay".to_string())
    } else {
        use joj_linux::start_copy::{copy_small, make_dir_beneath};
        copy_small(&lower_dir, &copy)
            .and_then(|c| {
                // The --dir made in the copy follows none of its links; through one, the
                // overlay (whose upper directory has none).
                if let Some(d) = &opts.dir {
                    make_dir_beneath(&copy, d).inspect_err(|_| {
                        let _ = std::fs::remove_dir_all(&copy);
                    })?;
                }
                Ok(c)
            })
            .map_err(|e| e.to_string())
    };
    // The copy is written out by the window's own `syncfs` before the tracer starts
    // (`traced_in`): none of it is the command's.
    let upper = if view.is_ok() {
        copy
    } else {
        mkdir(&work)?;
        let upper = place.dir.join("upper");
        // A --dir the command runs in is made in the upper layer, so it is there in the
        // overlay from the start.
        mkdir(&command_dir(&upper, opts.dir.as_deref())?)?;
        joj_linux::Overlay::upper_like_lower(&upper, &lower_dir).map_err(io(format!(
            "giving {} the starting directory's owner and mode",
            upper.display()
        )))?;
        upper
    };
    let scope = joj_linux::TracedDir {
        command_root: start.to_path_buf(),
        joj_root: upper.clone(),
    };
    let overlay = joj_linux::Overlay {
        lower: start.to_path_buf(),
        lower_dir,
        upper,
        work,
        copied: view.is_ok(),
    };
    let cwd = command_dir(start, opts.dir.as_deref())?;
    Ok((cwd, scope, overlay, view))
}

fn traced(place: &Place, opts: &CommandOptions) -> Result<RunResult, ExperimentError> {
    let (cwd, scope, overlay, start_view) = match &opts.start_dir {
        None => {
            let cwd = command_dir(&place.dir, opts.dir.as_deref())?;
            std::fs::create_dir_all(&cwd).map_err(io(format!("creating {}", cwd.display())))?;
            (cwd, joj_linux::TracedDir::same(&place.dir), None, None)
        }
        Some(start) => {
            let (cwd, scope, overlay, view) = start_dir_view(place, opts, start)?;
            (cwd, scope, Some(overlay), Some(view))
        }
    };
    let spec = WindowSpec {
        end_syncfs: true,
        label: format!("trace-{}-{}", opts.fs, command_label(&opts.argv)),
        workload: "command",
        device: opts.device.as_ref(),
    };
    let mut stderr_tail = Vec::new();
    let mut result = traced_in(
        place,
        opts,
        &cwd,
        &scope,
        &spec,
        &mut |watcher: &mut Watcher| {
            let (tail, write_end) = StderrTail::start().map_err(io("making a pipe".into()))?;
            let command = joj_linux::CommandSpec {
                argv: &opts.argv,
                cwd: &cwd,
                stdout_to_stderr: opts.stdout_to_stderr,
                stderr_to: Some(std::os::fd::AsRawFd::as_raw_fd(&write_end)),
                scope: scope.clone(),
                overlay: overlay.clone(),
                trace_buffer_kb: joj_linux::syscall_trace::DEFAULT_SYSCALL_BUFFER_KB,
                freed_blocks: freed_blocks(opts.fs, watcher.st_dev, &scope.joj_root),
            };
            let supervised = joj_linux::supervise(&command, watcher);
            // Every process holding the pipe has ended: the reader sees its end once joj's copy
            // is closed too.
            drop(write_end);
            stderr_tail = tail.finish();
            Ok(supervised?)
        },
    )?;
    if let Some(c) = result.command.as_mut() {
        c.stderr_tail = stderr_tail;
        match start_view {
            Some(Ok(copied)) => {
                c.start_dir_copy = Some(crate::result::StartDirCopy {
                    entries: copied.entries,
                    bytes: copied.bytes,
                })
            }
            Some(Err(why)) => c.start_dir_not_copied = Some(why),
            None => {}
        }
    }
    Ok(result)
}

/// The command's standard error, passed on to joj's as it comes, its last lines kept for the
/// report of a failure.
struct StderrTail {
    reader: std::thread::JoinHandle<Vec<String>>,
}

/// Lines of a failed command's standard error kept to show again.
const STDERR_LINES_KEPT: usize = 20;
/// The longest line kept (bytes); a longer one is cut with `…`.
const STDERR_LINE_BYTES: usize = 400;

impl StderrTail {
    fn start() -> std::io::Result<(StderrTail, std::os::fd::OwnedFd)> {
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors are new and ours.
        let (read, write) = unsafe {
            (
                std::fs::File::from_raw_fd(fds[0]),
                std::os::fd::OwnedFd::from_raw_fd(fds[1]),
            )
        };
        let reader = std::thread::spawn(move || pass_on_keeping_tail(read));
        Ok((StderrTail { reader }, write))
    }

    fn finish(self) -> Vec<String> {
        self.reader.join().unwrap_or_default()
    }
}

/// Copy `read` to joj's standard error until it ends; the last lines.
fn pass_on_keeping_tail(mut read: std::fs::File) -> Vec<String> {
    use std::io::{Read, Write};
    let mut tail: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    let mut line = Vec::new();
    let mut buf = [0u8; 8192];
    let mut keep = |line: &mut Vec<u8>| {
        let mut text = String::from_utf8_lossy(line).into_owned();
        if text.len() > STDERR_LINE_BYTES {
            let mut cut = STDERR_LINE_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push('…');
        }
        if tail.len() == STDERR_LINES_KEPT {
            tail.pop_front();
        }
        tail.push_back(text);
        line.clear();
    };
    loop {
        let n = match read.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let _ = std::io::stderr().write_all(&buf[..n]);
        for &b in &buf[..n] {
            if b == b'\n' {
                keep(&mut line);
            } else if line.len() <= STDERR_LINE_BYTES * 4 {
                line.push(b);
            }
        }
    }
    if !line.is_empty() {
        keep(&mut line);
    }
    tail.into()
}

/// How a traced window ends, and what its outputs are named.
pub(super) struct WindowSpec<'a> {
    /// `syncfs` before the tracer stops, so what was left dirty is counted (a command's whole
    /// lifetime); without it the window ends as `joj bench`'s does.
    pub(super) end_syncfs: bool,
    /// The trace file's and plot's name.
    pub(super) label: String,
    /// `config.workload` of the document.
    pub(super) workload: &'a str,
    /// Replay the classified trace through this device model (`device` section).
    pub(super) device: Option<&'a crate::stack::DevicePlan>,
}

/// The command's own time where the supervisor measured it (from its exec to its exit), not
/// joj's setting up and removing of the syscall trace around it; else since `started`.
fn command_time_s<E>(
    supervised: &Result<joj_linux::Supervision, E>,
    started: std::time::Instant,
) -> f64 {
    let ran_s = supervised.as_ref().ok().and_then(|s| s.ran_ns);
    ran_s.map_or_else(|| started.elapsed().as_secs_f64(), |ns| ns as f64 / 1e9)
}

/// Trace `run` (which reports what it did to `watcher`) in `cwd` (as the command names it) with
/// its files in `scope`, on the scratch filesystem, and classify it: `syncfs`, tracer on, `run`,
/// (`syncfs`,) tracer off, then the document.
pub(super) fn traced_in(
    place: &Place,
    opts: &CommandOptions,
    cwd: &Path,
    scope: &joj_linux::TracedDir,
    spec: &WindowSpec,
    run: &mut dyn FnMut(&mut Watcher) -> Result<joj_linux::Supervision, ExperimentError>,
) -> Result<RunResult, ExperimentError> {
    let top = &scope.joj_root;
    let st_dev = std::fs::metadata(top)
        .map_err(io(format!("reading {}", top.display())))?
        .dev();
    let recorder = Arc::new(ExtentRecorder::default());
    let mut watcher = Watcher {
        recorder: recorder.clone(),
        st_dev,
        files: BTreeMap::new(),
        databases: Default::default(),
        syncs: vec![],
        whole_fs_syncs: 0,
        dir_fsyncs: 0,
        dir_fdatasyncs: 0,
        unresolved_syncs: 0,
        outside: Default::default(),
        outside_total: 0,
        io_uring: None,
        dir_syncs_of: BTreeMap::new(),
        commits_marked: BTreeMap::new(),
        setup: Vec::new(),
        setup_open: BTreeMap::new(),
    };
    syncfs(top)?;
    let devs = place.devs();
    let devs: Vec<&str> = devs.iter().map(String::as_str).collect();
    let tracer = BlockTracer::start(&devs, opts.trace_buffer_kb).map_err(joj_linux::Error::from)?;
    // The devices' own counters, a second observer (only when the window ends idle, after a
    // syncfs: they count requests as they complete, the trace as they are issued).
    let disk_stats = |devs: &[&str]| -> Option<DiskStats> {
        let all: Option<Vec<DiskStats>> = devs.iter().map(|d| DiskStats::read(d).ok()).collect();
        all.map(|a| DiskStats::sum(&a))
    };
    let disk_before = spec.end_syncfs.then(|| disk_stats(&devs)).flatten();
    let journal = crate::host::JournalThreads::find(&place.devs());
    let journal_at = journal.cpu_ns();
    let journal_delay_at = journal.run_delay_ns();
    let children_at = children_cpu_ns();
    let started = std::time::Instant::now();
    let supervised = run(&mut watcher);
    let elapsed_s = command_time_s(&supervised, started);
    let cpu_ns = children_cpu_ns().saturating_sub(children_at);
    let journal_ns = journal.cpu_ns().saturating_sub(journal_at);
    let journal_delay_ns = journal.run_delay_ns().saturating_sub(journal_delay_at);

    // Whatever the command left dirty is written inside the trace.
    let synced = if spec.end_syncfs { syncfs(top) } else { Ok(()) };
    recorder.record_tree_as(top, &scope.command_root);
    let disk = disk_before.zip(disk_stats(&devs)).map(|(b, a)| a.since(&b));
    let trace = tracer.stop().map_err(joj_linux::Error::from);
    // Asked after the window: the probe allocates on the filesystem.
    let filesystem_full = place
        .scratch
        .as_ref()
        .is_some_and(|fs| fs.has_room_for(FULL_BELOW_BYTES).is_ok_and(|room| !room));
    let supervised = supervised?;
    synced?;
    let trace = trace?;
    let mut intent = BioIntent::default();
    let mut empty_preflush = 0;
    for b in trace.bios.iter().filter(|b| b.op == joj_trace::Op::Write) {
        intent.write_bios += 1;
        intent.fua_writes += u64::from(b.fua);
        intent.preflush_writes += u64::from(b.preflush);
        empty_preflush += u64::from(b.preflush && b.sectors == 0);
    }
    let measured = Measured {
        disk: disk.map(|d| (d, empty_preflush)),
        window_start_ns: trace.start_ns,
        elapsed_s,
        intent,
        supervised,
        filesystem_full,
        cpu_ns,
        journal_ns,
        journal_delay_ns,
    };
    report(
        place,
        opts,
        (cwd, scope),
        spec,
        &mut watcher,
        trace.requests,
        measured,
    )
}

/// CPU time (user + system) of this process's reaped children so far.
fn children_cpu_ns() -> u64 {
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one struct rusage to a valid pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) } != 0 {
        return 0;
    }
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    ns(ru.ru_utime) + ns(ru.ru_stime)
}

/// Classify the window's requests and make the document with its per-file rows.
fn report(
    place: &Place,
    opts: &CommandOptions,
    (cwd, scope): (&Path, &joj_linux::TracedDir),
    spec: &WindowSpec,
    watcher: &mut Watcher,
    requests: Vec<joj_trace::TraceRecord>,
    m: Measured,
) -> Result<RunResult, ExperimentError> {
    let fs = place
        .scratch
        .as_ref()
        .expect("a command always runs on a scratch filesystem");
    let recorder = watcher.recorder.clone();
    // Roles are final now: a database is known by its header, whenever it was first seen.
    let roles: BTreeMap<PathBuf, FileRole> = watcher
        .files
        .keys()
        .cloned()
        .chain(watcher.databases.iter().cloned())
        .map(|p| {
            let r = watcher.role(&p);
            (p, r)
        })
        .collect();
    recorder.relabel(&|p: &Path| roles.get(p).copied().or_else(|| Some(kind_of(p, false).1)));
    for (path, sync) in watcher.syncs.iter_mut() {
        sync.role = kind_of(path, watcher.databases.contains(path)).1;
        recorder.push_sync(*sync);
    }
    let classified = classify_window(fs, &recorder, requests)?;
    let mut layout = journal_layout(fs);
    layout.files = classified.snapshots.clone();
    let split = SetupSplit::of(&layout, &classified.records, &watcher.setup);
    let by_path = data_by_path(&layout, &classified.records);
    let setup_by_path = data_by_path(&layout, &split.setup_records);
    let files = file_reports(
        (cwd, scope),
        watcher,
        (&by_path, &setup_by_path),
        &classified,
    );
    let marked: BTreeMap<String, u64> = watcher
        .commits_marked
        .iter()
        .map(|(p, n)| (relative(cwd, p), *n))
        .collect();
    let dir_syncs: BTreeMap<String, u64> = watcher
        .dir_syncs_of
        .iter()
        .map(|(p, n)| (relative(cwd, p), *n))
        .collect();
    let dbs = super::per_database::databases(&files, &marked, &dir_syncs);
    let counted: u64 = dbs.iter().filter_map(|d| d.commits).sum();
    let transactions = opts
        .transactions
        .unwrap_or(if counted > 0 { counted } else { 1 })
        .max(1);
    let mut result = document(opts, place, fs, (m.elapsed_s, m.intent), &classified);
    result.transactions = transactions;
    result.ops_per_sec = transactions as f64 / m.elapsed_s.max(1e-9);
    result.block_per_txn = Some(split.work.per_txn(transactions));
    result.config.workload = spec.workload.to_string();
    // One vocabulary with `joj bench`: fsync and fdatasync count every call, directories'
    // included; dir_syncs says how many of them were of directories.
    result.syscalls.dir_syncs = watcher.dir_fsyncs + watcher.dir_fdatasyncs;
    result.syscalls.fsync = watcher.dir_fsyncs;
    result.syscalls.fdatasync = watcher.dir_fdatasyncs;
    if let Some((d, empty_preflush)) = m.disk {
        result.checks.push(super::checks::kernel_counters(
            &d,
            &classified.totals,
            empty_preflush,
        ));
    }
    let mut report = command_report(opts, cwd, watcher, files, &m);
    report.databases = dbs;
    report.setup = split.report(watcher, cwd, m.window_start_ns);
    result.command = Some(report);
    add_file_calls(&mut result);
    let succeeded = result.command.as_ref().is_none_or(CommandReport::succeeded);
    if let (Some(out), true) = (&opts.out_dir, succeeded) {
        // A failed command's trace would measure a run that stopped part-way: none is written.
        write_trace_and_plot(out, &spec.label, &mut result, fs, &classified.records)?;
    }
    if let Some(plan) = spec.device {
        on_device(&mut result, plan, spec, fs, &classified.records, &m)?;
    }
    Ok(result)
}

/// The per-file calls summed into the document's `syscalls` and `files` sections.
fn add_file_calls(result: &mut RunResult) {
    for f in result.command.iter().flat_map(|c| &c.files) {
        result.syscalls.fsync += f.fsync;
        result.syscalls.fdatasync += f.fdatasync;
        result.syscalls.write_calls += f.write_calls;
        result.syscalls.write_bytes += f.write_bytes;
        result.syscalls.deletes += f.removals;
        result.syscalls.truncates += f.truncates;
        let role = kind_of(Path::new(&f.path), f.kind == "database").1;
        *result.files.of_role_mut(role) += f.write_bytes;
    }
}

/// The command's trace replayed through `plan`'s device, and (a command's, not a syscall
/// replay's) time modeled there, host included.
fn on_device(
    result: &mut RunResult,
    plan: &crate::stack::DevicePlan,
    spec: &WindowSpec,
    fs: &joj_linux::ScratchFs,
    records: &[joj_trace::TraceRecord],
    m: &Measured,
) -> Result<(), ExperimentError> {
    let txns = result.transactions;
    let (device, devices) =
        crate::replay::replay_records(records, txns, 0, plan, &super::fs::journal_devs(fs))?;
    if spec.workload == "command" {
        // (A syscall replay runs in joj's own threads, whose CPU is not a child's: its host
        // time is not modeled.)
        let (host, modeled) = model_command(result, m, &device, plan, txns);
        result.host = Some(host);
        result.modeled = Some(modeled);
    }
    result.device = Some(device);
    result.devices = devices;
    Ok(())
}

/// The `command` section: how the command ended, what supervising it cost, its files.
fn command_report(
    opts: &CommandOptions,
    cwd: &Path,
    watcher: &Watcher,
    files: Vec<FileReport>,
    m: &Measured,
) -> CommandReport {
    let exit = m
        .supervised
        .exit
        .unwrap_or(joj_linux::ChildExit::Signal(libc::SIGKILL));
    CommandReport {
        argv: opts
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        cwd: cwd.to_string_lossy().into_owned(),
        start_dir: opts
            .start_dir
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned()),
        start_dir_copy: None,
        start_dir_not_copied: None,
        exit_code: match exit {
            joj_linux::ChildExit::Code(c) => Some(c),
            joj_linux::ChildExit::Signal(_) => None,
        },
        signal: match exit {
            joj_linux::ChildExit::Signal(s) => Some(s),
            joj_linux::ChildExit::Code(_) => None,
        },
        tasks: m.supervised.tasks,
        stops: m.supervised.stops,
        stopped_s: m.supervised.handling_ns as f64 / 1e9,
        syscall_events: m.supervised.events,
        // A supervised command's events are read at least once, at its end; none were read
        // for a replay, which has no events to read.
        event_reads: (m.supervised.event_reads > 0).then_some(m.supervised.event_reads),
        opens_by_bpf: m.supervised.opens_by_bpf,
        open_lookups: m.supervised.opens_by_bpf.map(|_| m.supervised.open_lookups),
        opens_unseen: m.supervised.opens_unseen,
        unlinks_unseen: m.supervised.unlinks_unseen,
        truncates_unseen: m.supervised.truncates_unseen,
        bpf_records_lost: m.supervised.bpf_lost,
        unresolved_syncs: watcher.unresolved_syncs,
        whole_fs_syncs: watcher.whole_fs_syncs,
        dir_syncs: watcher.dir_fsyncs + watcher.dir_fdatasyncs,
        files,
        outside_writes: watcher
            .outside
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        outside_writes_total: watcher.outside_total,
        io_uring: watcher.io_uring.clone(),
        filesystem_full: m.filesystem_full,
        setup: None,
        databases: Vec::new(),
        stderr_tail: Vec::new(),
    }
}

/// One row per file the command touched or left, with its data bytes, sync calls and the FS
/// journal written during those syncs.
fn file_reports(
    (cwd, scope): (&Path, &joj_linux::TracedDir),
    w: &Watcher,
    (by_path, setup_by_path): (
        &[joj_trace::classify::PathBytes],
        &[joj_trace::classify::PathBytes],
    ),
    classified: &super::classify::Classified,
) -> Vec<FileReport> {
    let mut rows: BTreeMap<PathBuf, FileReport> = w.files.clone();
    for pb in by_path {
        rows.entry(PathBuf::from(&pb.path)).or_default().data_bytes += pb.bytes;
    }
    for pb in setup_by_path {
        rows.entry(PathBuf::from(&pb.path))
            .or_default()
            .setup_data_bytes += pb.bytes;
    }
    for (path, row) in rows.iter_mut() {
        let kind = kind_of(path, w.databases.contains(path)).0;
        row.kind = kind.to_string();
        row.path = relative(cwd, path);
        let there = std::fs::symlink_metadata(scope.joj_path(path)).is_ok_and(|m| m.is_file());
        if row.deleted && there {
            // Truncated, or replaced and then created again: it is there at the end.
            row.deleted = false;
        }
        let syncs = w.syncs_of(path);
        row.fs_journal_bytes_in_syncs = classified.fs_journal_in(&syncs);
        row.metadata_bytes_in_syncs = classified.metadata_in(&syncs);
    }
    rows.into_values().collect()
}

/// `path` relative to `cwd` when it is inside it.
fn relative(cwd: &Path, path: &Path) -> String {
    path.strip_prefix(cwd)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The window's requests split by whether they were issued during set-up work.
struct SetupSplit {
    setup_records: Vec<joj_trace::TraceRecord>,
    setup: joj_trace::totals::BlockTotals,
    work: joj_trace::totals::BlockTotals,
}

impl SetupSplit {
    fn of(
        layout: &joj_trace::classify::Layout,
        records: &[joj_trace::TraceRecord],
        setup: &[(String, Option<PathBuf>, u64, u64)],
    ) -> SetupSplit {
        let during = |t: u64| setup.iter().any(|(_, _, s, e)| *s <= t && t <= *e);
        let (mut setup_records, mut work_records): (Vec<_>, Vec<_>) =
            records.iter().cloned().partition(|r| during(r.time_ns));
        assert_eq!(
            setup_records.len() + work_records.len(),
            records.len(),
            "the set-up split puts every request of the window on one side"
        );
        let setup = joj_trace::classify::classify(layout, &mut setup_records);
        let work = joj_trace::classify::classify(layout, &mut work_records);
        for (side, t) in [("set-up", &setup), ("work", &work)] {
            assert!(
                t.is_consistent(),
                "the {side} requests' written bytes are all classified and data bytes all given a role: {t:?}"
            );
        }
        SetupSplit {
            setup_records,
            setup,
            work,
        }
    }

    /// The `setup` section, when there was set-up work.
    fn report(&self, w: &Watcher, cwd: &Path, window_start_ns: u64) -> Option<SetupReport> {
        if w.setup.is_empty() {
            return None;
        }
        let mut work: Vec<SetupWork> = w
            .setup
            .iter()
            .map(|(what, path, start, end)| SetupWork {
                what: what.clone(),
                path: path.as_deref().map(|p| relative(cwd, p)),
                start_s: start.saturating_sub(window_start_ns) as f64 / 1e9,
                duration_s: end.saturating_sub(*start) as f64 / 1e9,
            })
            .collect();
        work.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        Some(SetupReport {
            work,
            block: self.setup.clone(),
        })
    }
}

impl Watcher {
    fn syncs_of(&self, path: &Path) -> Vec<SyncInterval> {
        self.syncs
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, s)| *s)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::command_line;
    use std::ffi::OsString;

    #[test]
    fn a_dir_must_stay_inside_the_scratch_filesystem() {
        let top = Path::new("/mnt/x");
        assert_eq!(command_dir(top, None).unwrap(), top);
        assert_eq!(
            command_dir(top, Some(Path::new("a/b"))).unwrap(),
            top.join("a/b")
        );
        // `.` is the top itself, never a `top/.` that `create_dir_all` cannot make.
        for same in [".", "./", "./."] {
            // (as text: paths compare equal by their components, `.` ignored)
            assert_eq!(
                command_dir(top, Some(Path::new(same))).unwrap().as_os_str(),
                top.as_os_str()
            );
        }
        assert_eq!(
            command_dir(top, Some(Path::new("./a/./b/.")))
                .unwrap()
                .as_os_str(),
            top.join("a/b").as_os_str()
        );
        for bad in ["/tmp", "../x", "a/../../b", ""] {
            let e = command_dir(top, Some(Path::new(bad))).unwrap_err();
            assert!(e.to_string().contains("fix:"), "{e}");
        }
    }

    #[test]
    fn sqlite_roles_come_from_names_and_the_header() {
        assert_eq!(kind_of(Path::new("/d/x.sqlite-wal"), false).0, "wal");
        assert_eq!(
            kind_of(Path::new("/d/x-journal"), false).0,
            "rollback_journal"
        );
        assert_eq!(kind_of(Path::new("/d/x-shm"), false).0, "shm");
        assert_eq!(kind_of(Path::new("/d/x.anything"), true).0, "database");
        assert_eq!(kind_of(Path::new("/d/x.db"), false).0, "other");
    }

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        let argv: Vec<OsString> = ["python3", "-c", "print('hi there')"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(
            command_line(&argv),
            r#"python3 -c 'print('\''hi there'\'')'"#
        );
    }
}
