//! What a trace picture draws, gathered one record at a time into a summary of fixed size
//! ([`TracePlot`]), so that a trace of any length is plotted from a stream.
//!
//! Each class keeps its requests one by one while they are few (at most
//! [`MAX_MARKERS_PER_LANE`]: the picture then is the papers' scatter of markers, each request
//! where it was), and their density once they are more (a grid of [`GRID_COLUMNS`] ×
//! [`GRID_ROWS`] counts, time × address, [`bins`]). Flushes and the bytes each class wrote are
//! kept per request up to [`MAX_EXACT`], then per time bin ([`TIME_BINS`]). The totals are
//! exact whatever the length.
//!
//! Invariants: what a `TracePlot` holds is bounded by the constants above, whatever the number
//! of records added; the sum of the bytes of every record added fits a `u64` (the record that
//! would break it is refused, named), so no total can wrap.

use super::bins::{Bins, Grid};
use super::series::{DISCARD, READ, Series, WRITE_SERIES, write_series};
use super::style::PlotAxis;
use crate::error::TraceError;
use crate::record::{Op, SECTOR_BYTES, TraceRecord};

/// A class with at most this many requests is drawn a marker per request; one with more, as
/// the density of its requests (see the module header).
pub const MAX_MARKERS_PER_LANE: usize = 1500;
/// Write sizes are printed beside markers only up to this many records; past it they overlap
/// into an unreadable smear.
pub const MAX_ANNOTATED_RECORDS: usize = 300;
/// Flushes and per-class bytes kept per request before they are kept per time bin.
pub(crate) const MAX_EXACT: usize = 4096;
/// Time bins of the flushes and of the per-class bytes, once binned.
pub(crate) const TIME_BINS: usize = 2048;
/// The density grid of a class with many requests: time bins × address bins. At least half of
/// each holds the span of the keys (`bins`), finer than the picture's cells of
/// [`super::trace_view::CELL_PX`].
pub(crate) const GRID_COLUMNS: usize = 1024;
pub(crate) const GRID_ROWS: usize = 512;

/// A lane's requests: each one while they are few, their density once they are many.
#[derive(Debug, Clone)]
pub(crate) enum Marks {
    /// `(x key, first sector, end sector)` of each request.
    Each(Vec<(u64, u64, u64)>),
    Density(Box<Grid>),
}

/// One class's lane.
#[derive(Debug, Clone)]
pub(crate) struct Lane {
    pub series: Series,
    pub marks: Marks,
    pub requests: u64,
    pub bytes: u64,
    /// The lowest first sector and the highest end sector of the lane's requests.
    pub lo: u64,
    pub hi: u64,
}

impl Lane {
    fn new(series: Series) -> Lane {
        Lane {
            series,
            marks: Marks::Each(Vec::new()),
            requests: 0,
            bytes: 0,
            lo: u64::MAX,
            hi: 0,
        }
    }

    /// A discard is drawn as the range it covers; any other request at its first sector.
    pub fn is_ranges(&self) -> bool {
        self.series.label == DISCARD.label
    }

