//! The `joj` VFS: SQLite's unix VFS behind a thin accounting layer, on the seam.
//!
//! Every file is a unix-VFS file ([`BaseFile`](crate::BaseFile)) wrapped in an `AcctFile` that
//! counts on the way; every call, `xSync` and `xDelete` included, is the unix VFS's own, so its
//! system-call overrides, fault injection, sync flags and error recovery are SQLite's. The one
//! exception is an experiment that asks for `fsync` ([`AccountingVfs::set_sync_call`]): joj
//! then issues `fsync` itself where the unix VFS would issue `fdatasync` (file and directory),
//! so that the choice is visible rather than compiled in.
//!
//! The descriptor is the unix VFS's own (`BaseFile::unix_descriptor`), checked at open to be a
//! descriptor of the file opened (by `fstat` against the path, or `/proc/self/fd` when another
//! process replaced the path meanwhile): if the unix VFS's layout ever changed, opening fails
//! with a clear error instead of syncing the wrong file.

mod file;
mod os;
mod state;

pub use state::{FileEvent, FileObserver};

use crate::base::BaseVfs;
use crate::c_shim::{Registered, register_vfs};
use crate::counters::{AtomicCounters, IoCounters, SyncCall};
use crate::error::{ResultCode, SqliteError, VfsError};
use crate::flags::{Access, FileKind, OpenFlags};
use crate::name::FileName;
use crate::vfs::Vfs;
use file::AcctFile;
use state::{Shared, role_from_name, role_of};
use std::path::Path;
use std::sync::{Arc, RwLock};

/// Name under which the accounting VFS is registered with SQLite.
pub const VFS_NAME: &str = "joj";

/// The accounting VFS (the seam's view of it).
pub(crate) struct Accounting {
    shared: Shared,
}

impl Vfs for Accounting {
    type File = AcctFile;

    fn open(
        &'static self,
        name: Option<&FileName<'_>>,
        flags: OpenFlags,
    ) -> Result<(AcctFile, OpenFlags), SqliteError> {
        let (base, out) = self.shared.unix.open(name, flags)?;
        let path = name.map(|n| n.path().to_path_buf());
        let fd_ok = base
            .unix_descriptor()
            .is_some_and(|fd| os::fd_matches(fd, path.as_deref()));
        if !fd_ok {
            return Err(SqliteError::with_message(
                ResultCode::CANTOPEN,
                format!(
                    "the unix VFS's file for {} does not hold the descriptor where joj reads it \
                     (fstat differs from the path): this SQLite's unixFile layout is not the \
                     one joj was written for; run over another SQLite build",
                    path.as_deref()
                        .unwrap_or(Path::new("a temporary file"))
                        .display()
                ),
            ));
        }
        let creates_journal = flags.create()
            && matches!(
                flags.kind(),
                FileKind::MainJournal | FileKind::SuperJournal | FileKind::Wal
            );
        let file = AcctFile {
            shared: &self.shared,
            base,
            role: role_of(flags),
            dirsync_pending: creates_journal,
            path,
        };
        Ok((file, out))
    }

    fn delete(&self, path: &Path, sync_dir: bool) -> Result<(), SqliteError> {
        let shared = &self.shared;
        shared.notify(FileEvent::BeforeDelete, path, role_from_name(path), None);
        let own_fsync = shared.counters.sync_call() == SyncCall::Fsync;
        shared.unix.delete(path, sync_dir && !own_fsync)?;
        shared.counters.count_delete();
        if sync_dir {
            if !own_fsync {
                shared.count_directory_sync_of(path);
            } else if !shared.sync_directory_of(path) {
                return Err(SqliteError::new(ResultCode::IOERR_DIR_FSYNC));
            }
        }
        Ok(())
    }

    fn access(&self, path: &Path, check: Access) -> Result<bool, SqliteError> {
        self.shared.unix.access(path, check)
    }

    fn delegate(&self) -> Option<BaseVfs> {
        Some(self.shared.unix)
    }
}

/// Handle to the registered `joj` VFS: counters, sync call and observer.
#[derive(Clone, Copy)]
pub struct AccountingVfs {
    reg: Registered<Accounting>,
}

impl AccountingVfs {
    fn shared(&self) -> &'static Shared {
        &self.reg.vfs().shared
    }

    /// The counters so far (take a snapshot before and after a run and use `delta`).
    pub fn counters(&self) -> IoCounters {
        self.shared().counters.snapshot()
    }

    /// Which call joj issues when SQLite syncs a file (process-wide for this VFS).
    pub fn set_sync_call(&self, call: SyncCall) {
        self.shared().counters.set_sync_call(call);
    }

    pub fn sync_call(&self) -> SyncCall {
        self.shared().counters.sync_call()
    }

    /// Install (or with `None`, remove) the observer of file events.
    pub fn set_observer(&self, observer: Option<Arc<dyn FileObserver>>) {
        *crate::unpoisoned::write(&self.shared().observer) = observer;
    }
}

/// Register the `joj` VFS with SQLite (once per process; later calls return the same handle).
/// It is not made the default VFS: open connections with the VFS name [`VFS_NAME`].
pub fn register() -> Result<AccountingVfs, VfsError> {
    let unix = BaseVfs::find("unix").ok_or_else(|| VfsError::NoBaseVfs {
        name: "unix".into(),
    })?;
    let reg = register_vfs(VFS_NAME, |_errors| Accounting {
        shared: Shared {
            unix,
            counters: AtomicCounters::default(),
            observer: RwLock::new(None),
        },
    })?;
    Ok(AccountingVfs { reg })
}

#[cfg(test)]
mod tests;
