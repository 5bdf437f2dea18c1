//! Crash states of the real kernel stack (`joj crash --fs`): SQLite in one journal mode on a
//! real filesystem whose loop device is backed by joj's recording disk, every block write and
//! flush of the run logged in order with the workload's marks (`docs/formats/blocklog.md`);
//! then thousands of crash states built from that log ([`states`]), each materialized,
//! recovered by the kernel, read by the mode's own VFS and checked by the filesystem's own
//! checker ([`check`]).
//!
//! A durable mode must show, in every state, every transaction acknowledged before the cut, at
//! most the ones begun, each whole, with `PRAGMA integrity_check` ok. A mode with a stated
//! window ([`workload::Window`]) may lose that many of the last acknowledged transactions and
//! nothing else. A canary must be caught.
//!
//! The recorded run is checked against the kernel's own account: the block requests of the
//! same window are captured through tracefs, and their written bytes and flushes must equal
//! the log's.
//!
//! Invariants: every random choice comes from `seed` (the same seed and log give the same
//! states); the scratch filesystems, loop devices and FUSE mount are removed when the run ends,
//! however it ends; a violation is reported, never raised.

pub mod check;
pub mod coalition;
pub mod jbd2;
pub mod mount;
pub mod planned;
pub mod postmark;
pub mod states;
pub mod workload;

use std::path::{Path, PathBuf};
use std::time::Instant;

use joj_linux::record::{BlockLog, LogOp, Mark, RecordingDisk};
use joj_linux::{BlockTracer, FsKind, ScratchFs, ScratchOptions};
use joj_trace::Op;
use joj_workload::JournalMode;
use serde::Serialize;

use crate::error::ExperimentError;
use check::{Checker, Reader, Violation, judge};
use coalition::CoalitionStats;
use mount::{MountCost, MountModel};
use planned::{FoundState, Planned};
use postmark::Expected;
use workload::{Canary, Window};

/// What the recorded run does on the filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsWorkload {
    /// SQLite transactions in the journal mode given (`workload.rs`).
    Sqlite,
    /// PostMark-like file creates, appends and deletes (`postmark.rs`); the journal mode is not
    /// used.
    Postmark,
}

impl FsWorkload {
    pub const NAMES: [&'static str; 2] = ["sqlite", "postmark"];

    pub fn from_name(s: &str) -> Option<FsWorkload> {
        match s {
            "sqlite" => Some(FsWorkload::Sqlite),
            "postmark" => Some(FsWorkload::Postmark),
            _ => None,
        }
    }
}

/// Largest `--states`.
pub const MAX_STATES: u64 = 10_000_000;
/// Most loop devices checking states at once.
const MAX_JOBS: usize = 2;
/// Largest `-n`.
pub const MAX_TRANSACTIONS: u64 = 100_000;

/// What to run.
#[derive(Debug, Clone)]
pub struct CrashFsOptions {
    pub fs: FsKind,
    pub mode: JournalMode,
    pub workload: FsWorkload,
    /// Read the run as the eMMC paper's optimized journal issues it (`coalition.rs`).
    pub emmc_journal: bool,
    pub canary: Option<Canary>,
    /// Stock modes' `PRAGMA synchronous`.
    pub sync: workload::StockSync,
    /// Transactions of the recorded run.
    pub transactions: u64,
    /// Crash states to check (fewer when the run has fewer: then every one is checked).
    pub states: u64,
    pub seed: u64,
    /// A saved log to check instead of recording a run.
    pub from_log: Option<PathBuf>,
    /// Where to save the log and the violating states (none when `None`).
    pub save_dir: Option<PathBuf>,
}

impl CrashFsOptions {
    pub fn setup(&self) -> workload::Setup {
        workload::Setup {
            mode: self.mode,
            canary: self.canary,
            sync: self.sync,
        }
    }

