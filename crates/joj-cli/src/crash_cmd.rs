//! `joj crash device`: power cuts at random device commands while one of the X-FTL paper's
//! workloads runs on the xftl stack; every recovered database is checked. The test lives in
//! `joj_experiment::device_power_cuts`. `joj crash fs` (crash_fs_cmd.rs): crash states of the real kernel
//! stack instead, a run recorded block by block, thousands of crash images recovered and
//! checked (`joj_experiment::kernel_crash_states`).

use std::sync::atomic::Ordering;

use crate::args;
use crate::groups::{DEVICE, Output, STACK, Seed, WORKLOAD};
use crate::output::{CliResult, check_save};
use crate::progress::Progress;
use clap::Args;
use joj_experiment::device_power_cuts::{CrashOptions, CrashReport, run};
use joj_workload::paper::PaperWorkload;

#[derive(Args)]
pub struct CrashArgs {
    #[command(subcommand)]
    pub sub: CrashSub,
}

/// `joj crash` subcommands.
#[derive(clap::Subcommand)]
pub enum CrashSub {
    /// Power cuts at random device commands while a paper workload runs on X-FTL; every
    /// recovered database is checked against the acknowledged commits.
    Device(Box<DeviceCrashArgs>),
    /// Crash states of SQLite on a real kernel filesystem: a run's block writes and flushes are
    /// recorded through a FUSE-backed loop device, then crash images are built, recovered and
    /// checked.
    Fs(Box<crate::crash_fs_cmd::FsCrashArgs>),
    /// Merge the parts of a sharded run (`--shard K/N`) into the document the unsharded run
    /// of the same log gives; refuses parts of different runs, and names missing shares.
    Merge(crate::crash_fs_cmd::MergeArgs),
}

/// `joj crash device`.
#[derive(Args)]
pub struct DeviceCrashArgs {
    /// The workload the cuts interrupt.
    #[arg(long, value_parser = args::paper_workload(), default_value = "xftl-synthetic", help_heading = WORKLOAD)]
    pub workload: String,
    /// Power cuts, each at a device command drawn from the seed.
    #[arg(long, default_value_t = 1000, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, joj_experiment::device_power_cuts::MAX_CUTS))]
    pub cuts: u64,
    /// Transactions each trial runs from the prepared database; the cut comes among their
    /// device commands (default: 40, or one whole pass of rl-bench; `-n` is its old spelling).
    #[arg(long = "transactions", short_alias = 'n', value_name = "N", help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, joj_experiment::device_power_cuts::MAX_TRANSACTIONS))]
    pub transactions: Option<u64>,
    /// xftl-synthetic: rows read and updated per transaction.
    #[arg(long = "pages-per-txn", default_value_t = 5, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub pages_per_txn: u32,
    /// tpcc-*: warehouses.
    #[arg(long, default_value_t = 1, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub warehouses: u32,
    /// rl-bench: divide every row and statement count by this.
    #[arg(long = "rl-divisor", default_value_t = 25, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub rl_divisor: u32,
    /// One batch commit in N fails, so SQLite retries it with a rollback journal (0: none).
    #[arg(long = "fail-batch-one-in", default_value_t = 6, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub fail_batch_one_in: u32,
    /// Half the cuts come up to this many microseconds after the failed command, tearing the
    /// programs under way.
    #[arg(long = "max-delay-us", default_value_t = 3000, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(0, 1_000_000))]
    pub max_delay_us: u64,
    /// Run on a device that acknowledges commits before they are durable; the test must catch
    /// it (exit status 0 only if some cut does).
    #[arg(long, help_heading = WORKLOAD)]
    pub canary: bool,
    #[command(flatten)]
    pub seed: Seed,
    /// SQLite page size in bytes (the paper's: 8192).
    #[arg(long = "page-size", default_value_t = 8192, help_heading = STACK, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub page_size: u32,
    #[arg(long, value_name = "PROFILE", default_value = "galaxy-s5", help_heading = DEVICE, help = crate::groups::profile_help("Emulated device profile", "."))]
    pub device: String,
    /// Age the device first so GC victims hold about this % of valid pages (30, 50, 70 in the
    /// paper), so cuts land in garbage collection too; pair with a small --blocks-per-plane.
    #[arg(long = "gc-validity", value_name = "PERCENT", help_heading = DEVICE, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub gc_validity: Option<u32>,
    /// Blocks per plane of the device (smaller: faster trials); default: the profile's.
    #[arg(long = "blocks-per-plane", help_heading = DEVICE, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub blocks_per_plane: Option<u32>,
    #[command(flatten)]
    pub output: Output,
}

