//! joj's SQLite VFS layer: one safe seam for writing SQLite VFSs in Rust, and on it `joj`, the
//! accounting VFS.
//!
//! **The seam.** A VFS is a [`Vfs`] with files that are [`VfsFile`]s: safe traits with typed
//! flags, lock levels and file controls, errors as [`SqliteError`] (an extended result code and
//! a message). [`register_vfs`] makes one a SQLite VFS; the C shim behind it is the only code
//! with SQLite's `sqlite3_vfs` / `sqlite3_io_methods` tables and `extern "C"` callbacks. It keeps
//! every registered VFS in a registry ([`Registered`], by name and type), its last error
//! ([`ErrorLog`], also sent to `sqlite3_log`), and turns a panic in a trait method into an error
//! instead of unwinding into C. [`BaseVfs`] and [`BaseFile`] are safe handles to a VFS below
//! (SQLite's `unix`, or another of joj's), so a VFS that forwards to one needs no unsafe code;
//! [`LockTable`] is SQLite's lock-level state machine for VFSs whose files are not OS files.
//!
//! **The accounting VFS** `joj` ([`register`]): SQLite's own unix VFS with every call passed
//! through, except that joj counts what SQLite asks of the operating system — write calls and
//! bytes per file role, `fsync` and `fdatasync` calls (including the directory syncs SQLite does
//! after creating or deleting a journal) — and performs the syncs itself, so that `fsync` versus
//! `fdatasync` is an explicit, visible choice rather than a compile-time one. An optional
//! [`FileObserver`] is told after every sync and before every delete or truncate, which is how
//! the measurement layer learns where each file's blocks are on disk while they still exist.
//!
//! It is not a new storage format: the bytes on disk are exactly those the unix VFS writes.
//!
//! Invariants: SQLite never sees a Rust panic or a file whose open failed; a file that panicked
//! answers every further call with an error until closed. For `joj`: every counted byte was
//! passed to the unix VFS's `xWrite`; a sync is counted only if the system call returned; after
//! a failed write or sync the handle refuses further writes and syncs until it is closed and
//! reopened (the page cache can no longer be trusted).

mod accounting;
mod base;
mod base_file;
mod c_shim;
mod connect;
mod control;
mod counter_set;
mod counters;
mod error;
mod flags;
mod forward_to_base;
mod lock_table;
mod name;
mod outcome;
mod raw_connection;
mod sqlite_alloc;
pub mod unpoisoned;
mod vfs;

pub use accounting::{AccountingVfs, FileEvent, FileObserver, VFS_NAME, register};
pub use base::BaseVfs;
pub use base_file::BaseFile;
pub use c_shim::{ErrorLog, LastError, Registered, last_error_of, register_vfs};
pub use connect::Connecting;
pub use control::{FileControl, OtherControl, PragmaRequest, VfsNameReply};
pub use counters::{IoCounters, SyncCall};
pub use error::{ResultCode, SqliteError, VfsError};
pub use flags::{
    Access, DeviceCharacteristics, FileKind, LockLevel, OpenFlags, ShmLockFlags, SyncFlags,
};
pub use lock_table::{Busy, HandleLock, LockTable};
pub use name::FileName;
pub use outcome::{FetchedPage, FullPathname, ReadOutcome, ShmMapping};
pub use raw_connection::RawConnection;
pub use vfs::{Vfs, VfsFile};
