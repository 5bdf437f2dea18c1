//! MOST-style classification of block requests: each sector a request touches is filesystem
//! journal, data of a file with a SQLite role, or filesystem metadata.
//!
//! The layout is what joj-linux learned about the filesystem: which devices are wholly an
//! external journal, where the internal journal lies (ext4's jbd2 area, the xfs log), and
//! FIEMAP snapshots of the SQLite files' physical extents, taken many times per run because
//! files are deleted, re-created and (on btrfs) moved by copy-on-write. A sector is
//!
//! 1. journal, if its device is a journal device or a journal extent covers it;
//! 2. else data, if some file snapshot covers it — of the snapshot nearest in time to the
//!    request, since the same sectors can belong to different files at different times;
//! 3. else metadata: every written sector that is neither journal nor known file data is the
//!    filesystem's own (inodes, bitmaps, extent trees, directories, superblocks).
//!
//! A request is labelled with the class (and for data the role) of the majority of its sectors;
//! the totals [`classify`] returns count the exact per-sector split, so a 4 KiB write that is half
//! WAL and half inode table counts 2 KiB to each.
//!
//! For speed, each device's extents are flattened once into sorted, disjoint segments, each
//! carrying the time-ordered roles of the snapshots covering it; a request then costs one binary
//! search plus the segments it overlaps, and picking the nearest snapshot one more binary search.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::record::{BlockClass, FileRole, Op, SECTOR_BYTES, TraceRecord};
use crate::totals::BlockTotals;

/// A run of sectors on one device.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DevExtent {
    /// `major:minor`, as in [`TraceRecord::dev`].
    pub dev: String,
    /// First sector (512-byte units) from the start of the device.
    pub sector: u64,
    /// Length in sectors.
    pub sectors: u64,
}

/// The physical extents of one file at one instant (one FIEMAP call).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSnapshot {
    pub role: FileRole,
    pub path: String,
    /// When the extents were read, on the trace's clock.
    pub time_ns: u64,
    pub extents: Vec<DevExtent>,
    /// Read just before the file lost its name or its blocks (an unlink, a rename from or
    /// over it, a truncate): a write to one of these sectors after this instant is not this
    /// file's at this name, unless a later snapshot of it still holds the sector.
    #[serde(default)]
    pub released: bool,
}

/// What the classifier knows of where things live on the traced devices.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Devices that are wholly a filesystem journal (ext4 external journal, xfs logdev).
    pub journal_devs: Vec<String>,
    /// Journal areas inside a filesystem device (ext4 internal jbd2 area, xfs internal log).
    pub journal_extents: Vec<DevExtent>,
    /// File extents, many snapshots per file over a run.
    pub files: Vec<FileSnapshot>,
}

/// How many of a request's sectors fall in each class (and, for data, each file role).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SectorSplit {
    pub fs_journal: u64,
    pub metadata: u64,
    pub database: u64,
    pub wal: u64,
    pub rollback_journal: u64,
    pub other: u64,
}

impl SectorSplit {
    pub fn data(&self, role: FileRole) -> u64 {
        match role {
            FileRole::Database => self.database,
            FileRole::Wal => self.wal,
            FileRole::RollbackJournal => self.rollback_journal,
            FileRole::Other => self.other,
        }
    }

    fn add_data(&mut self, role: FileRole, sectors: u64) {
        match role {
            FileRole::Database => self.database += sectors,
            FileRole::Wal => self.wal += sectors,
            FileRole::RollbackJournal => self.rollback_journal += sectors,
            FileRole::Other => self.other += sectors,
        }
    }

    pub fn data_total(&self) -> u64 {
        self.database + self.wal + self.rollback_journal + self.other
    }

    pub fn total(&self) -> u64 {
        self.fs_journal + self.metadata + self.data_total()
    }

    /// The class of most sectors and, for data, the role of most data sectors; `None` for an
    /// empty split. Ties go to data before journal before metadata, and among roles in the
    /// order database, WAL, rollback journal, other: a deterministic rule, and one that errs
    /// towards the SQLite file the request touched, which is what the measurements are about.
    pub fn majority(&self) -> Option<(BlockClass, Option<FileRole>)> {
        if self.total() == 0 {
            return None;
        }
        let data = self.data_total();
        if data >= self.fs_journal && data >= self.metadata {
            let mut best = FileRole::Database;
            for role in [FileRole::Wal, FileRole::RollbackJournal, FileRole::Other] {
                if self.data(role) > self.data(best) {
                    best = role;
                }
            }
            Some((BlockClass::Data, Some(best)))
        } else if self.fs_journal >= self.metadata {
            Some((BlockClass::FsJournal, None))
        } else {
            Some((BlockClass::Metadata, None))
        }
    }
}

