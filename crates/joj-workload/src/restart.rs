//! Restart time after a power cut (the X-FTL paper's Table 5): how long SQLite takes to make its
//! database usable again in each mode, every mode on the same device profile.
//!
//! Each run loads the synthetic workload, runs it up to a transaction drawn from the seed and
//! cuts the power inside that transaction's commit:
//! - rollback modes (`delete`, `truncate`, `persist`) on a scratch ext4: right after SQLite's sync
//!   of the database, when the journal is synced and still hot — the state that makes the restart
//!   copy pages back from the journal (the paper's "about ten pages");
//! - `wal` on ext4: right after the sync of the commit's WAL frames, so the restart finds every
//!   frame since the last checkpoint;
//! - `xftl`: at a device command drawn from the seed among the transaction's first ones, with
//!   the command under way torn.
//!
//! An ext4 power cut is a crash copy of the loop images ([`ScratchFs::crash_copy`]): what the
//! loop devices had written, nothing the kernel still held in its caches. The restart mounts the
//! copy (ext4 replays its journal: traced, reported, not counted, as in the paper), opens the
//! database and runs its first statement (SQLite rolls back a hot journal or rebuilds the WAL
//! index here) and, in WAL mode, checkpoints (the paper's WAL restart copies the log's pages
//! into the database). Those windows are traced and replayed through the profile, with every
//! page they read written to the replay device first. For `xftl` the device itself is
//! recovered: the FTL's own recovery and the file layer's mount are reported and not counted
//! (the paper leaves out the FTL's and the filesystem's), while loading the commit table and
//! SQLite's first statement, timed by the device, are.
//!
//! Every restart is checked: `PRAGMA integrity_check`, and the database holds exactly the
//! acknowledged transactions or, when the cut came after the commit was durable, one more.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use joj_device::{BlockDevice, Emmc, Profile, ReplayOptions, replay_with};
use joj_linux::{BlockTracer, FsKind, ScratchError, ScratchFs, ScratchOptions};
use joj_trace::{FileRole, TraceRecord};
use joj_vfs::{FileEvent, FileObserver, VFS_NAME};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::WorkloadError;
use crate::config::{DbWorkload, JournalMode};
use crate::db::{self, sql_err};
use crate::paper::{self, Driver, PaperWorkload, Summary};
use crate::run::lock;
use crate::xftl::{XFTL_VFS_NAME, XftlOptions};

/// What to measure.
#[derive(Debug, Clone)]
pub struct RestartOptions {
    /// The workload the cut interrupts; the synthetic one (the paper's Table 5 setup).
    pub workload: PaperWorkload,
    pub modes: Vec<JournalMode>,
    pub profile: Profile,
    /// The run the cut interrupts: the cut comes in a transaction drawn from `1..=transactions`.
    pub transactions: u64,
    /// Power cuts per mode (the paper averaged five).
    pub runs: u32,
    pub page_size: u32,
    pub seed: u64,
    /// Filesystem of the non-xftl modes.
    pub fs: FsKind,
    pub image_size_bytes: u64,
    pub trace_buffer_kb: u32,
}

/// One power cut and restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestartRun {
    /// The transaction the cut interrupted (1-based).
    pub crash_in_txn: u64,
    /// Commits acknowledged before the cut.
    pub acknowledged: u64,
    /// Transactions the restarted database holds (`acknowledged`, or one more).
    pub recovered: u64,
    /// Size of SQLite's log in the crashed image: the hot rollback journal or the WAL (ext4),
    /// 0 for xftl.
    pub log_bytes: u64,
    /// WAL only: frames the recovered WAL held (the checkpoint's `log` count; the file itself
    /// keeps its largest size across checkpoints).
    pub wal_frames: Option<u64>,
    /// X-FTL commit-table entries the device recovery applied (xftl only).
    pub xl2p_entries_applied: u64,
    /// The restart as the paper counts it: `first_access_ms` + `checkpoint_ms` +
    /// `xl2p_load_ms`.
    pub restart_ms: f64,
    /// Opening the database and its first statement (a hot journal's rollback, the WAL index's
    /// rebuild), modeled.
    pub first_access_ms: f64,
    /// WAL only: the checkpoint that copies the log into the database, modeled.
    pub checkpoint_ms: Option<f64>,
    /// xftl only: loading the commit table during device recovery, modeled.
    pub xl2p_load_ms: Option<f64>,
    /// Device requests in the counted windows.
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    /// Reported, not counted (as in the paper): the filesystem's mount (ext4's journal
    /// replay), or for xftl the FTL's own recovery and the file layer's mount.
    pub not_counted_ms: NotCounted,
}