pub fn main(a: CrashArgs) -> CliResult {
    match a.sub {
        CrashSub::Device(d) => device(*d),
        CrashSub::Fs(f) => crate::crash_fs_cmd::main(*f),
        CrashSub::Merge(m) => crate::crash_fs_cmd::merge(m),
    }
}

/// `joj crash device`: the power cuts, their verdict as the exit status.
fn device(a: DeviceCrashArgs) -> CliResult {
    check_save(a.output.save.as_deref(), a.output.force, Some(&a.device))?;
    let workload =
        PaperWorkload::from_name(&a.workload, a.pages_per_txn, a.warehouses, a.rl_divisor)?;
    let mut profile = joj_device::Profile::load(&a.device)?;
    if let Some(b) = a.blocks_per_plane {
        profile = profile.with_blocks_per_plane(b);
        profile
            .validate()
            .map_err(|e| format!("--blocks-per-plane {b}: {e}"))?;
    }
    let transactions = a
        .transactions
        .unwrap_or_else(|| CrashOptions::default_transactions(&workload));
    let opts = CrashOptions {
        page_size: a.page_size,
        seed: a.seed.get(),
        fail_batch_one_in: a.fail_batch_one_in,
        canary: a.canary,
        max_delay_ns: a.max_delay_us.saturating_mul(1000),
        aging_validity: a.gc_validity,
        ..CrashOptions::new(workload, profile, transactions, a.cuts)
    };
    let progress = Progress::start_counting(a.cuts, "power cuts", "cut");
    let json = a.output.json;
    let report = run(&opts, |t| {
        progress.counter.fetch_add(1, Ordering::Relaxed);
        if let (Some(why), false) = (&t.failure, json) {
            progress.println(&format!(
                "cut {} (command {}, {} us later, {} acknowledged): {why}\n",
                t.trial,
                t.cut_at_command,
                t.delay_ns / 1000,
                t.acknowledged
            ));
        }
    });
    drop(progress);
    let report = report?;
    // The verdict outranks printing: a reader gone from stdout (`| head`) must not turn lost
    // data into exit status 0.
    let emitted = crate::output::emit(
        &report,
        a.output.save.as_deref(),
        a.output.force,
        json,
        || summary(&report),
    );
    if report.verdict_ok() {
        emitted
    } else if report.canary {
        Err(format!(
            "none of {} cuts caught the canary device (commits acknowledged before durable): \
             the test is too weak for this workload; try more --cuts or --transactions",
            report.cuts
        )
        .into())
    } else {
        Err(format!(
            "{} of {} power cuts lost or corrupted data (listed above, and under `failures` \
             with --json)",
            report.failed, report.cuts
        )
        .into())
    }
}

fn summary(r: &CrashReport) -> String {
    let p = &r.paths;
    format!(
        "\npower cuts on xftl, {} on {}{}{}: {} cuts among the {} device commands of {} \
         transactions ({} GC runs; {} cuts right after a command that ran GC)\n  passed {}, failed {}\n  a transaction under way at {} cuts: its commit \
         durable in {}, gone in {}\n  torn NAND pages found by recovery: {}\n  commit paths: \
         {} batch commits, {} batch rollbacks, {} failed batch commits, {} rollback journals \
         opened, {} journal barriers\n",
        r.workload,
        r.profile,
        if r.canary {
            " (canary: commits acknowledged before durable)"
        } else {
            ""
        },
        r.aging_validity
            .map_or(String::new(), |v| format!(" aged to {v} % GC validity")),
        r.cuts,
        r.commands_per_run,
        r.transactions,
        r.gc_runs_per_run,
        r.cuts_after_gc,
        r.passed,
        r.failed,
        r.in_flight_durable + r.in_flight_lost,
        r.in_flight_durable,
        r.in_flight_lost,
        r.torn_pages,
        p.batch_commits,
        p.batch_rollbacks,
        p.batch_commit_errors,
        p.journal_opens,
        p.journal_barriers
    )
}
