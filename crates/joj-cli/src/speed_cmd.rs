//! `joj speed`: transactions per second of journal modes against stock WAL, several operations,
//! interleaved rounds, medians of the per-round ratios (`joj_experiment::speed`).

use crate::args;
use crate::groups::{Output, STACK, Seed, WORKLOAD};
use crate::output::{CliResult, check_save};
use crate::progress::Progress;
use clap::Args;
use joj_experiment::speed::{speed, table};
use joj_experiment::{FsChoice, RunOptions};
use joj_workload::config::bounds;
use joj_workload::{DbOp, DbWorkload, JournalMode, StartState, Synchronous};

#[derive(Args)]
pub struct SpeedArgs {
    /// Comma-separated operations.
    #[arg(long, value_parser = args::db_op(), value_delimiter = ',', default_value = "insert,update,delete", help_heading = WORKLOAD)]
    pub ops: Vec<DbOp>,
    /// Rounds: each runs every operation in every mode once (the modes' order rotates).
    #[arg(long, default_value_t = 5, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u32>(1, 1000))]
    pub rounds: u32,
    /// Transactions per run (`-n` is its old spelling).
    #[arg(long = "transactions", short_alias = 'n', value_name = "N", default_value_t = 1000, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, bounds::MAX_TRANSACTIONS))]
    pub transactions: u64,
    /// fresh: new database, the WAL grows in the run. steady: the same transactions run first,
    /// then a WAL checkpoint, so the WAL file already has its size.
    #[arg(long, value_parser = args::start(), default_value = "steady", help_heading = WORKLOAD)]
    pub start: StartState,
    #[command(flatten)]
    pub seed: Seed,
    /// Where the runs' files live: a scratch filesystem made on a loop device for every run, or
    /// `host` (a new temporary directory of the host filesystem for every run).
    #[arg(long, value_parser = args::fs(), default_value = "ext4", help_heading = STACK)]
    pub fs: args::Fs,
    /// Comma-separated journal modes; must include wal, the baseline of every ratio.
    #[arg(long, value_parser = args::mode(), value_delimiter = ',', default_value = "wal,waldio", help_heading = STACK)]
    pub modes: Vec<JournalMode>,
    /// `PRAGMA synchronous` (`-s` and `--sync` are its old spellings).
    #[arg(long = "synchronous", alias = "sync", value_name = "SYNCHRONOUS", short_alias = 's', value_parser = args::synchronous(), default_value = "full", help_heading = STACK)]
    pub sync: Synchronous,
    /// SQLite page size in bytes.
    #[arg(long = "page-size", default_value_t = 4096, help_heading = STACK, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub page_size: u32,
    /// Size of the scratch filesystem image in MiB.
    #[arg(long = "image-mib", default_value_t = 1024, help_heading = STACK, allow_negative_numbers = true, value_parser = args::within::<u64>(1, 1 << 24))]
    pub image_mib: u64,
    #[command(flatten)]
    pub output: Output,
}

pub fn main(a: SpeedArgs) -> CliResult {
    check_save(a.output.save.as_deref(), a.output.force, None)?;
    let base = DbWorkload {
        transactions: a.transactions,
        page_size: a.page_size,
        synchronous: a.sync,
        start: a.start,
        seed: a.seed.get(),
        ..DbWorkload::default()
    };
    let fs = FsChoice::new(a.fs.scratch(), None)?;
    let runs = u64::from(a.rounds) * (a.ops.len() * a.modes.len()) as u64;
    let progress = Progress::start(a.transactions * runs, "speed");
    let opts = RunOptions {
        fs: fs.clone(),
        image_size_bytes: a.image_mib << 20,
        progress: Some(progress.counter.clone()),
        ..RunOptions::default()
    };
    let json = a.output.json;
    let report = speed(&base, &a.ops, &a.modes, a.rounds, &opts, |r| {
        if !json {
            progress.println(&format!(
                "round {} {} {}: {:.1} txn/s\n",
                r.round, r.op, r.mode, r.ops_per_sec
            ));
        }
    });
    drop(progress);
    let report = report?;
    crate::output::emit(
        &report,
        a.output.save.as_deref(),
        a.output.force,
        json,
        || {
            format!(
                "\non {}, {} transactions per run, synchronous={}, {} start, {} round{} (untraced); ratios against {} in the same round:\n{}",
                fs.name(),
                a.transactions,
                a.sync,
                format!("{:?}", a.start).to_lowercase(),
                a.rounds,
                if a.rounds == 1 { "" } else { "s" },
                report.baseline,
                table(&report)
            )
        },
    )
}
