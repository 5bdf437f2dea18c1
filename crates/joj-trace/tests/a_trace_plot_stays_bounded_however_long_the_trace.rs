//! A trace plot has a size bound whatever the trace's length: a class of many requests is drawn
//! as their density, in cells of a few pixels, not a marker each (a picture 1400 px wide cannot
//! show two million points, and a browser stalls on the 200 MB SVG they made). The bound is
//! `joj_trace::plot::MAX_SVG_BYTES`, 4 MiB; it is written here as a number so that this test
//! also reads what older code drew.

use joj_trace::plot::{PlotAxis, render_svg};
use joj_trace::{BlockClass, FileRole, Op, TraceRecord};

const BOUND_BYTES: usize = 4 << 20;

/// A write of class `kind` (an index of [`KINDS`]) at `time_ns` and `sector`.
fn write(kind: usize, time_ns: u64, sector: u64) -> TraceRecord {
    let (op, class, file) = KINDS[kind];
    let mut r = TraceRecord::new(time_ns, "7:0", op, sector, 8);
    r.class = class;
    r.file = file;
    r
}

/// Every class the picture tells apart, each a lane of its own.
const KINDS: [(Op, BlockClass, Option<FileRole>); 9] = [
    (Op::Write, BlockClass::FsJournal, None),
    (Op::Write, BlockClass::Data, Some(FileRole::Wal)),
    (Op::Write, BlockClass::Data, Some(FileRole::RollbackJournal)),
    (Op::Write, BlockClass::Data, Some(FileRole::Database)),
    (Op::Write, BlockClass::Data, Some(FileRole::Other)),
    (Op::Write, BlockClass::Metadata, None),
    (Op::Write, BlockClass::Unknown, None),
    (Op::Read, BlockClass::Data, Some(FileRole::Database)),
    (Op::Discard, BlockClass::Unknown, None),
];

/// The worst the density cells can do: one class over a checkerboard as fine as the cells of
/// the picture, one request in a square and sixty in its neighbours, so that no two cells side
/// by side share a shade (nearly a million requests).
fn checkerboard() -> Vec<TraceRecord> {
    let mut out = Vec::new();
    for i in 0..218u64 {
        for j in 0..145u64 {
            let n = if (i + j) % 2 == 0 { 1 } else { 60 };
            out.extend((0..n).map(|_| write(1, i * 1_000_000, j * 8000)));
        }
    }
    out
}

/// The worst the markers can do: every class with as many requests as are drawn one by one,
/// each with a preflush (the flush lane full too).
fn every_class_its_most_markers() -> Vec<TraceRecord> {
    let mut out = Vec::new();
    for i in 0..1500u64 {
        for kind in 0..KINDS.len() {
            let mut r = write(
                kind,
                i * 9 + kind as u64,
                (i * 7919 + kind as u64 * 104_729) % 1_000_000 * 8,
            );
            r.preflush = true;
            out.push(r);
        }
    }
    out
}

#[test]
fn the_worst_density_and_the_most_markers_make_an_svg_under_the_bound() {
    for (what, records) in [
        ("checkerboard", checkerboard()),
        ("markers", every_class_its_most_markers()),
    ] {
        for axis in [PlotAxis::Time, PlotAxis::Sequence] {
            let svg = render_svg(what, &records, axis).unwrap();
            assert!(
                svg.len() <= BOUND_BYTES,
                "{what}, {axis:?}: {} bytes of SVG for {} records, more than {BOUND_BYTES}",
                svg.len(),
                records.len()
            );
            // A marker is a polygon, circle, rect or pair of lines, a density cell a rect: at
            // most as many as the cells of the lanes (218 × 145 of 4 px) or 1,500 per class.
            let elements = svg.matches("<rect").count()
                + svg.matches("<circle").count()
                + svg.matches("<polygon").count();
            assert!(
                elements <= 218 * 145 + 200,
                "{what}, {axis:?}: {elements} drawn elements for {} records",
                records.len()
            );
        }
    }
}

#[test]
fn a_class_of_many_requests_is_a_density_that_says_how_many_it_holds() {
    let records: Vec<TraceRecord> = (0..20_000u64)
        .map(|i| {
            let mut r = TraceRecord::new(i * 1000, "7:0", Op::Write, 274_432 + (i % 512) * 8, 8);
            r.class = BlockClass::Data;
            r.file = Some(FileRole::Wal);
            r
        })
        .collect();
    let svg = render_svg("wal", &records, PlotAxis::Time).unwrap();
    assert!(
        svg.contains(
            "WAL data — 78.1 MiB (100 % of writes) · 20,000 requests, darker where more fell"
        ),
        "the lane's label gives its total and how many requests its shades hold"
    );
    // A triangle per request was 20,000 polygons; the label's marker is the one left.
    assert!(svg.matches("<polygon").count() <= 1);
    assert!(svg.len() < 1 << 20, "{} bytes", svg.len());
}
