//! The trace picture: lanes of block address over time by class, a flush-rate lane, and the
//! cumulative bytes beside them (see the module above).

use plotters::coord::Shift;
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters_backend::{BackendCoord, DrawingErrorKind};

use super::style::{
    BLUE, GREEN, GREY, INK, ORANGE, PURPLE, PlotAxis, PlotInfo, SKY, VERMILION, grouped,
    integer_label, plot_error, size,
};
use crate::error::TraceError;
use crate::record::{BlockClass, FileRole, Op, TraceRecord};

/// Write sizes are printed beside markers only up to this many records; past it they overlap
/// into an unreadable smear.
pub const MAX_ANNOTATED_RECORDS: usize = 300;

const WIDTH_PX: u32 = 1400;
const HEIGHT_PX: u32 = 820;
/// Width of the lanes' side of the picture; the cumulative panel takes the rest.
const LANES_WIDTH_PX: u32 = 960;
/// Height of the flush lane, and of the x axis under it.
const FLUSH_LANE_PX: u32 = 96;
const X_AXIS_PX: u32 = 46;
/// Room for the lanes' address labels.
const Y_LABELS_PX: u32 = 78;
/// Sectors per 4 KiB block: addresses are in filesystem-block units, as in the papers.
const SECTORS_PER_BLOCK: f64 = 8.0;
/// The strip above each lane that holds its label.
const LABEL_STRIP_PX: u32 = 19;
/// Time bins of the flush rate.
const FLUSH_BINS: usize = 120;

#[derive(Debug, Clone, Copy)]
enum Shape {
    Circle,
    Ring,
    Triangle,
    Square,
    HollowSquare,
    Cross,
    Dot,
    Bar,
}

/// One class's lane.
#[derive(Debug, Clone, Copy)]
struct Series {
    label: &'static str,
    shape: Shape,
    color: RGBColor,
}

const DATABASE: Series = Series {
    label: "database data",
    shape: Shape::Circle,
    color: BLUE,
};
const WAL: Series = Series {
    label: "WAL data",
    shape: Shape::Triangle,
    color: VERMILION,
};
const ROLLBACK: Series = Series {
    label: "rollback journal data",
    shape: Shape::Square,
    color: ORANGE,
};
const OTHER_DATA: Series = Series {
    label: "other file data",
    shape: Shape::Ring,
    color: SKY,
};
const METADATA: Series = Series {
    label: "FS metadata",
    shape: Shape::Cross,
    color: GREEN,
};
const FS_JOURNAL: Series = Series {
    label: "FS journal",
    shape: Shape::HollowSquare,
    color: PURPLE,
};
const UNCLASSIFIED: Series = Series {
    label: "unclassified",
    shape: Shape::Dot,
    color: GREY,
};
const READ: Series = Series {
    label: "reads (any class)",
    shape: Shape::Ring,
    color: RGBColor(150, 150, 150),
};
const DISCARD: Series = Series {
    label: "discards (range)",
    shape: Shape::Bar,
    color: RGBColor(150, 150, 150),
};

/// The lanes, top to bottom: the FS journal first (the JOJ), then the logs, the database, the
/// rest.
const WRITE_SERIES: [Series; 7] = [
    FS_JOURNAL,
    WAL,
    ROLLBACK,
    DATABASE,
    OTHER_DATA,
    METADATA,
    UNCLASSIFIED,
];

/// The lane a written range is drawn in (an index of [`WRITE_SERIES`]).
fn write_series(rec: &TraceRecord) -> usize {
    match (rec.class, rec.file) {
        (BlockClass::FsJournal, _) => 0,
        (BlockClass::Data, Some(FileRole::Wal)) => 1,
        (BlockClass::Data, Some(FileRole::RollbackJournal)) => 2,
        (BlockClass::Data, Some(FileRole::Database)) => 3,
        (BlockClass::Data, _) => 4,
        (BlockClass::Metadata, _) => 5,
        (BlockClass::Unknown | BlockClass::Flush, _) => 6,
    }
}

