//! `joj crash`: power cuts at random device commands while one of the X-FTL paper's workloads
//! runs on the xftl stack; every recovered database is checked. The test lives in
//! `joj_experiment::device_power_cuts`. With `--fs`, crash states of the real kernel stack
//! instead: a run recorded block by block, thousands of crash images recovered and checked
//! (`joj_experiment::kernel_crash_states`).

use std::sync::atomic::Ordering;

use crate::args;
use crate::output::{CliResult, check_save};
use crate::progress::Progress;
use clap::Args;
use joj_experiment::device_power_cuts::{CrashOptions, CrashReport, run};
use joj_workload::paper::PaperWorkload;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct CrashArgs {
    #[command(subcommand)]
    pub sub: Option<CrashSub>,
    /// Crash states of the real kernel stack on this scratch filesystem (instead of power cuts
    /// inside the emulated device): a run's block writes and flushes are recorded through a
    /// FUSE-backed loop device, then crash images are built, recovered and checked.
    #[arg(long, value_parser = args::scratch_fs())]
    pub fs: Option<joj_linux::FsKind>,
    /// --fs: the journal mode of the recorded run [default: wal; with --from-log, what the log
    /// says].
    #[arg(short = 'j', long, value_parser = args::journal())]
    pub journal: Option<joj_workload::JournalMode>,
    /// --fs: crash states to check (all of them when the run has fewer).
    #[arg(long, default_value_t = 2000, allow_negative_numbers = true, value_parser = args::within::<u64>(1, joj_experiment::kernel_crash_states::MAX_STATES))]
    pub states: u64,
    /// --fs: a mode broken on purpose, which the check must catch: skip-sync, fallocate-flush-only
    /// (waldio), sync-off (stock modes), per-page-reliable (--emmc-journal: the packed reliable
    /// commit atomic per page only). Two controls, expected to hold: fallocate-only (waldio
    /// on unwritten extents, with its fdatasync) and flush-only (waldio's written
    /// preallocation, each commit a bare device cache flush).
    #[arg(long, value_parser = joj_experiment::kernel_crash_states::workload::Canary::NAMES)]
    pub fs_canary: Option<String>,
    /// --fs, stock modes: PRAGMA synchronous (extra: DELETE mode also syncs the directory
    /// after unlinking its journal, the commit point; normal: judged against its window).
    #[arg(long, value_parser = joj_experiment::kernel_crash_states::workload::StockSync::NAMES)]
    pub synchronous: Option<String>,
    /// --fs: what the recorded run does: SQLite transactions (sqlite) or PostMark-like file
    /// creates, appends and deletes, each made durable with fsync (postmark) [default: sqlite;
    /// with --from-log, what the log says].
    #[arg(long, value_parser = joj_experiment::kernel_crash_states::FsWorkload::NAMES)]
    pub fs_workload: Option<String>,
    /// --fs with ext4: read the run as the eMMC paper's optimized journal issues it — each jbd2
    /// transaction one all-or-nothing packed reliable write, durable without a flush, the
    /// commit's flushes dropped (docs/device-model.md).
    #[arg(long)]
    pub emmc_journal: bool,
    /// Check the states of a saved joj-blocklog instead of recording a run; --fs, -j,
    /// --synchronous, --fs-workload, --fs-canary and --seed default to what the log says, and
    /// must agree with it.
    #[arg(long)]
    pub from_log: Option<std::path::PathBuf>,
    /// --fs: save the log and every violating state (with the command that rebuilds it) here;
    /// checked before the run; an earlier run's files are kept (the new ones get the next free
    /// name) unless --force.
    #[arg(long)]
    pub save_dir: Option<std::path::PathBuf>,
    /// --fs: save the recorded run's log in --save-dir even when no state violates (a clean
    /// log to keep, share or edit into a new canary).
    #[arg(long)]
    pub save_log: bool,
    /// --fs --from-log: check only the K-th of N disjoint shares of the states the seed draws
    /// from the log (1 ≤ K ≤ N), and print (--json) or --save a part for `joj crash merge`
    /// (docs/formats/crash-part.md).
    #[arg(long, value_parser = shard)]
    pub shard: Option<joj_experiment::kernel_crash_states::Shard>,
    /// --fs: record the run and save its log in --save-dir, checking no state (then check it
    /// with --from-log, whole or in shares with --shard).
    #[arg(long)]
    pub record_only: bool,
    /// --fs: judge every state against its mode's window (window) or against full durability
    /// (full: every acknowledged transaction), to see what synchronous=NORMAL or group sync
    /// loses.
    #[arg(long, value_parser = joj_experiment::kernel_crash_states::workload::JudgeAs::NAMES)]
    pub judge_as: Option<String>,
    /// The workload the cuts interrupt.
    #[arg(long, value_parser = args::paper_workload(), default_value = "xftl-synthetic")]
    pub workload: String,
    /// Emulated eMMC profile (a built-in name such as galaxy-s5 or openssd, or a profile JSON
    /// file).
    #[arg(long, default_value = "galaxy-s5")]
    pub device: String,
    /// Power cuts, each at a device command drawn from the seed.
    #[arg(long, default_value_t = 1000, allow_negative_numbers = true, value_parser = args::within::<u64>(1, joj_experiment::device_power_cuts::MAX_CUTS))]
    pub cuts: u64,
    /// Transactions each trial runs from the prepared database; the cut comes among their
    /// device commands (default: 40, or one whole pass of rl-bench).
    #[arg(short = 'n', long = "transactions", allow_negative_numbers = true, value_parser = args::within::<u64>(1, joj_experiment::device_power_cuts::MAX_TRANSACTIONS))]
    pub transactions: Option<u64>,
    /// xftl-synthetic: rows read and updated per transaction.
    #[arg(long = "pages-per-txn", default_value_t = 5, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub pages_per_txn: u32,
    /// tpcc-*: warehouses.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub warehouses: u32,
    /// rl-bench: divide every row and statement count by this.
    #[arg(long = "rl-divisor", default_value_t = 25, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub rl_divisor: u32,
    /// One batch commit in N fails, so SQLite retries it with a rollback journal (0: none).
    #[arg(long = "fail-batch-one-in", default_value_t = 6, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub fail_batch_one_in: u32,
    /// Half the cuts come up to this many microseconds after the failed command, tearing the
    /// programs under way.
    #[arg(long = "max-delay-us", default_value_t = 3000, allow_negative_numbers = true, value_parser = args::within::<u64>(0, 1_000_000))]
    pub max_delay_us: u64,
    /// Age the device first so GC victims hold about this % of valid pages (30, 50, 70 in the
    /// paper), so cuts land in garbage collection too; pair with a small --blocks-per-plane.
    #[arg(long = "gc-validity", allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub gc_validity: Option<u32>,
    /// Blocks per plane of the device (smaller: faster trials); default: the profile's.
    #[arg(long = "blocks-per-plane", allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub blocks_per_plane: Option<u32>,
    /// Run on a device that acknowledges commits before they are durable; the test must catch
    /// it (exit status 0 only if some cut does).
    #[arg(long)]
    pub canary: bool,
    /// SQLite page size in bytes (the paper's: 8192).
    #[arg(long = "page-size", default_value_t = 8192, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub page_size: u32,
    /// Seed of every random choice (the data, the transactions, where each cut comes)
    /// [default: 42; with --from-log, the log's].
    #[arg(long, allow_negative_numbers = true, value_parser = args::count::<u64>())]
    pub seed: Option<u64>,
    /// Print one JSON document on stdout and nothing else.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON document to this file (after printing the result); checked before
    /// the run.
    #[arg(long)]
    pub save: Option<std::path::PathBuf>,
    /// Replace an existing --save file (and earlier files of the same names in --save-dir).
    #[arg(long)]
    pub force: bool,
}

