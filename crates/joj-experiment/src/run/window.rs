//! The measured window of a run on a kernel filesystem: at `begin`, `syncfs` so nothing from
//! preparation is still dirty, snapshot every file's extents, start the block tracer (and the
//! pacer), snapshot the VFS counters; at `end`, the reverse. Only what happened in between is
//! reported. A traced window also ends with `syncfs`, after the tracer stopped, so that a
//! recording of the run's system calls can find both ends of the window. With the images on a
//! disk, the disk's and the loop devices' counters are read at both ends too
//! ([`crate::backing`]).
//!
//! The window watches every sync call SQLite makes through joj's VFSs ([`WindowObserver`]): it
//! counts and times them, times joj's own work on the thread's path (the extent snapshots of a
//! traced window, the pacer's model), and — paced — holds the thread after each sync call until
//! the wall clock reaches the modeled time so far (host and device), so that whatever the kernel
//! does by the clock between two sync calls of one transaction happens as on the device.

use std::ffi::c_int;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use joj_linux::BlockTracer;
use joj_trace::FileRole;
use joj_trace::{Op, TraceRecord};
use joj_vfs::{AccountingVfs, FileEvent, FileObserver, IoCounters};
use joj_waldio::{WaldioCounters, WaldioVfs};
use joj_workload::{Window, WorkloadError, lock};

use super::extents::ExtentRecorder;
use crate::backing::{BackingDeltas, BackingError, BackingWatch};
use crate::error::ExperimentError;
use crate::host::WindowCounts;
use crate::pace::{PaceReport, Pacer};
use crate::result::BioIntent;

/// The longest a paced wait sleeps before it looks whether a SIGINT/SIGTERM cleanup began.
const PACE_SLEEP_SLICE: Duration = Duration::from_millis(20);

/// What a paced window starts its [`Pacer`] with.
pub(super) struct PaceSetup {
    /// The traced devices (`major:minor`) with their sizes in bytes.
    pub(super) devs: Vec<(String, u64)>,
    pub(super) profile: joj_device::Profile,
    pub(super) aging: Option<u32>,
    pub(super) seed: u64,
}

/// The size of each database's WAL file (`None`: no WAL file) at one instant.
pub(super) type WalSizes = Vec<(PathBuf, Option<u64>)>;

/// The WAL files of every database in `dir` (the `*.db` files), with their sizes.
fn wal_sizes(dir: &Path) -> WalSizes {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "db") {
                // waldio keeps its WAL in `-waldio`; every other mode in SQLite's `-wal`.
                let waldio = joj_waldio::wal_path(&p);
                let wal = if waldio.exists() {
                    waldio
                } else {
                    joj_waldio::sqlite_wal_path(&p)
                };
                let size = std::fs::metadata(&wal).ok().map(|m| m.len());
                out.push((wal, size));
            }
        }
    }
    out.sort();
    out
}

/// What the window captured.
#[derive(Default)]
pub(super) struct Captured {
    pub(super) counters: IoCounters,
    /// A steady-state WAL run: every WAL's size at the window's start and at its end.
    pub(super) steady_wal: Option<(WalSizes, WalSizes)>,
    pub(super) waldio: Option<WaldioCounters>,
    pub(super) requests: Vec<TraceRecord>,
    pub(super) intent: BioIntent,
    pub(super) pace: Option<PaceReport>,
    /// Sync calls, joj's overhead and pacing's sleeps in the window.
    pub(super) counts: WindowCounts,
    /// The images' disk and the loop devices over it (images on a disk only), or why their
    /// counters could not be read.
    pub(super) backing: Option<Result<BackingDeltas, BackingError>>,
    error: Option<ExperimentError>,
}

impl Captured {
    /// What was captured, or the first error the window met at its end.
    pub(super) fn checked(mut self) -> Result<Captured, ExperimentError> {
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self),
        }
    }
}

/// Tracing of the run's devices.
pub(super) struct Tracing {
    pub(super) devs: Vec<String>,
    pub(super) buffer_kb: u32,
    pub(super) recorder: Arc<ExtentRecorder>,
}

