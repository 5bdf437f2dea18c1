//! `joj trace`: run a command on a scratch filesystem and trace it (`joj trace [--fs KIND]
//! [--dir D] -- COMMAND [ARGS…]`, in [`crate::trace_run`]); import blkparse text into joj's
//! trace format, summarise a trace, plot it (the subcommands).
//!
//! Both forms share `joj trace`: clap's subcommand is optional, the command is the trailing
//! arguments after `--`, and the run options conflict with the subcommands, so
//! `joj trace show t.jsonl` and `joj trace -- show` (a program named `show`) stay apart.

use crate::output::{CliError, CliResult, check_output_file};
use clap::{Args, Subcommand};
use joj_trace::TraceError;
use joj_trace::format::{MAX_TRACE_BYTES, open_trace_file, write_trace_records};
use joj_trace::output::{Existing, write_atomically};
use joj_trace::plot::{PlotAxis, PlotInfo, TracePlot};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct TraceArgs {
    #[command(subcommand)]
    command: Option<TraceCommand>,
    #[command(flatten)]
    run: crate::trace_run::TraceRunArgs,
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Convert blkparse's text output into a joj-trace file.
    Import {
        /// blkparse output (e.g. `blkparse -i sda -o sda.txt`).
        blkparse: PathBuf,
        /// joj-trace file to write (never the input; an existing file only with --force).
        #[arg(short, long, help_heading = crate::groups::OUTPUT)]
        output: PathBuf,
        /// Replace an existing output file.
        #[arg(long, help_heading = crate::groups::OUTPUT)]
        force: bool,
    },
    /// Print the totals of a joj-trace file as JSON.
    Show { trace: PathBuf },
    /// Draw a joj-trace file as an SVG (LBA over time or sequence).
    Plot {
        trace: PathBuf,
        /// SVG file to write (never the input; an existing file only with --force).
        #[arg(short, long, help_heading = crate::groups::OUTPUT)]
        output: PathBuf,
        /// Replace an existing output file.
        #[arg(long, help_heading = crate::groups::OUTPUT)]
        force: bool,
        /// x axis.
        #[arg(long, value_enum, default_value_t = Axis::Time, help_heading = crate::groups::OUTPUT)]
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
    let Some(command) = a.command else {
        return crate::trace_run::main(a.run);
    };
    match command {
        TraceCommand::Import {
            blkparse,
            output,
            force,
        } => import(&blkparse, &output, force)?,
        TraceCommand::Show { trace } => {
            // Summed as it is read, a record at a time: a trace of any length in little memory.
            let mut reader = open_trace_file(&trace).map_err(|e| named(&trace, e))?;
            let header = reader.header().clone();
            let records = std::iter::from_fn(|| {
                reader
                    .next_record()
                    .map_err(|e| reader.named(e))
                    .transpose()
            });
            let doc = joj_trace::TraceSummary::of_records(header, records)
                .map_err(|e| named(&trace, e))?;
            outln!("{}", crate::output::sorted_json(&doc)?)?;
        }
        TraceCommand::Plot {
            trace,
            output,
            force,
            axis,
        } => {
            check_output_file("-o/--output", &output, force, &[&trace])?;
            let axis = match axis {
                Axis::Time => PlotAxis::Time,
                Axis::Sequence => PlotAxis::Sequence,
            };
            let title = trace
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let svg = plot_stream(&trace, axis)
                .map_err(|e| named(&trace, e))?
                .render(&PlotInfo {
                    title: &title,
                    ..PlotInfo::default()
                })?;
            write_atomically(&output, Existing::replace_if(force), |w| {
                w.write_all(svg.as_bytes()).map_err(TraceError::from)
            })?;
            eprintln!("wrote {}", output.display());
        }
    }
    Ok(())
}

/// `e`, met reading the trace at `path`, with the trace named (an error of the file as an input,
/// not a regular file or too large, names it already).
fn named(path: &Path, e: TraceError) -> Box<dyn std::error::Error> {
    match e {
        TraceError::Input(_) => e.into(),
        source => CliError::TraceFile {
            path: path.to_path_buf(),
            source,
        }
        .into(),
    }
}

/// The picture of the trace at `path`, read one record at a time: what it holds does not grow
/// with the trace.
fn plot_stream(path: &Path, axis: PlotAxis) -> Result<TracePlot, TraceError> {
    let mut reader = open_trace_file(path)?;
    let mut plot = TracePlot::new(axis);
    while let Some(rec) = reader.next_record().map_err(|e| reader.named(e))? {
        plot.add(&rec)?;
    }
    Ok(plot)
}

/// `joj trace import`: blkparse text with at least one request, into a joj-trace file. The
/// text is read twice, a line at a time (what the header must say, then the records to
/// write), as a replay reads it: what is held does not grow with the text.
fn import(blkparse: &Path, output: &Path, force: bool) -> CliResult {
    check_output_file("-o/--output", output, force, &[blkparse])?;
    let input = joj_trace::input::open(blkparse, MAX_TRACE_BYTES, "blkparse text")?;
    // The second reading goes through the descriptor opened first, never the name again.
    let again = input.try_clone()?;
    let mut reader = input.reader();
    let scan = joj_trace::scan_blkparse(&mut reader).map_err(|e| match e {
        TraceError::Io(io) => TraceError::Input(reader.input_error(io)).into(),
        e => named(blkparse, e),
    })?;
    if scan.requests == 0 {
        return Err(CliError::NoBlkparseRequests {
            path: blkparse.to_path_buf(),
        }
        .into());
    }
    let header = scan.header();
    let count = scan.requests;
    let mut again = again;
    std::io::Seek::seek(&mut again.file, std::io::SeekFrom::Start(0))?;
    let mut records = joj_trace::BlkparseRecords::new(again.reader(), scan);
    let mut read_failed = false;
    let written = write_atomically(output, Existing::replace_if(force), |w| {
        let each = std::iter::from_fn(|| {
            let next = records.next_record().map_err(|e| match e {
                TraceError::Io(io) => TraceError::Input(records.get_ref().input_error(io)),
                e => e,
            });
            read_failed |= next.is_err();
            next.transpose()
        });
        write_trace_records(w, &header, count, each)
    });
    written.map_err(|e| match e {
        TraceError::Input(_) => e.into(),
        e if read_failed => named(blkparse, e),
        e => e.into(),
    })?;
    let noun = if count == 1 { "request" } else { "requests" };
    eprintln!("imported {count} {noun} into {}", output.display());
    Ok(())
}
