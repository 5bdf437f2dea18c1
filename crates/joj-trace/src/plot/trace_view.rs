//! The trace picture: lanes of block address over time by class, a flush-rate lane, and the
//! cumulative bytes beside them (see the module above), drawn from a [`TracePlot`].
//!
//! A class kept request by request is drawn a marker per request, as the papers draw it; a
//! class kept as a density grid is drawn as cells of [`CELL_PX`] pixels, shaded by how many
//! requests fell in each (four shades, on a log scale, runs of one shade in a row drawn as one
//! rectangle). So the picture's size has a bound whatever the trace's length: see
//! [`MAX_SVG_BYTES`].

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::bins::Grid;
use super::gathered::{Lane, Marks, TracePlot};
use super::series::{Marker, READ, Series, WRITE_SERIES, size_label};
use super::style::{GREY, INK, PlotAxis, PlotInfo, grouped, integer_label, plot_error, size};
use crate::error::TraceError;
use crate::record::TraceRecord;

const WIDTH_PX: u32 = 1400;
const HEIGHT_PX: u32 = 820;
/// Width of the lanes' side of the picture; the cumulative panel takes the rest.
const LANES_WIDTH_PX: u32 = 960;
/// Height of the flush lane, and of the x axis under it.
const FLUSH_LANE_PX: u32 = 96;
const X_AXIS_PX: u32 = 46;
/// Room for the lanes' address labels, at least ([`y_labels_px`] widens it for long ones).
const Y_LABELS_PX: u32 = 78;
/// Sectors per 4 KiB block: addresses are in filesystem-block units, as in the papers.
const SECTORS_PER_BLOCK: f64 = 8.0;
/// The strip above each lane that holds its label.
const LABEL_STRIP_PX: u32 = 19;
/// Time bins of the flush rate.
const FLUSH_BINS: usize = 120;
/// The side of a density cell, in pixels.
pub(crate) const CELL_PX: u32 = 4;
/// Opacity of a density cell by shade: the fewest requests to the most.
const SHADES: [f64; 4] = [0.4, 0.6, 0.8, 1.0];

/// The most bytes a trace picture takes, whatever the trace: the frame, axes, labels and
/// flush bars (some 60 KiB), and either markers — at most
/// [`super::gathered::MAX_MARKERS_PER_LANE`] in each of the nine lanes, about 115 bytes each,
/// 1.5 MiB in all — or density cells — at most one rectangle of about 90 bytes per cell of
/// [`CELL_PX`] in the lanes, whose some 31,600 cells (218 × 145) make 2.8 MiB — with the
/// write sizes of a trace of at most 300 records and seven cumulative lines of at most 4,096
/// points (about 10 bytes each). `a_trace_plot_stays_bounded_however_long_the_trace` draws
/// the worst of each and checks it.
pub const MAX_SVG_BYTES: usize = 4 << 20;

/// Where a key goes on the x axis, and what the axis says.
#[derive(Debug, Clone, Copy)]
struct XScale {
    axis: PlotAxis,
    t0_ns: u64,
    /// Nanoseconds per x unit (milliseconds, or seconds for a trace longer than 20 s).
    unit_ns: f64,
}

impl XScale {
    fn new(plot: &TracePlot) -> XScale {
        let (t0_ns, t1_ns) = plot.times.unwrap_or((0, 0));
        let unit_ns = if t1_ns - t0_ns > 20_000_000_000 {
            1e9
        } else {
            1e6
        };
        XScale {
            axis: plot.axis,
            t0_ns,
            unit_ns,
        }
    }

    /// The x of a key: an issue time, or a request's number.
    fn x(self, key: u64) -> f64 {
        match self.axis {
            PlotAxis::Time => (key - self.t0_ns) as f64 / self.unit_ns,
            PlotAxis::Sequence => key as f64,
        }
    }

    fn description(self) -> &'static str {
        match (self.axis, self.unit_ns >= 1e9) {
            (PlotAxis::Time, false) => "time since the first request (ms)",
            (PlotAxis::Time, true) => "time since the first request (s)",
            (PlotAxis::Sequence, _) => "request number",
        }
    }

    /// Per x unit, as a rate's unit.
    fn per(self) -> &'static str {
        match (self.axis, self.unit_ns >= 1e9) {
            (PlotAxis::Time, false) => "per ms",
            (PlotAxis::Time, true) => "per s",
            (PlotAxis::Sequence, _) => "per request",
        }
    }
}