/// The parts of a restart every mode pays alike, which the paper leaves out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotCounted {
    /// ext4: the mount of the crashed image, with its journal replay, modeled.
    pub fs_mount_ms: Option<f64>,
    /// xftl: the device's whole recovery (mapping checkpoint, scan, and the commit table's
    /// load, which `xl2p_load_ms` counts).
    pub device_recovery_ms: Option<f64>,
    /// xftl: the file layer's mount (superblock and inode pages).
    pub file_layer_mount_ms: Option<f64>,
}

/// Every run of one mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestartRow {
    pub mode: String,
    pub mean_restart_ms: f64,
    pub runs: Vec<RestartRun>,
}

/// The document `joj restart --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestartReport {
    pub profile: String,
    pub workload: String,
    pub pages_per_txn: Option<u32>,
    pub transactions: u64,
    pub page_size: u32,
    pub seed: u64,
    pub fs: String,
    pub rows: Vec<RestartRow>,
}

/// Run `opts.runs` power cuts and restarts for every mode; `on_run` hears of each as it ends.
pub fn measure(
    opts: &RestartOptions,
    mut on_run: impl FnMut(&str, &RestartRun),
) -> Result<RestartReport, WorkloadError> {
    let PaperWorkload::XftlSynthetic { pages_per_txn, .. } = opts.workload else {
        return Err(WorkloadError::Config(
            "joj restart measures the synthetic workload (--workload xftl-synthetic), the \
             paper's Table 5 setup"
                .into(),
        ));
    };
    if opts.transactions == 0 || opts.runs == 0 {
        return Err(WorkloadError::Config(
            "joj restart needs -n and --runs of at least 1".into(),
        ));
    }
    // One draw per run, shared by every mode: the same transaction is interrupted in each.
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let cuts: Vec<(u64, u64, u64)> = (0..opts.runs)
        .map(|_| {
            (
                rng.random_range(1..=opts.transactions),
                // xftl: the cut comes at one of the transaction's first k + 1 device commands
                // (its pages and page 1), so it always lands inside the transaction.
                rng.random_range(0..=u64::from(pages_per_txn)),
                rng.random(),
            )
        })
        .collect();
    let mut rows = Vec::new();
    for &mode in &opts.modes {
        let mut runs = Vec::new();
        for &(crash_in, budget, cut_seed) in &cuts {
            let run = match mode {
                JournalMode::Xftl => xftl_run(opts, crash_in, budget, cut_seed)?,
                JournalMode::Wal
                | JournalMode::Delete
                | JournalMode::Truncate
                | JournalMode::Persist => fs_run(opts, mode, crash_in)?,
                other => {
                    return Err(WorkloadError::Config(format!(
                        "joj restart measures delete, truncate, persist, wal and xftl; {} has no \
                         log to recover from (or is not crash-safe)",
                        other.pragma()
                    )));
                }
            };
            on_run(mode_name(mode), &run);
            runs.push(run);
        }
        rows.push(RestartRow {
            mode: mode_name(mode).to_string(),
            mean_restart_ms: runs.iter().map(|r| r.restart_ms).sum::<f64>() / runs.len() as f64,
            runs,
        });
    }
    Ok(RestartReport {
        profile: opts.profile.name.clone(),
        workload: opts.workload.name().to_string(),
        pages_per_txn: Some(pages_per_txn),
        transactions: opts.transactions,
        page_size: opts.page_size,
        seed: opts.seed,
        fs: opts.fs.to_string(),
        rows,
    })
}

fn mode_name(mode: JournalMode) -> &'static str {
    match mode {
        JournalMode::Xftl => "xftl",
        JournalMode::Wal => "wal",
        JournalMode::Delete => "delete",
        JournalMode::Truncate => "truncate",
        JournalMode::Persist => "persist",
        _ => "other",
    }
}

fn workload(opts: &RestartOptions, journal: JournalMode) -> DbWorkload {
    DbWorkload {
        journal,
        transactions: opts.transactions,
        page_size: opts.page_size,
        seed: opts.seed,
        paper: Some(opts.workload),
        ..DbWorkload::default()
    }
}

