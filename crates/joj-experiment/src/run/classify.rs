//! After the window: every traced request classified as FS journal, a file's data (by the
//! extent snapshot nearest in time) or metadata, and the FS journal attributed to the file
//! whose sync was under way when it was written (the journaling of journal).

use joj_linux::ScratchFs;
use joj_trace::classify::{DevExtent, Layout, classify};
use joj_trace::totals::BlockTotals;
use joj_trace::{BlockClass, FileRole, Op, TraceRecord};

use super::extents::{ExtentRecorder, SyncInterval};
use crate::error::ExperimentError;
use crate::result::FileBytes;
use crate::result::UnplacedData;

/// The classified trace of a window.
pub(super) struct Classified {
    pub(super) records: Vec<TraceRecord>,
    pub(super) totals: BlockTotals,
    pub(super) fs_journal_by_synced_file: FileBytes,
    pub(super) unplaced: Vec<UnplacedData>,
    /// The file snapshots the records were classified with.
    pub(super) snapshots: Vec<joj_trace::classify::FileSnapshot>,
}

impl Classified {
    /// FS journal bytes written while one of `syncs` was under way.
    pub(super) fn fs_journal_in(&self, syncs: &[SyncInterval]) -> u64 {
        self.class_in(BlockClass::FsJournal, syncs)
    }

    /// Filesystem metadata written while one of `syncs` was under way (btrfs's fsync log tree:
    /// its way of journaling the file's change, which ext4 and xfs write to their journals).
    pub(super) fn metadata_in(&self, syncs: &[SyncInterval]) -> u64 {
        self.class_in(BlockClass::Metadata, syncs)
    }

    fn class_in(&self, class: BlockClass, syncs: &[SyncInterval]) -> u64 {
        self.records
            .iter()
            .filter(|r| r.op == Op::Write && r.class == class)
            .filter(|r| {
                syncs
                    .iter()
                    .any(|s| s.start_ns <= r.time_ns && r.time_ns <= s.end_ns)
            })
            .map(TraceRecord::bytes)
            .sum()
    }
}

/// Where the filesystem keeps its journal on its devices.
pub(super) fn journal_layout(fs: &ScratchFs) -> Layout {
    let jl = fs.journal_layout();
    Layout {
        journal_devs: jl.journal_devs.clone(),
        journal_extents: jl
            .extents
            .iter()
            .map(|e| DevExtent {
                dev: e.dev.clone(),
                sector: e.sector,
                sectors: e.sectors,
            })
            .collect(),
        files: vec![],
    }
}

/// Classify `records` with the filesystem's journal layout and the recorder's snapshots.
pub(super) fn classify_window(
    fs: &ScratchFs,
    recorder: &ExtentRecorder,
    mut records: Vec<TraceRecord>,
) -> Result<Classified, ExperimentError> {
    let mut layout = journal_layout(fs);
    let (files, unplaced) = recorder.snapshots(fs)?;
    layout.files = files;
    let totals = classify(&layout, &mut records);
    let snapshots = std::mem::take(&mut layout.files);
    let fs_journal_by_synced_file = attribute_fs_journal(&records, &recorder.take_syncs());
    Ok(Classified {
        records,
        totals,
        fs_journal_by_synced_file,
        unplaced,
        snapshots,
    })
}

/// FS journal bytes written while a sync call of each file role was in progress: the
/// *journaling of journal* is the part attributed to the WAL and the rollback journal. Journal
/// writes issued outside every sync call (periodic commits) are `other`.
fn attribute_fs_journal(records: &[TraceRecord], syncs: &[SyncInterval]) -> FileBytes {
    let mut out = FileBytes::default();
    let mut sorted: Vec<SyncInterval> = syncs.to_vec();
    sorted.sort_by_key(|s| s.start_ns);
    for r in records
        .iter()
        .filter(|r| r.op == Op::Write && r.class == BlockClass::FsJournal)
    {
        let role = sorted
            .iter()
            .rev()
            .find(|s| s.start_ns <= r.time_ns && r.time_ns <= s.end_ns)
            .map(|s| s.role);
        let slot = match role {
            Some(FileRole::Database) => &mut out.database,
            Some(FileRole::Wal) => &mut out.wal,
            Some(FileRole::RollbackJournal) => &mut out.rollback_journal,
            _ => &mut out.other,
        };
        *slot += r.bytes();
    }
    out
}
