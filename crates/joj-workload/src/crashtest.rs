//! Power cuts across the X-FTL paper's workloads on the X-FTL stack (`joj crash`): SQLite on the
//! `xftl` VFS, the flash file layer and the emulated transactional eMMC, cut at random device
//! commands while one of the paper's workloads runs.
//!
//! The database is prepared once (load not cut) and kept as a device image. A first run of
//! `transactions` transactions from that image counts the device commands the run issues. Each
//! trial then starts from the image, arms the device to fail after a command drawn from the seed
//! among those (every later command fails, nothing more reaches the medium), runs the same
//! transactions until the failure, and cuts the power at once or up to `max_delay_ns` later
//! (NAND programs still under way then are torn). Half of the cuts come at once. When the
//! counting run garbage-collected (an aged device), half of the cuts instead fail the command
//! right after one that ran GC, up to `max_delay_ns` later, so that GC's copies and erases are
//! under way when the power goes.
//!
//! After each cut the device recovers from the medium alone, its FTL passes its own
//! consistency check, the file layer mounts, `PRAGMA integrity_check` answers `ok`, and the
//! database equals the state after exactly the acknowledged transactions, or one more when a
//! transaction was under way (its commit may have become durable before the power went). The
//! states come from [`paper::reference_summaries`]: the same transactions on SQLite's in-memory
//! database.
//!
//! Batch commits can be made to fail at random (`fail_batch_one_in`), so SQLite's fallback to
//! a rollback journal is cut too; the paper's workloads also take it on their own (the first
//! transaction of a fresh database, a journal that spills). `canary` runs the same trials on a
//! device that acknowledges a commit before its pages and commit table are durable: a sound
//! test must catch it.
//!
//! Invariants: every random choice comes from `seed`; the trials are independent (each starts
//! from the same image) and a failed trial is reported, not raised; an error of the harness
//! itself (the workload cannot be prepared, the image does not decode) is an `Err`.

use std::path::Path;

use joj_atomic::{FlashFs, XftlCounters, XftlVfs};
use joj_device::{BlockDevice, Emmc, PowerCut, Profile, image};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::WorkloadError;
use crate::config::{DbWorkload, JournalMode};
use crate::db;
use crate::paper::{self, Driver, PaperWorkload, Summary};
use crate::xftl::XftlOptions;

/// Each crash test registers its own VFS (`xftl-crash-N`), so several can run in one process
/// (SQLite keeps registered VFSes for the process's life: a few hundred bytes each).
static NEXT_VFS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What to cut.
#[derive(Debug, Clone)]
pub struct CrashOptions {
    pub workload: PaperWorkload,
    pub profile: Profile,
    /// Transactions each trial runs from the prepared database; the cut comes among their
    /// device commands.
    pub transactions: u64,
    /// Power cuts (trials).
    pub cuts: u64,
    pub page_size: u32,
    pub seed: u64,
    /// One batch commit in this many is made to fail, so SQLite retries it with a rollback
    /// journal (0: none).
    pub fail_batch_one_in: u32,
    /// The device acknowledges commits before they are durable: the trials must catch it.
    pub canary: bool,
    /// Half the cuts come up to this long after the failed command (programs in flight torn).
    pub max_delay_ns: u64,
    /// Age the device first so GC victims hold about this share of valid pages (the paper's
    /// 30/50/70 %), so that cuts also land in garbage collection; `None`: a fresh device.
    pub aging_validity: Option<u32>,
}

impl CrashOptions {
    /// The paper's workload `w` on `profile`, 8 KiB pages, a batch failure in 6, delays up to
    /// 3 ms.
    pub fn new(workload: PaperWorkload, profile: Profile, transactions: u64, cuts: u64) -> Self {
        CrashOptions {
            workload,
            profile,
            transactions,
            cuts,
            page_size: 8192,
            seed: 42,
            fail_batch_one_in: 6,
            canary: false,
            max_delay_ns: 3_000_000,
            aging_validity: None,
        }
    }