/// Consecutive snapshots (in time order) covering a segment that are of the same file (path
/// and role).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    first_ns: u64,
    last_ns: u64,
    role: FileRole,
    /// Index into [`Classifier::paths`].
    file: usize,
    /// The run's last snapshot was [`FileSnapshot::released`].
    released: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum SegmentKind {
    Journal,
    /// Indices into `DeviceMap::Extents::runs`, sorted by time, non-overlapping in time.
    Files(Range<usize>),
}

/// `[start, end)` in sectors. A device's segments are sorted and disjoint; gaps are metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    start: u64,
    end: u64,
    kind: SegmentKind,
}

#[derive(Debug, Clone)]
enum DeviceMap {
    WholeJournal,
    Extents {
        segments: Vec<Segment>,
        runs: Vec<Run>,
    },
}

/// A [`Layout`] prepared for fast lookups.
#[derive(Debug, Clone)]
pub struct Classifier {
    devices: HashMap<String, DeviceMap>,
    /// The distinct file paths of the layout's snapshots.
    paths: Vec<String>,
}

/// What covers an extent, for the sweep that builds segments.
#[derive(Debug, Clone, Copy)]
enum Cover {
    Journal,
    Snapshot { time_ns: u64, index: usize },
}

impl Classifier {
    pub fn new(layout: &Layout) -> Self {
        let mut covers: HashMap<&str, Vec<(u64, u64, Cover)>> = HashMap::new();
        for e in &layout.journal_extents {
            covers.entry(&e.dev).or_default().push((
                e.sector,
                e.sector.saturating_add(e.sectors),
                Cover::Journal,
            ));
        }
        for (index, snap) in layout.files.iter().enumerate() {
            for e in &snap.extents {
                let cover = Cover::Snapshot {
                    time_ns: snap.time_ns,
                    index,
                };
                covers.entry(&e.dev).or_default().push((
                    e.sector,
                    e.sector.saturating_add(e.sectors),
                    cover,
                ));
            }
        }
        let mut paths: Vec<String> = Vec::new();
        let mut path_index: HashMap<&str, usize> = HashMap::new();
        let file_of: Vec<usize> = layout
            .files
            .iter()
            .map(|snap| {
                *path_index.entry(&snap.path).or_insert_with(|| {
                    paths.push(snap.path.clone());
                    paths.len() - 1
                })
            })
            .collect();
        let mut devices: HashMap<String, DeviceMap> = covers
            .into_iter()
            .map(|(dev, extents)| {
                (
                    dev.to_owned(),
                    build_device(&extents, &layout.files, &file_of),
                )
            })
            .collect();
        // A whole-device journal overrides whatever extents were listed on it.
        for dev in &layout.journal_devs {
            devices.insert(dev.clone(), DeviceMap::WholeJournal);
        }
        Self { devices, paths }
    }

    /// The data sectors of a request by file: `(path, role, sectors)`, each file once, in the
    /// order met. The sum is [`SectorSplit::data_total`] of the same request.
    pub fn split_files(
        &self,
        dev: &str,
        sector: u64,
        sectors: u64,
        time_ns: u64,
    ) -> Vec<(&str, FileRole, u64)> {
        let mut out: Vec<(&str, FileRole, u64)> = Vec::new();
        let Some(DeviceMap::Extents { segments, runs }) = self.devices.get(dev) else {
            return out;
        };
        let end = sector.saturating_add(sectors);
        let first = segments.partition_point(|s| s.end <= sector);
        for seg in &segments[first..] {
            if seg.start >= end {
                break;
            }
            if let SegmentKind::Files(range) = &seg.kind {
                let overlap = seg.end.min(end) - seg.start.max(sector);
                let run = nearest_run(&runs[range.clone()], time_ns);
                let path = self.paths[run.file].as_str();
                match out
                    .iter_mut()
                    .find(|(p, r, _)| *p == path && *r == run.role)
                {
                    Some(entry) => entry.2 += overlap,
                    None => out.push((path, run.role, overlap)),
                }
            }
        }
        out
    }

