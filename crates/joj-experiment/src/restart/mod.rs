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
//!   the command under way torn;
//! - `iftl`: at a NAND or NVM event drawn from the seed among the transaction's, what was in
//!   flight torn.
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
//! SQLite's first statement, timed by the device, are. For `iftl` the counterpart of the
//! commit table's load is the paper's Algorithm 1 over the logFTL in NVM: counted, with
//! SQLite's first statement; the rest of the device's recovery (reading `dataFTL` to rebuild
//! the block table) and the mount are reported, not counted.
//!
//! Every restart is checked: `PRAGMA integrity_check`, and the database holds exactly the
//! acknowledged transactions or, when the cut came after the commit was durable, one more.

mod check;
mod fs;
mod iftl;
mod options;
mod report;
mod txn_device;
mod xftl;

pub use options::RestartOptions;
pub use report::{NotCounted, RestartReport, RestartRow, RestartRun};

use joj_workload::config::bounds;

use joj_workload::paper::PaperWorkload;
use joj_workload::{JournalMode, SqliteSetup};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{ExperimentError, StackError};
use crate::stack::{FsChoice, RunOptions, Stack, Storage, TxnDeviceKind, VfsChain, Workload};

/// Where a restartable mode runs.
enum Restarted {
    /// A rollback or WAL mode on the scratch filesystem.
    Filesystem,
    /// X-FTL or i-FTL on its transactional device.
    Device(TxnDeviceKind),
}

/// The stack `mode` runs on for a restart; only modes with a log to recover from, on SQLite's
/// own VFS or on X-FTL or i-FTL, can be restarted.
fn restart_stack(
    opts: &RestartOptions,
    mode: JournalMode,
) -> Result<(Restarted, SqliteSetup), ExperimentError> {
    let w = Workload::Db(check::workload(opts, mode));
    let run = RunOptions {
        fs: FsChoice::Scratch(opts.fs),
        device: Some(crate::stack::DevicePlan::new(opts.profile.clone())),
        ..RunOptions::default()
    };
    let stack = Stack::resolve(&w, &run)?;
    let Some(setup) = stack.sqlite.clone() else {
        return Err(StackError::NotRestartable(mode).into());
    };
    let logged = setup.journal.is_wal() || setup.journal.is_rollback_file();
    match (&stack.storage, &stack.vfs) {
        (Storage::Device(_), &VfsChain::TxnDevice(kind)) => Ok((Restarted::Device(kind), setup)),
        (Storage::Scratch { .. }, VfsChain::Accounting) if logged => {
            Ok((Restarted::Filesystem, setup))
        }
        _ => Err(StackError::NotRestartable(mode).into()),
    }
}

/// Transactions before a restart run's cut.
pub const MAX_TRANSACTIONS: u64 = 100_000;
/// Restart runs per mode.
pub const MAX_RUNS: u64 = 10_000;

/// Run `opts.runs` power cuts and restarts for every mode; `on_run` hears of each as it ends.
pub fn measure(
    opts: &RestartOptions,
    mut on_run: impl FnMut(&str, &RestartRun),
) -> Result<RestartReport, ExperimentError> {
    let PaperWorkload::XftlSynthetic { pages_per_txn, .. } = opts.workload else {
        return Err(StackError::RestartWorkload.into());
    };
    if opts.transactions == 0 {
        return Err(StackError::Zero { what: "-n" }.into());
    }
    if opts.runs == 0 {
        return Err(StackError::Zero { what: "--runs" }.into());
    }
    bounds::at_most(
        "transactions per restart run (-n)",
        opts.transactions,
        MAX_TRANSACTIONS,
        "each run replays them before its cut",
    )?;
    bounds::at_most(
        "restart runs (--runs)",
        opts.runs.into(),
        MAX_RUNS,
        "each run makes a filesystem or device and cuts its power",
    )?;
    opts.workload.validate()?;
    // Every mode's stack first: a mode that cannot be restarted fails before any cut.
    let stacks = opts
        .modes
        .iter()
        .map(|&mode| restart_stack(opts, mode))
        .collect::<Result<Vec<_>, _>>()?;
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
    for (mode, (stack, setup)) in opts.modes.iter().zip(&stacks) {
        let name = mode.to_string();
        let mut runs = Vec::new();
        for &(crash_in, budget, cut_seed) in &cuts {
            let run = match stack {
                Restarted::Device(TxnDeviceKind::Xftl) => {
                    xftl::xftl_run(opts, setup, crash_in, budget, cut_seed)?
                }
                Restarted::Device(TxnDeviceKind::Iftl) => {
                    iftl::iftl_run(opts, setup, crash_in, cut_seed)?
                }
                Restarted::Filesystem => fs::fs_run(opts, *mode, setup, crash_in)?,
            };
            on_run(&name, &run);
            runs.push(run);
        }
        rows.push(RestartRow {
            mode: name,
            mean_restart_ms: runs.iter().map(|r| r.restart_ms).sum::<f64>() / runs.len() as f64,
            runs,
        });
    }
    Ok(RestartReport {
        profile: joj_device::ProfileRef::from(&opts.profile),
        workload: opts.workload.name().to_string(),
        pages_per_txn: Some(pages_per_txn),
        transactions: opts.transactions,
        page_size: opts.page_size,
        seed: opts.seed,
        fs: opts.fs.to_string(),
        rows,
    })
}
