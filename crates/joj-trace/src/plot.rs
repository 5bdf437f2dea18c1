//! Block-trace plots as the papers draw them: one marker per request, x = time or request
//! sequence number, y = logical block address, marker shape and colour by class (database,
//! WAL, rollback journal or other file data, filesystem metadata, filesystem journal), flushes
//! as ticks along the bottom edge, and — for short traces — each write's size beside it.
//!
//! SVG only, through plotters' SVG backend: text is emitted as `<text>` elements and laid out
//! with plotters' built-in size estimate, so no font files or fontconfig are needed. The SVG
//! grows by roughly 100–200 bytes per request; plot a window of a long trace, not all of it.

use std::io::Write;
use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters_backend::{BackendCoord, DrawingErrorKind};

use crate::error::TraceError;
use crate::output::{Existing, write_atomically};
use crate::record::{BlockClass, FileRole, Op, TraceRecord};

/// What the x axis shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotAxis {
    /// Milliseconds since the earliest record.
    Time,
    /// Position of the request in the trace (0, 1, 2, …): issue order without idle gaps.
    Sequence,
}

/// Write sizes are printed beside markers only up to this many records; past it they overlap
/// into an unreadable smear.
pub const MAX_ANNOTATED_RECORDS: usize = 300;

const WIDTH_PX: u32 = 1200;
const HEIGHT_PX: u32 = 720;
/// Sectors per 4 KiB block: the y axis is in filesystem-block units, as in the papers.
const SECTORS_PER_BLOCK: f64 = 8.0;

#[derive(Debug, Clone, Copy)]
enum Shape {
    Circle,
    Ring,
    Triangle,
    Square,
    HollowSquare,
    Cross,
    Dot,
}

/// How one series is drawn and named in the legend.
#[derive(Debug, Clone, Copy)]
struct Series {
    label: &'static str,
    shape: Shape,
    color: RGBColor,
}

// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
const DATABASE: Series = Series {
    label: "database data",
    shape: Shape::Circle,
    color: RGBColor(0, 114, 178),
};
const WAL: Series = Series {
    label: "WAL data",
    shape: Shape::Triangle,
    color: RGBColor(213, 94, 0),
};
const ROLLBACK: Series = Series {
    label: "rollback journal data",
    shape: Shape::Square,
    color: RGBColor(230, 159, 0),
};
const OTHER_DATA: Series = Series {
    label: "other file data",
    shape: Shape::Ring,
    color: RGBColor(86, 180, 233),
};
const METADATA: Series = Series {
    label: "FS metadata",
    shape: Shape::Cross,
    color: RGBColor(0, 158, 115),
};
const FS_JOURNAL: Series = Series {
    label: "FS journal",
    shape: Shape::HollowSquare,
    color: RGBColor(204, 121, 167),
};
const UNCLASSIFIED: Series = Series {
    label: "unclassified",
    shape: Shape::Dot,
    color: RGBColor(100, 100, 100),
};
const READ: Series = Series {
    label: "read (any class)",
    shape: Shape::Ring,
    color: RGBColor(170, 170, 170),
};
const WRITE_SERIES: [Series; 7] = [
    DATABASE,
    WAL,
    ROLLBACK,
    OTHER_DATA,
    METADATA,
    FS_JOURNAL,
    UNCLASSIFIED,
];
const DISCARD_COLOR: RGBColor = RGBColor(150, 150, 150);
const FLUSH_COLOR: RGBColor = RGBColor(0, 0, 0);

/// The series a written (or otherwise modified) range is drawn in.
fn write_series(rec: &TraceRecord) -> usize {
    match (rec.class, rec.file) {
        (BlockClass::Data, Some(FileRole::Database)) => 0,
        (BlockClass::Data, Some(FileRole::Wal)) => 1,
        (BlockClass::Data, Some(FileRole::RollbackJournal)) => 2,
        (BlockClass::Data, _) => 3,
        (BlockClass::Metadata, _) => 4,
        (BlockClass::FsJournal, _) => 5,
        (BlockClass::Unknown | BlockClass::Flush, _) => 6,
    }
}

/// A marker centred on a point, sized in pixels so it looks the same at any zoom. Our own
/// element rather than a composition of plotters' shapes so that one type serves every shape,
/// in the chart and in the legend alike.
struct Marker<C> {
    at: C,
    shape: Shape,
    color: RGBColor,
}