    /// Split `sectors` sectors from `sector` on `dev`, requested at `time_ns`, by class.
    pub fn split(&self, dev: &str, sector: u64, sectors: u64, time_ns: u64) -> SectorSplit {
        let mut split = SectorSplit::default();
        let (segments, runs) = match self.devices.get(dev) {
            None => {
                split.metadata = sectors;
                return split;
            }
            Some(DeviceMap::WholeJournal) => {
                split.fs_journal = sectors;
                return split;
            }
            Some(DeviceMap::Extents { segments, runs }) => (segments, runs),
        };
        let end = sector.saturating_add(sectors);
        let first = segments.partition_point(|s| s.end <= sector);
        let mut covered = 0;
        for seg in &segments[first..] {
            if seg.start >= end {
                break;
            }
            let overlap = seg.end.min(end) - seg.start.max(sector);
            covered += overlap;
            match &seg.kind {
                SegmentKind::Journal => split.fs_journal += overlap,
                SegmentKind::Files(range) => {
                    split.add_data(nearest_run(&runs[range.clone()], time_ns).role, overlap);
                }
            }
        }
        // `end` saturates, so `covered` can fall short of `sectors` only by uncovered sectors
        // (and by sectors past u64::MAX, which do not exist on any device).
        split.metadata = sectors - covered;
        split
    }

    /// Set `rec.class` and `rec.file`, and return the exact split of its sectors (empty for a
    /// flush or a zero-length request).
    pub fn classify_record(&self, rec: &mut TraceRecord) -> SectorSplit {
        if rec.op == Op::Flush || (rec.sectors == 0 && rec.preflush) {
            rec.class = BlockClass::Flush;
            rec.file = None;
            return SectorSplit::default();
        }
        let split = self.split(&rec.dev, rec.sector, rec.sectors, rec.time_ns);
        // A zero-length request that is not a flush carries nothing to classify.
        let (class, file) = split.majority().unwrap_or((BlockClass::Unknown, None));
        rec.class = class;
        rec.file = file;
        split
    }
}

/// Classify every record in place and return the run's totals with the exact per-sector split
/// of written bytes.
pub fn classify(layout: &Layout, records: &mut [TraceRecord]) -> BlockTotals {
    let classifier = Classifier::new(layout);
    let mut totals = BlockTotals::default();
    for rec in records.iter_mut() {
        totals.count_request(rec);
        let split = classifier.classify_record(rec);
        if rec.op == Op::Write {
            debug_assert_eq!(split.total(), rec.sectors);
            totals.add_write(BlockClass::FsJournal, None, split.fs_journal * SECTOR_BYTES);
            totals.add_write(BlockClass::Metadata, None, split.metadata * SECTOR_BYTES);
            for role in [
                FileRole::Database,
                FileRole::Wal,
                FileRole::RollbackJournal,
                FileRole::Other,
            ] {
                totals.add_write(
                    BlockClass::Data,
                    Some(role),
                    split.data(role) * SECTOR_BYTES,
                );
            }
        }
    }
    debug_assert!(totals.is_consistent());
    totals
}

/// The run of the snapshot nearest in time to `t` among `runs` (non-empty, time-sorted). When
/// two snapshots are equally near, the later wins: a block written between a file's deletion
/// and another file's creation in the same place is more likely the new file's, since
/// writeback follows allocation. A write after a run that ended with its file letting go of
/// the sector ([`FileSnapshot::released`]) is the next owner's, however near the release: the
/// next owner's first snapshot may be taken well after its write (a supervised command's
/// files are mapped when joj reads their sync calls, not at the call), and a file does not
/// write a sector it no longer has. Not so a file unlinked while a descriptor still holds it
/// open: it keeps its blocks until closed, unseen, and a write through that descriptor after
/// the unlink goes to whichever file takes the sector after the close.
fn nearest_run(runs: &[Run], t: u64) -> &Run {
    let after = runs.partition_point(|r| r.first_ns <= t);
    if after == 0 {
        return &runs[0];
    }
    let prev = &runs[after - 1];
    if t <= prev.last_ns || after == runs.len() {
        return prev;
    }
    if prev.released {
        return &runs[after];
    }
    let next = &runs[after];
    if t - prev.last_ns < next.first_ns - t {
        prev
    } else {
        next
    }
}

