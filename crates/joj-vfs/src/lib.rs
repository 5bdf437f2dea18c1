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
//! through, counting what SQLite asks of the operating system — write calls and bytes per file
//! role, `fsync` and `fdatasync` calls (including the directory syncs SQLite does after creating
//! or deleting a journal). An experiment may choose `fsync` over the unix VFS's `fdatasync`, the
//! one call joj then makes itself, so that the choice is visible rather than compiled in. An
//! optional [`FileObserver`] is told after every sync and before every delete or truncate,
//! which is how the measurement layer learns where each file's blocks are on disk while they
//! still exist.
//!
//! **SQLite's whole contract.** A VFS on the seam is used by other people's applications:
//! several processes and connections, `sqlite3_shutdown`, ATTACH, VFSs stacked above it. The
//! seam never opens or closes a descriptor of a file SQLite may lock (closing one drops the
//! process's POSIX locks; [`locksafe`] reads such a file from outside a VFS call), never runs
//! SQL inside an open, and gives a new database the reserved bytes its VFS wants through SQLite
//! itself at the file's first lock ([`VfsFile::reserve_bytes`]), for every schema and stack.
//!
//! It is not a new storage format: the bytes on disk are exactly those the unix VFS writes.
//!
//! Invariants: SQLite never sees a Rust panic or a file whose open failed; a file that panicked
//! answers every further call with an error until closed. For `joj`: every counted byte was
//! passed to the unix VFS's `xWrite`; a sync is counted only if it returned; a failed call is
//! the unix VFS's failure and changes nothing the next call sees (the accounting VFS adds no
//! state of its own to a file: it is transparent, and recovers exactly when the unix VFS does).

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
pub mod locksafe;
pub mod marker;
mod name;
mod outcome;
mod raw_connection;
mod shared_base_file;
mod shm_view;
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
pub use shared_base_file::{SharedBaseFile, WeakBaseFile};
pub use shm_view::ShmView;
pub use vfs::{Vfs, VfsFile};