fn marker<C>(shape: Shape, color: RGBColor, at: C) -> Marker<C> {
    Marker { at, shape, color }
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
            Shape::Circle => backend.draw_circle((x, y), 4, &filled, true),
            Shape::Ring => backend.draw_circle((x, y), 4, &line, false),
            Shape::Dot => backend.draw_circle((x, y), 2, &filled, true),
            Shape::Triangle => {
                backend.fill_polygon([(x, y - 5), (x - 5, y + 4), (x + 5, y + 4)], &filled)
            }
            Shape::Square => backend.draw_rect((x - 4, y - 4), (x + 4, y + 4), &filled, true),
            Shape::HollowSquare => backend.draw_rect((x - 4, y - 4), (x + 4, y + 4), &line, false),
            Shape::Cross => {
                let thick = self.color.stroke_width(2);
                backend.draw_line((x - 4, y - 4), (x + 4, y + 4), &thick)?;
                backend.draw_line((x - 4, y + 4), (x + 4, y - 4), &thick)
            }
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

/// Render the plot and write it to `path` atomically (temporary file, sync, rename), replacing
/// any regular file there.
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

/// Render the plot to an SVG document in memory.
pub fn render_svg(
    title: &str,
    records: &[TraceRecord],
    axis: PlotAxis,
) -> Result<String, TraceError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
        draw(&root, title, records, axis)?;
        root.present().map_err(plot_error("writing out the SVG"))?;
    }
    Ok(svg)
}

/// The chart: x in milliseconds or sequence numbers, y in 4 KiB blocks.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// How a failure of plotters while drawing `part` of the chart is reported.
fn plot_error<E: std::fmt::Display>(part: &'static str) -> impl FnOnce(E) -> TraceError {
    move |e| TraceError::Plot {
        part,
        message: e.to_string(),
    }
}

/// The whole chart on `root`. The layers are drawn in a fixed order because later ones cover
/// earlier ones and the legend lists the series as they were drawn.
fn draw(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    records: &[TraceRecord],
    axis: PlotAxis,
) -> Result<(), TraceError> {
    root.fill(&WHITE).map_err(plot_error("the background"))?;
    let x_of = XScale::new(records, axis);
    let ranges = Ranges::of(records, x_of);
    let mut chart = draw_axes(root, title, records, axis, &ranges)?;
    let layers = Layers::gather(records, x_of);
    for (series, points) in WRITE_SERIES.iter().zip(layers.writes) {
        draw_markers(&mut chart, *series, points)?;
    }
    draw_markers(&mut chart, READ, layers.reads)?;
    draw_discards(&mut chart, layers.discards)?;
    draw_flushes(&mut chart, layers.flushes, &ranges)?;
    draw_sizes(&mut chart, layers.sizes)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(120, 120, 120))
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(plot_error("the legend"))
}

/// Where a record goes on the x axis.
#[derive(Debug, Clone, Copy)]
struct XScale {
    axis: PlotAxis,
    /// The earliest record's time: x = 0 on the time axis.
    t0_ns: u64,
}

impl XScale {
    fn new(records: &[TraceRecord], axis: PlotAxis) -> XScale {
        let t0_ns = records.iter().map(|r| r.time_ns).min().unwrap_or(0);
        XScale { axis, t0_ns }
    }

    /// The x of record `r`, the `i`-th of the trace.
    fn x(self, i: usize, r: &TraceRecord) -> f64 {
        match self.axis {
            PlotAxis::Time => (r.time_ns - self.t0_ns) as f64 / 1e6,
            PlotAxis::Sequence => i as f64,
        }
    }
}

/// A sector's position on the y axis, in 4 KiB blocks.
fn block(sector: u64) -> f64 {
    sector as f64 / SECTORS_PER_BLOCK
}

/// The axis ranges: every record on x, everything drawn at an address on y, padded.
#[derive(Debug, Clone, Copy)]
struct Ranges {
    x_lo: f64,
    x_hi: f64,
    y_lo: f64,
    y_hi: f64,
}

