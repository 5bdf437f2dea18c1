//! The files a traced run leaves for its reader: the trace (`docs/formats/joj-trace.md`) and
//! an SVG plot of it, named after the run's label (with `-2`, `-3`, … when the name is taken).

use std::io::Write;
use std::path::Path;

use joj_linux::ScratchFs;
use joj_trace::format::{
    Clock, DeviceRole as TraceDeviceRole, TraceDevice, TraceHeader, TraceSource, write_trace,
};
use joj_trace::output::OutputDir;
use joj_trace::plot::{PerTransaction, PlotAxis, PlotInfo, SetupApart, render_trace_svg};
use joj_trace::{OutputError, TraceError, TraceRecord};

use crate::error::ExperimentError;
use crate::result::RunResult;

/// Write `<label>.trace.jsonl` and `<label>.svg` into `out` and name them in `result`. When
/// either name is taken (an earlier run, or another run writing into `out` right now), both
/// files take the first free `<label>-2`, `<label>-3`, …: a run never replaces another's files,
/// and `result` names the files really written.
pub(super) fn write_trace_and_plot(
    out: &Path,
    label: &str,
    result: &mut RunResult,
    fs: &ScratchFs,
    records: &[TraceRecord],
) -> Result<(), ExperimentError> {
    let held = OutputDir::open(out).map_err(TraceError::from)?;
    let (title, subtitle, transactions) = plot_words(result);
    // The figures the run's text gives: per transaction with the set-up apart, the set-up's own.
    let per_transaction = transactions
        .and(result.block_per_txn.as_ref())
        .map(|b| PerTransaction {
            write_bytes: b.write_bytes,
            flushes: b.flushes,
        });
    let setup = result
        .command
        .as_ref()
        .and_then(|c| c.setup.as_ref())
        .map(|s| SetupApart {
            write_bytes: s.block.write_bytes,
            flushes: s.block.flushes,
        });
    let info = PlotInfo {
        title: &title,
        subtitle: subtitle.as_deref(),
        transactions,
        per_transaction,
        setup,
    };
    let svg = render_trace_svg(&info, records, PlotAxis::Time)?;
    let label = match modes_of(result) {
        Some(modes) => format!("{label}-{modes}"),
        None => label.to_string(),
    };
    let label = label.as_str();
    let header = trace_header(result, fs);
    // A write that fails (a full disk) names the file in the folder as the user gave it.
    let named = |name: &str| {
        let path = out.join(name);
        move |e| match e {
            TraceError::Io(source) => TraceError::from(OutputError::Write { path, source }),
            e => e,
        }
    };
    let name = format!("{label}{TRACE_SUFFIX}");
    let trace = held.stage(&name, |w| {
        write_trace(w, &header, records).map_err(named(&name))
    })?;
    let name = format!("{label}{PLOT_SUFFIX}");
    let plot = held.stage(&name, |w| {
        w.write_all(svg.as_bytes())
            .map_err(TraceError::from)
            .map_err(named(&name))
    })?;
    let [trace_path, plot_path] = held
        .publish_unique(label, [(TRACE_SUFFIX, trace), (PLOT_SUFFIX, plot)])
        .map_err(TraceError::from)?;
    result.trace_file = Some(trace_path.to_string_lossy().into_owned());
    result.plot_file = Some(plot_path.to_string_lossy().into_owned());
    Ok(())
}

/// The plot's title (filesystem, what ran, mode), its second line (per database: mode and
/// commits, how they were counted) and the transactions for per-transaction figures.
fn plot_words(result: &RunResult) -> (String, Option<String>, Option<u64>) {
    let c = &result.config;
    let Some(cmd) = &result.command else {
        let title = format!(
            "{} · {} · {} — {} transactions",
            c.fs,
            c.journal_mode.as_deref().unwrap_or(&c.op),
            c.op,
            result.transactions
        );
        return (title, None, Some(result.transactions));
    };
    let modes = modes_of(result).map_or(String::new(), |m| format!(" · {m} mode"));
    let title = format!("{} · {}{modes}", c.fs, c.op);
    let dbs: Vec<String> = cmd
        .databases
        .iter()
        .map(|d| match d.commits {
            Some(n) => format!(
                "{}: {}, {n} commits ({})",
                d.path,
                d.mode_said(),
                d.commits_counted_by
            ),
            None => format!("{}: {}, commits not counted", d.path, d.mode_said()),
        })
        .collect();
    let counted = cmd.databases.iter().any(|d| d.commits.is_some());
    let subtitle = (!dbs.is_empty()).then(|| dbs.join("; "));
    (title, subtitle, counted.then_some(result.transactions))
}

/// The journal modes of a traced command's databases, for its files' names and its plot's
/// title (`wal`; `delete+wal` for two databases, one in each); `None` for a run that is no
/// command or found no database.
fn modes_of(result: &RunResult) -> Option<String> {
    let mut modes: Vec<&str> = result
        .command
        .as_ref()?
        .databases
        .iter()
        .flat_map(|d| d.journal_mode.split('+'))
        .collect();
    modes.sort_unstable();
    modes.dedup();
    (!modes.is_empty()).then(|| super::command_doc::clean_for_file_name(&modes.join("+")))
}

/// The end of a run's trace file name.
const TRACE_SUFFIX: &str = ".trace.jsonl";
/// The end of a run's plot file name.
const PLOT_SUFFIX: &str = ".svg";

fn trace_header(result: &RunResult, fs: &ScratchFs) -> TraceHeader {
    let devices = fs
        .devices()
        .iter()
        .map(|d| TraceDevice {
            dev: d.dev.to_string(),
            role: match d.role {
                joj_linux::DeviceRole::Journal => TraceDeviceRole::Journal,
                _ => TraceDeviceRole::Main,
            },
            name: d.path.to_string_lossy().into_owned(),
        })
        .collect();
    let mut meta = match serde_json::to_value(&result.config) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    // Replays count modeled throughput in these (joj_device::TraceFile::transactions).
    meta.insert("transactions".into(), result.transactions.into());
    // And compose the host's time measured in the run with the device's, as the run did: the
    // same recording replays to the same modeled figures (`joj replay`).
    if let Some(h) = result
        .host
        .as_ref()
        .and_then(|h| serde_json::to_value(h).ok())
    {
        meta.insert("host".into(), h);
    }
    if let Some(p) = &result.pace {
        meta.insert("paced_on".into(), p.profile.name.clone().into());
    }
    TraceHeader {
        clock: Clock::Mono,
        devices,
        source: TraceSource::Tracefs,
        meta,
    }
}
