//! The runner: put a workload on a filesystem, bracket the measured window with counters and
//! block tracing, classify what the kernel issued, and return one [`RunResult`].
//!
//! Order of a run: make the filesystem (host directory or scratch loop device), register the
//! `joj` VFS, *prepare* (databases, pre-fill — unmeasured), then the window: `syncfs` so nothing
//! from preparation is still dirty, snapshot the counters, snapshot every file's extents, start
//! the tracer, run, stop the tracer, snapshot counters and extents again. Classification maps
//! each traced request to the FS journal, a file's data (by the extent snapshot nearest in
//! time) or metadata. The scratch filesystem is removed at the end, also after an error.

use crate::WorkloadError;
use crate::config::{DbWorkload, FileWorkload, JournalMode, Synchronous};
use crate::db::{self, Window};
use crate::file;
use crate::latency::LatencySummary;
use crate::pace::Pacer;
use crate::result::{BioIntent, Check, FileBytes, RunConfig, RunResult, Syscalls};
use joj_linux::{BlockTracer, FsKind, ScratchFs, ScratchOptions};
use joj_trace::classify::{DevExtent, FileSnapshot, Layout, classify};
use joj_trace::format::{
    Clock, DeviceRole as TraceDeviceRole, TraceDevice, TraceHeader, TraceSource,
};
use joj_trace::{BlockClass, FileRole, Op, TraceRecord};
use joj_vfs::{AccountingVfs, FileEvent, FileObserver, IoCounters, VFS_NAME};

/// Name of the waldio VFS joj registers over its accounting VFS for WALDIO runs.
pub const WALDIO_VFS_NAME: &str = "waldio-joj";
use std::ffi::c_int;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

/// Where the run's files live.
#[derive(Debug, Clone)]
pub enum FsChoice {
    /// A directory of the host filesystem (a fresh temporary directory when `None`).
    Host(Option<PathBuf>),
    /// A scratch filesystem on a loop device made for the run and removed after it.
    Scratch(FsKind),
}

impl FsChoice {
    pub fn name(&self) -> String {
        match self {
            FsChoice::Host(_) => "host".to_string(),
            FsChoice::Scratch(kind) => kind.to_string(),
        }
    }
}

impl std::str::FromStr for FsChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "host" {
            return Ok(FsChoice::Host(None));
        }
        s.parse::<FsKind>().map(FsChoice::Scratch).map_err(|e| {
            format!("{e}; or `host` for a directory of the host filesystem (no root needed)")
        })
    }
}

/// The workload to run.
#[derive(Debug, Clone)]
pub enum Workload {
    Db(DbWorkload),
    File(FileWorkload),
}

impl Workload {
    pub fn transactions(&self) -> u64 {
        match self {
            Workload::Db(w) => w.transactions * u64::from(w.threads),
            Workload::File(w) => w.ops_per_thread() * u64::from(w.threads),
        }
    }
}

/// How to run it.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub fs: FsChoice,
    /// Capture and classify the block requests of the scratch device(s).
    pub trace: bool,
    /// Where the trace file and plot go (no files when `None`).
    pub out_dir: Option<PathBuf>,
    /// Stem of the trace and plot file names.
    pub label: String,
    /// Size of the scratch filesystem image.
    pub image_size_bytes: u64,
    /// Per-CPU tracefs ring buffer.
    pub trace_buffer_kb: u32,
    /// Incremented once per completed transaction (for a progress bar).
    pub progress: Option<Arc<AtomicU64>>,
    /// The emulated device: `xftl` runs on it; other modes' traces are replayed through it by
    /// the caller (`device::attach`).
    pub device: Option<joj_device::Profile>,
    /// Age the device before the run (GC validity in percent; `xftl` here, replays in
    /// `device::attach`).
    pub aging_validity: Option<u32>,
    /// Run the host at the device's speed: after each transaction wait for a model of
    /// `device` fed live from the kernel (`crate::pace`). Needs `device` and `trace`.
    pub pace: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            fs: FsChoice::Host(None),
            trace: false,
            out_dir: None,
            label: "run".to_string(),
            image_size_bytes: 1 << 30,
            trace_buffer_kb: 64 * 1024,
            progress: None,
            device: None,
            aging_validity: None,
            pace: false,
        }
    }
}

