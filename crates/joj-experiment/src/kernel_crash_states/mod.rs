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
pub mod confined;
pub mod error;
pub mod from_log;
pub mod jbd2;
pub mod kept;
pub mod mount;
pub mod options;
pub mod part_bounds;
pub mod part_run;
pub mod planned;
pub mod postmark;
pub mod report;
pub mod save;
pub mod shard;
pub mod share;
pub mod states;
pub mod tally;
pub mod workload;

pub use options::{CrashFsOptions, FsWorkload, MAX_STATES, MAX_TRANSACTIONS};
pub use report::{Coverage, CrashFsReport, Found, LogSummary};
pub use shard::{Part, merge};
pub use share::Shard;

use std::path::{Path, PathBuf};
use std::time::Instant;

use joj_linux::cleanup::wait_if_cleaning;
use joj_linux::record::{BlockLog, LogOp, Mark, RecordingDisk};
use joj_linux::{BlockTracer, ScratchFs, ScratchOptions};
use joj_trace::Op;

use crate::error::ExperimentError;
use check::{Checker, Reader, judge};
use error::CrashFsError;
use planned::Planned;
use postmark::Expected;
use serde::{Deserialize, Serialize};
use shard::{LogRef, ShardState};
use tally::StateDetail;
use workload::{Canary, Window};

/// Most loop devices checking states at once.
const MAX_JOBS: usize = 2;

// A run of the most transactions, flushing ten times for each, can be planned.
const _: () = assert!(states::MAX_EPOCHS as u64 >= 10 * MAX_TRANSACTIONS);
// The journal's bound on its device is the saved log's.
const _: () =
    assert!(jbd2::MAX_DEVICE_BLOCKS * joj_linux::record::BLOCK_BYTES == from_log::MAX_DEVICE_BYTES);

/// What a run leaves to save after it reports: its log and its violating states.
pub struct Evidence {
    log: BlockLog,
    found: Vec<Found>,
}

impl Evidence {
    /// Saves the evidence as `opts` ask (`--save-dir`, `--save-log`; see [`save`]), replacing
    /// earlier files only with `force`: where the log and the violating states went. Nothing to
    /// do without `--save-dir`.
    pub fn save(&self, opts: &CrashFsOptions, force: bool) -> Result<save::Saved, CrashFsError> {
        let Some(dir) = &opts.save_dir else {
            return Ok(save::Saved::default());
        };
        save::save(dir, opts, &self.log, &self.found, force)
    }
}

/// A recorded log, made for checking elsewhere (`--record-only`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedLog {
    pub fs: String,
    pub mode: String,
    pub transactions: u64,
    pub seed: u64,
    pub log: LogSummary,
    pub saved_log: Option<PathBuf>,
}

/// Records a run and returns its summary and its log, to save (`--record-only`); no state is
/// checked.
pub fn record_only(opts: &CrashFsOptions) -> Result<(RecordedLog, Evidence), ExperimentError> {
    opts.validate()?;
    joj_linux::install_cleanup_handler()?;
    joj_linux::leftovers::sweep_and_report();
    let (log, mut summary) = record(opts).inspect_err(|_| wait_if_cleaning())?;
    summarize(
        &log,
        1 + log
            .ops
            .iter()
            .filter(|op| matches!(op, LogOp::Flush))
            .count(),
        &mut summary,
    );
    let recorded = RecordedLog {
        fs: opts.fs.to_string(),
        mode: mode_name(opts),
        transactions: opts.transactions,
        seed: opts.seed,
        log: summary,
        saved_log: None,
    };
    let evidence = Evidence {
        log,
        found: Vec::new(),
    };
    Ok((recorded, evidence))
}

/// A run made ready to check: its log, its plan, and the report as far as the plan decides it.
struct Prepared {
    log: BlockLog,
    log_ref: Option<LogRef>,
    planned: Planned,
    /// The image's jbd2 journal, when it has one that was found.
    journal: Option<jbd2::Journal>,
    report: CrashFsReport,
    expected: Option<Expected>,
}

