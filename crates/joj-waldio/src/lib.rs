//! WALDIO (Lee et al., ATC '15) for unmodified SQLite, as a VFS named `waldio`.
//!
//! SQLite runs its own WAL mode; this VFS stores the WAL in a page-aligned physical layout
//! (each frame's 24-byte header embedded in its page's reserved bytes, the WAL header in a block
//! of its own), preallocates the WAL with written blocks made durable by one explicit
//! `fdatasync`, and writes each transaction's frames in one `O_DIRECT` write. A log commit is
//! then a non-allocating overwrite: the filesystem journals nothing for it. Durability options
//! `full` / `fua` / `normal` and opt-in group synchronization follow the paper's section 5.
//! The byte format and the crash argument: `docs/formats/waldio.md`.
//!
//! It is not a fork of SQLite and does not change SQLite's WAL logic, checksums, checkpoints or
//! locking: every file except the `-wal` passes through to a base VFS unchanged. The VFS is
//! written on joj-vfs's safe seam (no C callbacks of its own); the `-wal` of a file is shared by
//! every connection of the process (one `WalState` per inode).
//!
//! Invariants: SQLite reads back exactly the logical WAL it wrote (checksums intact); without
//! group sync, a commit's frames are written before SQLite acknowledges it (and durable with
//! `full`/`fua`); the page bytes that hold frame headers are verified to be zero before use.

#[cfg(feature = "rusqlite")]
mod connection;
mod convert;
pub mod counters;
pub mod db_mark;
mod handle;
pub mod io;
pub mod layout;
pub mod options;
mod sqlite_header;
mod vfs;
pub mod wal;
pub mod wal_index;

#[cfg(feature = "rusqlite")]
pub use connection::{open, open_with};
pub use convert::{COMPANIONS, ConvertReport, convert};
pub use counters::{AtomicWaldioCounters, WaldioCounters};
pub use handle::{
    VFS_NAME, WaldioError, WaldioVfs, db_header, existing_db_header, last_error,
    last_error_on_this_thread, register, register_over, sqlite_wal_path, uri, wal_path,
};
pub use io::{AlignedBuf, DirectFile, Tap, WalIo};
pub use options::{GroupSync, OptionsError, SyncOption, WaldioOptions, group_due};
pub use wal::{IoOp, WalError, WalState};