    pub fn validate(&self) -> Result<(), ExperimentError> {
        if self.fs.needs_journal_device() {
            return Err(ExperimentError::CrashStates(format!(
                "{} keeps its journal on a second device, and the recording disk records one; \
                 fix: use ext4, ext4-writeback, ext4-datajournal, ext4-nojournal, xfs or btrfs",
                self.fs
            )));
        }
        self.validate_emmc_journal()?;
        if self.mode == JournalMode::Xftl && self.workload == FsWorkload::Sqlite {
            return Err(ExperimentError::CrashStates(
                "xftl runs on the emulated device, not a kernel filesystem; fix: use \
                 `joj crash --device …` (power cuts inside the device) for xftl"
                    .into(),
            ));
        }
        if self.workload == FsWorkload::Postmark && self.sync != workload::StockSync::Full {
            return Err(ExperimentError::CrashStates(
                "--synchronous sets a SQLite mode's PRAGMA synchronous, and --fs-workload \
                 postmark runs no SQLite (it fsyncs every transaction); fix: drop --synchronous"
                    .into(),
            ));
        }
        match self.canary {
            Some(c) if self.workload == FsWorkload::Postmark && c != Canary::PerPageReliable => {
                return Err(ExperimentError::CrashStates(format!(
                    "the {} canary breaks a SQLite mode, and --fs-workload postmark runs no \
                     SQLite; fix: drop --fs-canary, or use --fs-workload sqlite",
                    c.name()
                )));
            }
            Some(
                c @ (Canary::SkipSync
                | Canary::FallocateOnly
                | Canary::FallocateFlushOnly
                | Canary::FlushOnly),
            ) if !matches!(self.mode, JournalMode::Waldio(_)) => {
                return Err(ExperimentError::CrashStates(format!(
                    "the {} canary breaks waldio; fix: use --journal waldio",
                    c.name()
                )));
            }
            Some(Canary::SyncOff) if matches!(self.mode, JournalMode::Waldio(_)) => {
                return Err(ExperimentError::CrashStates(
                    "the sync-off canary is a stock SQLite mode; fix: use --journal wal, delete, \
                     truncate or persist"
                        .into(),
                ));
            }
            _ => {}
        }
        if self.sync != workload::StockSync::Full && matches!(self.mode, JournalMode::Waldio(_)) {
            return Err(ExperimentError::CrashStates(
                "--synchronous sets a stock mode's PRAGMA synchronous; waldio's durability is \
                 its own option; fix: drop --synchronous, or use waldio-fua / waldio-normal"
                    .into(),
            ));
        }
        if self.transactions == 0 || self.states == 0 {
            return Err(crate::error::StackError::Zero {
                what: "--states and -n",
            }
            .into());
        }
        Ok(())
    }
}

impl CrashFsOptions {
    fn validate_emmc_journal(&self) -> Result<(), ExperimentError> {
        let jbd2 = self.fs.fs_type() == "ext4"
            && self.fs != FsKind::Ext4NoJournal
            && !self.fs.needs_journal_device();
        if self.emmc_journal && !jbd2 {
            return Err(ExperimentError::CrashStates(format!(
                "--emmc-journal reads jbd2's transactions, and {} has no internal jbd2 journal; \
                 fix: use --fs ext4 (or ext4-writeback, ext4-datajournal)",
                self.fs
            )));
        }
        if self.canary == Some(Canary::PerPageReliable) && !self.emmc_journal {
            return Err(ExperimentError::CrashStates(
                "the per-page-reliable canary breaks the optimized journal's commit; fix: add \
                 --emmc-journal"
                    .into(),
            ));
        }
        Ok(())
    }

    /// How the recovered filesystem is read.
    fn reader<'a>(&self, expected: Option<&'a Expected>) -> Reader<'a> {
        match expected {
            Some(e) => Reader::Postmark(e),
            None => Reader::Sqlite(self.setup()),
        }
    }
}

/// The recorded log's shape and its agreement with tracefs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LogSummary {
    pub writes: u64,
    pub write_bytes: u64,
    pub flushes: u64,
    pub epochs: u64,
    /// tracefs's account of the same window (absent for a saved log).
    pub traced_write_bytes: Option<u64>,
    pub traced_flushes: Option<u64>,
    /// Seconds the recorded run took.
    pub record_s: f64,
}

/// A state that broke its mode's promise.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    pub index: usize,
    pub state: FoundState,
    pub acknowledged: u64,
    pub begun: u64,
    pub violation: Option<Violation>,
    pub fsck: Option<String>,
    pub description: String,
}

