//! `joj compare`: the main job. Every journal mode on one filesystem, traced, one table.

use crate::CliResult;
use crate::bench::{CommonArgs, device_profile, fs_choice, run_options, summary};
use crate::progress::Progress;
use clap::Args;
use joj_vfs::SyncCall;
use joj_workload::compare::{compare, table};
use joj_workload::{DbOp, DbWorkload, JournalMode, StartState, Synchronous};

#[derive(Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Operation: insert, update, delete or select (ignored with --workload).
    #[arg(long, default_value = "insert")]
    pub op: String,
    /// Comma-separated journal modes to compare.
    #[arg(
        long,
        default_value = "off,memory,wal,delete,truncate,persist",
        value_delimiter = ','
    )]
    pub modes: Vec<String>,
    /// Also write the JSON document to this file (while printing the table).
    #[arg(long)]
    pub save: Option<std::path::PathBuf>,
}

pub fn main(mut a: CompareArgs) -> CliResult {
    // compare always traces; without a scratch filesystem there is nothing to classify.
    a.common.trace = true;
    if a.common.fs == "host" {
        a.common.fs = "ext4".into();
    }
    let modes = a
        .modes
        .iter()
        .map(|m| m.parse::<JournalMode>())
        .collect::<Result<Vec<_>, _>>()?;
    let device = device_profile(&mut a.common, modes.iter().all(|m| *m == JournalMode::Xftl))?;
    let paper = a.common.paper()?;
    let base = DbWorkload {
        op: a.op.parse::<DbOp>()?,
        transactions: a.common.transactions(paper.as_ref()),
        paper,
        page_size: a.common.page_size,
        synchronous: a.common.sync.parse::<Synchronous>()?,
        sync_call: a.common.sync_call.parse::<SyncCall>()?,
        start: a.common.start.parse::<StartState>()?,
        seed: a.common.seed,
        ..DbWorkload::default()
    };
    let fs = fs_choice(&a.common.fs, None)?;
    let label = format!("compare-{}-{}", fs.name(), base.name());
    let mut opts = run_options(&a.common, fs, &label);
    opts.device = device.clone();
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
    let mut comparison = comparison?;
    if let Some(profile) = &device {
        joj_workload::device::attach_all(&mut comparison, profile, a.common.gc_validity)?;
    }
    if crate::emit_json(&comparison, a.save.as_deref(), json)? {
        println!(
            "\n{} on {}, {} transactions, synchronous={}, {}, {} start; KiB written per transaction:",
            base.name(),
            a.common.fs,
            base.transactions,
            base.synchronous,
            base.sync_call.name(),
            a.common.start
        );
        print!("{}", table(&comparison));
        for row in &comparison.rows {
            if let Some(p) = &row.result.plot_file {
                println!("plot {}: {p}", row.mode);
            }
        }
    }
    Ok(())
}
