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

mod options;
mod report;
mod rig;
mod trial;

pub use options::{CrashOptions, MAX_CUTS, MAX_TRANSACTIONS};
pub use report::{CrashReport, CrashTrial};

use joj_atomic::XftlCounters;
use joj_workload::paper;

use crate::error::ExperimentError;
use rig::{Rig, failing_batches};
use trial::{count_commands, trial};

/// Run the crash test; `on_trial` sees every trial as it ends.
pub fn run(
    opts: &CrashOptions,
    mut on_trial: impl FnMut(&CrashTrial),
) -> Result<CrashReport, ExperimentError> {
    opts.validate()?;
    let rig = Rig::new(opts)?;
    let states = paper::reference_summaries(&opts.workload, opts.seed, opts.transactions)?;
    let base = rig.base_image(opts)?;
    let paths_before = rig.vfs.counters();
    let fails = failing_batches(opts);
    let counted = count_commands(&rig, &base, opts, &states, &fails)?;
    let mut report = CrashReport {
        workload: opts.workload.name().into(),
        profile: joj_device::ProfileRef::from(&opts.profile),
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
        let t = trial(&rig, &base, opts, &states, &counted, &fails, i)?;
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
    report.paths = rig.vfs.counters().delta(&paths_before);
    Ok(report)
}