/// The result of `joj crash --fs`.
#[derive(Debug, Clone, Serialize)]
pub struct CrashFsReport {
    pub fs: String,
    pub mode: String,
    pub workload: FsWorkload,
    pub canary: Option<Canary>,
    /// `FULL` or `EXTRA` for a stock mode, waldio's option for waldio.
    pub synchronous: String,
    pub window: Window,
    pub transactions: u64,
    pub seed: u64,
    pub log: LogSummary,
    /// What reading the run as the optimized journal did (`--emmc-journal`).
    pub emmc_journal: Option<CoalitionStats>,
    pub states_explored: u64,
    pub exhaustive: bool,
    pub images_checked: u64,
    pub violations: u64,
    pub lost_acknowledged: u64,
    pub broken: u64,
    pub unmountable: u64,
    pub fsck_failures: u64,
    /// Most acknowledged transactions missing in one state (within the window or not).
    pub largest_loss: u64,
    /// The journal replay each checked image needs at mount, modeled (ext4).
    pub mount: Option<MountCost>,
    pub check_s: f64,
    pub states_per_s: f64,
    /// Up to 20 violating states (and fsck failures), each with how to rebuild it.
    pub found: Vec<Found>,
    /// Where the log and the violating states were saved.
    pub saved: Option<PathBuf>,
}

impl CrashFsReport {
    /// Exit status 0: a sound mode shows no violation, a canary that must break is caught.
    pub fn verdict_ok(&self) -> bool {
        match self.canary {
            Some(c) if c.must_break() => self.violations > 0,
            _ => self.violations == 0 && self.fsck_failures == 0,
        }
    }
}