/// Records (or loads) and plans.
fn prepare(opts: &CrashFsOptions) -> Result<Prepared, ExperimentError> {
    opts.validate()?;
    joj_linux::install_cleanup_handler()?;
    joj_linux::leftovers::sweep_and_report();
    let (log, log_ref, mut summary, image_checked) = match &opts.from_log {
        Some(path) => {
            let (log, log_ref) = from_log::load_with_ref(path)?;
            from_log::check(path, &log, opts)?;
            let begun = begun(&log);
            if begun > MAX_TRANSACTIONS {
                return Err(CrashFsError::TooManyTransactions {
                    begun,
                    max: MAX_TRANSACTIONS,
                }
                .into());
            }
            let checked = from_log::check_image_before_mount(path, opts.fs, &log)?;
            // What tracefs counted when the log was recorded, as the log says.
            let id = from_log::LogIdentity::of(path, &log.labels)?;
            let summary = LogSummary {
                traced_write_bytes: id.traced_write_bytes,
                traced_flushes: id.traced_flushes,
                ..LogSummary::default()
            };
            (log, Some(log_ref), summary, Some(checked))
        }
        None => {
            let (log, summary) = record(opts).inspect_err(|_| wait_if_cleaning())?;
            (log, None, summary, None)
        }
    };
    let transactions = begun(&log);
    // The PostMark-like files depend on the recorded run's seed, which a labelled log keeps.
    let workload_seed = from_log::LogIdentity::of(Path::new(""), &log.labels)
        .ok()
        .and_then(|id| id.seed)
        .unwrap_or(opts.seed);
    let expected =
        (opts.workload == FsWorkload::Postmark).then(|| Expected::new(transactions, workload_seed));
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
    let report = skeleton(opts, &planned, transactions, summary, image_checked);
    Ok(Prepared {
        log,
        log_ref,
        planned,
        journal: journal.and_then(Result::ok),
        report,
        expected,
    })
}

/// Transactions `log` marks as begun.
fn begun(log: &BlockLog) -> u64 {
    (log.ops.iter())
        .filter(|o| matches!(o, LogOp::Mark(Mark::Begun(_))))
        .count() as u64
}

fn mode_name(opts: &CrashFsOptions) -> String {
    match opts.workload {
        FsWorkload::Sqlite => opts.mode.to_string(),
        FsWorkload::Postmark => "postmark (files, fsync)".into(),
    }
}

/// The report as far as the plan decides it: every check field empty.
fn skeleton(
    opts: &CrashFsOptions,
    planned: &Planned,
    transactions: u64,
    log: LogSummary,
    image_checked_before_mount: Option<String>,
) -> CrashFsReport {
    CrashFsReport {
        fs: opts.fs.to_string(),
        mode: mode_name(opts),
        workload: opts.workload,
        canary: opts.canary,
        synchronous: match opts.mode {
            _ if opts.workload == FsWorkload::Postmark => "fsync".into(),
            _ if opts.canary == Some(Canary::SyncOff) => "OFF".into(),
            _ => opts.sync.name().to_ascii_uppercase(),
        },
        // The PostMark-like workload fsyncs every transaction: durable whatever the SQLite mode.
        window: match opts.workload {
            FsWorkload::Sqlite => Window::of(opts.mode, opts.canary, opts.sync),
            FsWorkload::Postmark => Window::Durable,
        },
        transactions,
        seed: opts.seed,
        log,
        emmc_journal: planned.coalition(),
        states_explored: planned.len() as u64,
        exhaustive: planned.exhaustive(),
        states_by_kind: planned.kinds(),
        coverage: planned.coverage().map(Coverage::of),
        images_checked: 0,
        judged_as: opts.judge_as,
        violations: 0,
        lost_acknowledged: 0,
        broken: 0,
        unmountable: 0,
        fsck_failures: 0,
        largest_loss: 0,
        losing_acknowledged: 0,
        image_checked_before_mount,
        mount: None,
        check_s: 0.0,
        states_per_s: 0.0,
        found: Vec::new(),
        saved: None,
        saved_log: None,
    }
}

/// Records (or loads), plans and checks; `on_state` sees each state's index as it is checked.
/// Returns the report and the evidence to save ([`Evidence::save`], after the report is shown).
pub fn run(
    opts: &CrashFsOptions,
    mut on_planned: impl FnMut(u64),
    on_state: impl FnMut(usize, Option<&Found>),
) -> Result<(CrashFsReport, Evidence), ExperimentError> {
    let p = prepare(opts)?;
    on_planned(p.planned.len() as u64);
    let started = Instant::now();
    let checked = check_share(opts, &p, 0..p.planned.len(), on_state)?;
    let mut report = p.report;
    let found = tally::tally(
        &mut report,
        p.journal.as_ref(),
        checked.iter().map(ShardState::as_checked),
    )?;
    report.check_s = started.elapsed().as_secs_f64();
    report.states_per_s = report.states_explored as f64 / report.check_s.max(1e-9);
    let evidence = Evidence { log: p.log, found };
    Ok((report, evidence))
}

/// Loads the saved log, plans, and checks the share `opts.shard` names: the part for `joj
/// crash merge` (docs/formats/crash-part.md).
pub fn run_shard(
    opts: &CrashFsOptions,
    mut on_planned: impl FnMut(u64),
    on_state: impl FnMut(usize, Option<&Found>),
) -> Result<Part, ExperimentError> {
    let shard = opts.shard.unwrap_or(Shard { k: 1, n: 1 });
    let p = prepare(opts)?;
    let range = shard.range(p.planned.len());
    on_planned(range.len() as u64);
    let started = Instant::now();
    let checked = check_share(opts, &p, range.clone(), on_state)?;
    let check_s = started.elapsed().as_secs_f64();
    let log_ref = p.log_ref.ok_or(CrashFsError::ShardNeedsLog {
        shard: shard.to_string(),
    })?;
    Ok(Part::new(
        shard, log_ref, p.report, p.journal, range, checked, check_s,
    ))
}