/// Written file-data bytes of every file of `layout` over `records` (classified or not): what
/// [`classify`] counts by role, by path. Sorted by path.
pub fn data_by_path(layout: &Layout, records: &[TraceRecord]) -> Vec<PathBytes> {
    let classifier = Classifier::new(layout);
    let mut by: BTreeMap<(String, FileRole), u64> = BTreeMap::new();
    for rec in records.iter().filter(|r| r.op == Op::Write) {
        for (path, role, sectors) in
            classifier.split_files(&rec.dev, rec.sector, rec.sectors, rec.time_ns)
        {
            *by.entry((path.to_owned(), role)).or_default() += sectors * SECTOR_BYTES;
        }
    }
    by.into_iter()
        .map(|((path, role), bytes)| PathBytes { path, role, bytes })
        .collect()
}

/// Written data bytes of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathBytes {
    pub path: String,
    pub role: FileRole,
    pub bytes: u64,
}

/// Flatten one device's extents into sorted disjoint segments by a sweep over their ends.
/// Cost: O(E log E) for the sort plus, per segment, the number of snapshots covering it.
fn build_device(
    extents: &[(u64, u64, Cover)],
    files: &[FileSnapshot],
    file_of: &[usize],
) -> DeviceMap {
    // (position, is_start, cover); ends sort before starts at the same position so that
    // touching extents do not look overlapping for an instant (either order gives the same
    // segments, this one just keeps the active set smaller).
    let mut events: Vec<(u64, bool, Cover)> = Vec::with_capacity(extents.len() * 2);
    for &(start, end, cover) in extents {
        if start < end {
            events.push((start, true, cover));
            events.push((end, false, cover));
        }
    }
    events.sort_unstable_by_key(|&(pos, is_start, _)| (pos, is_start));

    let mut journal_depth = 0usize;
    // Active snapshots keyed in time order; the count guards against a snapshot listing
    // overlapping extents of its own.
    let mut active: BTreeMap<(u64, usize), usize> = BTreeMap::new();
    let mut segments: Vec<Segment> = Vec::new();
    let mut runs: Vec<Run> = Vec::new();
    let mut scratch: Vec<Run> = Vec::new();

    let mut i = 0;
    while i < events.len() {
        let pos = events[i].0;
        while i < events.len() && events[i].0 == pos {
            match (events[i].1, events[i].2) {
                (true, Cover::Journal) => journal_depth += 1,
                (false, Cover::Journal) => journal_depth -= 1,
                (true, Cover::Snapshot { time_ns, index }) => {
                    *active.entry((time_ns, index)).or_default() += 1;
                }
                (false, Cover::Snapshot { time_ns, index }) => {
                    if let Some(n) = active.get_mut(&(time_ns, index)) {
                        *n -= 1;
                        if *n == 0 {
                            active.remove(&(time_ns, index));
                        }
                    }
                }
            }
            i += 1;
        }
        let Some(&(next, _, _)) = events.get(i) else {
            break;
        };
        if journal_depth > 0 {
            push_journal(&mut segments, pos, next);
        } else if !active.is_empty() {
            scratch.clear();
            for &(time_ns, index) in active.keys() {
                let role = files[index].role;
                let file = file_of[index];
                let released = files[index].released;
                match scratch.last_mut() {
                    Some(run) if run.role == role && run.file == file => {
                        run.last_ns = time_ns;
                        run.released = released;
                    }
                    _ => scratch.push(Run {
                        first_ns: time_ns,
                        last_ns: time_ns,
                        role,
                        file,
                        released,
                    }),
                }
            }
            push_files(&mut segments, &mut runs, &scratch, pos, next);
        }
    }
    debug_assert_eq!(journal_depth, 0);
    debug_assert!(active.is_empty());
    debug_assert!(segments.windows(2).all(|w| w[0].end <= w[1].start));
    DeviceMap::Extents { segments, runs }
}

fn push_journal(segments: &mut Vec<Segment>, start: u64, end: u64) {
    // Plain `if let` rather than a let-chain: the workspace's rust-version predates them.
    if let Some(last) = segments.last_mut() {
        if last.end == start && last.kind == SegmentKind::Journal {
            last.end = end;
            return;
        }
    }
    segments.push(Segment {
        start,
        end,
        kind: SegmentKind::Journal,
    });
}