/// Room for the lanes' and the flush lane's axis labels: [`Y_LABELS_PX`], or more when a lane's
/// addresses need it (a block number has 10 digits on a disk of 16 TiB; one of 16 was cut at
/// the picture's left edge). The same for every lane, so that their x axes line up.
fn y_labels_px(plot: &TracePlot) -> u32 {
    // An 11 px sans-serif digit is about 6.2 px wide, a comma about 3.1; ticks and gap 14 px.
    let width = |v: f64| {
        let text = integer_label(&v);
        let commas = text.chars().filter(|c| *c == ',').count() as f64;
        let rest = text.chars().count() as f64 - commas;
        (rest * 6.2 + commas * 3.1 + 14.0).ceil() as u32
    };
    plot.lanes()
        .iter()
        .flat_map(|lane| {
            let (lo, hi) = padded(block(lane.lo), block(lane.hi), 0.08);
            [width(lo), width(hi)]
        })
        .fold(Y_LABELS_PX, u32::max)
        .min(LANES_WIDTH_PX / 3)
}

fn block(sector: u64) -> f64 {
    sector as f64 / SECTORS_PER_BLOCK
}

/// `[lo, hi]` widened by `frac` of its span on each side; a point or empty range gets a unit
/// span so the chart is never degenerate.
fn padded(lo: f64, hi: f64, frac: f64) -> (f64, f64) {
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    // One key alone: a pad of 1 is lost to rounding past 2^53 (a sector of 2^60 would draw
    // its lane with no height), so it grows with the key.
    let pad = if hi > lo {
        (hi - lo) * frac
    } else {
        (lo.abs() * 1e-9).max(1.0)
    };
    (lo - pad, hi + pad)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Render the trace picture of `records` to an SVG document in memory (at most
/// [`MAX_SVG_BYTES`]).
pub fn render_trace_svg(
    info: &PlotInfo<'_>,
    records: &[TraceRecord],
    axis: PlotAxis,
) -> Result<String, TraceError> {
    TracePlot::of(records, axis)?.render(info)
}

impl TracePlot {
    /// Render the picture to an SVG document in memory, at most [`MAX_SVG_BYTES`].
    pub fn render(&self, info: &PlotInfo<'_>) -> Result<String, TraceError> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
            draw(&root, info, self)?;
            root.present().map_err(plot_error("writing out the SVG"))?;
        }
        Ok(super::style::well_formed(svg))
    }
}

/// Characters of the subtitle on one line: 15 px sans-serif averages under 8 px a character, so
/// 150 stay inside the picture's 1,400 px (a title line is centred: a longer one was cut at
/// both edges).
const SUBTITLE_LINE_CHARS: usize = 150;
/// Lines the subtitle may take; what is left is ended with `…` (the text report has it all).
const SUBTITLE_LINES: usize = 3;

/// `text` broken at spaces into lines of at most `width` characters, at most `lines` of them;
/// a word longer than a line is cut, and the last line ends with `…` when text is left out.
fn wrapped(text: &str, width: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut words = text.split(' ').filter(|w| !w.is_empty()).peekable();
    while let Some(word) = words.next() {
        let word: String = word.chars().take(width).collect();
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
            if out.len() == lines {
                let last = out.last_mut().expect("lines > 0: a line was just pushed");
                while last.chars().count() + 2 > width {
                    last.pop();
                }
                last.push_str(" …");
                return out;
            }
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
        if words.peek().is_none() {
            out.push(std::mem::take(&mut line));
        }
    }
    out.truncate(lines.max(1));
    out
}

fn draw(root: &Area<'_>, info: &PlotInfo<'_>, plot: &TracePlot) -> Result<(), TraceError> {
    root.fill(&WHITE).map_err(plot_error("the background"))?;
    let mut area = root
        .titled(info.title, ("sans-serif", 22).into_font().color(&INK))
        .map_err(plot_error("the title"))?;
    if let Some(sub) = info.subtitle {
        for line in wrapped(sub, SUBTITLE_LINE_CHARS, SUBTITLE_LINES) {
            area = area
                .titled(&line, ("sans-serif", 15).into_font().color(&GREY))
                .map_err(plot_error("the subtitle"))?;
        }
    }
    let x_of = XScale::new(plot);
    let (x_lo, x_hi) = match plot.keys {
        Some((a, b)) => padded(x_of.x(a), x_of.x(b), 0.01),
        None => padded(0.0, 1.0, 0.01),
    };
    let (left, right) = area.split_horizontally(LANES_WIDTH_PX);
    let (_, h) = left.dim_in_pixel();
    let lanes_h = h.saturating_sub(FLUSH_LANE_PX + X_AXIS_PX);
    let (lanes_area, flush_area) = left.split_vertically(lanes_h);
    // What the lanes' y axes are, once for all of them, along the left edge.
    lanes_area
        .draw_text(
            "block address (4 KiB blocks), each lane its own range",
            &("sans-serif", 12)
                .into_font()
                .transform(FontTransform::Rotate270)
                .color(&GREY),
            (4, lanes_h as i32 / 2 + 150),
        )
        .map_err(plot_error("the lanes' axis title"))?;
    let labels_px = y_labels_px(plot);
    draw_lanes(&lanes_area, plot, x_of, (x_lo, x_hi), labels_px)?;
    draw_flush_rate(&flush_area, plot, (x_lo, x_hi), x_of, info, labels_px)?;
    draw_cumulative(&right, plot, (x_lo, x_hi), x_of, info)
}

/// One lane per class: its requests at their own address range, its label and total.
fn draw_lanes(
    area: &Area<'_>,
    plot: &TracePlot,
    x_of: XScale,
    (x_lo, x_hi): (f64, f64),
    labels_px: u32,
) -> Result<(), TraceError> {
    let lanes = plot.lanes();
    if lanes.is_empty() {
        area.draw_text(
            "no request with an address in this trace",
            &("sans-serif", 16).into_font().color(&GREY),
            (labels_px as i32 + 20, 30),
        )
        .map_err(plot_error("the empty trace"))?;
        return Ok(());
    }
    let (_, h) = area.dim_in_pixel();
    let n = lanes.len() as u32;
    let breaks: Vec<u32> = (1..n).map(|i| i * h / n).collect();
    let areas = area.split_by_breakpoints::<u32, u32, _, _>([], breaks);
    for (lane, lane_area) in lanes.into_iter().zip(areas) {
        let (y_lo, y_hi) = padded(block(lane.lo), block(lane.hi), 0.08);
        // The label goes in a strip above the lane's plot, where it hides no request.
        let mut chart = ChartBuilder::on(&lane_area)
            .margin_top(LABEL_STRIP_PX)
            .margin_bottom(2)
            .margin_right(8)
            .x_label_area_size(0)
            .y_label_area_size(labels_px)
            .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)
            .map_err(plot_error("a lane's axes"))?;
        // Three address labels, fewer for a lane a few blocks high (no label twice).
        let y_labels = ((y_hi - y_lo).floor() as usize).clamp(1, 3);
        chart
            .configure_mesh()
            .y_labels(y_labels)
            .x_labels(8)
            .y_label_formatter(&integer_label)
            .label_style(("sans-serif", 11))
            .light_line_style(RGBColor(248, 248, 248))
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()
            .map_err(plot_error("a lane's grid"))?;
        match &lane.marks {
            Marks::Each(each) => draw_each(&mut chart, lane, each, x_of)?,
            Marks::Density(grid) => {
                draw_density(&mut chart, lane, grid, x_of, (x_lo, x_hi), (y_lo, y_hi))?
            }
        }
        draw_sizes(&mut chart, plot, lane, x_of)?;
        lane_label(&lane_area, lane, plot.written(), labels_px)?;
    }
    Ok(())
}

