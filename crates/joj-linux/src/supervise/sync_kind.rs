//! The kinds of sync the supervisor tells apart.

/// The sync-type system calls joj counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SyncKind {
    Fsync,
    Fdatasync,
    SyncFileRange,
    /// A write on an O_DSYNC / O_SYNC descriptor, or with RWF_DSYNC / RWF_SYNC.
    SyncWrite,
    /// `syncfs` or `sync`: no one file.
    WholeFs,
    /// `fsync` (`datasync` false) or `fdatasync` of a directory (SQLite's after creating or
    /// deleting a journal).
    Directory {
        datasync: bool,
    },
}