    fn add(&mut self, x: u64, r: &TraceRecord) {
        let (lo, hi) = (r.sector, r.sector.saturating_add(r.sectors));
        self.lo = self.lo.min(lo);
        self.hi = self.hi.max(hi);
        self.bytes += r.bytes();
        self.requests += 1;
        let ranges = self.is_ranges();
        let into = |g: &mut Grid, (x, lo, hi): (u64, u64, u64)| {
            let last = if ranges {
                hi.saturating_sub(1).max(lo)
            } else {
                lo
            };
            g.add(x, lo, last);
        };
        match &mut self.marks {
            Marks::Each(each) if each.len() < MAX_MARKERS_PER_LANE => each.push((x, lo, hi)),
            Marks::Each(each) => {
                let mut grid = Box::new(Grid::new(GRID_COLUMNS, GRID_ROWS));
                for m in each.drain(..) {
                    into(&mut grid, m);
                }
                into(&mut grid, (x, lo, hi));
                self.marks = Marks::Density(grid);
            }
            Marks::Density(grid) => into(grid, (x, lo, hi)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.requests == 0
    }
}

/// Weights at keys (a flush at its time, a write's bytes at its time): each while they are
/// few, summed per time bin once they are many.
#[derive(Debug, Clone)]
pub(crate) enum Sampled {
    /// `(x key, weight)` in the order they came.
    Each(Vec<(u64, u64)>),
    Binned(Box<Bins>),
}

impl Sampled {
    fn add(&mut self, key: u64, weight: u64) {
        match self {
            Sampled::Each(each) if each.len() < MAX_EXACT => each.push((key, weight)),
            Sampled::Each(each) => {
                let mut bins = Box::new(Bins::new(TIME_BINS));
                for (k, w) in each.drain(..) {
                    bins.add(k, w);
                }
                bins.add(key, weight);
                *self = Sampled::Binned(bins);
            }
            Sampled::Binned(bins) => bins.add(key, weight),
        }
    }

    /// `(key, weight)` in key order once binned (a bin's weight at the middle of its keys, or
    /// at its last key with `at_end`), in the order they came before.
    pub fn points(&self, at_end: bool) -> Vec<(u64, u64)> {
        match self {
            Sampled::Each(each) => each.clone(),
            Sampled::Binned(bins) => bins
                .filled()
                .map(|(c, i, w)| (if at_end { c.last(i) } else { c.middle(i) }, w))
                .collect(),
        }
    }
}

/// What a trace picture draws, gathered from its records one at a time: see the module header.
#[derive(Debug, Clone)]
pub struct TracePlot {
    pub(crate) axis: PlotAxis,
    writes: Vec<Lane>,
    reads: Lane,
    discards: Lane,
    pub(crate) flushes: Sampled,
    pub(crate) flush_count: u64,
    /// Per write series (an index of `WRITE_SERIES`), the bytes written at each key.
    pub(crate) cumulative: Vec<Sampled>,
    /// `(write series, x key, first sector, bytes)` of each write, while the trace has at most
    /// [`MAX_ANNOTATED_RECORDS`] records.
    pub(crate) sizes: Vec<(usize, u64, u64, u64)>,
    pub(crate) records: u64,
    /// The smallest and largest x key, and issue time, of every record.
    pub(crate) keys: Option<(u64, u64)>,
    pub(crate) times: Option<(u64, u64)>,
    /// Bytes of every record so far, whatever its op (checked to fit a `u64`).
    all_bytes: u64,
}

impl TracePlot {
    /// An empty picture with `axis` as its x axis.
    pub fn new(axis: PlotAxis) -> TracePlot {
        TracePlot {
            axis,
            writes: WRITE_SERIES.iter().map(|s| Lane::new(*s)).collect(),
            reads: Lane::new(READ),
            discards: Lane::new(DISCARD),
            flushes: Sampled::Each(Vec::new()),
            flush_count: 0,
            cumulative: vec![Sampled::Each(Vec::new()); WRITE_SERIES.len()],
            sizes: Vec::new(),
            records: 0,
            keys: None,
            times: None,
            all_bytes: 0,
        }
    }

    /// The picture of `records`.
    pub fn of(records: &[TraceRecord], axis: PlotAxis) -> Result<TracePlot, TraceError> {
        let mut plot = TracePlot::new(axis);
        for r in records {
            plot.add(r)?;
        }
        Ok(plot)
    }

    /// Add the next record of the trace. Fails, naming the record (counted from 0), when the
    /// bytes of the records so far add up to more than a `u64` holds (see
    /// [`crate::totals::check_bytes_fit`]); the picture is then left as it was.
    pub fn add(&mut self, r: &TraceRecord) -> Result<(), TraceError> {
        let index = usize::try_from(self.records).unwrap_or(usize::MAX);
        self.all_bytes = r
            .sectors
            .checked_mul(SECTOR_BYTES)
            .and_then(|b| self.all_bytes.checked_add(b))
            .ok_or(TraceError::BytesOverflow {
                index,
                sectors: r.sectors,
            })?;
        let x = match self.axis {
            PlotAxis::Time => r.time_ns,
            PlotAxis::Sequence => self.records,
        };
        self.records += 1;
        self.keys = Some(self.keys.map_or((x, x), |(a, b)| (a.min(x), b.max(x))));
        let t = r.time_ns;
        self.times = Some(self.times.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        match r.op {
            Op::Read if r.sectors > 0 => self.reads.add(x, r),
            Op::Discard if r.sectors > 0 => self.discards.add(x, r),
            Op::Write | Op::Other if r.sectors > 0 => {
                let s = write_series(r);
                self.writes[s].add(x, r);
                self.cumulative[s].add(x, r.bytes());
                if r.op == Op::Write && self.records <= MAX_ANNOTATED_RECORDS as u64 {
                    self.sizes.push((s, x, r.sector, r.bytes()));
                }
            }
            _ => {}
        }
        if self.records > MAX_ANNOTATED_RECORDS as u64 && !self.sizes.is_empty() {
            self.sizes = Vec::new();
        }
        if r.is_flush() {
            self.flushes.add(x, 1);
            self.flush_count += 1;
        }
        Ok(())
    }

    /// The lanes to draw, top to bottom: the write classes present in [`WRITE_SERIES`] order,
    /// then reads and discards if any.
    pub(crate) fn lanes(&self) -> Vec<&Lane> {
        self.writes
            .iter()
            .chain([&self.reads, &self.discards])
            .filter(|l| !l.is_empty())
            .collect()
    }

    /// Bytes written, over every write class.
    pub(crate) fn written(&self) -> u64 {
        self.writes.iter().map(|l| l.bytes).sum()
    }

    /// The per-class bytes of the write classes present: `(series, (key, bytes) points)`.
    pub(crate) fn cumulative(&self) -> Vec<(Series, &Sampled)> {
        WRITE_SERIES
            .iter()
            .zip(&self.cumulative)
            .zip(&self.writes)
            .filter(|(_, lane)| !lane.is_empty())
            .map(|((s, c), _)| (*s, c))
            .collect()
    }
}