/// `joj crash` subcommands.
#[derive(clap::Subcommand)]
pub enum CrashSub {
    /// Merge the parts of a sharded run (`--shard K/N`) into the document the unsharded run
    /// of the same log gives; refuses parts of different runs, and names missing shares.
    Merge(crate::crash_fs_cmd::MergeArgs),
}

fn shard(s: &str) -> Result<joj_experiment::kernel_crash_states::Shard, String> {
    joj_experiment::kernel_crash_states::Shard::parse(s).map_err(|e| e.to_string())
}

pub fn main(a: CrashArgs) -> CliResult {
    if let Some(CrashSub::Merge(m)) = a.sub {
        return crate::crash_fs_cmd::merge(m);
    }
    if a.fs.is_some() || a.from_log.is_some() {
        return crate::crash_fs_cmd::main(crate::crash_fs_cmd::FsCrashArgs {
            fs: a.fs,
            journal: a.journal,
            states: a.states,
            canary: a.fs_canary,
            synchronous: a.synchronous,
            workload: a.fs_workload,
            emmc_journal: a.emmc_journal,
            from_log: a.from_log,
            save_dir: a.save_dir,
            save_log: a.save_log,
            judge_as: a.judge_as,
            shard: a.shard,
            record_only: a.record_only,
            transactions: a.transactions,
            seed: a.seed,
            json: a.json,
            save: a.save,
            force: a.force,
        });
    }
    if a.fs_canary.is_some()
        || a.emmc_journal
        || a.fs_workload.is_some()
        || a.save_dir.is_some()
        || a.save_log
        || a.judge_as.is_some()
        || a.synchronous.is_some()
        || a.shard.is_some()
        || a.record_only
    {
        return Err(
            "--fs-canary, --fs-workload, --emmc-journal, --synchronous, --save-dir, --save-log, \
             --judge-as, --shard and --record-only go with --fs (crash states of a kernel \
             filesystem); fix: add --fs ext4, or drop them"
                .into(),
        );
    }
    device_power_cuts(a)
}

/// `joj crash` without `--fs`: power cuts inside the emulated device, and the verdict.
fn device_power_cuts(a: CrashArgs) -> CliResult {
    check_save(a.save.as_deref(), a.force, Some(&a.device))?;
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
        seed: a.seed.unwrap_or(42),
        fail_batch_one_in: a.fail_batch_one_in,
        canary: a.canary,
        max_delay_ns: a.max_delay_us.saturating_mul(1000),
        aging_validity: a.gc_validity,
        ..CrashOptions::new(workload, profile, transactions, a.cuts)
    };
    let progress = Progress::start_counting(a.cuts, "power cuts", "cut");
    let json = a.json;
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
    let emitted = crate::output::emit(&report, a.save.as_deref(), a.force, json, || {
        summary(&report)
    });
    if report.verdict_ok() {
        emitted
    } else if report.canary {
        Err(format!(
            "none of {} cuts caught the canary device (commits acknowledged before durable): \
             the test is too weak for this workload; try more --cuts or -n",
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
