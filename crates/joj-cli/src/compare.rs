//! `joj compare`: the main job. One operation in SQLite's journal modes and joj's WALDIO (with
//! `--device`, X-FTL too) on one scratch filesystem, every row traced, one table.

use crate::args;
use crate::bench::{CommonArgs, summary};
use crate::output::{CliResult, check_save};
use crate::progress::Progress;
use clap::Args;
use joj_experiment::FsChoice;
use joj_experiment::compare::{compare, default_modes, table};
use joj_workload::{DbOp, DbWorkload, JournalMode};

#[derive(Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Scratch filesystem made on a loop device for the run (every row is traced).
    #[arg(long, value_parser = args::fs(), default_value = "ext4")]
    pub fs: args::Fs,
    /// Operation (ignored with --workload).
    #[arg(long, value_parser = args::db_op(), default_value = "insert")]
    pub op: DbOp,
    /// Comma-separated journal modes [default: off, memory, wal, delete, truncate, persist,
    /// waldio, waldio-gs, and xftl with --device].
    #[arg(long, value_parser = args::mode(), value_delimiter = ',')]
    pub modes: Vec<JournalMode>,
    /// Also write the JSON document to this file (after printing the table); checked before
    /// the run.
    #[arg(long)]
    pub save: Option<std::path::PathBuf>,
    /// Replace an existing --save file.
    #[arg(long)]
    pub force: bool,
}

pub fn main(a: CompareArgs) -> CliResult {
    check_save(a.save.as_deref(), a.force, a.common.device.as_deref())?;
    a.common.check_out()?;
    let paper = a.common.paper()?;
    let base = DbWorkload {
        op: a.op,
        transactions: a.common.transactions(paper.as_ref(), 1),
        paper,
        page_size: a.common.page_size,
        synchronous: a.common.sync,
        sync_call: a.common.sync_call,
        start: a.common.start,
        seed: a.common.seed,
        ..DbWorkload::default()
    };
    let fs = FsChoice::new(a.fs.scratch(), None)?;
    let mut opts = a.common.run_options(fs.clone())?;
    let modes = if a.modes.is_empty() {
        default_modes(opts.device.is_some())
    } else {
        a.modes.clone()
    };
    let json = a.common.json;
    // One bar over every mode's transactions.
    let progress = Progress::start(base.transactions * modes.len() as u64, "compare");
    opts.progress = Some(progress.counter.clone());
    let comparison = compare(&base, &modes, &opts, |row| {
        if !json {
            progress.println(&summary(&row.result));
        }
    });
    drop(progress);
    let comparison = comparison?;
    crate::output::emit(&comparison, a.save.as_deref(), a.force, json, || {
        let mut text = format!(
            "\n{} on {}, {} transactions, synchronous={}, {}, {} start; KiB written per transaction:\n",
            base.name(),
            fs.name(),
            base.transactions,
            base.synchronous,
            base.sync_call.name(),
            format!("{:?}", base.start).to_lowercase()
        );
        text.push_str(&table(&comparison));
        if let Some(m) = comparison
            .rows
            .iter()
            .find_map(|r| r.result.modeled.as_ref())
        {
            text.push_str(&format!(
                "modeled: host {} (CPU ×{:.2}) + device {}; {}\n",
                m.time.host, m.time.cpu_factor, m.profile, m.pacing
            ));
        }
        for row in &comparison.rows {
            if let Some(p) = &row.result.plot_file {
                text.push_str(&format!("plot {}: {p}\n", row.mode));
            }
        }
        text
    })
}