/// Append a file segment, extending the previous one instead when it is adjacent and has the
/// same runs (a file's contiguous FIEMAP extents, or the same file in every snapshot).
fn push_files(segments: &mut Vec<Segment>, runs: &mut Vec<Run>, new: &[Run], start: u64, end: u64) {
    if let Some(last) = segments.last_mut() {
        if let SegmentKind::Files(range) = &last.kind {
            if last.end == start && runs[range.clone()] == *new {
                last.end = end;
                return;
            }
        }
    }
    let from = runs.len();
    runs.extend_from_slice(new);
    segments.push(Segment {
        start,
        end,
        kind: SegmentKind::Files(from..runs.len()),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ext(dev: &str, sector: u64, sectors: u64) -> DevExtent {
        DevExtent {
            dev: dev.into(),
            sector,
            sectors,
        }
    }

    fn snap(role: FileRole, time_ns: u64, extents: Vec<DevExtent>) -> FileSnapshot {
        FileSnapshot {
            role,
            path: format!("/mnt/{role:?}"),
            time_ns,
            extents,
            released: false,
        }
    }

    fn rec(time_ns: u64, dev: &str, op: Op, sector: u64, sectors: u64) -> TraceRecord {
        TraceRecord {
            time_ns,
            dev: dev.into(),
            op,
            preflush: false,
            fua: false,
            sync: false,
            meta: false,
            sector,
            sectors,
            comm: "t".into(),
            class: BlockClass::Unknown,
            file: None,
            complete_ns: None,
        }
    }

    /// ext4-like: journal at 1000..2000, the database at 100..132 and 200..208, the WAL at
    /// 300..316; an external journal device 7:1.
    fn layout() -> Layout {
        Layout {
            journal_devs: vec!["7:1".into()],
            journal_extents: vec![ext("7:0", 1000, 1000)],
            files: vec![
                snap(
                    FileRole::Database,
                    10,
                    vec![ext("7:0", 100, 32), ext("7:0", 200, 8)],
                ),
                snap(FileRole::Wal, 10, vec![ext("7:0", 300, 16)]),
                snap(FileRole::Wal, 50, vec![ext("7:0", 300, 24)]),
            ],
        }
    }

    #[test]
    fn each_sector_is_journal_data_or_metadata() {
        let c = Classifier::new(&layout());
        // Half WAL, half metadata (316..320 is WAL only from the snapshot at 50 on, but the
        // snapshot is the only one covering it, so it is WAL at any time).
        let s = c.split("7:0", 312, 16, 20);
        assert_eq!((s.wal, s.metadata), (12, 4));
        // Straddling the database's second extent and the journal area.
        let s = c.split("7:0", 996, 8, 0);
        assert_eq!((s.metadata, s.fs_journal), (4, 4));
        let s = c.split("7:0", 196, 16, 0);
        assert_eq!((s.database, s.metadata), (8, 8));
        // Whole-device journal, and an unknown device is all metadata.
        assert_eq!(c.split("7:1", 0, 64, 0).fs_journal, 64);
        assert_eq!(c.split("8:0", 0, 64, 0).metadata, 64);
    }

    #[test]
    fn records_take_the_majority_class_and_totals_the_exact_split() {
        let mut recs = vec![
            rec(20, "7:0", Op::Write, 312, 16),  // 12 WAL + 4 meta → WAL data
            rec(21, "7:0", Op::Write, 1990, 16), // 10 journal + 6 meta → journal
            rec(22, "7:0", Op::Read, 100, 8),    // database read
            rec(23, "7:0", Op::Flush, 0, 0),
            rec(24, "7:1", Op::Write, 8, 8), // external journal
            rec(25, "7:0", Op::Discard, 400, 8),
        ];
        recs[4].preflush = true;
        recs[4].fua = true;
        let t = classify(&layout(), &mut recs);
        let labels: Vec<_> = recs.iter().map(|r| (r.class, r.file)).collect();
        assert_eq!(
            labels,
            vec![
                (BlockClass::Data, Some(FileRole::Wal)),
                (BlockClass::FsJournal, None),
                (BlockClass::Data, Some(FileRole::Database)),
                (BlockClass::Flush, None),
                (BlockClass::FsJournal, None),
                (BlockClass::Metadata, None),
            ]
        );
        assert_eq!(t.requests, 6);
        assert_eq!(t.write_bytes, 40 * 512);
        assert_eq!(t.data_by_role.wal, 12 * 512);
        assert_eq!(t.data_bytes, 12 * 512);
        assert_eq!(t.metadata_bytes, 10 * 512);
        assert_eq!(t.fs_journal_bytes, 18 * 512);
        assert_eq!(t.read_bytes, 8 * 512);
        assert_eq!(t.discard_bytes, 8 * 512);
        assert_eq!((t.flushes, t.fua), (2, 1));
        assert!(t.is_consistent());
    }

    #[test]
    fn reused_sectors_go_to_the_snapshot_nearest_in_time() {
        // A rollback journal lives at 500..508 until it is deleted; at t=100 the same sectors
        // hold the WAL.
        let layout = Layout {
            files: vec![
                snap(FileRole::RollbackJournal, 10, vec![ext("7:0", 500, 8)]),
                snap(FileRole::RollbackJournal, 20, vec![ext("7:0", 500, 8)]),
                snap(FileRole::Wal, 100, vec![ext("7:0", 500, 8)]),
            ],
            ..Layout::default()
        };
        let c = Classifier::new(&layout);
        let role_at = |t| {
            let mut r = rec(t, "7:0", Op::Write, 500, 8);
            c.classify_record(&mut r);
            r.file
        };
        assert_eq!(role_at(0), Some(FileRole::RollbackJournal));
        assert_eq!(role_at(15), Some(FileRole::RollbackJournal));
        assert_eq!(role_at(59), Some(FileRole::RollbackJournal));
        assert_eq!(role_at(60), Some(FileRole::Wal)); // equidistant: the later snapshot
        assert_eq!(role_at(61), Some(FileRole::Wal));
        assert_eq!(role_at(1_000), Some(FileRole::Wal));
    }

    #[test]
    fn a_write_after_a_file_let_go_of_a_sector_is_the_next_owners_however_late_its_map() {
        // A rollback journal at 100..108, mapped at its sync (10) and just before its unlink
        // (20); the database then grows into the freed sectors and writes them at 30, but is
        // first mapped only at 200 (a supervised command's files are mapped when joj reads the
        // sync calls). Nearest in time, the write at 30 would be the journal's.
        let journal = |t, released| FileSnapshot {
            path: "/d/a.db-journal".into(),
            released,
            ..snap(FileRole::RollbackJournal, t, vec![ext("7:0", 100, 8)])
        };
        let db = FileSnapshot {
            path: "/d/a.db".into(),
            ..snap(FileRole::Database, 200, vec![ext("7:0", 100, 8)])
        };
        let layout = |released| Layout {
            files: vec![journal(10, false), journal(20, released), db.clone()],
            ..Layout::default()
        };
        let records = vec![
            rec(9, "7:0", Op::Write, 100, 8),
            rec(30, "7:0", Op::Write, 100, 8),
        ];
        let mut recs = records.clone();
        let t = classify(&layout(true), &mut recs);
        assert_eq!(t.data_by_role.rollback_journal, 8 * 512);
        assert_eq!(t.data_by_role.database, 8 * 512);
        assert_eq!(recs[1].file, Some(FileRole::Database));
        // Without the release, the nearest snapshot decides, as before.
        let mut recs = records;
        let t = classify(&layout(false), &mut recs);
        assert_eq!(t.data_by_role.rollback_journal, 16 * 512);
    }

    #[test]
    fn data_by_path_follows_each_file_across_reuse_and_deletion() {
        // Two rollback journals of the same name at sectors 100..108, one after the other
        // (snapshot before each deletion), then a WAL reusing the same sectors.
        let journal = |t| FileSnapshot {
            path: "/d/a.db-journal".into(),
            ..snap(FileRole::RollbackJournal, t, vec![ext("7:0", 100, 8)])
        };
        let layout = Layout {
            files: vec![
                journal(10),
                journal(20),
                FileSnapshot {
                    path: "/d/a.db-wal".into(),
                    ..snap(FileRole::Wal, 100, vec![ext("7:0", 100, 8)])
                },
            ],
            ..Layout::default()
        };
        let records = vec![
            rec(9, "7:0", Op::Write, 100, 8),
            rec(21, "7:0", Op::Write, 104, 8), // half journal, half metadata
            rec(99, "7:0", Op::Write, 100, 8),
            rec(99, "7:0", Op::Read, 100, 8), // reads are not written bytes
        ];
        let by = data_by_path(&layout, &records);
        assert_eq!(
            by,
            vec![
                PathBytes {
                    path: "/d/a.db-journal".into(),
                    role: FileRole::RollbackJournal,
                    bytes: 12 * 512
                },
                PathBytes {
                    path: "/d/a.db-wal".into(),
                    role: FileRole::Wal,
                    bytes: 8 * 512
                },
            ]
        );
        // The per-path bytes are the per-role bytes of `classify`.
        let mut recs = records.clone();
        let totals = classify(&layout, &mut recs);
        assert_eq!(totals.data_by_role.rollback_journal, 12 * 512);
        assert_eq!(totals.data_by_role.wal, 8 * 512);
    }

    #[test]
    fn majority_ties_are_deterministic() {
        let s = SectorSplit {
            metadata: 4,
            wal: 2,
            database: 2,
            ..SectorSplit::default()
        };
        assert_eq!(
            s.majority(),
            Some((BlockClass::Data, Some(FileRole::Database)))
        );
        let s = SectorSplit {
            metadata: 4,
            fs_journal: 4,
            ..SectorSplit::default()
        };
        assert_eq!(s.majority(), Some((BlockClass::FsJournal, None)));
        assert_eq!(SectorSplit::default().majority(), None);
    }

    #[test]
    fn contiguous_extents_of_one_file_become_one_segment() {
        let layout = Layout {
            files: (0..100)
                .map(|i| {
                    snap(
                        FileRole::Database,
                        i,
                        (0..50).map(|k| ext("7:0", k * 8, 8)).collect(),
                    )
                })
                .collect(),
            ..Layout::default()
        };
        let c = Classifier::new(&layout);
        match c.devices.get("7:0") {
            Some(DeviceMap::Extents { segments, runs }) => {
                assert_eq!(segments.len(), 1);
                assert_eq!(runs.len(), 1);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    /// The obvious per-sector rule, to check the segment index against.
    fn reference_split(
        layout: &Layout,
        dev: &str,
        sector: u64,
        sectors: u64,
        t: u64,
    ) -> SectorSplit {
        let mut split = SectorSplit::default();
        for s in sector..sector + sectors {
            let covers = |e: &DevExtent| e.dev == dev && e.sector <= s && s < e.sector + e.sectors;
            if layout.journal_devs.iter().any(|d| d == dev)
                || layout.journal_extents.iter().any(covers)
            {
                split.fs_journal += 1;
                continue;
            }
            let nearest = layout
                .files
                .iter()
                .filter(|f| f.extents.iter().any(covers))
                .min_by_key(|f| (f.time_ns.abs_diff(t), std::cmp::Reverse(f.time_ns)));
            match nearest {
                Some(f) => split.add_data(f.role, 1),
                None => split.metadata += 1,
            }
        }
        split
    }

    fn role_strategy() -> impl Strategy<Value = FileRole> {
        prop_oneof![
            Just(FileRole::Database),
            Just(FileRole::Wal),
            Just(FileRole::RollbackJournal),
            Just(FileRole::Other),
        ]
    }

    fn extent_strategy() -> impl Strategy<Value = DevExtent> {
        (prop_oneof![Just("7:0"), Just("7:2")], 0u64..96, 1u64..24)
            .prop_map(|(dev, sector, sectors)| ext(dev, sector, sectors))
    }

    fn layout_strategy() -> impl Strategy<Value = Layout> {
        (
            prop::collection::vec(extent_strategy(), 0..3),
            prop::collection::vec(
                (
                    role_strategy(),
                    0u64..50,
                    prop::collection::vec(extent_strategy(), 0..5),
                ),
                0..12,
            ),
            any::<bool>(),
        )
            .prop_map(|(journal_extents, files, external)| Layout {
                journal_devs: if external { vec!["7:2".into()] } else { vec![] },
                journal_extents,
                files: files
                    .into_iter()
                    .enumerate()
                    // Distinct times: which of two simultaneous snapshots wins is unspecified.
                    .map(|(i, (role, t, extents))| snap(role, t * 16 + i as u64, extents))
                    .collect(),
            })
    }

    proptest! {
        #[test]
        fn the_segment_index_agrees_with_the_per_sector_rule(
            layout in layout_strategy(),
            requests in prop::collection::vec(
                (prop_oneof![Just("7:0"), Just("7:2"), Just("7:9")], 0u64..128, 0u64..40, 0u64..900),
                1..40,
            ),
        ) {
            let c = Classifier::new(&layout);
            for (dev, sector, sectors, t) in requests {
                prop_assert_eq!(
                    c.split(dev, sector, sectors, t),
                    reference_split(&layout, dev, sector, sectors, t),
                    "dev {} sector {} sectors {} t {}", dev, sector, sectors, t
                );
            }
        }
    }
}
