//! The files a traced run leaves for its reader: the trace (`docs/formats/joj-trace.md`) and
//! an SVG plot of it, named after the run's label.

use std::path::Path;

use joj_linux::ScratchFs;
use joj_trace::TraceRecord;
use joj_trace::format::{
    Clock, DeviceRole as TraceDeviceRole, TraceDevice, TraceHeader, TraceSource,
};

use crate::error::ExperimentError;
use crate::result::RunResult;

/// Write `<label>.trace.jsonl` and `<label>.svg` into `out` and name them in `result`.
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
    let trace_path = out.join(format!("{label}.trace.jsonl"));
    joj_trace::format::write_trace_file(&trace_path, &header, records)?;
    let plot_path = out.join(format!("{label}.svg"));
    let c = &result.config;
    let title = format!(
        "{} · {} · {} — {} transactions",
        c.fs,
        c.journal_mode.as_deref().unwrap_or(&c.op),
        c.op,
        result.transactions
    );
    joj_trace::plot::plot_svg(
        &plot_path,
        &title,
        records,
        joj_trace::plot::PlotAxis::Sequence,
    )?;
    result.trace_file = Some(trace_path.to_string_lossy().into_owned());
    result.plot_file = Some(plot_path.to_string_lossy().into_owned());
    Ok(())
}

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
    TraceHeader {
        clock: Clock::Mono,
        devices,
        source: TraceSource::Tracefs,
        meta,
    }
}