    fn validate(&self) -> Result<(), WorkloadError> {
        self.workload.validate().map_err(WorkloadError::Config)?;
        if self.transactions == 0 || self.cuts == 0 {
            return Err(WorkloadError::Config(
                "a crash test needs at least one transaction per trial (-n) and one cut (--cuts)"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// One power cut and what the recovered database held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrashTrial {
    pub trial: u64,
    /// The device failed at this command of the run (0-based).
    pub cut_at_command: u64,
    /// The command before it ran garbage collection (a cut aimed at GC).
    pub after_gc: bool,
    /// Power went this long after the failed command.
    pub delay_ns: u64,
    /// Transactions acknowledged before the failure.
    pub acknowledged: u64,
    /// A transaction was under way when the device failed.
    pub in_flight: bool,
    /// Transactions the recovered database holds (`None` when the trial failed).
    pub recovered: Option<u64>,
    /// NAND pages the recovery found torn.
    pub torn_pages: u64,
    /// X-FTL commit-table entries the recovery applied.
    pub xl2p_entries_applied: u64,
    /// What broke, when something did.
    pub failure: Option<String>,
}

/// The whole test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrashReport {
    pub workload: String,
    pub profile: String,
    pub transactions: u64,
    pub cuts: u64,
    pub seed: u64,
    pub canary: bool,
    pub fail_batch_one_in: u32,
    pub aging_validity: Option<u32>,
    /// Garbage-collection runs the device made in the counting run (the trials make as many
    /// up to their cut), and how many of its commands ran them.
    pub gc_runs_per_run: u64,
    pub gc_commands_per_run: u64,
    /// Device commands of one whole run, the range the cuts are drawn from.
    pub commands_per_run: u64,
    /// Cuts that failed the command right after one that ran GC.
    pub cuts_after_gc: u64,
    pub passed: u64,
    pub failed: u64,
    /// Cuts with a transaction under way whose commit the recovered database holds / lacks.
    pub in_flight_durable: u64,
    pub in_flight_lost: u64,
    pub torn_pages: u64,
    /// The commit paths SQLite took over every trial (and the counting run).
    pub paths: XftlCounters,
    /// The first failed trials (at most 20).
    pub failures: Vec<CrashTrial>,
}

impl CrashReport {
    /// Did the test show what it should: no failure on a sound device, at least one on the
    /// canary?
    pub fn verdict_ok(&self) -> bool {
        if self.canary {
            self.failed > 0
        } else {
            self.failed == 0
        }
    }
}

/// A harness step failed: a configuration error naming the step.
fn cfg<E: std::fmt::Display>(what: &str) -> impl FnOnce(E) -> WorkloadError + '_ {
    move |e| WorkloadError::Config(format!("{what}: {e}"))
}

/// The paper workload as the runner describes it, on the crash VFS.
fn db_workload(opts: &CrashOptions) -> DbWorkload {
    DbWorkload {
        journal: JournalMode::Xftl,
        transactions: opts.transactions,
        page_size: opts.page_size,
        seed: opts.seed,
        paper: Some(opts.workload),
        ..DbWorkload::default()
    }
}

const DIR: &str = "/joj-crash";

/// The prepared database as a device image, cleanly shut down.
fn base_image(vfs: &XftlVfs, opts: &CrashOptions) -> Result<Vec<u8>, WorkloadError> {
    let mut xo = XftlOptions::for_run(
        &opts.profile,
        opts.aging_validity,
        opts.page_size,
        opts.seed,
    );
    // The paper's workloads need a database of tens of MiB, a journal and a temporary file or
    // two: six file slots in at most a sixth of the device leave aging a cold region large
    // enough for any validity, even on a device cut down with `with_blocks_per_plane`.
    xo.fs.slots = 6;
    xo.fs.fs_bytes = xo
        .fs
        .fs_bytes
        .min(opts.profile.capacity_bytes() / 6)
        .min(384 << 20);
    vfs.attach(crate::xftl::formatted_device(&xo)?)
        .map_err(cfg("attaching"))?;
    let prepared = db::prepare(Path::new(DIR), &db_workload(opts), vfs.name());
    let fs = vfs.detach().map_err(cfg("detaching"))?;
    if let Err(WorkloadError::DiskFull { what }) = prepared {
        return Err(WorkloadError::Config(format!(
            "the file layer is full while {what}: it takes a sixth of the {} MiB device, {} MiB \
             per file, too little for this workload; give the device more blocks \
             (--blocks-per-plane) or make the workload smaller",
            opts.profile.capacity_bytes() >> 20,
            (xo.fs.fs_bytes / u64::from(xo.fs.slots)) >> 20
        )));
    }
    prepared?;
    let medium = fs
        .into_device()
        .close()
        .map_err(cfg("shutting the device down"))?;
    Ok(image::encode(&medium))
}

/// The device of `base`, powered on, with `canary` set, mounted under `vfs`.
fn boot(vfs: &XftlVfs, base: &[u8], opts: &CrashOptions) -> Result<(), WorkloadError> {
    let medium = image::decode(base, &opts.profile).map_err(cfg("decoding"))?;
    let (mut dev, _) = Emmc::recover(PowerCut { medium, at_ns: 0 }, &opts.profile)
        .map_err(cfg("powering the image on"))?;
    dev.set_canary_commit_before_durable(opts.canary);
    let fs = FlashFs::mount(dev).map_err(cfg("mounting the image"))?;
    vfs.attach(fs).map_err(cfg("attaching"))
}

/// Which transactions' batch commits are made to fail: drawn once from the seed, the same in
/// every trial and in the counting run, so the command count holds for every trial.
fn failing_batches(opts: &CrashOptions) -> Vec<bool> {
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed ^ 0xfa11_ba7c);
    (0..opts.transactions)
        .map(|_| opts.fail_batch_one_in > 0 && rng.random_range(0..opts.fail_batch_one_in) == 0)
        .collect()
}

/// How a run of the workload ended.
struct Driven {
    acknowledged: u64,
    /// A transaction was under way when it stopped.
    in_flight: bool,
    /// What stopped it early.
    error: Option<WorkloadError>,
}

/// Run the workload until it fails or ends.
fn drive(vfs: &XftlVfs, opts: &CrashOptions, fails: &[bool]) -> Driven {
    let stopped = |acknowledged, in_flight, e| Driven {
        acknowledged,
        in_flight,
        error: Some(e),
    };
    let w = db_workload(opts);
    let conn = match db::connect(Path::new(DIR), &w, 0, vfs.name()) {
        Ok(c) => c,
        Err(e) => return stopped(0, false, e),
    };
    let mut driver = match Driver::new(&opts.workload, opts.seed) {
        Ok(d) => d,
        Err(e) => return stopped(0, false, e),
    };
    for (acked, &fail) in (0..).zip(fails) {
        vfs.fail_next_commits(u32::from(fail));
        let r = driver.transaction(&conn);
        vfs.fail_next_commits(0);
        if let Err(e) = r {
            return stopped(acked, true, e);
        }
    }
    Driven {
        acknowledged: opts.transactions,
        in_flight: false,
        error: None,
    }
}

/// After the cut: recover, check, and say which prefix the database holds.
fn verify(
    vfs: &XftlVfs,
    opts: &CrashOptions,
    cut: PowerCut<joj_device::NandMedium>,
    t: &mut CrashTrial,
    states: &[Summary],
) -> Result<u64, String> {
    let (dev, report) =
        Emmc::recover(cut, &opts.profile).map_err(|e| format!("device recovery: {e}"))?;
    t.torn_pages = report.torn_pages;
    t.xl2p_entries_applied = report.xl2p_entries_applied;
    // The FTL's own check panics on a broken invariant: report it as this trial's failure.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        dev.ftl().check_invariants()
    }))
    .map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("the recovered device fails its consistency check: {msg}")
    })?;
    let fs = FlashFs::mount(dev).map_err(|e| format!("mounting the file layer: {e}"))?;
    vfs.attach(fs).map_err(|e| e.to_string())?;
    let conn = db::connect(Path::new(DIR), &db_workload(opts), 0, vfs.name())
        .map_err(|e| format!("reopening the database: {e}"))?;
    let answer: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .map_err(|e| format!("PRAGMA integrity_check: {e}"))?;
    if answer != "ok" {
        return Err(format!("PRAGMA integrity_check answered: {answer}"));
    }
    let found = paper::check(&conn, &opts.workload).map_err(|e| e.to_string())?;
    let last = if t.in_flight {
        t.acknowledged + 1
    } else {
        t.acknowledged
    };
    (t.acknowledged..=last)
        .find(|&j| states.get(j as usize) == Some(&found))
        .ok_or_else(|| {
            let prefix = states.iter().position(|s| *s == found);
            format!(
                "{} transactions acknowledged (one under way: {}), the database holds {}",
                t.acknowledged,
                t.in_flight,
                match prefix {
                    Some(p) => format!("the state after {p}"),
                    None => "no state of the run".into(),
                }
            )
        })
}