/// Records (or loads), plans and checks; `on_state` sees each state's index as it is checked.
// long: one pass from the log to the report, each step a call; splitting it would only pass the
// report's parts around.
pub fn run(
    opts: &CrashFsOptions,
    mut on_planned: impl FnMut(u64),
    mut on_state: impl FnMut(usize, Option<&Found>),
) -> Result<CrashFsReport, ExperimentError> {
    opts.validate()?;
    joj_linux::install_cleanup_handler()?;
    joj_linux::leftovers::sweep_and_report();
    let (log, mut summary) = match &opts.from_log {
        Some(path) => (load(path)?, LogSummary::default()),
        None => record(opts).inspect_err(|_| wait_if_cleaning())?,
    };
    let transactions = log
        .ops
        .iter()
        .filter(|o| matches!(o, LogOp::Mark(Mark::Begun(_))))
        .count() as u64;
    let expected =
        (opts.workload == FsWorkload::Postmark).then(|| Expected::new(transactions, opts.seed));
    // The image's jbd2 journal, located once (ext4 kinds with one).
    let journal = (opts.fs.fs_type() == "ext4").then(|| jbd2::locate(&log.base));
    let planned = Planned::new(
        &log,
        journal.as_ref().filter(|_| opts.emmc_journal),
        opts.states.min(usize::MAX as u64) as usize,
        opts.seed,
        opts.canary == Some(Canary::PerPageReliable),
    )?;
    summarize(&log, planned.epochs(), &mut summary);
    on_planned(planned.len() as u64);
    // The PostMark-like workload fsyncs every transaction: durable whatever the SQLite mode.
    let window = match opts.workload {
        FsWorkload::Sqlite => Window::of(opts.mode, opts.canary, opts.sync),
        FsWorkload::Postmark => Window::Durable,
    };
    let mut report = CrashFsReport {
        fs: opts.fs.to_string(),
        mode: match opts.workload {
            FsWorkload::Sqlite => opts.mode.to_string(),
            FsWorkload::Postmark => "postmark (files, fsync)".into(),
        },
        workload: opts.workload,
        canary: opts.canary,
        synchronous: match opts.mode {
            _ if opts.workload == FsWorkload::Postmark => "fsync".into(),
            JournalMode::Waldio(m) => m.options().sqlite_synchronous().to_string(),
            _ if opts.canary == Some(Canary::SyncOff) => "OFF".into(),
            _ => opts.sync.name().to_ascii_uppercase(),
        },
        window,
        transactions,
        seed: opts.seed,
        log: summary,
        emmc_journal: planned.coalition(),
        states_explored: planned.len() as u64,
        exhaustive: planned.exhaustive(),
        images_checked: 0,
        violations: 0,
        lost_acknowledged: 0,
        broken: 0,
        unmountable: 0,
        fsck_failures: 0,
        largest_loss: 0,
        mount: None,
        check_s: 0.0,
        states_per_s: 0.0,
        found: Vec::new(),
        saved: None,
    };
    let located = journal.and_then(Result::ok);
    let mut mount = match &located {
        Some(j) => Some((MountModel::new(j.clone())?, MountCost::default())),
        None => None,
    };
    // A replay's modeled cost, once per distinct replay (states share images).
    let mut costs: std::collections::HashMap<jbd2::Replay, u64> = Default::default();
    let mut mount_err = None;
    let started = Instant::now();
    let mut all_found = Vec::new();
    let reader = opts.reader(expected.as_ref());
    report.images_checked = check_all(
        opts,
        (&log, located.as_ref()),
        &planned,
        reader,
        |index, outcome| {
            let (acked, begun) = planned.bounds(index);
            if let Some(k) = outcome.shown.most() {
                report.largest_loss = report.largest_loss.max(acked.saturating_sub(k));
            }
            if let (Some((model, cost)), Some(r)) = (&mut mount, &outcome.replay) {
                let ns = match costs.get(r) {
                    Some(&ns) => Ok(ns),
                    None => model.cost_ns(r).inspect(|&ns| {
                        costs.insert(r.clone(), ns);
                    }),
                };
                match ns {
                    Ok(ns) => cost.add(r, ns),
                    Err(e) => mount_err = mount_err.take().or(Some(e)),
                }
            }
            let violation = judge(&outcome, acked, begun, window.allowed_loss());
            match &violation {
                Some(Violation::Lost { .. }) => report.lost_acknowledged += 1,
                Some(Violation::Broken(_)) | Some(Violation::FromTheFuture { .. }) => {
                    report.broken += 1
                }
                Some(Violation::Unmountable(_)) => report.unmountable += 1,
                None => {}
            }
            report.violations += u64::from(violation.is_some());
            report.fsck_failures += u64::from(outcome.fsck.is_some());
            let found = (violation.is_some() || outcome.fsck.is_some()).then(|| Found {
                index,
                state: planned.state(index),
                acknowledged: acked,
                begun,
                violation,
                fsck: outcome.fsck.clone(),
                description: planned.describe(index),
            });
            on_state(index, found.as_ref());
            if let Some(f) = found {
                all_found.push(f);
            }
        },
    )
    .inspect_err(|_| wait_if_cleaning())?;
    if let Some(e) = mount_err {
        return Err(e);
    }
    report.mount = mount.map(|(_, cost)| cost);
    all_found.sort_by_key(|f| f.index);
    report.check_s = started.elapsed().as_secs_f64();
    report.states_per_s = report.states_explored as f64 / report.check_s.max(1e-9);
    if let (Some(dir), false) = (&opts.save_dir, all_found.is_empty()) {
        report.saved = Some(save(dir, opts, &log, &all_found)?);
    }
    report.found = all_found.into_iter().take(20).collect();
    Ok(report)
}

/// Checks the planned states on as many loop devices as there are cores (at most
/// [`MAX_JOBS`]), each worker a contiguous run of them; `each` sees every state's outcome on
/// this thread. Returns the distinct images checked.
fn check_all(
    opts: &CrashFsOptions,
    (log, journal): (&BlockLog, Option<&jbd2::Journal>),
    planned: &Planned,
    reader: Reader<'_>,
    mut each: impl FnMut(usize, check::Outcome),
) -> Result<u64, ExperimentError> {
    // btrfs keeps one registered device per filesystem id: copies are checked one at a time.
    let jobs = if opts.fs.fs_type() == "btrfs" {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_JOBS))
    };
    let chunk = planned.len().div_ceil(jobs).max(1);
    let indices: Vec<usize> = (0..planned.len()).collect();
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        let workers: Vec<_> = indices
            .chunks(chunk)
            .map(|part| {
                let tx = tx.clone();
                s.spawn(move || -> Result<u64, ExperimentError> {
                    let mut checker = Checker::new(
                        opts.fs,
                        log,
                        planned.plain_epochs(),
                        reader,
                        journal.cloned(),
                    )?;
                    let mut builder = planned.builder(log);
                    for &i in part {
                        wait_if_cleaning();
                        let image = planned.image(&mut builder, &mut checker, i);
                        let outcome = checker.check(&image)?;
                        if tx.send((i, outcome)).is_err() {
                            break;
                        }
                    }
                    let n = checker.images_checked;
                    checker.close()?;
                    Ok(n)
                })
            })
            .collect();
        drop(tx);
        for (index, outcome) in rx {
            each(index, outcome);
        }
        let mut images = 0;
        for w in workers {
            images += w.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        }
        Ok(images)
    })
}