/// A file's raw FIEMAP answer at one instant (btrfs: logical addresses, mapped after the run).
struct RawSnapshot {
    path: PathBuf,
    role: FileRole,
    time_ns: u64,
    extents: Vec<joj_linux::Extent>,
}

/// Records where each file's blocks are whenever the VFS syncs, truncates or deletes it, and
/// the interval of every sync call (to attribute FS journal writes to the file being synced).
/// Only a cheap ioctl runs inside the window; translation to device sectors happens after it.
#[derive(Default)]
struct ExtentRecorder {
    snapshots: Mutex<Vec<RawSnapshot>>,
    syncs: Mutex<Vec<SyncInterval>>,
    open_syncs: Mutex<Vec<(std::thread::ThreadId, FileRole, u64)>>,
}

impl ExtentRecorder {
    fn record(&self, path: &Path, role: FileRole, fd: Option<c_int>) {
        let extents = match fd {
            // SAFETY: the VFS passes a descriptor it keeps open for the duration of the call.
            Some(fd) => joj_linux::fiemap(unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }),
            None => joj_linux::fiemap_path(path),
        };
        // A file that cannot be mapped (already gone, or data inline in the inode) simply has
        // no data extents: its requests fall to metadata, which is what they then are.
        let Ok(extents) = extents else { return };
        lock(&self.snapshots).push(RawSnapshot {
            path: path.to_path_buf(),
            role,
            time_ns: joj_linux::now_mono_ns(),
            extents,
        });
    }

    /// Snapshot every regular file under `dir`, its role read from its name.
    fn record_dir(&self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_file() {
                self.record(&p, role_from_name(&p), None);
            }
        }
    }

    /// Translate the raw snapshots into device sectors (one chunk-map read on btrfs).
    fn snapshots(&self, scratch: &ScratchFs) -> Result<Vec<FileSnapshot>, WorkloadError> {
        let raw = std::mem::take(&mut *lock(&self.snapshots));
        let main = scratch.main_device();
        let dev = main.dev.to_string();
        let chunks = if scratch.kind().fs_type() == "btrfs" {
            Some(
                joj_linux::fs_btrfs::read_chunk_map(&main.path).map_err(|e| {
                    WorkloadError::Config(format!(
                        "reading the btrfs chunk map of {}: {e}",
                        main.path.display()
                    ))
                })?,
            )
        } else {
            None
        };
        let mut out = Vec::with_capacity(raw.len());
        for snap in raw {
            let (placed, _skipped) = joj_linux::fiemap::to_dev_extents(&snap.extents, &dev);
            let extents = match &chunks {
                None => placed
                    .into_iter()
                    .map(|e| DevExtent {
                        dev: e.dev,
                        sector: e.sector,
                        sectors: e.sectors,
                    })
                    .collect(),
                Some(chunks) => {
                    let mut v = Vec::new();
                    for e in placed {
                        // `to_dev_extents` read btrfs logical addresses as sectors; map them.
                        let mapped = joj_linux::fs_btrfs::map_logical(
                            chunks,
                            e.sector * 512,
                            e.sectors * 512,
                        )
                        .unwrap_or_default();
                        v.extend(mapped.into_iter().map(|(off, len)| DevExtent {
                            dev: dev.clone(),
                            sector: off / 512,
                            sectors: len.div_ceil(512),
                        }));
                    }
                    v
                }
            };
            out.push(FileSnapshot {
                role: snap.role,
                path: snap.path.to_string_lossy().into_owned(),
                time_ns: snap.time_ns,
                extents,
            });
        }
        Ok(out)
    }
}

/// One sync call: which file role was synced, from when to when (CLOCK_MONOTONIC).
#[derive(Debug, Clone, Copy)]
struct SyncInterval {
    role: FileRole,
    start_ns: u64,
    end_ns: u64,
}