/// A marker per request at its first block; a discard as a bar over the blocks it covers.
fn draw_each(
    chart: &mut Chart<'_, '_>,
    lane: &Lane,
    each: &[(u64, u64, u64)],
    x_of: XScale,
) -> Result<(), TraceError> {
    let Series { shape, color, .. } = lane.series;
    if lane.is_ranges() {
        chart
            .draw_series(each.iter().map(|(x, a, b)| {
                PathElement::new(
                    vec![(x_of.x(*x), block(*a)), (x_of.x(*x), block(*b))],
                    color.stroke_width(3),
                )
            }))
            .map_err(plot_error(lane.series.label))?;
    } else {
        chart
            .draw_series(each.iter().map(|(x, a, _)| Marker {
                at: (x_of.x(*x), block(*a)),
                shape,
                color,
            }))
            .map_err(plot_error(lane.series.label))?;
    }
    Ok(())
}

/// The requests of a lane kept as a density grid: cells of [`CELL_PX`] pixels, each shaded by
/// how many requests fell in it, relative to the fullest cell on a log scale.
fn draw_density(
    chart: &mut Chart<'_, '_>,
    lane: &Lane,
    grid: &Grid,
    x_of: XScale,
    (x_lo, x_hi): (f64, f64),
    (y_lo, y_hi): (f64, f64),
) -> Result<(), TraceError> {
    let (w, h) = chart.plotting_area().dim_in_pixel();
    let cols = (w / CELL_PX).max(1) as usize;
    let rows = (h / CELL_PX).max(1) as usize;
    let cell = |v: f64, lo: f64, hi: f64, n: usize| {
        (((v - lo) / (hi - lo) * n as f64).floor().max(0.0) as usize).min(n - 1)
    };
    let mut counts = vec![0u64; cols * rows];
    for (xc, xi, yc, yi, n) in grid.filled() {
        let c = cell(x_of.x(xc.middle(xi)), x_lo, x_hi, cols);
        let r = cell(block(yc.middle(yi)), y_lo, y_hi, rows);
        counts[r * cols + c] += u64::from(n);
    }
    let most = counts.iter().copied().max().unwrap_or(0);
    let shade = |n: u64| -> Option<usize> {
        if n == 0 {
            return None;
        }
        let frac = if most > 1 {
            (n as f64).ln() / (most as f64).ln()
        } else {
            1.0
        };
        Some(((frac * SHADES.len() as f64) as usize).min(SHADES.len() - 1))
    };
    let (dx, dy) = ((x_hi - x_lo) / cols as f64, (y_hi - y_lo) / rows as f64);
    let mut runs = Vec::new();
    for r in 0..rows {
        let row = &counts[r * cols..(r + 1) * cols];
        let mut c = 0;
        while c < cols {
            let Some(s) = shade(row[c]) else {
                c += 1;
                continue;
            };
            let start = c;
            while c < cols && shade(row[c]) == Some(s) {
                c += 1;
            }
            runs.push((start, c, r, s));
        }
    }
    let color = lane.series.color;
    chart
        .draw_series(runs.into_iter().map(|(c0, c1, r, s)| {
            Rectangle::new(
                [
                    (x_lo + c0 as f64 * dx, y_lo + r as f64 * dy),
                    (x_lo + c1 as f64 * dx, y_lo + (r + 1) as f64 * dy),
                ],
                color.mix(SHADES[s]).filled(),
            )
        }))
        .map_err(plot_error(lane.series.label))?;
    Ok(())
}

