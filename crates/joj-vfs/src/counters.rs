//! What SQLite asked of the operating system, counted with relaxed atomics (several
//! connections and threads may write at once; only totals are read, after the run).

use crate::error::VfsError;
use joj_trace::FileRole;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// Which system call joj issues when SQLite asks for a sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SyncCall {
    /// `fdatasync(2)`: what SQLite's unix VFS calls when built with `HAVE_FDATASYNC`.
    #[default]
    Fdatasync,
    /// `fsync(2)`: also forces metadata such as mtime, so ext4 commits its journal every time.
    Fsync,
}

impl SyncCall {
    pub fn name(self) -> &'static str {
        match self {
            SyncCall::Fdatasync => "fdatasync",
            SyncCall::Fsync => "fsync",
        }
    }

    fn to_u8(self) -> u8 {
        match self {
            SyncCall::Fdatasync => 0,
            SyncCall::Fsync => 1,
        }
    }

    fn from_u8(v: u8) -> SyncCall {
        if v == 1 {
            SyncCall::Fsync
        } else {
            SyncCall::Fdatasync
        }
    }
}

impl std::str::FromStr for SyncCall {
    type Err = VfsError;
    fn from_str(s: &str) -> Result<Self, VfsError> {
        match s.to_ascii_lowercase().as_str() {
            "fdatasync" => Ok(SyncCall::Fdatasync),
            "fsync" => Ok(SyncCall::Fsync),
            _ => Err(VfsError::UnknownSyncCall {
                given: s.to_string(),
            }),
        }
    }
}

/// A snapshot of the counters; `delta` of two snapshots is what happened in between.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoCounters {
    pub fsync: u64,
    pub fdatasync: u64,
    /// Of the syncs above, those on a directory (after a journal was created or deleted).
    pub dir_syncs: u64,
    pub write_calls: u64,
    pub write_bytes: u64,
    pub read_calls: u64,
    pub read_bytes: u64,
    pub truncates: u64,
    pub deletes: u64,
    /// Write transactions SQLite committed on a main database (`SQLITE_FCNTL_COMMIT_PHASETWO`).
    #[serde(default)]
    pub commits: u64,
    pub database_bytes: u64,
    pub wal_bytes: u64,
    pub rollback_journal_bytes: u64,
    pub other_bytes: u64,
}

impl IoCounters {
    /// `self - earlier`, field by field.
    pub fn delta(&self, earlier: &IoCounters) -> IoCounters {
        IoCounters {
            fsync: self.fsync - earlier.fsync,
            fdatasync: self.fdatasync - earlier.fdatasync,
            dir_syncs: self.dir_syncs - earlier.dir_syncs,
            write_calls: self.write_calls - earlier.write_calls,
            write_bytes: self.write_bytes - earlier.write_bytes,
            read_calls: self.read_calls - earlier.read_calls,
            read_bytes: self.read_bytes - earlier.read_bytes,
            truncates: self.truncates - earlier.truncates,
            deletes: self.deletes - earlier.deletes,
            commits: self.commits - earlier.commits,
            database_bytes: self.database_bytes - earlier.database_bytes,
            wal_bytes: self.wal_bytes - earlier.wal_bytes,
            rollback_journal_bytes: self.rollback_journal_bytes - earlier.rollback_journal_bytes,
            other_bytes: self.other_bytes - earlier.other_bytes,
        }
    }

    /// Bytes written through the VFS to files of `role`.
    pub fn bytes_for(&self, role: FileRole) -> u64 {
        match role {
            FileRole::Database => self.database_bytes,
            FileRole::Wal => self.wal_bytes,
            FileRole::RollbackJournal => self.rollback_journal_bytes,
            FileRole::Other => self.other_bytes,
        }
    }
}

#[derive(Default)]
pub(crate) struct AtomicCounters {
    fsync: AtomicU64,
    fdatasync: AtomicU64,
    dir_syncs: AtomicU64,
    write_calls: AtomicU64,
    write_bytes: AtomicU64,
    read_calls: AtomicU64,
    read_bytes: AtomicU64,
    truncates: AtomicU64,
    deletes: AtomicU64,
    commits: AtomicU64,
    by_role: [AtomicU64; 4],
    sync_call: AtomicU8,
}

fn role_index(role: FileRole) -> usize {
    match role {
        FileRole::Database => 0,
        FileRole::Wal => 1,
        FileRole::RollbackJournal => 2,
        FileRole::Other => 3,
    }
}

impl AtomicCounters {
    pub(crate) fn sync_call(&self) -> SyncCall {
        SyncCall::from_u8(self.sync_call.load(Ordering::Relaxed))
    }

    pub(crate) fn set_sync_call(&self, call: SyncCall) {
        self.sync_call.store(call.to_u8(), Ordering::Relaxed);
    }

    pub(crate) fn count_sync(&self, call: SyncCall, dir: bool) {
        match call {
            SyncCall::Fsync => self.fsync.fetch_add(1, Ordering::Relaxed),
            SyncCall::Fdatasync => self.fdatasync.fetch_add(1, Ordering::Relaxed),
        };
        if dir {
            self.dir_syncs.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn count_write(&self, role: FileRole, bytes: u64) {
        self.write_calls.fetch_add(1, Ordering::Relaxed);
        self.write_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.by_role[role_index(role)].fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn count_read(&self, bytes: u64) {
        self.read_calls.fetch_add(1, Ordering::Relaxed);
        self.read_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn count_truncate(&self) {
        self.truncates.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_commit(&self) {
        self.commits.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_delete(&self) {
        self.deletes.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> IoCounters {
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        IoCounters {
            fsync: r(&self.fsync),
            fdatasync: r(&self.fdatasync),
            dir_syncs: r(&self.dir_syncs),
            write_calls: r(&self.write_calls),
            write_bytes: r(&self.write_bytes),
            read_calls: r(&self.read_calls),
            read_bytes: r(&self.read_bytes),
            truncates: r(&self.truncates),
            deletes: r(&self.deletes),
            commits: r(&self.commits),
            database_bytes: r(&self.by_role[0]),
            wal_bytes: r(&self.by_role[1]),
            rollback_journal_bytes: r(&self.by_role[2]),
            other_bytes: r(&self.by_role[3]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_calls_parse_by_name_and_an_unknown_one_is_named() {
        assert_eq!("FSYNC".parse::<SyncCall>(), Ok(SyncCall::Fsync));
        assert_eq!("fdatasync".parse::<SyncCall>(), Ok(SyncCall::Fdatasync));
        assert_eq!(
            "sync".parse::<SyncCall>(),
            Err(VfsError::UnknownSyncCall {
                given: "sync".into()
            })
        );
    }
}
