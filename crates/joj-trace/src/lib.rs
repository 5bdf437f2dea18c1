//! joj's block trace: one record per block request, as the kernel issued it, and what joj
//! knows about it after classification (filesystem journal, metadata, or data of a file with a
//! role such as the SQLite WAL).
//!
//! This crate is pure data: it does not capture anything (that is `joj-linux`) and it does not
//! replay anything (that is the device layer). It owns the versioned file format
//! (`docs/formats/joj-trace.md`), the blkparse text importer, the classifier that maps a
//! request's sectors to classes, the totals derived from a classified trace, and the SVG plot.
//! The only files it touches are those a caller names. Its [`output`] module is how joj writes
//! every output file: checked before the work (never the same file as an input, never an
//! existing file unless the caller says to replace it), written atomically (temporary file,
//! sync, then a name that is free or, when asked, a rename over the old file), and given a
//! unique name when several runs write into one folder. Its [`input`] module is how joj reads
//! every input file: only a regular file, never past a stated size, a line at a time with a
//! cap.
//!
//! Invariants: sectors are 512-byte units on the traced device; `bytes == sectors * 512` for
//! reads, writes and discards and `0` for a pure flush; classification never changes a record's
//! I/O fields, only its `class` and `file` attribution.

pub mod blkparse;
pub mod classify;
pub mod completions;
pub mod error;
pub mod format;
pub mod input;
pub mod output;
pub mod plot;
pub mod record;
pub mod terminal;
pub mod totals;

pub use blkparse::{
    BlkparseAction, BlkparseImport, BlkparseRecords, BlkparseScan, import_blkparse, scan_blkparse,
};
pub use classify::{Classifier, DevExtent, FileSnapshot, Layout, SectorSplit, classify};
pub use completions::attach_completions;
pub use error::{OutputError, TraceError};
pub use format::{
    Clock, DeviceRole, FORMAT_VERSION, TraceDevice, TraceHeader, TraceReader, TraceSource,
    open_trace_file, read_trace, read_trace_file, write_trace, write_trace_file,
};
pub use input::InputError;
pub use plot::{PlotAxis, PlotInfo, plot_svg, render_svg};
pub use record::{BlockClass, Completion, FileRole, Op, SECTOR_BYTES, TraceRecord};
pub use totals::{BlockPerTxn, BlockTotals, DataByRole, DataByRolePerTxn, TraceSummary};