impl FileObserver for ExtentRecorder {
    fn file_event(&self, event: FileEvent, path: &Path, role: FileRole, fd: Option<c_int>) {
        let now = joj_linux::now_mono_ns();
        let me = std::thread::current().id();
        match event {
            FileEvent::BeforeSync => lock(&self.open_syncs).push((me, role, now)),
            FileEvent::AfterSync => {
                let mut open = lock(&self.open_syncs);
                if let Some(i) = open.iter().position(|(t, _, _)| *t == me) {
                    let (_, r, start_ns) = open.swap_remove(i);
                    lock(&self.syncs).push(SyncInterval {
                        role: r,
                        start_ns,
                        end_ns: now,
                    });
                }
                drop(open);
                self.record(path, role, fd);
            }
            FileEvent::BeforeDelete | FileEvent::BeforeTruncate => self.record(path, role, fd),
        }
    }
}

fn role_from_name(p: &Path) -> FileRole {
    let s = p.to_string_lossy();
    if s.ends_with("-wal") {
        FileRole::Wal
    } else if s.ends_with("-journal") {
        FileRole::RollbackJournal
    } else if s.ends_with(".db") {
        FileRole::Database
    } else {
        FileRole::Other
    }
}

/// What the window captured.
#[derive(Default)]
struct Captured {
    counters: IoCounters,
    waldio: Option<joj_waldio::WaldioCounters>,
    requests: Vec<TraceRecord>,
    intent: BioIntent,
    trace_error: Option<WorkloadError>,
    pace: Option<crate::pace::PaceReport>,
}

struct MeasuredWindow<'a> {
    dir: &'a Path,
    vfs: AccountingVfs,
    /// The waldio VFS (over `joj`) when the run uses a WALDIO mode.
    waldio: Option<joj_waldio::WaldioVfs>,
    waldio_before: Mutex<joj_waldio::WaldioCounters>,
    devs: Vec<String>,
    buffer_kb: u32,
    trace: bool,
    recorder: Option<Arc<ExtentRecorder>>,
    tracer: Mutex<Option<BlockTracer>>,
    /// With `--pace`: the traced devices with their sizes, and the device model to pace by.
    pace: Option<PaceSetup>,
    pacer: Mutex<Option<Pacer>>,
    before: Mutex<IoCounters>,
    captured: Mutex<Captured>,
}