/// Each write's size beside its marker, for a trace of at most
/// [`super::gathered::MAX_ANNOTATED_RECORDS`] records.
fn draw_sizes(
    chart: &mut Chart<'_, '_>,
    plot: &TracePlot,
    lane: &Lane,
    x_of: XScale,
) -> Result<(), TraceError> {
    let which = WRITE_SERIES
        .iter()
        .position(|s| s.label == lane.series.label);
    let font = ("sans-serif", 10).into_font().color(&RGBColor(60, 60, 60));
    chart
        .draw_series(plot.sizes.iter().filter(|s| Some(s.0) == which).map(
            |(_, x, sector, bytes)| {
                EmptyElement::at((x_of.x(*x), block(*sector)))
                    + Text::new(size_label(*bytes), (5, -12), font.clone())
            },
        ))
        .map_err(plot_error("the write sizes"))?;
    Ok(())
}

/// The lane's class, its total and its share of what was written, top left; for a lane drawn
/// as a density, how many requests it holds and how to read its shades.
fn lane_label(
    area: &Area<'_>,
    lane: &Lane,
    written: u64,
    labels_px: u32,
) -> Result<(), TraceError> {
    let share = if written > 0 && lane.series.label != READ.label {
        let pct = 100.0 * lane.bytes as f64 / written as f64;
        if pct < 0.5 {
            " (<1 % of writes)".to_string()
        } else {
            format!(" ({pct:.0} % of writes)")
        }
    } else {
        String::new()
    };
    let density = match lane.marks {
        Marks::Density(_) => format!(
            " · {} requests, darker where more fell",
            grouped(lane.requests)
        ),
        Marks::Each(_) => String::new(),
    };
    let text = format!(
        "{} — {}{share}{density}",
        lane.series.label,
        size(lane.bytes as f64)
    );
    let x = labels_px as i32 + 2;
    area.draw(&Marker {
        at: (x + 7, 10),
        shape: lane.series.shape,
        color: lane.series.color,
    })
    .map_err(plot_error("a lane's label"))?;
    area.draw_text(
        &text,
        &("sans-serif", 13).into_font().color(&INK),
        (x + 17, 3),
    )
    .map_err(plot_error("a lane's label"))
}