impl Ranges {
    fn of(records: &[TraceRecord], x_of: XScale) -> Ranges {
        let (mut x_lo, mut x_hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut y_lo, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for (i, r) in records.iter().enumerate() {
            let x = x_of.x(i, r);
            x_lo = x_lo.min(x);
            x_hi = x_hi.max(x);
            if r.sectors > 0 {
                y_lo = y_lo.min(block(r.sector));
                y_hi = y_hi.max(block(r.sector + r.sectors));
            }
        }
        let (x_lo, x_hi) = padded(x_lo, x_hi, 0.02);
        let (y_lo, y_hi) = padded(y_lo, y_hi, 0.05);
        Ranges {
            x_lo,
            x_hi,
            y_lo,
            y_hi,
        }
    }
}

/// The caption, the axes with their titles, and the grid.
fn draw_axes<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    records: &[TraceRecord],
    axis: PlotAxis,
    ranges: &Ranges,
) -> Result<Chart<'a, 'b>, TraceError> {
    let devices = {
        let mut d: Vec<&str> = records.iter().map(|r| r.dev.as_str()).collect();
        d.sort_unstable();
        d.dedup();
        d.len()
    };
    let x_desc = match axis {
        PlotAxis::Time => "time since first request (ms)",
        PlotAxis::Sequence => "request sequence number",
    };
    let y_desc = if devices > 1 {
        "LBA on its device (4 KiB blocks)"
    } else {
        "LBA (4 KiB blocks)"
    };
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(ranges.x_lo..ranges.x_hi, ranges.y_lo..ranges.y_hi)
        .map_err(plot_error("the axes"))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .light_line_style(RGBColor(246, 246, 246))
        // Block addresses and sequence numbers are integers; plotters would print "60000.0".
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(plot_error("the grid"))?;
    Ok(chart)
}

/// What is drawn, gathered in one pass over the records.
#[derive(Default)]
struct Layers {
    /// Writes (and other data-carrying ops) by class: one list per entry of `WRITE_SERIES`.
    writes: [Vec<(f64, f64)>; WRITE_SERIES.len()],
    reads: Vec<(f64, f64)>,
    /// `(x, first block, end block)`.
    discards: Vec<(f64, f64, f64)>,
    /// Flushes have no address: x only.
    flushes: Vec<f64>,
    /// Write sizes beside their markers, only for short traces.
    sizes: Vec<(f64, f64, String)>,
}

impl Layers {
    fn gather(records: &[TraceRecord], x_of: XScale) -> Layers {
        let mut layers = Layers::default();
        let annotate = records.len() <= MAX_ANNOTATED_RECORDS;
        for (i, r) in records.iter().enumerate() {
            let x = x_of.x(i, r);
            let y = block(r.sector);
            match r.op {
                Op::Read if r.sectors > 0 => layers.reads.push((x, y)),
                Op::Discard if r.sectors > 0 => {
                    layers.discards.push((x, y, block(r.sector + r.sectors)))
                }
                Op::Write | Op::Other if r.sectors > 0 => {
                    layers.writes[write_series(r)].push((x, y));
                    if annotate && r.op == Op::Write {
                        layers.sizes.push((x, y, size_label(r.bytes())));
                    }
                }
                _ => {}
            }
            if r.is_flush() {
                layers.flushes.push(x);
            }
        }
        layers
    }
}

/// One series of markers with its legend entry; nothing, not even the entry, when empty.
fn draw_markers(
    chart: &mut Chart<'_, '_>,
    series: Series,
    points: Vec<(f64, f64)>,
) -> Result<(), TraceError> {
    if points.is_empty() {
        return Ok(());
    }
    let Series {
        label,
        shape,
        color,
    } = series;
    chart
        .draw_series(points.into_iter().map(|p| marker(shape, color, p)))
        .map_err(plot_error(label))?
        .label(label)
        .legend(move |p| marker(shape, color, p));
    Ok(())
}

/// Discards as vertical bars over the range they cover.
fn draw_discards(
    chart: &mut Chart<'_, '_>,
    discards: Vec<(f64, f64, f64)>,
) -> Result<(), TraceError> {
    if discards.is_empty() {
        return Ok(());
    }
    chart
        .draw_series(
            discards.into_iter().map(|(x, a, b)| {
                PathElement::new(vec![(x, a), (x, b)], DISCARD_COLOR.stroke_width(3))
            }),
        )
        .map_err(plot_error("the discards"))?
        .label("discard (range)")
        .legend(|(x, y)| {
            PathElement::new(vec![(x, y - 6), (x, y + 6)], DISCARD_COLOR.stroke_width(3))
        });
    Ok(())
}