fn syncfs(dir: &Path) -> Result<(), WorkloadError> {
    let f = std::fs::File::open(dir).map_err(|source| WorkloadError::Io {
        what: format!("opening {}", dir.display()),
        source,
    })?;
    // SAFETY: syncfs on an open descriptor.
    if unsafe { libc::syncfs(f.as_raw_fd()) } != 0 {
        return Err(WorkloadError::Io {
            what: format!("syncfs on {}", dir.display()),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// What a paced window starts its [`Pacer`] with.
struct PaceSetup {
    devs: Vec<(String, u64)>,
    profile: joj_device::Profile,
    aging: Option<u32>,
    seed: u64,
}

impl Window for MeasuredWindow<'_> {
    fn begin(&self) -> Result<(), WorkloadError> {
        // Whatever preparation left dirty is written now, outside the window.
        syncfs(self.dir)?;
        if let Some(rec) = &self.recorder {
            rec.record_dir(self.dir);
            self.vfs
                .set_observer(Some(rec.clone() as Arc<dyn FileObserver>));
            if let Some(w) = &self.waldio {
                w.set_observer(Some(rec.clone() as Arc<dyn FileObserver>));
            }
        }
        if self.trace {
            let devs: Vec<&str> = self.devs.iter().map(String::as_str).collect();
            let tracer =
                BlockTracer::start(&devs, self.buffer_kb).map_err(joj_linux::Error::from)?;
            *lock(&self.tracer) = Some(tracer);
        }
        if let Some(p) = &self.pace {
            let pacer = Pacer::start(&p.devs, &p.profile, p.aging, p.seed, self.buffer_kb)?;
            *lock(&self.pacer) = Some(pacer);
        }
        *lock(&self.before) = self.vfs.counters();
        if let Some(w) = &self.waldio {
            *lock(&self.waldio_before) = w.counters();
        }
        Ok(())
    }

    fn after_transaction(&self) -> Result<(), WorkloadError> {
        // Unpaced runs (nearly all) take no lock per transaction.
        if self.pace.is_none() {
            return Ok(());
        }
        let wait = match lock(&self.pacer).as_mut() {
            Some(p) => p.catch_up()?,
            None => return Ok(()),
        };
        // Sleep without the lock: other threads keep feeding the model meanwhile.
        std::thread::sleep(wait);
        if let Some(p) = lock(&self.pacer).as_mut() {
            p.waited(wait);
        }
        Ok(())
    }

    fn end(&self) -> Result<(), WorkloadError> {
        let after = self.vfs.counters();
        let mut cap = lock(&self.captured);
        if let Some(pacer) = lock(&self.pacer).take() {
            match pacer.finish() {
                Ok(report) => cap.pace = Some(report),
                Err(e) => cap.trace_error = Some(e),
            }
        }
        cap.counters = after.delta(&lock(&self.before));
        if let Some(w) = &self.waldio {
            cap.waldio = Some(w.counters().delta(&lock(&self.waldio_before)));
        }
        if let Some(tracer) = lock(&self.tracer).take() {
            match tracer.stop() {
                Ok(trace) => {
                    for b in &trace.bios {
                        if b.op == Op::Write {
                            cap.intent.write_bios += 1;
                            cap.intent.fua_writes += u64::from(b.fua);
                            cap.intent.preflush_writes += u64::from(b.preflush);
                        }
                    }
                    cap.requests = trace.requests;
                }
                Err(e) => cap.trace_error = Some(joj_linux::Error::from(e).into()),
            }
        }
        self.vfs.set_observer(None);
        if let Some(w) = &self.waldio {
            w.set_observer(None);
        }
        if let Some(rec) = &self.recorder {
            rec.record_dir(self.dir);
        }
        Ok(())
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// The kernel release, e.g. `6.18.44`.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}

/// Run `workload` as `opts` say and return its result document.
pub fn run(workload: &Workload, opts: &RunOptions) -> Result<RunResult, WorkloadError> {
    match workload {
        Workload::Db(w) => w.validate(),
        Workload::File(w) => w.validate(),
    }
    .map_err(WorkloadError::Config)?;
    if let Workload::Db(
        w @ DbWorkload {
            journal: JournalMode::Xftl,
            ..
        },
    ) = workload
    {
        return run_xftl(workload, w, opts);
    }
    if opts.trace && matches!(opts.fs, FsChoice::Host(_)) {
        return Err(WorkloadError::Config(
            "--trace needs a scratch filesystem (e.g. --fs ext4): joj traces only loop devices it made for the run".into(),
        ));
    }
    if opts.pace {
        let problem = if opts.device.is_none() {
            Some("--pace runs the host at an emulated device's speed: give --device <profile>")
        } else if !opts.trace || !matches!(opts.fs, FsChoice::Scratch(_)) {
            Some(
                "--pace feeds the device model from a live block trace: run it traced on a scratch filesystem (--fs ext4, ...)",
            )
        } else if matches!(workload, Workload::File(_)) {
            Some("--pace paces SQLite transactions; the file workloads are not paced")
        } else {
            None
        };
        if let Some(p) = problem {
            return Err(WorkloadError::Config(p.into()));
        }
    }
    let vfs = joj_vfs::register()?;
    if let Workload::Db(w) = workload {
        vfs.set_sync_call(w.sync_call);
    }

    // The filesystem. `scratch` and `tmp` are dropped (cleaned up) when this function returns.
    let mut scratch = None;
    let mut tmp = None;
    let (dir, devs, layout_base, mount_options) = match &opts.fs {
        FsChoice::Host(Some(d)) => (d.clone(), vec![], Layout::default(), None),
        FsChoice::Host(None) => {
            let t = tempfile::Builder::new()
                .prefix("joj-")
                .tempdir()
                .map_err(|source| WorkloadError::Io {
                    what: "creating a temporary directory".into(),
                    source,
                })?;
            let d = t.path().to_path_buf();
            tmp = Some(t);
            (d, vec![], Layout::default(), None)
        }
        FsChoice::Scratch(kind) => {
            joj_linux::install_cleanup_handler().map_err(|e| {
                WorkloadError::Config(format!("cannot install the Ctrl-C cleanup handler: {e}"))
            })?;
            let fs = ScratchFs::create(
                *kind,
                ScratchOptions {
                    size_bytes: opts.image_size_bytes,
                    ..Default::default()
                },
            )
            .map_err(joj_linux::Error::from)?;
            let dir = fs.mount_path().join("joj");
            std::fs::create_dir_all(&dir).map_err(|source| WorkloadError::Io {
                what: format!("creating {}", dir.display()),
                source,
            })?;
            let devs = fs.dev_ids();
            let jl = fs.journal_layout();
            let layout = Layout {
                journal_devs: jl.journal_devs.clone(),
                journal_extents: jl
                    .extents
                    .iter()
                    .map(|e| DevExtent {
                        dev: e.dev.clone(),
                        sector: e.sector,
                        sectors: e.sectors,
                    })
                    .collect(),
                files: vec![],
            };
            let journal_path = fs.journal_device().map(|d| d.path.clone());
            let mo = Some(kind.mount_options(journal_path.as_deref()));
            scratch = Some(fs);
            (dir, devs, layout, mo)
        }
    };

    // WALDIO modes run SQLite through the waldio VFS stacked on the accounting `joj` VFS, so the
    // database and -shm are still counted and the WAL goes out as direct I/O.
    let waldio = match workload {
        Workload::Db(DbWorkload {
            journal: JournalMode::Waldio(m),
            ..
        }) => {
            let v = joj_waldio::register_over(WALDIO_VFS_NAME, VFS_NAME)
                .map_err(|e| WorkloadError::Config(format!("registering the waldio VFS: {e}")))?;
            v.set_defaults(m.options());
            Some(v)
        }
        _ => None,
    };
    let vfs_name = waldio.map_or(VFS_NAME, |v| v.name());
    match workload {
        Workload::Db(w) => db::prepare(&dir, w, vfs_name)?,
        Workload::File(w) => file::prepare(&dir, w)?,
    }

    let pace = match (&opts.device, scratch.as_ref()) {
        (Some(profile), Some(fs)) if opts.pace => {
            let mut devs = Vec::new();
            for d in fs.devices() {
                let bytes = std::fs::metadata(&d.image)
                    .map_err(|source| WorkloadError::Io {
                        what: format!("reading the size of {}", d.image.display()),
                        source,
                    })?
                    .len();
                devs.push((d.dev.to_string(), bytes));
            }
            Some(PaceSetup {
                devs,
                profile: profile.clone(),
                aging: opts.aging_validity,
                // The seed the replay ages with (`device::replay_run`: the config's).
                seed: match workload {
                    Workload::Db(w) => w.seed,
                    Workload::File(w) => w.seed,
                },
            })
        }
        _ => None,
    };
    let window = MeasuredWindow {
        dir: &dir,
        vfs,
        waldio,
        waldio_before: Mutex::new(Default::default()),
        devs: devs.clone(),
        buffer_kb: opts.trace_buffer_kb,
        trace: opts.trace,
        recorder: opts.trace.then(|| Arc::new(ExtentRecorder::default())),
        tracer: Mutex::new(None),
        pace,
        pacer: Mutex::new(None),
        before: Mutex::new(IoCounters::default()),
        captured: Mutex::new(Captured::default()),
    };

    let mut paper = None;
    let (latencies, elapsed, mut counters) = match workload {
        Workload::Db(w) => {
            let out = db::run(&dir, w, vfs_name, &window, opts.progress.clone())?;
            db::integrity_check(&out.databases, vfs_name)?;
            paper = out.paper;
            (out.latencies_ns, out.elapsed, None)
        }
        Workload::File(w) => {
            let out = file::run(&dir, w, &window, opts.progress.clone())?;
            (out.latencies_ns, out.elapsed, Some(out.syscalls))
        }
    };
    let mut cap = std::mem::take(&mut *lock(&window.captured));
    if let Some(e) = cap.trace_error.take() {
        return Err(e);
    }
    let counters = counters.take().unwrap_or(cap.counters);
    let transactions = workload.transactions();

    let mut result = RunResult {
        config: run_config(workload, opts, mount_options),
        transactions,
        elapsed_s: elapsed.as_secs_f64(),
        ops_per_sec: transactions as f64 / elapsed.as_secs_f64().max(1e-9),
        latency_us: LatencySummary::from_ns(latencies),
        syscalls: Syscalls::from(&counters),
        files: FileBytes::from(&counters),
        block: None,
        block_per_txn: None,
        bio_intent: None,
        fs_journal_by_synced_file: None,
        trace_file: None,
        plot_file: None,
        checks: vec![],
        device: None,
        waldio: cap.waldio,
        paper,
        xftl: None,
        pace: cap.pace.take(),
    };

    if opts.trace {
        let mut layout = layout_base;
        let mut syncs = Vec::new();
        if let (Some(rec), Some(fs)) = (&window.recorder, scratch.as_ref()) {
            layout.files = rec.snapshots(fs)?;
            syncs = std::mem::take(&mut *lock(&rec.syncs));
        }
        let mut records = std::mem::take(&mut cap.requests);
        let totals = classify(&layout, &mut records);
        result.fs_journal_by_synced_file = Some(attribute_fs_journal(&records, &syncs));
        result.block_per_txn = Some(totals.per_txn(transactions));
        result.bio_intent = Some(cap.intent);
        result.checks = cross_checks(workload, &counters, &totals);
        if let Some(wc) = &cap.waldio {
            // Every direct write of log blocks reached the block layer as WAL data.
            let wal = totals.data_by_role.wal;
            result.checks.push(Check {
                name: "waldio_wal_bytes".to_string(),
                ok: wal >= wc.direct_write_bytes,
                detail: format!(
                    "block layer {wal} B ≥ waldio's direct log writes {} B",
                    wc.direct_write_bytes
                ),
            });
        }
        result.block = Some(totals);
        if let Some(out) = &opts.out_dir {
            std::fs::create_dir_all(out).map_err(|source| WorkloadError::Io {
                what: format!("creating {}", out.display()),
                source,
            })?;
            let header = trace_header(&result, scratch.as_ref());
            let trace_path = out.join(format!("{}.trace.jsonl", opts.label));
            joj_trace::format::write_trace_file(&trace_path, &header, &records)?;
            let plot_path = out.join(format!("{}.svg", opts.label));
            let title = format!(
                "{} · {} · {} — {} transactions",
                result.config.fs,
                result
                    .config
                    .journal_mode
                    .as_deref()
                    .unwrap_or(&result.config.op),
                result.config.op,
                transactions
            );
            joj_trace::plot::plot_svg(
                &plot_path,
                &title,
                &records,
                joj_trace::plot::PlotAxis::Sequence,
            )?;
            result.trace_file = Some(trace_path.to_string_lossy().into_owned());
            result.plot_file = Some(plot_path.to_string_lossy().into_owned());
        }
    }

    drop(window);
    if let Some(fs) = scratch.take() {
        fs.close().map_err(joj_linux::Error::from)?;
    }
    drop(tmp);
    Ok(result)
}

/// FS journal bytes written while a sync call of each file role was in progress: the
/// *journaling of journal* is the part attributed to the WAL and the rollback journal. Journal
/// writes issued outside every sync call (periodic commits) are `other`.
fn attribute_fs_journal(records: &[TraceRecord], syncs: &[SyncInterval]) -> FileBytes {
    let mut out = FileBytes::default();
    let mut sorted: Vec<SyncInterval> = syncs.to_vec();
    sorted.sort_by_key(|s| s.start_ns);
    for r in records
        .iter()
        .filter(|r| r.op == Op::Write && r.class == BlockClass::FsJournal)
    {
        let role = sorted
            .iter()
            .rev()
            .find(|s| s.start_ns <= r.time_ns && r.time_ns <= s.end_ns)
            .map(|s| s.role);
        let slot = match role {
            Some(FileRole::Database) => &mut out.database,
            Some(FileRole::Wal) => &mut out.wal,
            Some(FileRole::RollbackJournal) => &mut out.rollback_journal,
            _ => &mut out.other,
        };
        *slot += r.bytes();
    }
    out
}

fn trace_header(result: &RunResult, scratch: Option<&ScratchFs>) -> TraceHeader {
    let devices = scratch
        .map(|fs| {
            fs.devices()
                .iter()
                .map(|d| TraceDevice {
                    dev: d.dev.to_string(),
                    role: match d.role {
                        joj_linux::DeviceRole::Journal => TraceDeviceRole::Journal,
                        _ => TraceDeviceRole::Main,
                    },
                    name: d.path.to_string_lossy().into_owned(),
                })
                .collect()
        })
        .unwrap_or_default();
    TraceHeader {
        clock: Clock::Mono,
        devices,
        source: TraceSource::Tracefs,
        meta: {
            let mut m = match serde_json::to_value(&result.config) {
                Ok(serde_json::Value::Object(m)) => m,
                _ => serde_json::Map::new(),
            };
            // Replays count modeled throughput in these (joj_device::LoadedTrace).
            m.insert("transactions".into(), result.transactions.into());
            m
        },
    }
}

/// Counts from two independent observers that must agree: what SQLite wrote through the VFS
/// and synced must reach the block layer as at least as many bytes of the same file.
fn cross_checks(
    workload: &Workload,
    vfs: &IoCounters,
    block: &joj_trace::totals::BlockTotals,
) -> Vec<Check> {
    let mut checks = Vec::new();
    let mut at_least = |name: &str, block_bytes: u64, vfs_bytes: u64| {
        checks.push(Check {
            name: name.to_string(),
            ok: block_bytes >= vfs_bytes,
            detail: format!("block layer {block_bytes} B ≥ written through the VFS {vfs_bytes} B"),
        });
    };
    match workload {
        Workload::Db(w) => {
            let synced = w.synchronous != Synchronous::Off;
            if synced && w.journal.is_wal() && w.synchronous == Synchronous::Full {
                at_least("wal_bytes", block.data_by_role.wal, vfs.wal_bytes);
            }
            if synced
                && matches!(
                    w.journal,
                    JournalMode::Delete | JournalMode::Truncate | JournalMode::Persist
                )
            {
                at_least(
                    "rollback_journal_bytes",
                    block.data_by_role.rollback_journal,
                    vfs.rollback_journal_bytes,
                );
                at_least(
                    "database_bytes",
                    block.data_by_role.database,
                    vfs.database_bytes,
                );
            }
            if synced && vfs.fsync + vfs.fdatasync > 0 {
                checks.push(Check {
                    name: "flushes".into(),
                    ok: block.flushes > 0,
                    detail: format!(
                        "{} flush requests for {} sync calls",
                        block.flushes,
                        vfs.fsync + vfs.fdatasync
                    ),
                });
            }
        }
        Workload::File(w) => {
            if w.access.is_write() && w.sync != crate::config::FileSync::Buffered {
                at_least("file_bytes", block.data_by_role.other, vfs.other_bytes);
            }
        }
    }
    checks
}

fn run_config(workload: &Workload, opts: &RunOptions, mount_options: Option<String>) -> RunConfig {
    let base = RunConfig {
        joj_version: env!("CARGO_PKG_VERSION").to_string(),
        sqlite_version: rusqlite::version().to_string(),
        kernel: kernel_release(),
        fs: opts.fs.name(),
        mount_options,
        workload: String::new(),
        op: String::new(),
        journal_mode: None,
        synchronous: None,
        sync_call: None,
        page_size: None,
        start: None,
        threads: 1,
        statements_per_txn: None,
        tables: None,
        attached_dbs: None,
        record_bytes: 0,
        interval_ms: None,
        keys: None,
        file_sync: None,
        file_size_bytes: None,
        seed: 0,
        trace: opts.trace,
        paper: None,
    };
    match workload {
        Workload::Db(w) => RunConfig {
            workload: "db".into(),
            op: w.name(),
            paper: w.paper,
            journal_mode: Some(w.journal.to_string()),
            // WALDIO's durability option sets the level SQLite runs with (db.rs `connect`).
            synchronous: Some(match w.journal {
                JournalMode::Waldio(m) => m.options().sqlite_synchronous().to_ascii_lowercase(),
                _ => w.synchronous.to_string(),
            }),
            sync_call: Some(w.sync_call.name().to_string()),
            page_size: Some(w.page_size),
            start: Some(format!("{:?}", w.start).to_lowercase()),
            threads: w.threads,
            statements_per_txn: Some(w.statements_per_txn),
            tables: Some(w.tables),
            attached_dbs: Some(w.attached_dbs),
            record_bytes: w.record_bytes as u64,
            interval_ms: Some(w.interval_ms),
            keys: Some(format!("{:?}", w.keys).to_lowercase()),
            seed: w.seed,
            ..base
        },
        Workload::File(w) => RunConfig {
            workload: "file".into(),
            op: w.access.to_string(),
            threads: w.threads,
            record_bytes: w.record_bytes,
            file_sync: Some(w.sync.to_string()),
            file_size_bytes: Some(w.file_size_bytes),
            seed: w.seed,
            ..base
        },
    }
}

/// An `xftl` run: the workload's databases on the `xftl` VFS over a fresh (optionally aged)
/// emulated device of `opts.device`; the window resets the device's counters and reads them
/// back, so the `device` section is the device's own.
fn run_xftl(
    workload: &Workload,
    w: &DbWorkload,
    opts: &RunOptions,
) -> Result<RunResult, WorkloadError> {
    let Some(profile) = opts.device.clone() else {
        return Err(WorkloadError::Config(
            "--journal xftl runs SQLite on the emulated transactional eMMC: give --device \
             <profile> (galaxy-s5, emmc5 or a profile JSON file)"
                .into(),
        ));
    };
    if w.threads != 1 || w.attached_dbs != 0 {
        return Err(WorkloadError::Config(
            "xftl runs one connection on one database (no --threads, no --attached)".into(),
        ));
    }
    let xo = crate::xftl::XftlOptions::for_run(&profile, opts.aging_validity, w.page_size, w.seed);
    let v = crate::xftl::fresh_device(&xo)?;
    let result = (|| {
        // Names on the device; the default VFS only makes them absolute.
        let dir = PathBuf::from("/joj-xftl");
        db::prepare(&dir, w, crate::xftl::XFTL_VFS_NAME)?;
        let window = crate::xftl::Window::new(v);
        let out = db::run(
            &dir,
            w,
            crate::xftl::XFTL_VFS_NAME,
            &window,
            opts.progress.clone(),
        )?;
        db::integrity_check(&out.databases, crate::xftl::XFTL_VFS_NAME)?;
        let (device, report) = window.take(&xo.profile, w.transactions)?;
        let transactions = workload.transactions();
        let mut config = run_config(workload, opts, None);
        config.fs = "xftl".into();
        Ok(RunResult {
            config,
            transactions,
            elapsed_s: out.elapsed.as_secs_f64(),
            ops_per_sec: transactions as f64 / out.elapsed.as_secs_f64().max(1e-9),
            latency_us: LatencySummary::from_ns(out.latencies_ns),
            syscalls: Syscalls::from(&IoCounters::default()),
            files: FileBytes::from(&IoCounters::default()),
            block: None,
            block_per_txn: None,
            bio_intent: None,
            fs_journal_by_synced_file: None,
            trace_file: None,
            plot_file: None,
            checks: vec![],
            device: Some(device),
            waldio: None,
            paper: out.paper,
            xftl: Some(report),
            // Nothing kernel-side runs under `xftl`, so there is no clock to pace.
            pace: None,
        })
    })();
    let _ = v.detach();
    result
}
