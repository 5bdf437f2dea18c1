//! The crate's error types: [`TraceError`] for reading, writing, importing and plotting traces,
//! and [`OutputError`] for output files (which [`TraceError`] wraps). Every variant carries the
//! facts a caller needs to act on or report the failure (which line, which version, which path)
//! so nobody has to match on error text.

use std::io;
use std::path::PathBuf;

/// Why reading, writing, importing or plotting a trace failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The first line is not a joj-trace header (wrong or missing `format`, or not JSON).
    #[error(
        "not a joj-trace file: {found}; fix: give a trace joj wrote (`joj bench --trace`, `joj \
         trace -- COMMAND`), or turn blkparse text into one with `joj trace import`"
    )]
    NotJojTrace {
        /// A short description of what was found instead.
        found: String,
    },

    /// The file's major version is one this reader does not know.
    #[error("unsupported joj-trace version {found} (this reader supports up to {supported})")]
    UnsupportedVersion { found: u64, supported: u32 },

    /// A line that is not valid JSON for its position (header or record). Lines count from 1.
    #[error("line {line}: malformed: {message}")]
    MalformedLine { line: usize, message: String },

    /// A line longer than any of the format's (no record line is near it): refused before it
    /// is held whole.
    #[error(
        "line {line} is longer than {limit_bytes} bytes, and no line of a trace is near that \
         long; fix: check that this is the file meant (a joj-trace file or blkparse text)"
    )]
    LineTooLong { line: usize, limit_bytes: usize },

    /// The file cannot be read as an input: not a regular file, too large, unreadable.
    #[error(transparent)]
    Input(#[from] crate::input::InputError),

    /// The last line has no terminating newline and does not parse: the file was cut short.
    #[error(
        "line {line}: incomplete last line: the file was cut short; fix: give the whole file as \
         it was written"
    )]
    IncompleteLastLine { line: usize },

    /// The header announced a different number of records than the file holds.
    #[error(
        "the header announces {expected} records but the file holds {found}: {}; fix: give the \
         whole file as it was written",
        if found < expected {
            "the file was cut short"
        } else {
            "records were added after it was written"
        }
    )]
    RecordCountMismatch { expected: u64, found: u64 },

    /// A record that parses but breaks one of the format's rules. `line` counts from 1 with the
    /// header as line 1 (when writing, it is the line the record would have had).
    #[error("line {line}: invalid record: {reason}")]
    InvalidRecord { line: usize, reason: String },

    /// The bytes of the records up to and including `index` (counted from 0) add up to more
    /// than a `u64` holds, so no total of the trace can be given; no device is that large.
    #[error(
        "trace record {index}: its {sectors} sectors bring the trace's bytes past {max} (2^64 - \
         1), more than any device holds; fix: check the trace (a block request is at most a few \
         MiB)",
        max = u64::MAX
    )]
    BytesOverflow { index: usize, sectors: u64 },

    /// A header of more bytes than a reader takes in a line (its device list is too long):
    /// refused before anything is written, since no reader could read the file back.
    #[error(
        "the trace's header would be {line_bytes} bytes for its {devices} devices, longer than \
         the {limit_bytes} bytes a reader takes in a line; fix: keep the devices of interest \
         (at most {max} in a trace)",
        max = crate::format::MAX_TRACE_DEVICES
    )]
    HeaderTooLong {
        devices: usize,
        line_bytes: usize,
        limit_bytes: usize,
    },

    /// blkparse text whose requests name more devices than a trace may list.
    #[error(
        "blkparse text names more than {limit} devices (the {nth}th is {dev}), more than a \
         joj-trace header lists (its first line is at most {line_bytes} bytes); fix: keep the \
         devices of interest (blkparse -i with their traces only)",
        nth = limit + 1,
        line_bytes = crate::input::MAX_LINE_BYTES
    )]
    TooManyDevices { limit: usize, dev: String },

    /// A trace read twice (a first pass for what the second needs to know first) did not read
    /// the same the second time: something wrote to it meanwhile.
    #[error(
        "the trace changed while it was read: the second reading found {change}; fix: give a \
         copy of the trace that nothing writes to"
    )]
    ChangedWhileRead { change: String },

    /// An event line of blkparse text that could not be parsed.
    /// `text` is the line quoted and cut ([`crate::input::quoted`]).
    #[error(
        "blkparse line {line}: {reason}: {text}; fix: give blkparse's default text output \
         (`blkparse -i DEV`), whole"
    )]
    BlkparseLine {
        line: usize,
        reason: String,
        text: String,
    },

    /// The plotting library failed to lay out or render `part` of the chart (the axes, a
    /// series by its legend label, the legend, …); `message` is its own account.
    #[error("plot: {part}: {message}")]
    Plot { part: &'static str, message: String },

    #[error(transparent)]
    Output(#[from] OutputError),

    #[error("I/O: {0}")]
    Io(#[from] io::Error),
}

/// Why an output file cannot be, or was not, written (`crate::output`). Each message names the
/// path and, where there is one, the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The output path names the same file as an input (also through a symlink or hard link).
    #[error(
        "{} is the same file as the input {}: writing it would destroy the input; fix: write the output to another path",
        .output.display(),
        .input.display()
    )]
    SameAsInput { output: PathBuf, input: PathBuf },

    /// A file has the name, and the caller did not ask to replace it.
    #[error(
        "{} already exists; fix: choose another path, or pass --force to replace it",
        .path.display()
    )]
    Exists { path: PathBuf },

    #[error(
        "{} is a directory; fix: name a file in it ({}/<name>)",
        .path.display(),
        .path.display()
    )]
    IsDirectory { path: PathBuf },

    /// A device, FIFO or socket: an output never replaces one, not even when asked to.
    #[error(
        "{} is not a regular file (a device, FIFO or socket); fix: name a regular file",
        .path.display()
    )]
    NotRegularFile { path: PathBuf },

    #[error(
        "cannot write {}: the directory {} does not exist; fix: create it (mkdir -p {}) or choose another path",
        .path.display(),
        .dir.display(),
        .dir.display()
    )]
    NoDirectory { path: PathBuf, dir: PathBuf },

    #[error(
        "cannot write {}: {} is not a directory; fix: choose a path in a directory",
        .path.display(),
        .dir.display()
    )]
    NotADirectory { path: PathBuf, dir: PathBuf },

    /// An output directory cannot be made because `found`, on its way, is not a directory.
    #[error(
        "cannot use {} as the output directory: {} is not a directory; fix: choose another directory",
        .dir.display(),
        .found.display()
    )]
    DirBlocked { dir: PathBuf, found: PathBuf },

    /// An output directory that is a symbolic link: joj (often root) would write wherever
    /// whoever made the link chose.
    #[error(
        "cannot use {} as the output directory: it is a symbolic link{}, and an output folder is \
         never reached through one (whoever can change the link could point joj's files \
         anywhere); fix: name the folder itself{}",
        .dir.display(),
        .target.as_ref().map(|t| format!(" to {}", t.display())).unwrap_or_default(),
        .target.as_ref().map(|t| format!(" ({})", t.display())).unwrap_or_default()
    )]
    DirIsLink {
        dir: PathBuf,
        target: Option<PathBuf>,
    },

    /// The folder an output was checked in is another one when the output is written: its
    /// name (or one on the way) was given to another folder since — by whoever can rename in
    /// the folder above, e.g. to a link to a folder only root may write.
    #[error(
        "not writing {}: its folder {} is not the folder it was when checked before the run (its \
         name, or one on the way, now leads to another); nothing was written; fix: write the \
         output in a folder only you can rename, and run again",
        .path.display(), .dir.display()
    )]
    DirChanged { path: PathBuf, dir: PathBuf },

    #[error(
        "cannot create files in {}: {source}; fix: choose a directory you can write to",
        .dir.display()
    )]
    NotWritable {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error(
        "cannot inspect {}: {source}; fix: check that its directory exists and is readable",
        .path.display()
    )]
    Inspect {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error(
        "writing {}: {source}; fix: check free space and permissions there",
        .path.display()
    )]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error(
        "every name from {stem} to {stem}-{tried} is taken in {}; fix: move old outputs away or choose another directory",
        .dir.display()
    )]
    NoFreeName {
        dir: PathBuf,
        stem: String,
        tried: u32,
    },
}
