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
use std::ffi::OsString;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use joj_linux::{BlockTracer, FsKind, SyncKind, TouchedFile};
use joj_trace::FileRole;
use joj_trace::classify::data_by_path;
use joj_vfs::IoCounters;

use super::classify::{classify_window, journal_layout};
use super::emit::write_trace_and_plot;
use super::extents::{ExtentRecorder, SyncInterval};
use super::place::Place;
use crate::error::ExperimentError;
use crate::result::{
    BioIntent, CommandReport, FULL_BELOW_BYTES, FileReport, IoUringReport, OUTSIDE_PATHS_KEPT,
    RunConfig, RunResult,
};
use crate::stack::Storage;

/// How to run a command.
#[derive(Debug, Clone)]
pub struct CommandOptions {
    /// The program and its arguments.
    pub argv: Vec<OsString>,
    pub fs: FsKind,
    /// A directory inside the scratch filesystem to run in (relative, created), instead of its
    /// top directory for joj runs.
    pub dir: Option<PathBuf>,
    pub image_size_bytes: u64,
    pub trace_buffer_kb: u32,
    /// Where the trace file and plot go (none when `None`).
    pub out_dir: Option<PathBuf>,
    /// What to divide the totals by for `block_per_txn` (the command's own transactions; 1:
    /// the whole command).
    pub transactions: u64,
    /// The command's stdout goes to joj's stderr (joj's stdout then holds only joj's output).
    pub stdout_to_stderr: bool,
    /// Replay the command's trace through this device and model its time there, host included
    /// (`device` and `modeled` sections).
    pub device: Option<crate::stack::DevicePlan>,
}

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

/// What the supervisor reports, kept for the run's files on the scratch filesystem.
pub(super) struct Watcher {
    recorder: Arc<ExtentRecorder>,
    /// The scratch filesystem's device number: files elsewhere are not the run's.
    st_dev: u64,
    files: BTreeMap<PathBuf, FileReport>,
    /// Paths seen with a SQLite header.
    databases: std::collections::BTreeSet<PathBuf>,
    syncs: Vec<(PathBuf, SyncInterval)>,
    whole_fs_syncs: u64,
    dir_syncs: u64,
    /// Regular files off the scratch filesystem opened for writing (the first
    /// [`OUTSIDE_PATHS_KEPT`]), and how many there were.
    outside: std::collections::BTreeSet<PathBuf>,
    outside_total: u64,
    io_uring: Option<IoUringReport>,
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
        self.recorder.record_file(&f.path, role, &f.file);
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

