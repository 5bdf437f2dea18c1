//! The crate's one error type. Every variant carries the facts a caller needs to act on or
//! report the failure (which line, which version) so nobody has to match on error text.

use std::io;

/// Why reading, writing, importing or plotting a trace failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The first line is not a joj-trace header (wrong or missing `format`, or not JSON).
    #[error("not a joj-trace file: {found}")]
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

    /// The last line has no terminating newline and does not parse: the file was cut short.
    #[error("line {line}: incomplete last line (truncated file)")]
    IncompleteLastLine { line: usize },

    /// The header announced a different number of records than the file holds.
    #[error("header announces {expected} records but the file holds {found} (truncated file?)")]
    RecordCountMismatch { expected: u64, found: u64 },

    /// A record that parses but breaks one of the format's rules. `line` counts from 1 with the
    /// header as line 1 (when writing, it is the line the record would have had).
    #[error("line {line}: invalid record: {reason}")]
    InvalidRecord { line: usize, reason: String },

    /// An event line of blkparse text that could not be parsed.
    #[error("blkparse line {line}: {reason}: {text:?}")]
    BlkparseLine {
        line: usize,
        reason: String,
        text: String,
    },

    /// The plotting library failed to lay out or render `part` of the chart (the axes, a
    /// series by its legend label, the legend, …); `message` is its own account.
    #[error("plot: {part}: {message}")]
    Plot { part: &'static str, message: String },

    #[error("I/O: {0}")]
    Io(#[from] io::Error),
}
