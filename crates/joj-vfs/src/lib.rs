//! joj's SQLite VFS layer.
//!
//! Today it holds one VFS, `joj` (the *accounting shim*): SQLite's own unix VFS with every call
//! passed through, except that joj counts what SQLite asks of the operating system — write
//! calls and bytes per file role, `fsync` and `fdatasync` calls (including the directory syncs
//! SQLite does after creating or deleting a journal) — and performs the syncs itself, so that
//! `fsync` versus `fdatasync` is an explicit, visible choice rather than a compile-time one.
//! An optional [`FileObserver`] is told after every sync and before every delete or truncate,
//! which is how the measurement layer learns where each file's blocks are on disk while they
//! still exist.
//!
//! It is not a new storage format: the bytes on disk are exactly those the unix VFS writes.
//!
//! Invariants: a file opened through `joj` is a unix-VFS file plus a small header; every
//! counted byte was passed to the unix VFS's `xWrite`; a sync is counted only if the system
//! call returned; after a failed write or sync the handle refuses further writes and syncs until
//! it is closed and reopened (the page cache can no longer be trusted).

mod counter_set;
mod counters;
mod forward;
mod shim;

pub use counters::{IoCounters, SyncCall};
pub use shim::{AccountingVfs, FileEvent, FileObserver, VFS_NAME, VfsError, register};