/// One trial; the VFS is left without a device whatever happens.
fn trial(
    vfs: &XftlVfs,
    base: &[u8],
    opts: &CrashOptions,
    states: &[Summary],
    counted: &Counted,
    fails: &[bool],
    i: u64,
) -> Result<CrashTrial, WorkloadError> {
    let mut rng =
        ChaCha8Rng::seed_from_u64(opts.seed ^ (0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i + 1)));
    let gc = &counted.gc_commands;
    let after_gc = !gc.is_empty() && rng.random_range(0..2u32) == 0;
    let (cut_at, at_once) = if after_gc {
        (gc[rng.random_range(0..gc.len())] + 1, false)
    } else {
        (
            rng.random_range(0..counted.commands.max(1)),
            rng.random_range(0..2u32) == 0,
        )
    };
    let delay_ns = if opts.max_delay_ns == 0 || at_once {
        0
    } else {
        rng.random_range(0..opts.max_delay_ns)
    };
    boot(vfs, base, opts)?;
    vfs.with_fs(|fs| fs.device_mut().cut_power_after(Some(cut_at)));
    let Driven {
        acknowledged,
        in_flight,
        ..
    } = drive(vfs, opts, fails);
    let fs = vfs.detach().map_err(cfg("detaching"))?;
    let cut = fs.into_device().power_loss(delay_ns, rng.random());
    let mut t = CrashTrial {
        trial: i,
        cut_at_command: cut_at,
        after_gc,
        delay_ns,
        acknowledged,
        in_flight,
        recovered: None,
        torn_pages: 0,
        xl2p_entries_applied: 0,
        failure: None,
    };
    match verify(vfs, opts, cut, &mut t, states) {
        Ok(n) => t.recovered = Some(n),
        Err(e) => t.failure = Some(e),
    }
    let _ = vfs.detach();
    Ok(t)
}

