//! `joj trace`: import blkparse text into joj's trace format, summarise a trace, plot it.

use crate::output::CliResult;
use clap::{Args, Subcommand};
use joj_trace::format::{read_trace_file, write_trace_file};
use joj_trace::plot::{PlotAxis, plot_svg};
use joj_trace::totals::BlockTotals;
use std::path::PathBuf;

#[derive(Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    command: TraceCommand,
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Convert blkparse's text output into a joj-trace file.
    Import {
        /// blkparse output (e.g. `blkparse -i sda -o sda.txt`).
        blkparse: PathBuf,
        /// joj-trace file to write.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Print the totals of a joj-trace file as JSON.
    Show { trace: PathBuf },
    /// Draw a joj-trace file as an SVG (LBA over time or sequence).
    Plot {
        trace: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
        /// x axis.
        #[arg(long, value_enum, default_value_t = Axis::Time)]
        axis: Axis,
    },
}

/// The x axis of a trace plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Axis {
    /// Request time.
    Time,
    /// Request number.
    #[value(alias = "seq")]
    Sequence,
}

pub fn main(a: TraceArgs) -> CliResult {
    match a.command {
        TraceCommand::Import { blkparse, output } => {
            let f = std::fs::File::open(&blkparse)
                .map_err(|e| format!("cannot open {}: {e}", blkparse.display()))?;
            let import = joj_trace::blkparse::import_blkparse(std::io::BufReader::new(f))?;
            write_trace_file(&output, &import.header(), &import.records)?;
            eprintln!(
                "imported {} requests into {}",
                import.records.len(),
                output.display()
            );
        }
        TraceCommand::Show { trace } => {
            let (header, records) = read_trace_file(&trace)?;
            let totals = BlockTotals::from_records(&records);
            let doc =
                serde_json::json!({ "header": header, "records": records.len(), "block": totals });
            outln!("{}", serde_json::to_string_pretty(&doc)?)?;
        }
        TraceCommand::Plot {
            trace,
            output,
            axis,
        } => {
            let (_, records) = read_trace_file(&trace)?;
            let axis = match axis {
                Axis::Time => PlotAxis::Time,
                Axis::Sequence => PlotAxis::Sequence,
            };
            let title = trace
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            plot_svg(&output, &title, &records, axis)?;
            eprintln!("wrote {}", output.display());
        }
    }
    Ok(())
}
