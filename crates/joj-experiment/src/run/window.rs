//! The measured window of a run on a kernel filesystem: at `begin`, `syncfs` so nothing from
//! preparation is still dirty, snapshot every file's extents, start the block tracer (and the
//! pacer), snapshot the VFS counters; at `end`, the reverse. Only what happened in between is
//! reported. A traced window also ends with `syncfs`, after the tracer stopped, so that a
//! recording of the run's system calls can find both ends of the window.

use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use joj_linux::BlockTracer;
use joj_trace::{Op, TraceRecord};
use joj_vfs::{AccountingVfs, FileObserver, IoCounters};
use joj_waldio::{WaldioCounters, WaldioVfs};
use joj_workload::{Window, WorkloadError, lock};

use super::extents::ExtentRecorder;
use crate::error::ExperimentError;
use crate::pace::{PaceReport, Pacer};
use crate::result::BioIntent;

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
    pacer: Mutex<Option<Pacer>>,
    before: Mutex<(IoCounters, WaldioCounters)>,
    captured: Mutex<Captured>,
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
            pacer: Mutex::new(None),
            before: Mutex::default(),
            captured: Mutex::default(),
        }
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
            self.set_observer(Some(t.recorder.clone() as Arc<dyn FileObserver>));
            let devs: Vec<&str> = t.devs.iter().map(String::as_str).collect();
            let tracer = BlockTracer::start(&devs, t.buffer_kb).map_err(joj_linux::Error::from)?;
            *lock(&self.tracer) = Some(tracer);
            if let Some(p) = &self.pace {
                let pacer = Pacer::start(&p.devs, &p.profile, p.aging, p.seed, t.buffer_kb)?;
                *lock(&self.pacer) = Some(pacer);
            }
        }
        let waldio = self.waldio.map(|w| w.counters()).unwrap_or_default();
        *lock(&self.before) = (self.vfs.counters(), waldio);
        Ok(())
    }

    fn wait_for_device(&self) -> Result<(), ExperimentError> {
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

    /// Stop everything; errors are kept in the capture (the window must end whatever fails).
    fn stop(&self) {
        let after = self.vfs.counters();
        let mut cap = lock(&self.captured);
        let before = *lock(&self.before);
        cap.counters = after.delta(&before.0);
        cap.waldio = self.waldio.map(|w| w.counters().delta(&before.1));
        if self.steady_wal {
            let start = std::mem::take(&mut *lock(&self.wal_at_start));
            cap.steady_wal = Some((start, wal_sizes(&self.dir)));
        }
        if let Some(pacer) = lock(&self.pacer).take() {
            match pacer.finish() {
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
        self.wait_for_device().map_err(ExperimentError::into_window)
    }

    fn end(&self) -> Result<(), WorkloadError> {
        self.stop();
        Ok(())
    }
}