/// Count the device commands of one whole run from the image (and which of them ran GC), and
/// check that the run ends in the reference's last state.
fn count_commands(
    vfs: &XftlVfs,
    base: &[u8],
    opts: &CrashOptions,
    states: &[Summary],
    fails: &[bool],
) -> Result<Counted, WorkloadError> {
    const ARMED: u64 = u64::MAX / 2;
    let sound = CrashOptions {
        canary: false,
        ..opts.clone()
    };
    boot(vfs, base, &sound)?;
    vfs.with_fs(|fs| {
        let dev = fs.device_mut();
        dev.cut_power_after(Some(ARMED));
        dev.log_gc_commands(true);
        dev.reset_counters();
    });
    let driven = drive(vfs, opts, fails);
    let (left, gc_runs, gc_commands) = vfs
        .with_fs(|fs| {
            let dev = fs.device();
            (
                dev.power_cut_countdown(),
                dev.counters().gc_runs,
                dev.gc_commands().to_vec(),
            )
        })
        .unwrap_or_default();
    let result = match driven.error {
        Some(e) => Err(e),
        None => {
            let w = db_workload(opts);
            db::connect(Path::new(DIR), &w, 0, vfs.name())
                .and_then(|c| paper::check(&c, &opts.workload))
        }
    };
    let _ = vfs.detach();
    let found = result?;
    if states.last() != Some(&found) {
        return Err(WorkloadError::Mismatch {
            what: "the uncut run on the xftl stack".into(),
            expected: "the reference's final state".into(),
            found: found.to_string(),
        });
    }
    Ok(Counted {
        commands: ARMED - left.unwrap_or(ARMED),
        gc_runs,
        gc_commands,
    })
}

/// What the uncut run counted.
struct Counted {
    commands: u64,
    gc_runs: u64,
    /// Commands (numbered as the cut counts them) that ran garbage collection.
    gc_commands: Vec<u64>,
}

/// Run the crash test; `on_trial` sees every trial as it ends.
pub fn run(
    opts: &CrashOptions,
    mut on_trial: impl FnMut(&CrashTrial),
) -> Result<CrashReport, WorkloadError> {
    opts.validate()?;
    let n = NEXT_VFS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let vfs = joj_atomic::register(&format!("xftl-crash-{n}"))
        .map_err(|e| WorkloadError::Config(format!("registering the xftl VFS: {e}")))?;
    let states = paper::reference_summaries(&opts.workload, opts.seed, opts.transactions)?;
    let base = base_image(&vfs, opts)?;
    let paths_before = vfs.counters();
    let fails = failing_batches(opts);
    let counted = count_commands(&vfs, &base, opts, &states, &fails)?;
    let mut report = CrashReport {
        workload: opts.workload.name().into(),
        profile: opts.profile.name.clone(),
        transactions: opts.transactions,
        cuts: opts.cuts,
        seed: opts.seed,
        canary: opts.canary,
        fail_batch_one_in: opts.fail_batch_one_in,
        aging_validity: opts.aging_validity,
        gc_runs_per_run: counted.gc_runs,
        gc_commands_per_run: counted.gc_commands.len() as u64,
        commands_per_run: counted.commands,
        cuts_after_gc: 0,
        passed: 0,
        failed: 0,
        in_flight_durable: 0,
        in_flight_lost: 0,
        torn_pages: 0,
        paths: XftlCounters::default(),
        failures: Vec::new(),
    };
    for i in 0..opts.cuts {
        let t = trial(&vfs, &base, opts, &states, &counted, &fails, i)?;
        report.torn_pages += t.torn_pages;
        report.cuts_after_gc += u64::from(t.after_gc);
        match t.recovered {
            Some(n) => {
                report.passed += 1;
                if t.in_flight {
                    if n > t.acknowledged {
                        report.in_flight_durable += 1;
                    } else {
                        report.in_flight_lost += 1;
                    }
                }
            }
            None => {
                report.failed += 1;
                if report.failures.len() < 20 {
                    report.failures.push(t.clone());
                }
            }
        }
        on_trial(&t);
    }
    report.paths = vfs.counters().delta(&paths_before);
    Ok(report)
}
