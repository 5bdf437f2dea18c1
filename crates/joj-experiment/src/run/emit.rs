//! The files a traced run leaves for its reader: the trace (`docs/formats/joj-trace.md`) and
//! an SVG plot of it, named after the run's label (with `-2`, `-3`, … when the name is taken).

use std::io::Write;
use std::path::Path;

use joj_linux::ScratchFs;
use joj_trace::format::{
    Clock, DeviceRole as TraceDeviceRole, TraceDevice, TraceHeader, TraceSource, write_trace,
};
use joj_trace::output::{publish_unique, stage};
use joj_trace::plot::{PlotAxis, render_svg};
use joj_trace::{TraceError, TraceRecord};

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
    std::fs::create_dir_all(out).map_err(|source| ExperimentError::Io {
        what: format!("creating {}", out.display()),
        source,
    })?;
    let header = trace_header(result, fs);
    let trace = stage(out, &format!("{label}{TRACE_SUFFIX}"), |w| {
        write_trace(w, &header, records)
    })?;
    let c = &result.config;
    let title = if result.command.is_some() {
        // A traced command: its command line is the workload.
        format!("{} · {}", c.fs, c.op)
    } else {
        format!(
            "{} · {} · {} — {} transactions",
            c.fs,
            c.journal_mode.as_deref().unwrap_or(&c.op),
            c.op,
            result.transactions
        )
    };
    let svg = render_svg(&title, records, PlotAxis::Sequence)?;
    let plot = stage(out, &format!("{label}{PLOT_SUFFIX}"), |w| {
        w.write_all(svg.as_bytes()).map_err(TraceError::from)
    })?;
    let [trace_path, plot_path] =
        publish_unique(out, label, [(TRACE_SUFFIX, trace), (PLOT_SUFFIX, plot)])
            .map_err(TraceError::from)?;
    result.trace_file = Some(trace_path.to_string_lossy().into_owned());
    result.plot_file = Some(plot_path.to_string_lossy().into_owned());
    Ok(())
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
    // Replays count modeled throughput in these (joj_device::LoadedTrace).
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
        meta.insert("paced_on".into(), p.profile.clone().into());
    }
    TraceHeader {
        clock: Clock::Mono,
        devices,
        source: TraceSource::Tracefs,
        meta,
    }
}