/// A marker centred on a point, sized in pixels so it looks the same at any zoom; a discard's
/// bar spans its range (`to`).
struct Marker<C> {
    at: C,
    shape: Shape,
    color: RGBColor,
}

impl<'a, C> PointCollection<'a, C> for &'a Marker<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Marker<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut pos: I,
        backend: &mut DB,
        _parent_dim: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = pos.next() else {
            return Ok(());
        };
        let filled = self.color.filled();
        let line = self.color.stroke_width(1);
        match self.shape {
            Shape::Circle => backend.draw_circle((x, y), 3, &filled, true),
            Shape::Ring => backend.draw_circle((x, y), 3, &line, false),
            Shape::Dot => backend.draw_circle((x, y), 2, &filled, true),
            Shape::Triangle => {
                backend.fill_polygon([(x, y - 4), (x - 4, y + 3), (x + 4, y + 3)], &filled)
            }
            Shape::Square => backend.draw_rect((x - 3, y - 3), (x + 3, y + 3), &filled, true),
            Shape::HollowSquare => backend.draw_rect((x - 3, y - 3), (x + 3, y + 3), &line, false),
            Shape::Cross => {
                let thick = self.color.stroke_width(2);
                backend.draw_line((x - 3, y - 3), (x + 3, y + 3), &thick)?;
                backend.draw_line((x - 3, y + 3), (x + 3, y - 3), &thick)
            }
            Shape::Bar => backend.draw_line((x, y - 5), (x, y + 5), &self.color.stroke_width(3)),
        }
    }
}

/// `4096` → `"4K"`, `1048576` → `"1M"`, `512` → `"512B"`: how the papers label request sizes.
fn size_label(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{}M", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{}K", bytes / KIB)
    } else {
        format!("{bytes}B")
    }
}

/// Where a record goes on the x axis, and what the axis says.
#[derive(Debug, Clone, Copy)]
struct XScale {
    axis: PlotAxis,
    t0_ns: u64,
    /// Nanoseconds per x unit (milliseconds, or seconds for a trace longer than 20 s).
    unit_ns: f64,
}

impl XScale {
    fn new(records: &[TraceRecord], axis: PlotAxis) -> XScale {
        let t0_ns = records.iter().map(|r| r.time_ns).min().unwrap_or(0);
        let t1_ns = records.iter().map(|r| r.time_ns).max().unwrap_or(0);
        let unit_ns = if t1_ns - t0_ns > 20_000_000_000 {
            1e9
        } else {
            1e6
        };
        XScale {
            axis,
            t0_ns,
            unit_ns,
        }
    }