/// Flushes as a rate: how many fell in each of [`FLUSH_BINS`] bins of the x axis (a time bin
/// of a long trace's flushes counted in the bar its middle falls in).
fn draw_flush_rate(
    area: &Area<'_>,
    plot: &TracePlot,
    (x_lo, x_hi): (f64, f64),
    x_of: XScale,
    info: &PlotInfo<'_>,
    labels_px: u32,
) -> Result<(), TraceError> {
    let width = (x_hi - x_lo) / FLUSH_BINS as f64;
    let mut bins = vec![0u64; FLUSH_BINS];
    for (key, n) in plot.flushes.points(false) {
        let i = (((x_of.x(key) - x_lo) / width) as usize).min(FLUSH_BINS - 1);
        bins[i] += n;
    }
    let rate = |n: u64| n as f64 / width.max(f64::MIN_POSITIVE);
    let top = bins.iter().map(|n| rate(*n)).fold(0.0, f64::max).max(1.0) * 1.15;
    let mut chart = ChartBuilder::on(area)
        .margin_top(LABEL_STRIP_PX)
        .margin_right(8)
        .x_label_area_size(X_AXIS_PX)
        .y_label_area_size(labels_px)
        .build_cartesian_2d(x_lo..x_hi, 0.0..top)
        .map_err(plot_error("the flush lane's axes"))?;
    chart
        .configure_mesh()
        .y_labels(3)
        .x_labels(8)
        .x_label_formatter(&integer_label)
        .y_label_formatter(&integer_label)
        .x_desc(x_of.description())
        .label_style(("sans-serif", 11))
        .axis_desc_style(("sans-serif", 13))
        .light_line_style(RGBColor(248, 248, 248))
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(plot_error("the flush lane's grid"))?;
    chart
        .draw_series(
            bins.iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(i, n)| {
                    let a = x_lo + i as f64 * width;
                    Rectangle::new([(a, 0.0), (a + width * 0.9, rate(*n))], INK.filled())
                }),
        )
        .map_err(plot_error("the flushes"))?;
    let setup = info.setup.map_or(0, |s| s.flushes);
    let per_txn = match (info.per_transaction, info.transactions) {
        (Some(p), Some(t)) if t > 0 => format!(", {:.2} per transaction", p.flushes),
        (None, Some(t)) if t > 0 => format!(
            ", {:.2} per transaction",
            plot.flush_count.saturating_sub(setup) as f64 / t as f64
        ),
        _ => String::new(),
    };
    let of_it = if setup > 0 {
        format!(" ({} of them one-time set-up)", grouped(setup))
    } else {
        String::new()
    };
    let text = format!(
        "cache flushes (incl. preflush) — {}{of_it}{per_txn}; bars: flushes {}",
        grouped(plot.flush_count),
        x_of.per()
    );
    area.draw_text(
        &text,
        &("sans-serif", 13).into_font().color(&INK),
        (labels_px as i32 + 4, 3),
    )
    .map_err(plot_error("the flush lane's label"))
}

/// Per write class present, `(x, bytes written so far)`: at each write of a short trace, at the
/// end of each time bin of a long one.
fn cumulative_points(plot: &TracePlot, x_of: XScale) -> Vec<(Series, Vec<(f64, f64)>)> {
    plot.cumulative()
        .into_iter()
        .map(|(series, sampled)| {
            let mut so_far = 0u64;
            let points = sampled
                .points(true)
                .into_iter()
                .map(|(key, bytes)| {
                    so_far += bytes;
                    (x_of.x(key), so_far as f64)
                })
                .collect();
            (series, points)
        })
        .collect()
}

/// The cumulative panel's caption — what was written, and per transaction the run's own figure
/// — with the one-time set-up said apart on a line under it; the area under them.
fn captioned<'a>(
    area: &Area<'a>,
    written: u64,
    info: &PlotInfo<'_>,
) -> Result<Area<'a>, TraceError> {
    let setup = info.setup.map_or(0, |s| s.write_bytes);
    let per_txn = match (info.per_transaction, info.transactions) {
        (Some(p), Some(t)) if t > 0 => format!(" — {} per transaction", size(p.write_bytes)),
        (None, Some(t)) if t > 0 => format!(
            " — {} per transaction",
            size(written.saturating_sub(setup) as f64 / t as f64)
        ),
        _ => String::new(),
    };
    let caption = format!("written so far: {}{per_txn}", size(written as f64));
    let mut area = area
        .titled(&caption, ("sans-serif", 15).into_font().color(&INK))
        .map_err(plot_error("the cumulative panel's caption"))?;
    // The set-up on a line of its own: the caption and it on one line overrun the panel.
    if setup > 0 {
        let apart = format!(
            "({} of it one-time set-up, not in the per-transaction figure)",
            size(setup as f64)
        );
        area = area
            .titled(&apart, ("sans-serif", 12).into_font().color(&GREY))
            .map_err(plot_error("the cumulative panel's caption"))?;
    }
    Ok(area)
}

