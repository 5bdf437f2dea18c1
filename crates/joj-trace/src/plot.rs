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
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters_backend::{BackendCoord, DrawingErrorKind};

use crate::atomic::write_atomically;
use crate::error::TraceError;
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

/// Render the plot and write it to `path` atomically (temporary file, sync, rename).
pub fn plot_svg(
    path: &Path,
    title: &str,
    records: &[TraceRecord],
    axis: PlotAxis,
) -> Result<(), TraceError> {
    let svg = render_svg(title, records, axis)?;
    write_atomically(path, |w| {
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
        draw(&root, title, records, axis).map_err(|message| TraceError::Plot { message })?;
        root.present().map_err(|e| TraceError::Plot {
            message: e.to_string(),
        })?;
    }
    Ok(svg)
}

fn draw(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    records: &[TraceRecord],
    axis: PlotAxis,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| err(&e))?;

    let t0 = records.iter().map(|r| r.time_ns).min().unwrap_or(0);
    let x_of = |i: usize, r: &TraceRecord| match axis {
        PlotAxis::Time => (r.time_ns - t0) as f64 / 1e6,
        PlotAxis::Sequence => i as f64,
    };
    let block = |sector: u64| sector as f64 / SECTORS_PER_BLOCK;

    // Axis ranges over everything that is drawn at an address.
    let (mut x_lo, mut x_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y_lo, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (i, r) in records.iter().enumerate() {
        let x = x_of(i, r);
        x_lo = x_lo.min(x);
        x_hi = x_hi.max(x);
        if r.sectors > 0 {
            y_lo = y_lo.min(block(r.sector));
            y_hi = y_hi.max(block(r.sector + r.sectors));
        }
    }
    let (x_lo, x_hi) = padded(x_lo, x_hi, 0.02);
    let (y_lo, y_hi) = padded(y_lo, y_hi, 0.05);

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
        .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .light_line_style(RGBColor(246, 246, 246))
        // Block addresses and sequence numbers are integers; plotters would print "60000.0".
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(|e| err(&e))?;

    // Writes (and other data-carrying ops) by class.
    let mut points: [Vec<(f64, f64)>; WRITE_SERIES.len()] = Default::default();
    let mut reads = Vec::new();
    let mut discards = Vec::new();
    let mut flushes = Vec::new();
    let mut sizes = Vec::new();
    let annotate = records.len() <= MAX_ANNOTATED_RECORDS;
    for (i, r) in records.iter().enumerate() {
        let x = x_of(i, r);
        let y = block(r.sector);
        match r.op {
            Op::Read if r.sectors > 0 => reads.push((x, y)),
            Op::Discard if r.sectors > 0 => discards.push((x, y, block(r.sector + r.sectors))),
            Op::Write | Op::Other if r.sectors > 0 => {
                points[write_series(r)].push((x, y));
                if annotate && r.op == Op::Write {
                    sizes.push((x, y, size_label(r.bytes())));
                }
            }
            _ => {}
        }
        if r.is_flush() {
            flushes.push(x);
        }
    }

    for (series, pts) in WRITE_SERIES.iter().zip(points) {
        if pts.is_empty() {
            continue;
        }
        let Series {
            label,
            shape,
            color,
        } = *series;
        chart
            .draw_series(pts.into_iter().map(|p| marker(shape, color, p)))
            .map_err(|e| err(&e))?
            .label(label)
            .legend(move |p| marker(shape, color, p));
    }
    if !reads.is_empty() {
        let Series {
            label,
            shape,
            color,
        } = READ;
        chart
            .draw_series(reads.into_iter().map(|p| marker(shape, color, p)))
            .map_err(|e| err(&e))?
            .label(label)
            .legend(move |p| marker(shape, color, p));
    }
    if !discards.is_empty() {
        chart
            .draw_series(discards.into_iter().map(|(x, a, b)| {
                PathElement::new(vec![(x, a), (x, b)], DISCARD_COLOR.stroke_width(3))
            }))
            .map_err(|e| err(&e))?
            .label("discard (range)")
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y - 6), (x, y + 6)], DISCARD_COLOR.stroke_width(3))
            });
    }
    if !flushes.is_empty() {
        // Flushes have no address: ticks rising from the bottom edge, 3% of the height.
        let tick = (y_hi - y_lo) * 0.03;
        chart
            .draw_series(flushes.into_iter().map(|x| {
                PathElement::new(
                    vec![(x, y_lo), (x, y_lo + tick)],
                    FLUSH_COLOR.stroke_width(2),
                )
            }))
            .map_err(|e| err(&e))?
            .label("cache flush (incl. preflush)")
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y - 6), (x, y + 6)], FLUSH_COLOR.stroke_width(2))
            });
    }
    if !sizes.is_empty() {
        let font = ("sans-serif", 11).into_font().color(&RGBColor(60, 60, 60));
        chart
            .draw_series(
                sizes.into_iter().map(|(x, y, s)| {
                    EmptyElement::at((x, y)) + Text::new(s, (6, -14), font.clone())
                }),
            )
            .map_err(|e| err(&e))?;
    }

    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(120, 120, 120))
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(|e| err(&e))?;
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