    fn synced(&mut self, kind: SyncKind, f: Option<&TouchedFile>, start_ns: u64, end_ns: u64) {
        let Some(f) = f else {
            match kind {
                SyncKind::Directory => self.dir_syncs += 1,
                SyncKind::WholeFs => self.whole_fs_syncs += 1,
                _ => {}
            }
            return;
        };
        if !self.ours(f) {
            return;
        }
        let role = self.role(&f.path);
        self.recorder.record_file(&f.path, role, &f.file);
        let e = self.entry(&f.path);
        match kind {
            SyncKind::Fsync => e.fsync += 1,
            SyncKind::Fdatasync => e.fdatasync += 1,
            SyncKind::SyncFileRange => e.sync_file_range += 1,
            SyncKind::SyncWrite => e.sync_writes += 1,
            SyncKind::WholeFs | SyncKind::Directory => {}
        }
        self.syncs.push((
            f.path.clone(),
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
    for c in dir.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => {
                return Err(bad(
                    "is absolute, but the command runs on a scratch filesystem joj makes, \
                     not in a directory of the host",
                ));
            }
            Component::ParentDir => return Err(bad("leaves the scratch filesystem with `..`")),
        }
    }
    Ok(top.join(dir))
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
    command_dir(Path::new("/"), opts.dir.as_deref()).map(drop)
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

fn traced(place: &Place, opts: &CommandOptions) -> Result<RunResult, ExperimentError> {
    let cwd = command_dir(&place.dir, opts.dir.as_deref())?;
    std::fs::create_dir_all(&cwd).map_err(io(format!("creating {}", cwd.display())))?;
    let spec = WindowSpec {
        end_syncfs: true,
        label: format!("{}-command-{}", opts.fs, program_name(&opts.argv)),
        workload: "command",
        device: opts.device.as_ref(),
    };
    traced_in(place, opts, &cwd, &spec, &mut |watcher: &mut Watcher| {
        Ok(joj_linux::supervise(
            &opts.argv,
            &cwd,
            opts.stdout_to_stderr,
            watcher,
        )?)
    })
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

/// Trace `run` (which reports what it did to `watcher`) in `cwd` on the scratch filesystem
/// and classify it: `syncfs`, tracer on, `run`, (`syncfs`,) tracer off, then the document.
pub(super) fn traced_in(
    place: &Place,
    opts: &CommandOptions,
    cwd: &Path,
    spec: &WindowSpec,
    run: &mut dyn FnMut(&mut Watcher) -> Result<joj_linux::Supervision, ExperimentError>,
) -> Result<RunResult, ExperimentError> {
    let st_dev = std::fs::metadata(cwd)
        .map_err(io(format!("reading {}", cwd.display())))?
        .dev();
    let recorder = Arc::new(ExtentRecorder::default());
    let mut watcher = Watcher {
        recorder: recorder.clone(),
        st_dev,
        files: BTreeMap::new(),
        databases: Default::default(),
        syncs: vec![],
        whole_fs_syncs: 0,
        dir_syncs: 0,
        outside: Default::default(),
        outside_total: 0,
        io_uring: None,
    };
    syncfs(cwd)?;
    let devs = place.devs();
    let devs: Vec<&str> = devs.iter().map(String::as_str).collect();
    let tracer = BlockTracer::start(&devs, opts.trace_buffer_kb).map_err(joj_linux::Error::from)?;
    let journal = crate::host::JournalThreads::find(&place.devs());
    let journal_at = journal.cpu_ns();
    let journal_delay_at = journal.run_delay_ns();
    let children_at = children_cpu_ns();
    let started = std::time::Instant::now();
    let supervised = run(&mut watcher);
    let elapsed_s = started.elapsed().as_secs_f64();
    let cpu_ns = children_cpu_ns().saturating_sub(children_at);
    let journal_ns = journal.cpu_ns().saturating_sub(journal_at);
    let journal_delay_ns = journal.run_delay_ns().saturating_sub(journal_delay_at);

    // Whatever the command left dirty is written inside the trace.
    let synced = if spec.end_syncfs { syncfs(cwd) } else { Ok(()) };
    recorder.record_tree(cwd);
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
    for b in trace.bios.iter().filter(|b| b.op == joj_trace::Op::Write) {
        intent.write_bios += 1;
        intent.fua_writes += u64::from(b.fua);
        intent.preflush_writes += u64::from(b.preflush);
    }
    let measured = Measured {
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
        cwd,
        spec,
        &mut watcher,
        trace.requests,
        measured,
    )
}

/// What the traced window measured, besides its requests.
struct Measured {
    elapsed_s: f64,
    intent: BioIntent,
    supervised: joj_linux::Supervision,
    /// Whether the scratch filesystem was full when the command ended.
    filesystem_full: bool,
    /// CPU time of the command's processes (reaped children, `RUSAGE_CHILDREN`).
    cpu_ns: u64,
    /// CPU time of the filesystem's journal thread.
    journal_ns: u64,
    /// Its run-queue delay.
    journal_delay_ns: u64,
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
    cwd: &Path,
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
    let by_path = data_by_path(&layout, &classified.records);

    let files = file_reports(cwd, watcher, &by_path, &classified);
    let mut result = document(opts, place, fs, m.elapsed_s, m.intent, &classified);
    result.config.workload = spec.workload.to_string();
    result.syscalls.dir_syncs = watcher.dir_syncs;
    result.command = Some(command_report(opts, cwd, watcher, &m, files));
    for f in result.command.iter().flat_map(|c| &c.files) {
        result.syscalls.fsync += f.fsync;
        result.syscalls.fdatasync += f.fdatasync;
        result.syscalls.deletes += f.removals;
        result.syscalls.truncates += f.truncates;
    }
    if let Some(out) = &opts.out_dir {
        write_trace_and_plot(out, &spec.label, &mut result, fs, &classified.records)?;
    }
    if let Some(plan) = spec.device {
        let txns = opts.transactions.max(1);
        let (device, devices) = crate::replay::replay_records(
            &classified.records,
            txns,
            0,
            plan,
            &super::fs::journal_devs(fs),
        )?;
        if spec.workload == "command" {
            // (A syscall replay runs in joj's own threads, whose CPU is not a child's: its host
            // time is not modeled.)
            let (host, modeled) = model_command(&result, &m, &device, plan, txns);
            result.host = Some(host);
            result.modeled = Some(modeled);
        }
        result.device = Some(device);
        result.devices = devices;
    }
    Ok(result)
}

/// The command's own section of the document: how it ran and what it did to which file.
fn command_report(
    opts: &CommandOptions,
    cwd: &Path,
    watcher: &Watcher,
    m: &Measured,
    files: Vec<FileReport>,
) -> CommandReport {
    let exit = m.supervised.exit;
    CommandReport {
        argv: opts
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        cwd: cwd.to_string_lossy().into_owned(),
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
        whole_fs_syncs: watcher.whole_fs_syncs,
        dir_syncs: watcher.dir_syncs,
        files,
        outside_writes: watcher
            .outside
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        outside_writes_total: watcher.outside_total,
        io_uring: watcher.io_uring.clone(),
        filesystem_full: m.filesystem_full,
    }
}

/// A traced command's host time and modeled time on `plan`'s device: the command's wall time
/// less the supervisor's holding it; its CPU time and the journal thread's against the rest
/// (waits); plus the device's time.
fn model_command(
    result: &RunResult,
    m: &Measured,
    device: &joj_device::DeviceSummary,
    plan: &crate::stack::DevicePlan,
    txns: u64,
) -> (crate::host::HostMeasured, crate::host::Modeled) {
    let sync_calls = result.syscalls.fsync + result.syscalls.fdatasync;
    let usage = joj_workload::ThreadUsage {
        cpu_ns: m.cpu_ns,
        ..Default::default()
    };
    let counts = crate::host::WindowCounts {
        sync_calls,
        overhead_ns: m.supervised.handling_ns,
        journal_thread_cpu_ns: m.journal_ns,
        journal_thread_run_delay_ns: m.journal_delay_ns,
        ..Default::default()
    };
    let host = crate::host::HostMeasured::new(m.elapsed_s, &[usage], 1, &counts);
    let device_s = device
        .completion
        .as_ref()
        .map_or(device.modeled_s, |c| c.modeled_s);
    let modeled = crate::host::Modeled::compose(
        &plan.profile,
        &host,
        device_s,
        txns,
        &crate::host::Pacing::Not(
            "joj trace does not pace the command: what its kernel does by the clock follows \
             this machine's speed"
                .into(),
        ),
    );
    (host, modeled)
}

/// The bench-shaped document of a traced command, before its `command` section.
fn document(
    opts: &CommandOptions,
    place: &Place,
    fs: &joj_linux::ScratchFs,
    elapsed_s: f64,
    intent: BioIntent,
    classified: &super::classify::Classified,
) -> RunResult {
    let transactions = opts.transactions.max(1);
    let mut result = RunResult::measured(
        command_config(opts, fs, place.mount_options.clone()),
        transactions,
        elapsed_s,
        vec![],
        &IoCounters::default(),
    );
    result.block_per_txn = Some(classified.totals.per_txn(transactions));
    result.fs_journal_by_synced_file = Some(classified.fs_journal_by_synced_file);
    result.bio_intent = Some(intent);
    result.block = Some(classified.totals.clone());
    result.unplaced_data = classified.unplaced.clone();
    result
}

/// The program's file name, for file names (`python3`, `joj`).
fn program_name(argv: &[OsString]) -> String {
    let name = argv
        .first()
        .and_then(|p| Path::new(p).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() {
        "command".into()
    } else {
        clean
    }
}

/// One row per file the command touched or left, with its data bytes, sync calls and the FS
/// journal written during those syncs.
fn file_reports(
    cwd: &Path,
    w: &Watcher,
    by_path: &[joj_trace::classify::PathBytes],
    classified: &super::classify::Classified,
) -> Vec<FileReport> {
    let mut rows: BTreeMap<PathBuf, FileReport> = w.files.clone();
    for pb in by_path {
        rows.entry(PathBuf::from(&pb.path)).or_default().data_bytes += pb.bytes;
    }
    for (path, row) in rows.iter_mut() {
        let kind = kind_of(path, w.databases.contains(path)).0;
        row.kind = kind.to_string();
        row.path = path
            .strip_prefix(cwd)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        if row.deleted && path.exists() {
            // Truncated, or replaced and then created again: it is there at the end.
            row.deleted = false;
        }
        row.fs_journal_bytes_in_syncs = classified.fs_journal_in(&w.syncs_of(path));
    }
    rows.into_values().collect()
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

fn command_config(
    opts: &CommandOptions,
    fs: &joj_linux::ScratchFs,
    mount_options: Option<String>,
) -> RunConfig {
    RunConfig {
        workload: "command".into(),
        op: command_line(&opts.argv),
        trace: true,
        ..super::config::unspecified(fs.kind().to_string(), mount_options)
    }
}

/// The command line as a shell would take it back (arguments with spaces or quotes quoted).
pub fn command_line(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| {
            let s = a.to_string_lossy();
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                s.into_owned()
            } else {
                format!("'{}'", s.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dir_must_stay_inside_the_scratch_filesystem() {
        let top = Path::new("/mnt/x");
        assert_eq!(command_dir(top, None).unwrap(), top);
        assert_eq!(
            command_dir(top, Some(Path::new("a/b"))).unwrap(),
            top.join("a/b")
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
