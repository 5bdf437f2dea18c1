//! joj's workload generators: what an application does to SQLite or to files, apart from what
//! it runs on and how it is measured.
//!
//! - Mobibench's workloads ([`db`], [`file`]): SQLite inserts, updates, deletes (and selects)
//!   of 100-byte records, and file writes and reads under each durability mode.
//! - The X-FTL paper's ([`paper`]): its synthetic `partsupp` updates, TPC-C, RL Benchmark,
//!   written against a plain connection so that any VFS can run them.
//! - Recorded programs ([`syscalls`], Mobigen-style): a versioned recording of file-system
//!   calls, imported from strace, and the player that re-executes it under a directory.
//!
//! A database workload runs on whatever [`SqliteSetup`] it is given (VFS, journal mode,
//! synchronous level) and brackets exactly its measured transactions with a [`Window`]; the
//! experiments that choose the stack, trace the kernel and report (`joj-experiment`) sit on
//! top of this crate. Invariants: nothing outside the window's transactions runs between
//! `begin` and `end`; joj never writes into a database file it did not create; every random
//! choice comes from the workload's seed.

mod affinity;
pub mod config;
pub mod db;
pub mod error;
pub mod file;
pub mod latency;
pub mod made;
pub mod paper;
pub mod sqlite;
pub mod syscalls;
pub mod thread_usage;
pub mod window;

pub use config::{
    DbOp, DbWorkload, FileAccess, FileSync, FileWorkload, JournalMode, KeyOrder, SqliteJournal,
    StartState, Synchronous, WaldioMode,
};
pub use db::{DbRunOutput, PaperOutcome};
pub use error::{ConfigError, WorkloadError};
pub use sqlite::SqliteSetup;
pub use thread_usage::ThreadUsage;
pub use window::{Unmeasured, Window, lock};