impl ShardState {
    fn as_checked(&self) -> tally::Checked<'_> {
        tally::Checked {
            index: self.index,
            image: self.image,
            outcome: &self.outcome,
            acknowledged: self.acknowledged,
            begun: self.begun,
            detail: self.detail.as_ref(),
        }
    }
}

/// Checks the planned states in `range`, in index order; `on_state` sees each one with what it
/// would violate against the run's judgement.
fn check_share(
    opts: &CrashFsOptions,
    p: &Prepared,
    range: std::ops::Range<usize>,
    mut on_state: impl FnMut(usize, Option<&Found>),
) -> Result<Vec<ShardState>, ExperimentError> {
    let planned = &p.planned;
    let allowed_loss = opts.judge_as.allowed_loss(p.report.window);
    let reader = opts.reader(p.expected.as_ref());
    let mut out = Vec::with_capacity(range.len());
    check_all(
        opts,
        (&p.log, p.journal.as_ref()),
        planned,
        range,
        reader,
        |index, image, outcome| {
            let (acknowledged, begun) = planned.bounds(index);
            let detail = StateDetail::needed(&outcome, acknowledged, begun).then(|| StateDetail {
                state: planned.state(index),
                description: planned.describe(index),
            });
            let violation = judge(&outcome, acknowledged, begun, allowed_loss);
            let found = (violation.is_some() || outcome.fsck.is_some()).then(|| Found {
                index,
                state: planned.state(index),
                acknowledged,
                begun,
                violation,
                fsck: outcome.fsck.clone(),
                description: planned.describe(index),
            });
            on_state(index, found.as_ref());
            out.push(ShardState {
                index,
                image,
                outcome,
                acknowledged,
                begun,
                detail,
            });
        },
    )
    .inspect_err(|_| wait_if_cleaning())?;
    out.sort_by_key(|s| s.index);
    Ok(out)
}

/// Checks the planned states of `range` on as many loop devices as there are cores (at most
/// [`MAX_JOBS`]), each worker a contiguous run of them; `each` sees every state's image hash
/// and outcome on this thread.
fn check_all(
    opts: &CrashFsOptions,
    (log, journal): (&BlockLog, Option<&jbd2::Journal>),
    planned: &Planned,
    range: std::ops::Range<usize>,
    reader: Reader<'_>,
    mut each: impl FnMut(usize, u64, check::Outcome),
) -> Result<(), ExperimentError> {
    // btrfs keeps one registered device per filesystem id: copies are checked one at a time.
    let jobs = if opts.fs.fs_type() == "btrfs" {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_JOBS))
    };
    let chunk = range.len().div_ceil(jobs).max(1);
    let indices: Vec<usize> = range.collect();
    // A worker that fails (a foreign image, a mount that cannot be undone) stops the others.
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        let workers: Vec<_> = indices
            .chunks(chunk)
            .map(|part| {
                let (tx, stop) = (tx.clone(), &stop);
                s.spawn(move || -> Result<(), ExperimentError> {
                    let mut checker = Checker::new(
                        opts.fs,
                        log,
                        planned.plain_epochs(),
                        reader,
                        journal.cloned(),
                    )?;
                    let mut builder = planned.builder(log);
                    let mut each_state = |i: usize| -> Result<bool, ExperimentError> {
                        wait_if_cleaning();
                        let image = planned.image(&mut builder, &mut checker, i);
                        let (hash, outcome) = checker.check(&image)?.map_err(|escape| {
                            CrashFsError::ForeignImage {
                                state: i,
                                description: planned.describe(i),
                                what: escape.0,
                            }
                        })?;
                        Ok(tx.send((i, hash, outcome)).is_ok())
                    };
                    for &i in part {
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            break;
                        }
                        match each_state(i) {
                            Ok(true) => {}
                            Ok(false) => break,
                            Err(e) => {
                                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                                return Err(e);
                            }
                        }
                    }
                    checker.close()
                })
            })
            .collect();
        drop(tx);
        for (index, hash, outcome) in rx {
            each(index, hash, outcome);
        }
        for w in workers {
            w.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        }
        Ok(())
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

fn io_err(what: String) -> impl FnOnce(std::io::Error) -> ExperimentError {
    move |source| ExperimentError::Io { what, source }
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
    let (mut log, traced) = (log?, traced?);
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
    // The log says what it is, and what tracefs counted of it (a saved log's report repeats it).
    log.labels = from_log::labels(opts);
    for (key, value) in [
        (
            from_log::key::TRACED_WRITE_BYTES,
            summary.traced_write_bytes,
        ),
        (from_log::key::TRACED_FLUSHES, summary.traced_flushes),
    ] {
        if let Some(v) = value {
            log.labels.insert(key.to_string(), v.to_string());
        }
    }
    Ok((log, summary))
}