/// The recorded run's workload, prepared before the log starts.
enum Runner {
    Sqlite(rusqlite::Connection),
    Postmark(Expected),
}

impl Runner {
    fn prepare(opts: &CrashFsOptions, dir: &Path) -> Result<Runner, ExperimentError> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            ExperimentError::CrashStates(format!("{what}: {e}"))
        };
        match opts.workload {
            FsWorkload::Sqlite => {
                let conn = workload::open(dir, opts.setup())
                    .map_err(|e| fail("opening the database", &e))?;
                workload::prepare(&conn).map_err(|e| fail("creating the schema", &e))?;
                Ok(Runner::Sqlite(conn))
            }
            FsWorkload::Postmark => {
                let e = Expected::new(opts.transactions, opts.seed);
                postmark::prepare(dir, &e).map_err(|err| fail("making the file pool", &err))?;
                Ok(Runner::Postmark(e))
            }
        }
    }

    fn transaction(&mut self, dir: &Path, i: u64) -> Result<(), ExperimentError> {
        let failed = |e: &dyn std::fmt::Display| {
            ExperimentError::CrashStates(format!("transaction {i}: {e}"))
        };
        match self {
            Runner::Sqlite(conn) => workload::transaction(conn, i).map_err(|e| failed(&e)),
            Runner::Postmark(e) => postmark::transaction(dir, e, i).map_err(|e| failed(&e)),
        }
    }
}

/// A SIGINT/SIGTERM cleanup is releasing what this run made and will exit the process with
/// 128 + signal: what fails now fails because of it, and must not be reported as the run's
/// own result.
fn wait_if_cleaning() {
    while joj_linux::cleanup::cleaning() {
        std::thread::park();
    }
}

fn io_err(what: String) -> impl FnOnce(std::io::Error) -> ExperimentError {
    move |source| ExperimentError::Io { what, source }
}

fn load(path: &Path) -> Result<BlockLog, ExperimentError> {
    let f = std::fs::File::open(path).map_err(io_err(format!("opening {}", path.display())))?;
    BlockLog::read_from(f)
        .map_err(|e| ExperimentError::CrashStates(format!("{}: {e}", path.display())))
}

/// Saves the log and the violating states (each with the seed that rebuilds it) in `dir`.
fn save(
    dir: &Path,
    opts: &CrashFsOptions,
    log: &BlockLog,
    found: &[Found],
) -> Result<PathBuf, ExperimentError> {
    std::fs::create_dir_all(dir).map_err(io_err(format!("creating {}", dir.display())))?;
    let stem = match opts.workload {
        FsWorkload::Sqlite => format!("crash-{}-{}", opts.fs, opts.mode),
        FsWorkload::Postmark => format!("crash-{}-postmark", opts.fs),
    };
    let log_path = dir.join(format!("{stem}.blocklog"));
    let tmp = dir.join(format!(".{stem}.blocklog.tmp"));
    let f = std::fs::File::create(&tmp).map_err(io_err(format!("creating {}", tmp.display())))?;
    log.write_to(&f)
        .map_err(|e| ExperimentError::CrashStates(format!("writing {}: {e}", tmp.display())))?;
    f.sync_all()
        .map_err(io_err(format!("syncing {}", tmp.display())))?;
    std::fs::rename(&tmp, &log_path).map_err(io_err(format!("renaming {}", tmp.display())))?;
    let states = serde_json::json!({
        "log": log_path,
        "fs": opts.fs.to_string(),
        "journal": opts.mode.to_string(),
        "seed": opts.seed,
        "states": opts.states,
        "replay": format!(
            "joj crash --fs {} --journal {}{}{}{} --states {} --seed {} --from-log {}",
            opts.fs,
            opts.mode,
            match (opts.workload, opts.emmc_journal) {
                (FsWorkload::Sqlite, false) => "",
                (FsWorkload::Sqlite, true) => " --emmc-journal",
                (FsWorkload::Postmark, false) => " --fs-workload postmark",
                (FsWorkload::Postmark, true) => " --fs-workload postmark --emmc-journal",
            },
            opts.canary.map_or(String::new(), |c| format!(" --fs-canary {}", c.name())),
            if opts.sync == workload::StockSync::Full {
                String::new()
            } else {
                format!(" --synchronous {}", opts.sync.name())
            },
            opts.states,
            opts.seed,
            log_path.display()
        ),
        "found": found,
    });
    let json_path = dir.join(format!("{stem}-violations.json"));
    std::fs::write(
        &json_path,
        serde_json::to_string_pretty(&states).expect("serializable"),
    )
    .map_err(io_err(format!("writing {}", json_path.display())))?;
    Ok(json_path)
}

