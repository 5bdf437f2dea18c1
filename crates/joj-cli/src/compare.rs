//! `joj compare`: the main job. One operation in SQLite's journal modes and joj's WALDIO (with
//! `--device`, X-FTL too) on one scratch filesystem, every row traced, one table.

use crate::args;
use crate::bench::{CommonArgs, summary};
use crate::groups::{OUTPUT, STACK, WORKLOAD};
use crate::output::CliResult;
use crate::progress::Progress;
use crate::report_doc::Kind;
use clap::Args;
use joj_experiment::FsChoice;
use joj_experiment::compare::{CompareEvent, compare, default_modes, durability_key, table};
use joj_workload::{DbOp, DbWorkload, JournalMode};

#[derive(Args)]
pub struct CompareArgs {
    /// Operation (ignored with --workload).
    #[arg(long, value_parser = args::db_op(), default_value = "insert", help_heading = WORKLOAD)]
    pub op: DbOp,
    /// Scratch filesystem made on a loop device for the run (every row is traced).
    #[arg(long, value_parser = args::fs(), default_value = "ext4", help_heading = STACK)]
    pub fs: args::Fs,
    /// Comma-separated journal modes [default: off, memory, wal, delete, truncate, persist,
    /// waldio, waldio-gs, and xftl with --device].
    #[arg(long, value_parser = args::mode(), value_delimiter = ',', help_heading = STACK)]
    pub modes: Vec<JournalMode>,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Also write the HTML report page (`joj report`) beside the traces in --out.
    #[arg(long, help_heading = OUTPUT)]
    pub report: bool,
}

pub fn main(a: CompareArgs) -> CliResult {
    let o = &a.common.output;
    a.common.check_outputs()?;
    let paper = a.common.paper()?;
    let base = DbWorkload {
        op: a.op,
        transactions: a.common.transactions(paper.as_ref(), 1),
        paper,
        page_size: a.common.page_size,
        synchronous: a.common.sync,
        sync_call: a.common.sync_call,
        start: a.common.start,
        seed: a.common.seed.get(),
        ..DbWorkload::default()
    };
    let fs = FsChoice::new(a.fs.scratch(), None)?;
    let mut opts = a.common.run_options(fs.clone())?;
    let modes = if a.modes.is_empty() {
        default_modes(opts.device.is_some())
    } else {
        a.modes.clone()
    };
    let json = o.json;
    // One bar over every mode's transactions.
    let progress = Progress::start(base.transactions * modes.len() as u64, "compare");
    opts.progress = Some(progress.counter.clone());
    let comparison = compare(&base, &modes, &opts, |event| match event {
        // Said even when stderr is no terminal (the bar is hidden then): a long run is never
        // silent.
        CompareEvent::Starting { mode, index, of } => {
            progress.println(&format!("compare: {mode} ({index} of {of})\n"));
        }
        CompareEvent::Done(row) if !json => progress.println(&summary(&row.result)),
        CompareEvent::Done(_) => {}
    });
    drop(progress);
    let mut comparison = comparison?;
    joj_experiment::compare_plot::write_beside(&mut comparison, &base, &opts)?;
    if a.report {
        let page = crate::report_cmd::beside(
            Kind::Compare(Box::new(comparison.clone())),
            comparison.plot_file.as_deref(),
            &a.common.out.out,
        )?;
        eprintln!("report: {}", page.display());
    }
    crate::output::emit(&comparison, o.save.as_deref(), o.force, json, || {
        let mut text = format!(
            "\n{} on {}, {} transactions, synchronous={}, {}, {} start; KiB written per transaction:\n",
            base.name(),
            fs.name(),
            base.transactions,
            base.synchronous,
            base.sync_call.name(),
            format!("{:?}", base.start).to_lowercase()
        );
        if opts.cpus_awake {
            text.push_str("(the CPUs were held awake: --cpus-awake)\n");
        }
        text.push_str(&table(&comparison));
        let key = durability_key(
            comparison
                .rows
                .iter()
                .filter_map(|r| r.durability.as_deref()),
        );
        if !key.is_empty() {
            text.push_str(&format!("{key}\n"));
        }
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
        text.push_str(&crate::meaning::of_compare(&comparison, &fs.name()));
        for row in &comparison.rows {
            if let Some(p) = &row.result.plot_file {
                text.push_str(&format!("plot {}: {p}\n", row.mode));
            }
        }
        if let Some(p) = &comparison.plot_file {
            text.push_str(&format!("plot of the modes side by side: {p}\n"));
        }
        text
    })
}