pub(super) struct MeasuredWindow {
    dir: PathBuf,
    vfs: AccountingVfs,
    /// The waldio VFS (over `joj`) when the run uses a WALDIO mode.
    waldio: Option<WaldioVfs>,
    tracing: Option<Tracing>,
    pace: Option<PaceSetup>,
    /// Watch the WAL files: a steady-state WAL run must start with them at their final size.
    steady_wal: bool,
    wal_at_start: Mutex<WalSizes>,
    tracer: Mutex<Option<BlockTracer>>,
    /// The counters of the images' disk and its loop devices (images on a disk only).
    backing: Mutex<Option<BackingWatch>>,
    /// The sync calls' and pacing's shared state (the observer holds it too).
    clock: Arc<HostClock>,
    /// The journal threads of the run's devices, and their CPU time and run-queue delay at the
    /// window's start.
    journal_threads: Mutex<Option<(crate::host::JournalThreads, u64, u64)>>,
    before: Mutex<(IoCounters, WaldioCounters)>,
    captured: Mutex<Captured>,
}

/// What the window counts on the workload threads' path, and the pacer they wait for.
struct HostClock {
    threads: u32,
    pacer: Mutex<Option<Pacer>>,
    /// Sync calls under way: the thread and when it began (ns, monotonic).
    open_syncs: Mutex<Vec<(ThreadId, u64)>>,
    sync_calls: AtomicU64,
    sync_ns: AtomicU64,
    overhead_ns: AtomicU64,
    sleep_ns: AtomicU64,
    /// The sleeping threads' run-queue delay across their paced sleeps.
    sleep_run_delay_ns: AtomicU64,
}

impl HostClock {
    fn counts(&self) -> WindowCounts {
        WindowCounts {
            sync_calls: self.sync_calls.load(Ordering::Relaxed),
            sync_ns: self.sync_ns.load(Ordering::Relaxed),
            overhead_ns: self.overhead_ns.load(Ordering::Relaxed),
            sleep_ns: self.sleep_ns.load(Ordering::Relaxed),
            sleep_run_delay_ns: self.sleep_run_delay_ns.load(Ordering::Relaxed),
            journal_thread_cpu_ns: 0,
            journal_thread_run_delay_ns: 0,
        }
    }

    /// Time `f` as joj's own work on the thread's path.
    fn overhead<T>(&self, f: impl FnOnce() -> T) -> T {
        let t0 = Instant::now();
        let out = f();
        self.overhead_ns
            .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        out
    }

    /// A SIGINT/SIGTERM cleanup is removing the run's trace instances: the pacer's cannot go
    /// while its per-CPU files are open on this thread, so the pacer is dropped (its files
    /// closed) and the run paces no more; its result is not written anyway.
    fn stop_pacing(&self) {
        drop(lock(&self.pacer).take());
    }

    /// Paced: feed the model what the kernel issued so far and sleep until the wall clock
    /// reaches the modeled time (host so far plus the device's).
    fn wait_for_device(&self) -> Result<(), ExperimentError> {
        if joj_linux::cleanup::cleaning() {
            self.stop_pacing();
            return Ok(());
        }
        let wait = self.overhead(|| match lock(&self.pacer).as_mut() {
            Some(p) => p.catch_up(&self.counts(), self.threads).map(Some),
            None => Ok(None),
        })?;
        let Some(wait) = wait.filter(|w| !w.is_zero()) else {
            return Ok(());
        };
        // Sleep without the lock: other threads keep feeding the model meanwhile. What counts
        // is the time really slept: a sleep ends late (timer slack, the wakeup, a wait for a
        // CPU), and that lateness is pacing's, not the host's work. The wait for a CPU is also
        // in the thread's run-queue delay, which the host time takes out: it is counted here
        // so that it is taken out once.
        let delay_before = self.overhead(joj_workload::ThreadUsage::run_delay_now);
        let t0 = Instant::now();
        // In slices: a SIGINT/SIGTERM cleanup must not wait out a long modeled wait.
        while let Some(left) = wait.checked_sub(t0.elapsed()).filter(|l| !l.is_zero()) {
            if joj_linux::cleanup::cleaning() {
                self.stop_pacing();
                return Ok(());
            }
            std::thread::sleep(left.min(PACE_SLEEP_SLICE));
        }
        let slept = t0.elapsed();
        let delay_after = self.overhead(joj_workload::ThreadUsage::run_delay_now);
        self.sleep_ns
            .fetch_add(slept.as_nanos() as u64, Ordering::Relaxed);
        if let (Some(a), Some(b)) = (delay_before, delay_after) {
            self.sleep_run_delay_ns
                .fetch_add(b.saturating_sub(a), Ordering::Relaxed);
        }
        if let Some(p) = lock(&self.pacer).as_mut() {
            p.waited(slept);
        }
        Ok(())
    }
}