fn summarize(log: &BlockLog, epochs: usize, s: &mut LogSummary) {
    for op in &log.ops {
        match op {
            LogOp::Write { data, .. } => {
                s.writes += 1;
                s.write_bytes += data.len() as u64;
            }
            LogOp::Flush => s.flushes += 1,
            LogOp::Mark(_) => {}
        }
    }
    s.epochs = epochs as u64;
}

/// The recorded run: mkfs, mount and the schema outside the log; then `transactions`
/// transactions with their marks, the connection's close (a WAL checkpoint) and a final
/// `syncfs`, every block write and flush logged, and traced through tracefs too.
fn record(opts: &CrashFsOptions) -> Result<(BlockLog, LogSummary), ExperimentError> {
    let started = Instant::now();
    let disk = RecordingDisk::create(Path::new(joj_linux::scratch::RUN_DIR))
        .map_err(|e| ExperimentError::CrashStates(format!("the recording disk: {e}")))?;
    let fs = ScratchFs::create(
        opts.fs,
        ScratchOptions {
            size_bytes: opts.fs.min_size_bytes().max(64 << 20),
            image_dir: Some(disk.dir().to_path_buf()),
            ..ScratchOptions::default()
        },
    )
    .map_err(joj_linux::Error::from)?;
    let dir = fs.mount_path().join("joj");
    std::fs::create_dir_all(&dir).map_err(io_err(format!("creating {}", dir.display())))?;
    let mut runner = Runner::prepare(opts, &dir)?;
    fs.sync().map_err(joj_linux::Error::from)?;
    let tracer = BlockTracer::start(&fs.dev_ids(), 64 * 1024).map_err(joj_linux::Error::from)?;
    disk.start_log(&fs.main_device().image)
        .map_err(|e| ExperimentError::CrashStates(format!("starting the log: {e}")))?;
    let mut ran = Ok(());
    for i in 1..=opts.transactions {
        disk.mark(Mark::Begun(i));
        if let Err(e) = runner.transaction(&dir, i) {
            ran = Err(e);
            break;
        }
        disk.mark(Mark::Acknowledged(i));
    }
    drop(runner);
    let synced = fs.sync();
    let log = disk
        .take_log()
        .map_err(|e| ExperimentError::CrashStates(format!("taking the log: {e}")));
    let traced = tracer.stop().map_err(joj_linux::Error::from);
    ran?;
    synced.map_err(joj_linux::Error::from)?;
    let (log, traced) = (log?, traced?);
    fs.close().map_err(joj_linux::Error::from)?;
    disk.close()
        .map_err(|e| ExperimentError::CrashStates(format!("closing the recording disk: {e}")))?;
    let writes = traced.requests.iter().filter(|r| r.op == Op::Write);
    let summary = LogSummary {
        traced_write_bytes: Some(writes.map(|r| r.bytes()).sum()),
        traced_flushes: Some(traced.requests.iter().filter(|r| r.is_flush()).count() as u64),
        record_s: started.elapsed().as_secs_f64(),
        ..LogSummary::default()
    };
    Ok((log, summary))
}
