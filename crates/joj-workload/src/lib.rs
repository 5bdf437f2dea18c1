//! joj's workloads and the runner that measures them.
//!
//! Workloads are Mobibench's: SQLite inserts, updates, deletes (and selects) with 100-byte
//! records, and file writes and reads under each durability mode; and the X-FTL paper's
//! ([`paper`]: its synthetic `partsupp` updates, TPC-C, RL Benchmark), written against a plain
//! connection so that any VFS can run them, with or without this runner. The runner puts a workload
//! on a real filesystem — a host directory, or a scratch filesystem on a loop device made for
//! the run — counts what SQLite asked of the kernel through the `joj` VFS, captures the block
//! requests the kernel issued in exactly the measured window, classifies them, and returns one
//! [`RunResult`] document.
//!
//! It is not a CLI (that is `joj-cli`) and does not own any on-disk format (traces belong to
//! `joj-trace`). Invariants: nothing is measured outside the window; a scratch filesystem and
//! tracefs instance made for a run are removed when the run ends, whether it succeeded or not;
//! joj never writes into a file it did not create.

pub mod compare;
pub mod config;
pub mod crashtest;
pub mod db;
pub mod device;
pub mod file;
pub mod latency;
pub mod pace;
pub mod paper;
pub mod restart;
pub mod result;
pub mod run;
pub mod xftl;

pub use config::{
    DbOp, DbWorkload, FileAccess, FileSync, FileWorkload, JournalMode, KeyOrder, StartState,
    Synchronous, WaldioMode,
};
pub use pace::PaceReport;
pub use result::RunResult;
pub use run::{FsChoice, RunOptions, Workload, run};

use std::path::PathBuf;

/// Errors of a workload run. Each message names the cause and, where there is one, the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadError {
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("SQLite failed while {what}: {source}")]
    Sqlite {
        what: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("I/O error while {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the filesystem is full while {what}: give the scratch filesystem more room (--image-mib) or free space in the host directory; nothing already committed was lost"
    )]
    DiskFull { what: String },
    #[error("PRAGMA integrity_check on {path} answered: {answer}")]
    Integrity { path: PathBuf, answer: String },
    /// The database disagrees with what the workload knows it must hold (a value read back,
    /// a consistency condition, a predicted digest): the storage below lost or changed data.
    #[error("{what}: expected {expected}, found {found}")]
    Mismatch {
        what: String,
        expected: String,
        found: String,
    },
    #[error(transparent)]
    Linux(#[from] joj_linux::Error),
    #[error(transparent)]
    Vfs(#[from] joj_vfs::VfsError),
    #[error(transparent)]
    Trace(#[from] joj_trace::error::TraceError),
    #[error("replaying the run through the device model: {0}")]
    Device(#[from] joj_device::ReplayError),
}
