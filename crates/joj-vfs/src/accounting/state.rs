//! What the accounting VFS shares between its files: the unix VFS under it, the counters, and
//! the observer of file events.

use super::os;
use crate::base::BaseVfs;
use crate::counters::AtomicCounters;
use crate::flags::{FileKind, OpenFlags};
use joj_trace::FileRole;
use std::ffi::c_int;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Arc, RwLock};

/// When the observer is told something, and about which file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileEvent {
    /// A sync of the file is about to be issued.
    BeforeSync,
    /// The file's data was just made durable: its blocks are allocated now.
    AfterSync,
    /// The file is about to be deleted (its blocks are about to be freed).
    BeforeDelete,
    /// The file is about to be truncated to a smaller size.
    BeforeTruncate,
}

/// Told of file events while a workload runs, e.g. to record where a file's blocks are.
/// `fd` is an open descriptor of the file (valid only during the call); it is `None` for
/// `BeforeDelete`, where only the path is known.
pub trait FileObserver: Send + Sync {
    fn file_event(&self, event: FileEvent, path: &Path, role: FileRole, fd: Option<c_int>);
}

pub(crate) struct Shared {
    pub(crate) unix: BaseVfs,
    pub(crate) counters: AtomicCounters,
    pub(crate) observer: RwLock<Option<Arc<dyn FileObserver>>>,
}

impl Shared {
    pub(crate) fn notify(&self, event: FileEvent, path: &Path, role: FileRole, fd: Option<c_int>) {
        let guard = crate::unpoisoned::read(&self.observer);
        if let Some(observer) = guard.as_ref() {
            observer.file_event(event, path, role, fd);
        }
    }

    /// Count the directory sync the unix VFS just made of `path`'s directory (it skips a
    /// directory it cannot open, and so does this count).
    pub(crate) fn count_directory_sync_of(&self, path: &Path) {
        if os::directory_exists(path) {
            self.counters.count_sync(self.counters.sync_call(), true);
        }
    }

    /// Sync the directory of `path` (counted as a directory sync); a directory that cannot be
    /// opened is skipped, as SQLite's unix VFS does.
    pub(crate) fn sync_directory_of(&self, path: &Path) -> bool {
        let call = self.counters.sync_call();
        match os::sync_directory_of(call, path) {
            None => true,
            Some(false) => false,
            Some(true) => {
                self.counters.count_sync(call, true);
                true
            }
        }
    }
}

pub(crate) fn role_of(flags: OpenFlags) -> FileRole {
    match flags.kind() {
        FileKind::MainDb => FileRole::Database,
        FileKind::Wal => FileRole::Wal,
        FileKind::MainJournal => FileRole::RollbackJournal,
        _ => FileRole::Other,
    }
}

/// SQLite deletes only journals, WALs and super-journals by name; tell them apart by suffix.
pub(crate) fn role_from_name(path: &Path) -> FileRole {
    let s = path.as_os_str().as_bytes();
    if s.ends_with(b"-wal") {
        FileRole::Wal
    } else if s.ends_with(b"-journal") {
        FileRole::RollbackJournal
    } else {
        FileRole::Other
    }
}