    fn x(self, i: usize, r: &TraceRecord) -> f64 {
        match self.axis {
            PlotAxis::Time => (r.time_ns - self.t0_ns) as f64 / self.unit_ns,
            PlotAxis::Sequence => i as f64,
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

fn block(sector: u64) -> f64 {
    sector as f64 / SECTORS_PER_BLOCK
}

/// One lane's content.
struct Lane {
    series: Series,
    points: Vec<(f64, f64)>,
    /// Discards: `(x, first block, end block)`.
    ranges: Vec<(f64, f64, f64)>,
    bytes: u64,
    y_lo: f64,
    y_hi: f64,
}

impl Lane {
    fn new(series: Series) -> Lane {
        Lane {
            series,
            points: Vec::new(),
            ranges: Vec::new(),
            bytes: 0,
            y_lo: f64::INFINITY,
            y_hi: f64::NEG_INFINITY,
        }
    }

    fn add(&mut self, x: f64, r: &TraceRecord) {
        let (lo, hi) = (block(r.sector), block(r.sector.saturating_add(r.sectors)));
        self.y_lo = self.y_lo.min(lo);
        self.y_hi = self.y_hi.max(hi);
        self.bytes += r.bytes();
        if self.series.label == DISCARD.label {
            self.ranges.push((x, lo, hi));
        } else {
            self.points.push((x, lo));
        }
    }

    fn is_empty(&self) -> bool {
        self.points.is_empty() && self.ranges.is_empty()
    }
}

/// Everything drawn, gathered in one pass.
struct Gathered {
    lanes: Vec<Lane>,
    flushes: Vec<f64>,
    /// Per write series, `(x, bytes written so far)`.
    cumulative: Vec<(Series, Vec<(f64, f64)>)>,
    sizes: Vec<(usize, f64, f64, String)>,
    x_lo: f64,
    x_hi: f64,
    written: u64,
}

fn gather(records: &[TraceRecord], x_of: XScale) -> Gathered {
    let mut writes: Vec<Lane> = WRITE_SERIES.iter().map(|s| Lane::new(*s)).collect();
    let mut reads = Lane::new(READ);
    let mut discards = Lane::new(DISCARD);
    let mut flushes = Vec::new();
    let mut so_far = [0u64; WRITE_SERIES.len()];
    let mut cumulative: Vec<Vec<(f64, f64)>> = vec![Vec::new(); WRITE_SERIES.len()];
    let mut sizes = Vec::new();
    let annotate = records.len() <= MAX_ANNOTATED_RECORDS;
    let (mut x_lo, mut x_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (i, r) in records.iter().enumerate() {
        let x = x_of.x(i, r);
        x_lo = x_lo.min(x);
        x_hi = x_hi.max(x);
        match r.op {
            Op::Read if r.sectors > 0 => reads.add(x, r),
            Op::Discard if r.sectors > 0 => discards.add(x, r),
            Op::Write | Op::Other if r.sectors > 0 => {
                let s = write_series(r);
                writes[s].add(x, r);
                so_far[s] += r.bytes();
                cumulative[s].push((x, so_far[s] as f64));
                if annotate && r.op == Op::Write {
                    sizes.push((s, x, block(r.sector), size_label(r.bytes())));
                }
            }
            _ => {}
        }
        if r.is_flush() {
            flushes.push(x);
        }
    }
    let written = so_far.iter().sum();
    let cumulative = WRITE_SERIES
        .iter()
        .zip(cumulative)
        .filter(|(_, c)| !c.is_empty())
        .map(|(s, c)| (*s, c))
        .collect();
    let mut lanes: Vec<Lane> = writes.into_iter().filter(|l| !l.is_empty()).collect();
    lanes.extend([reads, discards].into_iter().filter(|l| !l.is_empty()));
    if !x_lo.is_finite() {
        (x_lo, x_hi) = (0.0, 1.0);
    }
    Gathered {
        lanes,
        flushes,
        cumulative,
        sizes,
        x_lo,
        x_hi,
        written,
    }
}

/// `[lo, hi]` widened by `frac` of its span on each side; a point or empty range gets a unit
/// span so the chart is never degenerate.
fn padded(lo: f64, hi: f64, frac: f64) -> (f64, f64) {
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    let pad = if hi > lo { (hi - lo) * frac } else { 1.0 };
    (lo - pad, hi + pad)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Render the trace picture to an SVG document in memory.
pub fn render_trace_svg(
    info: &PlotInfo<'_>,
    records: &[TraceRecord],
    axis: PlotAxis,
) -> Result<String, TraceError> {
    // The lanes sum bytes per series; a trace whose bytes do not fit a u64 is refused first.
    crate::totals::check_bytes_fit(records)?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
        draw(&root, info, records, axis)?;
        root.present().map_err(plot_error("writing out the SVG"))?;
    }
    Ok(super::style::well_formed(svg))
}

fn draw(
    root: &Area<'_>,
    info: &PlotInfo<'_>,
    records: &[TraceRecord],
    axis: PlotAxis,
) -> Result<(), TraceError> {
    root.fill(&WHITE).map_err(plot_error("the background"))?;
    let mut area = root
        .titled(info.title, ("sans-serif", 22).into_font().color(&INK))
        .map_err(plot_error("the title"))?;
    if let Some(sub) = info.subtitle {
        area = area
            .titled(sub, ("sans-serif", 15).into_font().color(&GREY))
            .map_err(plot_error("the subtitle"))?;
    }
    let x_of = XScale::new(records, axis);
    let g = gather(records, x_of);
    let (x_lo, x_hi) = padded(g.x_lo, g.x_hi, 0.01);
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
    draw_lanes(&lanes_area, &g, (x_lo, x_hi))?;
    draw_flush_rate(&flush_area, &g, (x_lo, x_hi), x_of, info.transactions)?;
    draw_cumulative(&right, &g, (x_lo, x_hi), x_of, info.transactions)
}

/// One lane per class: its markers at their own address range, its label and total.
fn draw_lanes(area: &Area<'_>, g: &Gathered, (x_lo, x_hi): (f64, f64)) -> Result<(), TraceError> {
    if g.lanes.is_empty() {
        area.draw_text(
            "no request with an address in this trace",
            &("sans-serif", 16).into_font().color(&GREY),
            (Y_LABELS_PX as i32 + 20, 30),
        )
        .map_err(plot_error("the empty trace"))?;
        return Ok(());
    }
    let (_, h) = area.dim_in_pixel();
    let n = g.lanes.len() as u32;
    let breaks: Vec<u32> = (1..n).map(|i| i * h / n).collect();
    let areas = area.split_by_breakpoints::<u32, u32, _, _>([], breaks);
    for (lane, lane_area) in g.lanes.iter().zip(areas) {
        let (y_lo, y_hi) = padded(lane.y_lo, lane.y_hi, 0.08);
        // The label goes in a strip above the lane's plot, where it hides no request.
        let mut chart = ChartBuilder::on(&lane_area)
            .margin_top(LABEL_STRIP_PX)
            .margin_bottom(2)
            .margin_right(8)
            .x_label_area_size(0)
            .y_label_area_size(Y_LABELS_PX)
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
        let Series { shape, color, .. } = lane.series;
        if lane.ranges.is_empty() {
            chart
                .draw_series(lane.points.iter().map(|p| Marker {
                    at: *p,
                    shape,
                    color,
                }))
                .map_err(plot_error(lane.series.label))?;
        } else {
            chart
                .draw_series(lane.ranges.iter().map(|(x, a, b)| {
                    PathElement::new(vec![(*x, *a), (*x, *b)], color.stroke_width(3))
                }))
                .map_err(plot_error(lane.series.label))?;
        }
        let which = WRITE_SERIES
            .iter()
            .position(|s| s.label == lane.series.label);
        let font = ("sans-serif", 10).into_font().color(&RGBColor(60, 60, 60));
        chart
            .draw_series(
                g.sizes
                    .iter()
                    .filter(|s| Some(s.0) == which)
                    .map(|(_, x, y, s)| {
                        EmptyElement::at((*x, *y)) + Text::new(s.clone(), (5, -12), font.clone())
                    }),
            )
            .map_err(plot_error("the write sizes"))?;
        lane_label(&lane_area, lane, g.written)?;
    }
    Ok(())
}

/// The lane's class, its total and its share of what was written, top left, on a white box.
fn lane_label(area: &Area<'_>, lane: &Lane, written: u64) -> Result<(), TraceError> {
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
    let text = format!("{} — {}{share}", lane.series.label, size(lane.bytes as f64));
    let x = Y_LABELS_PX as i32 + 2;
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

/// Flushes as a rate: how many fell in each of [`FLUSH_BINS`] bins of the x axis.
fn draw_flush_rate(
    area: &Area<'_>,
    g: &Gathered,
    (x_lo, x_hi): (f64, f64),
    x_of: XScale,
    transactions: Option<u64>,
) -> Result<(), TraceError> {
    let width = (x_hi - x_lo) / FLUSH_BINS as f64;
    let mut bins = vec![0u64; FLUSH_BINS];
    for x in &g.flushes {
        let i = (((x - x_lo) / width) as usize).min(FLUSH_BINS - 1);
        bins[i] += 1;
    }
    let rate = |n: u64| n as f64 / width.max(f64::MIN_POSITIVE);
    let top = bins.iter().map(|n| rate(*n)).fold(0.0, f64::max).max(1.0) * 1.15;
    let mut chart = ChartBuilder::on(area)
        .margin_top(LABEL_STRIP_PX)
        .margin_right(8)
        .x_label_area_size(X_AXIS_PX)
        .y_label_area_size(Y_LABELS_PX)
        .build_cartesian_2d(x_lo..x_hi, 0.0..top)
        .map_err(plot_error("the flush lane's axes"))?;
    chart
        .configure_mesh()
        .y_labels(3)
        .x_labels(8)
        .x_label_formatter(&integer_label)
        .y_label_formatter(&|v| format!("{v:.1}"))
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
    let per_txn = match transactions {
        Some(t) if t > 0 => format!(", {:.2} per transaction", g.flushes.len() as f64 / t as f64),
        _ => String::new(),
    };
    let text = format!(
        "cache flushes (incl. preflush) — {}{per_txn}; bars: flushes {}",
        grouped(g.flushes.len() as u64),
        x_of.per()
    );
    area.draw_text(
        &text,
        &("sans-serif", 13).into_font().color(&INK),
        (Y_LABELS_PX as i32 + 4, 3),
    )
    .map_err(plot_error("the flush lane's label"))
}

/// What each class has written so far, one line each, its total at the line's end.
fn draw_cumulative(
    area: &Area<'_>,
    g: &Gathered,
    (x_lo, x_hi): (f64, f64),
    x_of: XScale,
    transactions: Option<u64>,
) -> Result<(), TraceError> {
    let top_bytes = g
        .cumulative
        .iter()
        .filter_map(|(_, c)| c.last().map(|p| p.1))
        .fold(0.0, f64::max);
    let (unit, unit_name) = if top_bytes >= 10.0 * 1024.0 * 1024.0 {
        (1024.0 * 1024.0, "MiB")
    } else {
        (1024.0, "KiB")
    };
    let y_hi = (top_bytes / unit).max(1.0) * 1.08;
    let per_txn = match transactions {
        Some(t) if t > 0 => format!(" — {} per transaction", size(g.written as f64 / t as f64)),
        _ => String::new(),
    };
    let caption = format!("written so far: {}{per_txn}", size(g.written as f64));
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 15))
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
    let mut ends: Vec<(Series, f64, f64)> = g
        .cumulative
        .iter()
        .filter_map(|(s, c)| c.last().map(|p| (*s, p.1 / unit, p.1)))
        .collect();
    ends.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut placed: Vec<f64> = Vec::new();
    for (_, y, _) in &ends {
        let y = placed.last().map_or(*y, |last| y.max(last + min_gap));
        placed.push(y);
    }
    for ((series, points), y_label) in
        g.cumulative
            .iter()
            .zip(order_of(&g.cumulative, &ends, &placed))
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

    #[test]
    fn sizes_are_labelled_like_the_papers() {
        assert_eq!(size_label(4096), "4K");
        assert_eq!(size_label(512), "512B");
        assert_eq!(size_label(1536), "1536B");
        assert_eq!(size_label(2 << 20), "2M");
        assert_eq!(size_label(1024 * 1024 + 4096), "1028K");
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
            },
            records,
            axis,
        )
        .expect("render")
    }

    /// The text of every `<text>` element, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| t.split_once('>'))
            .filter_map(|(_, rest)| rest.split_once("</text>"))
            .map(|(text, _)| text.trim().to_string())
            .collect()
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
        let g = gather(&recs, XScale::new(&recs, PlotAxis::Sequence));
        let labels: Vec<&str> = g.lanes.iter().map(|l| l.series.label).collect();
        assert_eq!(labels, ["FS journal", "database data"]);
        assert_eq!(g.lanes[0].bytes, 24 * 512);
        assert_eq!(g.flushes.len(), 1);
        assert_eq!(g.written, 32 * 512);
    }

    #[test]
    fn a_title_naming_a_file_someone_else_named_stays_well_formed_xml() {
        let title = "ext4 · sh -c … \u{1b}[2Jx\r\u{0}\u{202e}y\u{ffff}";
        let svg = render_trace_svg(
            &PlotInfo {
                title,
                subtitle: Some("a\u{7}.db in wal mode"),
                transactions: None,
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
