//! Block-trace plots that answer at a glance, in the papers' view — block address over time,
//! by class — and the modes of a comparison side by side.
//!
//! The trace picture ([`render_trace_svg`]): one lane per class present (the FS journal first,
//! then the logs, the database, the rest), each with its own address range and labelled with
//! its total and share of what was written; flushes as a rate per time bin with their count
//! (readable at thousands, where one tick per flush merges into a bar); the cumulative bytes
//! per class in a panel beside the lanes; integer axes with units; the run's command and mode
//! in the title. The comparison ([`render_compare_svg`]): per mode, the bytes per transaction
//! by class, stacked, and the flushes per transaction.
//!
//! SVG only, through plotters' SVG backend: text is emitted as `<text>` elements and laid out
//! with plotters' built-in size estimate, so no font files or fontconfig are needed.
//!
//! A trace picture is drawn from a [`TracePlot`], gathered one record at a time, so a trace of
//! any length is plotted from a stream in a fixed amount of memory (at most some 20 MiB: a
//! density grid of 2 MiB per class drawn as one); a class of many requests is drawn as their
//! density rather than a marker each, so the SVG is at most [`MAX_SVG_BYTES`] (4 MiB) however
//! long the trace. A comparison draws at most [`MAX_MODE_BARS`] modes.

mod bins;
mod compare_view;
mod gathered;
mod series;
mod style;
mod trace_view;

/// The text of every `<text>` element of an SVG, trimmed (the plots' tests read them).
#[cfg(test)]
pub(crate) fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>'))
        .filter_map(|(_, rest)| rest.split_once("</text>"))
        .map(|(text, _)| text.trim().to_string())
        .collect()
}

use std::io::Write;
use std::path::Path;

use crate::error::TraceError;
use crate::output::{Existing, write_atomically};
use crate::record::TraceRecord;

pub use compare_view::{MAX_MODE_BARS, ModeBar, render_compare_svg};
pub use gathered::{MAX_ANNOTATED_RECORDS, MAX_MARKERS_PER_LANE, TracePlot};
pub use style::{PerTransaction, PlotAxis, PlotInfo, SetupApart};
pub use trace_view::{MAX_SVG_BYTES, render_trace_svg};

/// Render the trace picture with `title` alone and write it to `path` atomically (temporary
/// file, sync, rename), replacing any regular file there.
pub fn plot_svg(
    path: &Path,
    title: &str,
    records: &[TraceRecord],
    axis: PlotAxis,
) -> Result<(), TraceError> {
    let svg = render_svg(title, records, axis)?;
    write_atomically(path, Existing::Replace, |w| {
        w.write_all(svg.as_bytes()).map_err(TraceError::from)
    })
}

/// Render the trace picture with `title` alone to an SVG document in memory.
pub fn render_svg(
    title: &str,
    records: &[TraceRecord],
    axis: PlotAxis,
) -> Result<String, TraceError> {
    render_trace_svg(
        &PlotInfo {
            title,
            ..PlotInfo::default()
        },
        records,
        axis,
    )
}