/// What each class has written so far, one line each, its total at the line's end.
fn draw_cumulative(
    area: &Area<'_>,
    plot: &TracePlot,
    (x_lo, x_hi): (f64, f64),
    x_of: XScale,
    info: &PlotInfo<'_>,
) -> Result<(), TraceError> {
    let cumulative = cumulative_points(plot, x_of);
    let written = plot.written();
    let top_bytes = cumulative
        .iter()
        .filter_map(|(_, c)| c.last().map(|p| p.1))
        .fold(0.0, f64::max);
    let (unit, unit_name) = if top_bytes >= 10.0 * 1024.0 * 1024.0 {
        (1024.0 * 1024.0, "MiB")
    } else {
        (1024.0, "KiB")
    };
    let y_hi = (top_bytes / unit).max(1.0) * 1.08;
    let area = captioned(area, written, info)?;
    let mut chart = ChartBuilder::on(&area)
        .margin(10)
        .margin_left(4)
        .margin_right(132)
        .x_label_area_size(X_AXIS_PX - 6)
        .y_label_area_size(56)
        .build_cartesian_2d(x_lo..x_hi, 0.0..y_hi)
        .map_err(plot_error("the cumulative panel's axes"))?;
    let y_desc = format!("{unit_name} written");
    chart
        .configure_mesh()
        .x_labels(4)
        .y_labels(6)
        .x_label_formatter(&integer_label)
        .y_label_formatter(&integer_label)
        .x_desc(x_of.description())
        .y_desc(y_desc)
        .label_style(("sans-serif", 11))
        .axis_desc_style(("sans-serif", 12))
        .light_line_style(RGBColor(248, 248, 248))
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(plot_error("the cumulative panel's grid"))?;
    // End labels, nudged apart so that none covers another: at least 15 px between them.
    let (_, h) = area.dim_in_pixel();
    let min_gap = y_hi / (h.max(1) as f64) * 15.0;
    let mut ends: Vec<(Series, f64, f64)> = cumulative
        .iter()
        .filter_map(|(s, c)| c.last().map(|p| (*s, p.1 / unit, p.1)))
        .collect();
    ends.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut placed: Vec<f64> = Vec::new();
    for (_, y, _) in &ends {
        let y = placed.last().map_or(*y, |last| y.max(last + min_gap));
        placed.push(y);
    }
    for ((series, points), y_label) in cumulative.iter().zip(order_of(&cumulative, &ends, &placed))
    {
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|(x, b)| (*x, b / unit)),
                series.color.stroke_width(2),
            ))
            .map_err(plot_error("a cumulative line"))?;
        let total = points.last().map_or(0.0, |p| p.1);
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((x_hi, y_label))
                    + Text::new(
                        format!("{} {}", short_label(series), size(total)),
                        (6, -6),
                        ("sans-serif", 12).into_font().color(&series.color),
                    ),
            ))
            .map_err(plot_error("a cumulative label"))?;
    }
    Ok(())
}

/// The nudged label height of each cumulative line, in the order of `cumulative`.
fn order_of(
    cumulative: &[(Series, Vec<(f64, f64)>)],
    ends: &[(Series, f64, f64)],
    placed: &[f64],
) -> Vec<f64> {
    cumulative
        .iter()
        .map(|(s, _)| {
            ends.iter()
                .zip(placed)
                .find(|((e, _, _), _)| e.label == s.label)
                .map_or(0.0, |(_, y)| *y)
        })
        .collect()
}