/// What the database holds after the first `n` and the first `n + 1` transactions of the run:
/// the same driver on SQLite's in-memory database, in one pass. ([`paper::reference_summaries`]
/// gives every prefix, at a check per transaction: too slow for a cut late in the run.)
fn states_at(opts: &RestartOptions, n: u64) -> Result<[Summary; 2], WorkloadError> {
    let conn = Connection::open_in_memory().map_err(sql_err("opening an in-memory database"))?;
    paper::prepare(&conn, &opts.workload, opts.seed)?;
    let mut driver = Driver::new(&opts.workload, opts.seed)?;
    for _ in 0..n {
        driver.transaction(&conn)?;
    }
    let before = paper::check(&conn, &opts.workload)?;
    driver.transaction(&conn)?;
    Ok([before, paper::check(&conn, &opts.workload)?])
}

/// Check the restarted database and say how many transactions it holds.
fn recovered(
    opts: &RestartOptions,
    conn: &Connection,
    path: &Path,
    acknowledged: u64,
) -> Result<u64, WorkloadError> {
    let answer: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .map_err(sql_err("PRAGMA integrity_check after the restart"))?;
    if answer != "ok" {
        return Err(WorkloadError::Integrity {
            path: path.to_path_buf(),
            answer,
        });
    }
    let found = paper::check(conn, &opts.workload)?;
    let [before, after] = states_at(opts, acknowledged)?;
    if found == before {
        return Ok(acknowledged);
    }
    if found == after {
        return Ok(acknowledged + 1);
    }
    Err(WorkloadError::Mismatch {
        what: format!(
            "database after a power cut in transaction {}",
            acknowledged + 1
        ),
        expected: format!(
            "the state after {acknowledged} or {} transactions",
            acknowledged + 1
        ),
        found: found.to_string(),
    })
}

/// The first statement after a restart, the same in every mode: it reads the schema, which is
/// when SQLite looks for a hot journal or a WAL to recover.
const FIRST_STATEMENT: &str = "SELECT count(*) FROM sqlite_schema";

fn first_access(conn: &Connection) -> Result<(), WorkloadError> {
    conn.query_row(FIRST_STATEMENT, [], |_| Ok(()))
        .map_err(sql_err("the first statement after the restart"))
}

/// Modeled device time of a traced window, in ms, with its read, write and flush counts.
fn modeled(
    records: &[TraceRecord],
    profile: &Profile,
) -> Result<(f64, u64, u64, u64), WorkloadError> {
    let opts = ReplayOptions {
        partitions: true,
        prefill_reads: true,
        ..ReplayOptions::default()
    };
    let r = replay_with(records, profile, &opts)?;
    Ok((r.modeled_s * 1e3, r.reads, r.writes, r.flushes))
}

/// Makes the crash copy at the first event `at` after it is set as the VFS's observer.
struct CrashCopyAt {
    fs: Arc<ScratchFs>,
    at: (FileEvent, FileRole),
    options: ScratchOptions,
    copy: Mutex<Option<Result<ScratchFs, ScratchError>>>,
}

impl FileObserver for CrashCopyAt {
    fn file_event(&self, event: FileEvent, _path: &Path, role: FileRole, _fd: Option<i32>) {
        if (event, role) != self.at {
            return;
        }
        let mut copy = lock(&self.copy);
        if copy.is_none() {
            *copy = Some(self.fs.crash_copy(&self.options));
        }
    }
}

fn trace(
    devs: &[String],
    buffer_kb: u32,
    f: impl FnOnce() -> Result<(), WorkloadError>,
) -> Result<Vec<TraceRecord>, WorkloadError> {
    let tracer = BlockTracer::start(devs, buffer_kb).map_err(joj_linux::Error::from)?;
    let done = f();
    let captured = tracer.stop().map_err(joj_linux::Error::from);
    done?;
    Ok(captured?.requests)
}