/// Flushes have no address: ticks rising from the bottom edge, 3% of the height.
fn draw_flushes(
    chart: &mut Chart<'_, '_>,
    flushes: Vec<f64>,
    ranges: &Ranges,
) -> Result<(), TraceError> {
    if flushes.is_empty() {
        return Ok(());
    }
    let (y_lo, y_hi) = (ranges.y_lo, ranges.y_hi);
    let tick = (y_hi - y_lo) * 0.03;
    chart
        .draw_series(flushes.into_iter().map(|x| {
            PathElement::new(
                vec![(x, y_lo), (x, y_lo + tick)],
                FLUSH_COLOR.stroke_width(2),
            )
        }))
        .map_err(plot_error("the flushes"))?
        .label("cache flush (incl. preflush)")
        .legend(|(x, y)| {
            PathElement::new(vec![(x, y - 6), (x, y + 6)], FLUSH_COLOR.stroke_width(2))
        });
    Ok(())
}

/// Each write's size beside its marker.
fn draw_sizes(chart: &mut Chart<'_, '_>, sizes: Vec<(f64, f64, String)>) -> Result<(), TraceError> {
    if sizes.is_empty() {
        return Ok(());
    }
    let font = ("sans-serif", 11).into_font().color(&RGBColor(60, 60, 60));
    chart
        .draw_series(
            sizes
                .into_iter()
                .map(|(x, y, s)| EmptyElement::at((x, y)) + Text::new(s, (6, -14), font.clone())),
        )
        .map_err(plot_error("the write sizes"))?;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
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
            complete_ns: None,
            ..TraceRecord::new(5_000_000 + i * 250_000, "7:0", op, sector, sectors)
        }
    }

    fn sample() -> Vec<TraceRecord> {
        let mut commit = rec(7, Op::Write, 526360, 8, BlockClass::FsJournal, None);
        commit.preflush = true;
        commit.fua = true;
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
            rec(
                3,
                Op::Write,
                300000,
                8,
                BlockClass::Data,
                Some(FileRole::RollbackJournal),
            ),
            rec(
                4,
                Op::Write,
                310000,
                2048,
                BlockClass::Data,
                Some(FileRole::Other),
            ),
            rec(5, Op::Write, 64, 8, BlockClass::Metadata, None),
            rec(6, Op::Write, 526336, 24, BlockClass::FsJournal, None),
            commit,
            rec(8, Op::Flush, 0, 0, BlockClass::Flush, None),
            rec(
                9,
                Op::Read,
                2048,
                8,
                BlockClass::Data,
                Some(FileRole::Database),
            ),
            rec(10, Op::Discard, 400000, 4096, BlockClass::Metadata, None),
            rec(11, Op::Write, 1, 1, BlockClass::Unknown, None),
        ]
    }

    #[test]
    fn the_svg_has_every_legend_label_axis_titles_and_sizes() {
        let svg = render_svg("WAL commit on ext4", &sample(), PlotAxis::Time).expect("render");
        for label in [
            "WAL commit on ext4",
            "database data",
            "WAL data",
            "rollback journal data",
            "other file data",
            "FS metadata",
            "FS journal",
            "unclassified",
            "read (any class)",
            "discard (range)",
            "cache flush (incl. preflush)",
            "time since first request (ms)",
            "LBA (4 KiB blocks)",
            "\n4K\n",
            "\n8K\n",
            "\n1M\n",
            "\n512B\n",
        ] {
            assert!(svg.contains(label), "missing {label:?}");
        }
    }

    #[test]
    fn long_traces_are_not_annotated_and_sequence_axis_is_named() {
        let mut many = Vec::new();
        for i in 0..(MAX_ANNOTATED_RECORDS as u64 + 1) {
            many.push(rec(
                i,
                Op::Write,
                i * 8,
                8,
                BlockClass::Data,
                Some(FileRole::Wal),
            ));
        }
        let svg = render_svg("many", &many, PlotAxis::Sequence).expect("render");
        assert!(!svg.contains("\n4K\n"));
        assert!(svg.contains("request sequence number"));
    }

    #[test]
    fn an_empty_trace_still_plots() {
        let svg = render_svg("empty", &[], PlotAxis::Time).expect("render");
        assert!(svg.starts_with("<svg"));
    }

    #[test]
    fn plot_svg_writes_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("trace.svg");
        plot_svg(&path, "t", &sample(), PlotAxis::Sequence).expect("plot");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.contains("WAL data"));
        assert!(text.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn sizes_are_labelled_like_the_papers() {
        assert_eq!(size_label(4096), "4K");
        assert_eq!(size_label(512), "512B");
        assert_eq!(size_label(1536), "1536B");
        assert_eq!(size_label(2 << 20), "2M");
        assert_eq!(size_label(1024 * 1024 + 4096), "1028K");
    }
}