/// A class's name, short enough for the cumulative panel's margin.
fn short_label(s: &Series) -> &'static str {
    match s.label {
        "rollback journal data" => "journal data",
        "other file data" => "other data",
        l => l,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::svg_texts as texts;
    use crate::record::{BlockClass, FileRole, Op};

    #[test]
    fn a_lane_of_one_huge_key_keeps_a_height() {
        for key in [0.0, 5.0, (1u64 << 57) as f64, u64::MAX as f64] {
            let (lo, hi) = padded(key, key, 0.08);
            assert!(lo < key && key < hi, "{key}: {lo}..{hi}");
        }
    }

    pub(crate) fn rec(
        i: u64,
        op: Op,
        sector: u64,
        sectors: u64,
        class: BlockClass,
        file: Option<FileRole>,
    ) -> TraceRecord {
        TraceRecord {
            class,
            file,
            ..TraceRecord::new(5_000_000 + i * 250_000, "7:0", op, sector, sectors)
        }
    }

    fn sample() -> Vec<TraceRecord> {
        let mut commit = rec(7, Op::Write, 526360, 8, BlockClass::FsJournal, None);
        commit.preflush = true;
        vec![
            rec(
                0,
                Op::Write,
                274432,
                8,
                BlockClass::Data,
                Some(FileRole::Wal),
            ),
            rec(
                1,
                Op::Write,
                274440,
                16,
                BlockClass::Data,
                Some(FileRole::Wal),
            ),
            rec(
                2,
                Op::Write,
                2048,
                8,
                BlockClass::Data,
                Some(FileRole::Database),
            ),
            rec(6, Op::Write, 526336, 24, BlockClass::FsJournal, None),
            commit,
            rec(8, Op::Flush, 0, 0, BlockClass::Flush, None),
        ]
    }

    fn svg(records: &[TraceRecord], axis: PlotAxis, transactions: Option<u64>) -> String {
        render_trace_svg(
            &PlotInfo {
                title: "ext4 · python3 app.py",
                subtitle: Some("app.db in wal mode, 2 commits"),
                transactions,
                ..PlotInfo::default()
            },
            records,
            axis,
        )
        .expect("render")
    }

    /// A block address of 16 digits (a write near the end of a disk of 2^62 bytes) is drawn
    /// whole: its label starts inside the picture, not cut at its left edge.
    #[test]
    fn a_long_block_address_fits_beside_its_lane() {
        let far = 8 * 1_234_567_890_123_456;
        let records = vec![
            rec(0, Op::Write, far, 8, BlockClass::Data, Some(FileRole::Wal)),
            rec(
                1,
                Op::Write,
                far + 64,
                8,
                BlockClass::Data,
                Some(FileRole::Wal),
            ),
        ];
        let svg = svg(&records, PlotAxis::Time, None);
        let mut seen = 0;
        for element in svg.split("<text").skip(1) {
            let Some((attrs, rest)) = element.split_once('>') else {
                continue;
            };
            let Some((text, _)) = rest.split_once("</text>") else {
                continue;
            };
            let text = text.trim();
            if !text.starts_with("1,234,567,890,12") {
                continue;
            }
            seen += 1;
            let x: f64 = attrs
                .split("x=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no x in {attrs}"));
            assert!(attrs.contains("text-anchor=\"end\""), "{attrs}");
            // Its digits are at least 5.5 px wide at 11 px, its commas 2.5.
            let commas = text.matches(',').count() as f64;
            let least = (text.chars().count() as f64 - commas) * 5.5 + commas * 2.5;
            assert!(
                x >= least,
                "{text:?} ends at x = {x}, narrower than its {least} px"
            );
        }
        assert!(seen > 0, "no address label of the far lane in {svg}");
    }

    /// A traced command's subtitle (each database's mode, commits and how they were counted)
    /// runs to hundreds of characters; it is wrapped to lines that fit the picture, not drawn as
    /// one line cut at both edges.
    #[test]
    fn a_long_subtitle_is_wrapped_to_lines_that_fit() {
        let long = "app.db: wal, and 1 commit(s) in delete (PRAGMA journal_mode=WAL itself \
                    commits once through a rollback journal), 102 commits (1 unlink(s) of \
                    app.db-journal (DELETE: one per commit) + 103 sync(s) of app.db-wal less 1 \
                    checkpoint(s) and 1 header sync(s) (WAL with synchronous=FULL: one per commit))";
        let svg = render_trace_svg(
            &PlotInfo {
                title: "ext4 · python3 app.py",
                subtitle: Some(long),
                transactions: Some(2),
                ..PlotInfo::default()
            },
            &sample(),
            PlotAxis::Time,
        )
        .expect("render");
        let t = texts(&svg);
        let lines: Vec<&String> = t
            .iter()
            .filter(|x| x.chars().count() >= 8 && long.contains(x.as_str()))
            .collect();
        assert!(lines.len() > 1, "{t:?}");
        for l in &lines {
            assert!(l.chars().count() <= SUBTITLE_LINE_CHARS, "{l}");
        }
        let joined = lines
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(joined, long);
        // Past three lines the rest is left out, and said to be.
        let w = wrapped(&long.repeat(3), 60, 3);
        assert_eq!(w.len(), 3);
        assert!(w[2].ends_with(" …") && w.iter().all(|l| l.chars().count() <= 60));
        assert_eq!(wrapped("short", 60, 3), vec!["short".to_string()]);
        assert_eq!(wrapped(&"x".repeat(70), 60, 3), vec!["x".repeat(60)]);
    }

    #[test]
    fn only_the_classes_present_are_labelled_each_with_its_total() {
        let t = texts(&svg(&sample(), PlotAxis::Time, Some(2)));
        let has = |s: &str| t.iter().any(|x| x.contains(s));
        assert!(has("ext4 · python3 app.py") && has("app.db in wal mode, 2 commits"));
        assert!(has("FS journal — 16.0 KiB (50 % of writes)"), "{t:?}");
        assert!(has("WAL data — 12.0 KiB (38 % of writes)"), "{t:?}");
        assert!(has("database data — 4.0 KiB (12 % of writes)"), "{t:?}");
        for absent in [
            "rollback journal data",
            "FS metadata",
            "unclassified",
            "discard",
        ] {
            assert!(!has(absent), "{absent} is not in the trace: {t:?}");
        }
        // Flushes: the pure flush and the preflush of the commit block, per transaction.
        assert!(
            has("cache flushes (incl. preflush) — 2, 1.00 per transaction"),
            "{t:?}"
        );
        assert!(
            has("written so far: 32.0 KiB — 16.0 KiB per transaction"),
            "{t:?}"
        );
        assert!(has("time since the first request (ms)"));
    }

    /// A run's one-time set-up (waldio's preallocated log) is in the totals, said apart, and
    /// out of the per-transaction figures, which are the run's own (its document's).
    #[test]
    fn the_set_up_is_said_apart_and_kept_out_of_the_per_transaction_figures() {
        let svg = render_trace_svg(
            &PlotInfo {
                title: "ext4 · python3 rows.py",
                transactions: Some(2),
                per_transaction: Some(crate::plot::PerTransaction {
                    write_bytes: 8.0 * 1024.0,
                    flushes: 0.5,
                }),
                setup: Some(crate::plot::SetupApart {
                    write_bytes: 16 * 1024,
                    flushes: 1,
                }),
                ..PlotInfo::default()
            },
            &sample(),
            PlotAxis::Time,
        )
        .unwrap();
        let t = texts(&svg);
        let has = |s: &str| t.iter().any(|x| x == s);
        assert!(
            has("written so far: 32.0 KiB — 8.0 KiB per transaction"),
            "{t:?}"
        );
        assert!(
            has("(16.0 KiB of it one-time set-up, not in the per-transaction figure)"),
            "{t:?}"
        );
        assert!(
            t.iter().any(|x| x.starts_with(
                "cache flushes (incl. preflush) — 2 (1 of them one-time set-up), 0.50 per transaction"
            )),
            "{t:?}"
        );
    }

    #[test]
    fn axes_are_integers_with_units() {
        let many: Vec<TraceRecord> = (0..2000)
            .map(|i| {
                rec(
                    i,
                    Op::Write,
                    i * 8,
                    8,
                    BlockClass::Data,
                    Some(FileRole::Wal),
                )
            })
            .collect();
        let t = texts(&svg(&many, PlotAxis::Sequence, None));
        assert!(t.iter().any(|x| x == "request number"), "{t:?}");
        assert!(
            t.iter().any(|x| x == "1,000"),
            "tick labels with separators: {t:?}"
        );
        assert!(
            !t.iter().any(|x| x.ends_with(".0")
                && x.chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
                && x.len() > 3
                && !x.starts_with("0.")),
            "no 1000.0-style labels on the address and request axes: {t:?}"
        );
        // Long traces carry no size beside each marker.
        assert!(!t.iter().any(|x| x == "4K"));
    }

    #[test]
    fn short_traces_show_each_writes_size_and_an_empty_trace_still_plots() {
        let t = texts(&svg(&sample(), PlotAxis::Time, None));
        assert!(
            t.iter().any(|x| x == "4K") && t.iter().any(|x| x == "12K"),
            "{t:?}"
        );
        let empty = svg(&[], PlotAxis::Time, None);
        assert!(empty.starts_with("<svg"));
        assert!(
            texts(&empty)
                .iter()
                .any(|x| x.contains("no request with an address"))
        );
    }

    #[test]
    fn lanes_are_the_classes_present_in_order_with_their_totals() {
        let recs = vec![
            rec(
                0,
                Op::Write,
                2048,
                8,
                BlockClass::Data,
                Some(FileRole::Database),
            ),
            rec(1, Op::Write, 526336, 24, BlockClass::FsJournal, None),
            rec(2, Op::Flush, 0, 0, BlockClass::Flush, None),
        ];
        let g = TracePlot::of(&recs, PlotAxis::Sequence).unwrap();
        let labels: Vec<&str> = g.lanes().iter().map(|l| l.series.label).collect();
        assert_eq!(labels, ["FS journal", "database data"]);
        assert_eq!(g.lanes()[0].bytes, 24 * 512);
        assert_eq!(g.flush_count, 1);
        assert_eq!(g.written(), 32 * 512);
    }

    #[test]
    fn a_title_naming_a_file_someone_else_named_stays_well_formed_xml() {
        let title = "ext4 · sh -c … \u{1b}[2Jx\r\u{0}\u{202e}y\u{ffff}";
        let svg = render_trace_svg(
            &PlotInfo {
                title,
                subtitle: Some("a\u{7}.db in wal mode"),
                transactions: None,
                ..PlotInfo::default()
            },
            &sample(),
            PlotAxis::Time,
        )
        .expect("render");
        let bad = |c: char| {
            (c != '\n' && crate::terminal::acts_on_terminal(c))
                || c == '\u{fffe}'
                || c == '\u{ffff}'
        };
        assert!(!svg.chars().any(bad), "a character XML 1.0 refuses is left");
        let t = texts(&svg);
        assert!(
            t.iter()
                .any(|x| x.contains("\\u{1b}[2Jx\\u{d}\\u{0}\\u{202e}y\\u{ffff}")),
            "{t:?}"
        );
        assert!(t.iter().any(|x| x.contains("a\\u{7}.db")), "{t:?}");
    }
}