/// The window's observer of SQLite's files: counts and times sync calls, passes every event to
/// the extent recorder of a traced window (timed as joj's overhead), and paces after each sync.
struct WindowObserver {
    recorder: Option<Arc<ExtentRecorder>>,
    clock: Arc<HostClock>,
}

impl FileObserver for WindowObserver {
    fn file_event(&self, event: FileEvent, path: &Path, role: FileRole, fd: Option<c_int>) {
        let now = joj_linux::now_mono_ns();
        let me = std::thread::current().id();
        match event {
            FileEvent::BeforeSync => lock(&self.clock.open_syncs).push((me, now)),
            FileEvent::AfterSync => {
                let mut open = lock(&self.clock.open_syncs);
                if let Some(i) = open.iter().position(|(t, _)| *t == me) {
                    let (_, start) = open.swap_remove(i);
                    self.clock.sync_calls.fetch_add(1, Ordering::Relaxed);
                    self.clock
                        .sync_ns
                        .fetch_add(now.saturating_sub(start), Ordering::Relaxed);
                }
            }
            FileEvent::BeforeDelete | FileEvent::BeforeTruncate => {}
        }
        if let Some(r) = &self.recorder {
            self.clock.overhead(|| r.file_event(event, path, role, fd));
        }
        if matches!(event, FileEvent::AfterSync) {
            // An error of the pacer's stream shows again, and is reported, when the window ends.
            let _ = self.clock.wait_for_device();
        }
    }
}

