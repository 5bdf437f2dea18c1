//! One trial: boot the image, arm the device to fail at a command, run until it does, cut the
//! power, recover and check; and the uncut run that counts the commands the cuts are drawn
//! from.

use joj_atomic::FlashFs;
use joj_device::{BlockDevice, Emmc, PowerCut};
use joj_workload::WorkloadError;
use joj_workload::paper::{self, Driver, Summary};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::options::CrashOptions;
use super::report::CrashTrial;
use super::rig::Rig;
use crate::error::ExperimentError;

/// How a run of the workload ended.
struct Driven {
    acknowledged: u64,
    /// A transaction was under way when it stopped.
    in_flight: bool,
    /// What stopped it early.
    error: Option<WorkloadError>,
}

/// Run the workload until it fails or ends.
fn drive(rig: &Rig, opts: &CrashOptions, fails: &[bool]) -> Driven {
    let stopped = |acknowledged, in_flight, e| Driven {
        acknowledged,
        in_flight,
        error: Some(e),
    };
    let vfs = &rig.vfs;
    let conn = match rig.connect() {
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

/// Why a trial failed: the recovered stack is broken or lost an acknowledged commit.
#[derive(Debug, thiserror::Error)]
enum TrialFailure {
    #[error("device recovery: {0}")]
    Recovery(joj_device::DeviceError),
    #[error("the recovered device fails its consistency check: {0}")]
    Inconsistent(String),
    #[error("mounting the file layer: {0}")]
    Mount(joj_atomic::FsError),
    #[error("attaching the recovered file layer: {0}")]
    Attach(joj_atomic::AtomicError),
    #[error("reopening the database: {0}")]
    Reopen(WorkloadError),
    #[error("PRAGMA integrity_check: {0}")]
    IntegrityQuery(rusqlite::Error),
    #[error("PRAGMA integrity_check answered: {0}")]
    Integrity(String),
    #[error("checking the database: {0}")]
    Check(WorkloadError),
    #[error(
        "{acknowledged} transactions acknowledged (one under way: {in_flight}), the database holds {holds}"
    )]
    Lost {
        acknowledged: u64,
        in_flight: bool,
        holds: String,
    },
}

/// After the cut: recover, check, and say which prefix the database holds.
fn verify(
    rig: &Rig,
    opts: &CrashOptions,
    cut: PowerCut<joj_device::NandMedium>,
    t: &mut CrashTrial,
    states: &[Summary],
) -> Result<u64, TrialFailure> {
    let (dev, report) = Emmc::recover(cut, &opts.profile).map_err(TrialFailure::Recovery)?;
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
        TrialFailure::Inconsistent(msg)
    })?;
    let fs = FlashFs::mount(dev).map_err(TrialFailure::Mount)?;
    rig.vfs.attach(fs).map_err(TrialFailure::Attach)?;
    let conn = rig.connect().map_err(TrialFailure::Reopen)?;
    let answer: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .map_err(TrialFailure::IntegrityQuery)?;
    if answer != "ok" {
        return Err(TrialFailure::Integrity(answer));
    }
    let found = paper::check(&conn, &opts.workload).map_err(TrialFailure::Check)?;
    let last = if t.in_flight {
        t.acknowledged + 1
    } else {
        t.acknowledged
    };
    (t.acknowledged..=last)
        .find(|&j| states.get(j as usize) == Some(&found))
        .ok_or_else(|| TrialFailure::Lost {
            acknowledged: t.acknowledged,
            in_flight: t.in_flight,
            holds: match states.iter().position(|s| *s == found) {
                Some(p) => format!("the state after {p}"),
                None => "no state of the run".into(),
            },
        })
}

/// One trial; the VFS is left without a device whatever happens.
pub(super) fn trial(
    rig: &Rig,
    base: &[u8],
    opts: &CrashOptions,
    states: &[Summary],
    counted: &Counted,
    fails: &[bool],
    i: u64,
) -> Result<CrashTrial, ExperimentError> {
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
    rig.boot(base, opts)?;
    rig.vfs
        .with_fs(|fs| fs.device_mut().cut_power_after(Some(cut_at)));
    let Driven {
        acknowledged,
        in_flight,
        ..
    } = drive(rig, opts, fails);
    let fs = rig.vfs.detach()?;
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
    match verify(rig, opts, cut, &mut t, states) {
        Ok(n) => t.recovered = Some(n),
        Err(e) => t.failure = Some(e.to_string()),
    }
    let _ = rig.vfs.detach();
    Ok(t)
}

/// Count the device commands of one whole run from the image (and which of them ran GC), and
/// check that the run ends in the reference's last state.
pub(super) fn count_commands(
    rig: &Rig,
    base: &[u8],
    opts: &CrashOptions,
    states: &[Summary],
    fails: &[bool],
) -> Result<Counted, ExperimentError> {
    let vfs = &rig.vfs;
    const ARMED: u64 = u64::MAX / 2;
    let sound = CrashOptions {
        canary: false,
        ..opts.clone()
    };
    rig.boot(base, &sound)?;
    vfs.with_fs(|fs| {
        let dev = fs.device_mut();
        dev.cut_power_after(Some(ARMED));
        dev.log_gc_commands(true);
        dev.reset_counters();
    });
    let driven = drive(rig, opts, fails);
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
        None => rig.connect().and_then(|c| paper::check(&c, &opts.workload)),
    };
    let _ = vfs.detach();
    let found = result?;
    if states.last() != Some(&found) {
        return Err(WorkloadError::Mismatch {
            what: "the uncut run on the xftl stack".into(),
            expected: "the reference's final state".into(),
            found: found.to_string(),
        }
        .into());
    }
    Ok(Counted {
        commands: ARMED - left.unwrap_or(ARMED),
        gc_runs,
        gc_commands,
    })
}

/// What the uncut run counted.
pub(super) struct Counted {
    pub(super) commands: u64,
    pub(super) gc_runs: u64,
    /// Commands (numbered as the cut counts them) that ran garbage collection.
    pub(super) gc_commands: Vec<u64>,
}