/// A rollback or WAL mode on a scratch filesystem.
fn fs_run(
    opts: &RestartOptions,
    mode: JournalMode,
    crash_in: u64,
) -> Result<RestartRun, WorkloadError> {
    joj_linux::install_cleanup_handler().map_err(|e| {
        WorkloadError::Config(format!("cannot install the Ctrl-C cleanup handler: {e}"))
    })?;
    let w = workload(opts, mode);
    let scratch = ScratchOptions {
        size_bytes: opts.image_size_bytes,
        ..ScratchOptions::default()
    };
    let fs = Arc::new(ScratchFs::create(opts.fs, scratch.clone()).map_err(joj_linux::Error::from)?);
    let dir = fs.mount_path().join("joj");
    std::fs::create_dir_all(&dir).map_err(|source| WorkloadError::Io {
        what: format!("creating {}", dir.display()),
        source,
    })?;
    let vfs = joj_vfs::register()?;
    vfs.set_sync_call(w.sync_call);
    db::prepare(&dir, &w, VFS_NAME)?;
    let cut = Arc::new(CrashCopyAt {
        fs: fs.clone(),
        at: if mode == JournalMode::Wal {
            (FileEvent::AfterSync, FileRole::Wal)
        } else {
            (FileEvent::AfterSync, FileRole::Database)
        },
        options: scratch,
        copy: Mutex::new(None),
    });
    let ran = (|| {
        let conn = db::connect(&dir, &w, 0, VFS_NAME)?;
        let mut driver = Driver::new(&opts.workload, opts.seed)?;
        for _ in 1..crash_in {
            driver.transaction(&conn)?;
        }
        vfs.set_observer(Some(cut.clone() as Arc<dyn FileObserver>));
        driver.transaction(&conn).map(|_| ())
    })();
    // Also on the error paths: the observer holds the filesystem, which must be closed.
    vfs.set_observer(None);
    let copy = lock(&cut.copy).take();
    drop(cut);
    let closed = Arc::try_unwrap(fs)
        .map_err(|_| WorkloadError::Config("the scratch filesystem is still shared".into()))
        .and_then(|fs| fs.close().map_err(|e| joj_linux::Error::from(e).into()));
    ran?;
    closed?;
    let mut copy = copy
        .ok_or_else(|| {
            WorkloadError::Config(format!(
                "the power cut never came: transaction {crash_in} made no sync of its {}",
                if mode == JournalMode::Wal {
                    "WAL"
                } else {
                    "database"
                }
            ))
        })?
        .map_err(joj_linux::Error::from)?;
    let restarted = restart_fs(opts, &w, mode, crash_in, &mut copy);
    let closed = copy.close().map_err(joj_linux::Error::from);
    let run = restarted?;
    closed?;
    Ok(run)
}

fn restart_fs(
    opts: &RestartOptions,
    w: &DbWorkload,
    mode: JournalMode,
    crash_in: u64,
    copy: &mut ScratchFs,
) -> Result<RestartRun, WorkloadError> {
    let devs = copy.dev_ids();
    let buffer = opts.trace_buffer_kb;
    let mount = trace(&devs, buffer, || {
        copy.mount().map_err(|e| joj_linux::Error::from(e).into())
    })?;
    let dir = copy.mount_path().join("joj");
    let db_path = db::database_paths(&dir, w, 0).remove(0);
    let log_path = PathBuf::from(format!(
        "{}{}",
        db_path.display(),
        if mode == JournalMode::Wal {
            "-wal"
        } else {
            "-journal"
        }
    ));
    let log_bytes = std::fs::metadata(&log_path).map_or(0, |m| m.len());
    let mut conn = None;
    let first = trace(&devs, buffer, || {
        let c = db::connect(&dir, w, 0, VFS_NAME)?;
        first_access(&c)?;
        conn = Some(c);
        Ok(())
    })?;
    let conn = conn.expect("set by the traced window");
    let mut wal_frames = None;
    let checkpoint = if mode == JournalMode::Wal {
        Some(trace(&devs, buffer, || {
            // (busy, frames in the log, frames checkpointed); TRUNCATE would answer for the
            // log after it was reset, so copy first, then truncate.
            let (busy, log, done): (i64, i64, i64) = conn
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .map_err(sql_err("checkpointing the recovered WAL"))?;
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .map_err(sql_err("truncating the recovered WAL"))?;
            if busy != 0 || log != done {
                return Err(WorkloadError::Mismatch {
                    what: "the checkpoint after the restart".into(),
                    expected: "every frame checkpointed".into(),
                    found: format!("busy {busy}, {done} of {log} frames"),
                });
            }
            wal_frames = Some(log.max(0) as u64);
            Ok(())
        })?)
    } else {
        None
    };
    let acknowledged = crash_in - 1;
    let recovered = recovered(opts, &conn, &db_path, acknowledged)?;
    drop(conn);
    let (mount_ms, ..) = modeled(&mount, &opts.profile)?;
    let (first_ms, mut reads, mut writes, mut flushes) = modeled(&first, &opts.profile)?;
    let checkpoint_ms = match &checkpoint {
        Some(records) => {
            let (ms, r, wr, f) = modeled(records, &opts.profile)?;
            (reads, writes, flushes) = (reads + r, writes + wr, flushes + f);
            Some(ms)
        }
        None => None,
    };
    Ok(RestartRun {
        crash_in_txn: crash_in,
        acknowledged,
        recovered,
        log_bytes,
        wal_frames,
        xl2p_entries_applied: 0,
        restart_ms: first_ms + checkpoint_ms.unwrap_or(0.0),
        first_access_ms: first_ms,
        checkpoint_ms,
        xl2p_load_ms: None,
        reads,
        writes,
        flushes,
        not_counted_ms: NotCounted {
            fs_mount_ms: Some(mount_ms),
            ..NotCounted::default()
        },
    })
}