fn syncfs(dir: &Path) -> Result<(), ExperimentError> {
    let io = |what: String| move |source| ExperimentError::Io { what, source };
    let f = std::fs::File::open(dir).map_err(io(format!("opening {}", dir.display())))?;
    // SAFETY: syncfs on an open descriptor.
    if unsafe { libc::syncfs(f.as_raw_fd()) } != 0 {
        return Err(io(format!("syncfs on {}", dir.display()))(
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

impl MeasuredWindow {
    pub(super) fn new(
        dir: &Path,
        vfs: AccountingVfs,
        waldio: Option<WaldioVfs>,
        tracing: Option<Tracing>,
        pace: Option<PaceSetup>,
        steady_wal: bool,
        threads: u32,
    ) -> MeasuredWindow {
        MeasuredWindow {
            dir: dir.to_path_buf(),
            vfs,
            waldio,
            tracing,
            pace,
            steady_wal,
            wal_at_start: Mutex::default(),
            tracer: Mutex::new(None),
            backing: Mutex::new(None),
            clock: Arc::new(HostClock {
                threads: threads.max(1),
                pacer: Mutex::new(None),
                open_syncs: Mutex::default(),
                sync_calls: AtomicU64::new(0),
                sync_ns: AtomicU64::new(0),
                overhead_ns: AtomicU64::new(0),
                sleep_ns: AtomicU64::new(0),
                sleep_run_delay_ns: AtomicU64::new(0),
            }),
            journal_threads: Mutex::new(None),
            before: Mutex::default(),
            captured: Mutex::default(),
        }
    }

    /// Also count the images' disk beside its loop devices (images on a disk).
    pub(super) fn with_backing(self, backing: Option<BackingWatch>) -> MeasuredWindow {
        *lock(&self.backing) = backing;
        self
    }

    /// The extent recorder, when the window traces.
    pub(super) fn recorder(&self) -> Option<&Arc<ExtentRecorder>> {
        self.tracing.as_ref().map(|t| &t.recorder)
    }

    /// What the window captured (once; the window is over).
    pub(super) fn take(&self) -> Result<Captured, ExperimentError> {
        std::mem::take(&mut *lock(&self.captured)).checked()
    }

    fn set_observer(&self, observer: Option<Arc<dyn FileObserver>>) {
        self.vfs.set_observer(observer.clone());
        if let Some(w) = &self.waldio {
            w.set_observer(observer);
        }
    }

    fn start(&self) -> Result<(), ExperimentError> {
        // Whatever preparation left dirty is written now, outside the window.
        syncfs(&self.dir)?;
        if self.steady_wal {
            *lock(&self.wal_at_start) = wal_sizes(&self.dir);
        }
        if let Some(t) = &self.tracing {
            t.recorder.record_dir(&self.dir);
            let devs: Vec<&str> = t.devs.iter().map(String::as_str).collect();
            let tracer = BlockTracer::start(&devs, t.buffer_kb).map_err(joj_linux::Error::from)?;
            *lock(&self.tracer) = Some(tracer);
            if let Some(p) = &self.pace {
                let pacer = Pacer::start(&p.devs, &p.profile, p.aging, p.seed, t.buffer_kb)?;
                *lock(&self.clock.pacer) = Some(pacer);
            }
        }
        self.set_observer(Some(Arc::new(WindowObserver {
            recorder: self.tracing.as_ref().map(|t| t.recorder.clone()),
            clock: self.clock.clone(),
        }) as Arc<dyn FileObserver>));
        if let Some(t) = &self.tracing {
            let threads = crate::host::JournalThreads::find(&t.devs);
            let (cpu, delay) = (threads.cpu_ns(), threads.run_delay_ns());
            *lock(&self.journal_threads) = Some((threads, cpu, delay));
        }
        let waldio = self.waldio.map(|w| w.counters()).unwrap_or_default();
        *lock(&self.before) = (self.vfs.counters(), waldio);
        if let Some(b) = lock(&self.backing).as_mut() {
            b.begin();
        }
        Ok(())
    }

    /// Stop everything; errors are kept in the capture (the window must end whatever fails).
    fn stop(&self) {
        let after = self.vfs.counters();
        let mut cap = lock(&self.captured);
        cap.backing = lock(&self.backing).as_ref().and_then(BackingWatch::end);
        let before = *lock(&self.before);
        cap.counters = after.delta(&before.0);
        cap.waldio = self.waldio.map(|w| w.counters().delta(&before.1));
        if self.steady_wal {
            let start = std::mem::take(&mut *lock(&self.wal_at_start));
            cap.steady_wal = Some((start, wal_sizes(&self.dir)));
        }
        cap.counts = self.clock.counts();
        if let Some((threads, cpu, delay)) = lock(&self.journal_threads).take() {
            cap.counts.journal_thread_cpu_ns = threads.cpu_ns().saturating_sub(cpu);
            cap.counts.journal_thread_run_delay_ns = threads.run_delay_ns().saturating_sub(delay);
        }
        if let Some(pacer) = lock(&self.clock.pacer).take() {
            match pacer.finish(&cap.counts, self.clock.threads) {
                Ok(report) => cap.pace = Some(report),
                Err(e) => cap.error = Some(e),
            }
        }
        if let Some(tracer) = lock(&self.tracer).take() {
            match tracer.stop() {
                Ok(trace) => {
                    for b in trace.bios.iter().filter(|b| b.op == Op::Write) {
                        cap.intent.write_bios += 1;
                        cap.intent.fua_writes += u64::from(b.fua);
                        cap.intent.preflush_writes += u64::from(b.preflush);
                    }
                    cap.requests = trace.requests;
                }
                Err(e) => {
                    cap.error.get_or_insert(joj_linux::Error::from(e).into());
                }
            }
        }
        self.set_observer(None);
        if let Some(rec) = self.recorder() {
            rec.record_dir(&self.dir);
            // A traced window ends, as it began, with a `syncfs` of the run's directory: the
            // two bracket the window in a system-call recording of the run (`joj syscalls
            // record --bench-window`). The tracer has stopped, so it changes no figure.
            if let Err(e) = syncfs(&self.dir) {
                cap.error.get_or_insert(e);
            }
        }
    }
}

impl Window for MeasuredWindow {
    fn begin(&self) -> Result<(), WorkloadError> {
        self.start().map_err(ExperimentError::into_window)
    }

    fn after_transaction(&self) -> Result<(), WorkloadError> {
        // Unpaced runs (nearly all) take no lock per transaction.
        if self.pace.is_none() {
            return Ok(());
        }
        self.clock
            .wait_for_device()
            .map_err(ExperimentError::into_window)
    }

    fn end(&self) -> Result<(), WorkloadError> {
        self.stop();
        Ok(())
    }
}