/// `xftl` on a fresh device of the profile.
fn xftl_run(
    opts: &RestartOptions,
    crash_in: u64,
    budget: u64,
    cut_seed: u64,
) -> Result<RestartRun, WorkloadError> {
    let w = workload(opts, JournalMode::Xftl);
    let xo = XftlOptions::for_run(&opts.profile, None, opts.page_size, opts.seed);
    let v = crate::xftl::fresh_device(&xo)?;
    let result = (|| {
        let dir = PathBuf::from("/joj-xftl");
        db::prepare(&dir, &w, XFTL_VFS_NAME)?;
        let conn = db::connect(&dir, &w, 0, XFTL_VFS_NAME)?;
        let mut driver = Driver::new(&opts.workload, opts.seed)?;
        for _ in 1..crash_in {
            driver.transaction(&conn)?;
        }
        v.with_fs(|fs| fs.device_mut().cut_power_after(Some(budget)));
        if driver.transaction(&conn).is_ok() {
            return Err(WorkloadError::Config(format!(
                "the power cut never came: transaction {crash_in} finished within {budget} \
                 device commands"
            )));
        }
        drop(conn);
        let fs = v
            .detach()
            .map_err(|e| WorkloadError::Config(e.to_string()))?;
        // Power goes as the command after the budget is issued; what was in flight is torn.
        let cut = fs.into_device().power_loss(0, cut_seed);
        let dev_err = |what: &'static str| {
            move |e: joj_device::DeviceError| WorkloadError::Config(format!("{what}: {e}"))
        };
        let (dev, report) =
            Emmc::recover(cut, &opts.profile).map_err(dev_err("device recovery"))?;
        dev.ftl().check_invariants();
        let before_mount = dev.now_ns();
        let fs = joj_atomic::FlashFs::mount(dev)
            .map_err(|e| WorkloadError::Config(format!("mounting the file layer: {e}")))?;
        let mount_ns = fs.device().now_ns() - before_mount;
        v.attach(fs)
            .map_err(|e| WorkloadError::Config(e.to_string()))?;
        v.with_fs(|fs| fs.device_mut().reset_counters());
        let conn = db::connect(&dir, &w, 0, XFTL_VFS_NAME)?;
        first_access(&conn)?;
        let c = v
            .with_fs(|fs| fs.device().counters())
            .ok_or_else(|| WorkloadError::Config("no device attached".into()))?;
        let acknowledged = crash_in - 1;
        let db_path = db::database_paths(&dir, &w, 0).remove(0);
        let recovered = recovered(opts, &conn, &db_path, acknowledged)?;
        drop(conn);
        let first_ms = c.modeled_s * 1e3;
        let xl2p_ms = report.xl2p_load_ns as f64 / 1e6;
        Ok(RestartRun {
            crash_in_txn: crash_in,
            acknowledged,
            recovered,
            log_bytes: 0,
            wal_frames: None,
            xl2p_entries_applied: report.xl2p_entries_applied,
            restart_ms: first_ms + xl2p_ms,
            first_access_ms: first_ms,
            checkpoint_ms: None,
            xl2p_load_ms: Some(xl2p_ms),
            reads: c.host_read_requests,
            writes: c.host_write_requests,
            flushes: c.flushes,
            not_counted_ms: NotCounted {
                device_recovery_ms: Some(report.modeled_ns as f64 / 1e6),
                file_layer_mount_ms: Some(mount_ns as f64 / 1e6),
                ..NotCounted::default()
            },
        })
    })();
    let _ = v.detach();
    result
}
