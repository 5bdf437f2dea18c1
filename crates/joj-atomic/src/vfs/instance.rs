//! One registered `xftl` VFS on devices of type `D`: the file layer attached to it (with the
//! lock table and the open-handle count that belong to it), the commit-path counters and the
//! fault injection; and the application transactions of the attached layer (`apps`).

use super::apps::{Access, AppTable};
use crate::apptxn::error::AppTxnError;
use crate::flashfs::{FileId, FlashFs};
use joj_device::{Tid, TransactionalDevice};
use joj_vfs::{LockTable, ResultCode, SqliteError};
use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

joj_vfs::atomic_counter_set! {
    XftlCounters, Atomics;
    batch_begins: "`BEGIN_ATOMIC_WRITE`: SQLite chose the batch path.",
    batch_commits: "Batches committed (one device transaction each).",
    batch_rollbacks: "`ROLLBACK_ATOMIC_WRITE`, or a batch whose commit failed.",
    batch_commit_errors: "Commits of a batch that failed (SQLite then retries with a rollback journal).",
    journal_opens: "Rollback journals opened: SQLite took its journal path (first transaction on an empty database, a spilled journal, several databases, a failed batch, a hot journal).",
    db_syncs: "`xSync` of a main database outside a batch: commits (and recoveries) done the journal way, and the syncs SQLite makes after a batch commit.",
    journal_barriers: "Rollback journals the VFS synced before SQLite's first database write after a failed batch (SQLite's retry does not; `docs/formats/xftl.md` section 3).",
}

/// What a device under the VFS must be: transactional, and movable to the thread SQLite calls
/// from (the instance lives in a process-wide registry).
pub(crate) trait Device: TransactionalDevice + Send + 'static {}

impl<D: TransactionalDevice + Send + 'static> Device for D {}

pub(crate) fn bump(a: &AtomicU64) {
    a.fetch_add(1, Ordering::Relaxed);
}

/// The file layer attached to an instance, and what lives and dies with it.
pub(crate) struct Mounted<D> {
    pub(crate) fs: FlashFs<D>,
    /// SQLite's locks of this layer's files, by slot (in-process: one process uses a device).
    pub(crate) locks: LockTable<u32>,
    pub(crate) open_handles: u64,
    /// Databases whose batch commit failed: their journal is synced before the next write.
    pub(crate) barrier: HashSet<u32>,
    /// Application transactions: enrolled handles, held files (`docs/formats/apptxn.md`).
    pub(crate) apps: AppTable,
}

/// Why a touch of a file was refused (`docs/formats/apptxn.md` §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Wait and retry (`SQLITE_BUSY`).
    Busy,
    /// The toucher's application transaction lost to the holder (recorded as its failure).
    Conflict,
}

impl<D: Device> Mounted<D> {
    /// Let transaction `by` (`None`: no transaction) touch file `slot` through handle `hid`
    /// (`None`: a plain-file call of the API): the file joins `by` if free.
    pub(crate) fn touch(
        &mut self,
        slot: u32,
        by: Option<Tid>,
        hid: Option<u64>,
    ) -> Result<(), Refusal> {
        match self.apps.access(slot, by, hid) {
            Access::Go => Ok(()),
            Access::Busy => Err(Refusal::Busy),
            Access::Conflict { holder } => {
                if let Some(tid) = by {
                    let file = self.fs.name(FileId(slot)).to_string();
                    self.apps
                        .fail(tid, AppTxnError::Conflict { tid, file, holder });
                }
                Err(Refusal::Conflict)
            }
            Access::Join(tid) => {
                // A batch of SQLite's own cannot be open without a lock; refuse if it were.
                if self.fs.join_app(FileId(slot), tid).is_err() {
                    return Err(Refusal::Busy);
                }
                self.apps.hold(slot, tid);
                Ok(())
            }
        }
    }
}

/// One registered `xftl` VFS on devices of type `D`.
pub(crate) struct Xftl<D> {
    pub(crate) name: String,
    pub(crate) mounted: Mutex<Option<Mounted<D>>>,
    pub(crate) counters: Atomics,
    pub(crate) next_temp: AtomicU64,
    /// Identity of the next file handle opened (the application-transaction tables' key).
    pub(crate) next_handle: AtomicU64,
    /// Fault injection: the next this many batch commits fail with an I/O error.
    pub(crate) fail_commits: AtomicU32,
    /// Canary for the crash tests: application transactions write plain files outside their
    /// device transaction (plain writes, synced), as a file layer without transactions would.
    pub(crate) canary_files_outside: AtomicBool,
}

pub(crate) use joj_vfs::unpoisoned::lock;

/// The calling thread's issuer number for the device's command queue
/// (`BlockDevice::set_issuer`): one per thread, handed out as threads first reach a device, so
/// that the commands of several SQLite threads may be in flight together as the device's queue
/// allows.
pub(crate) fn thread_issuer() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    thread_local!(static ISSUER: u32 = NEXT.fetch_add(1, Ordering::Relaxed));
    ISSUER.with(|id| *id)
}

impl<D: Device> Xftl<D> {
    pub(crate) fn new(name: &str) -> Xftl<D> {
        Xftl {
            name: name.to_string(),
            mounted: Mutex::new(None),
            counters: Atomics::default(),
            next_temp: AtomicU64::new(1),
            next_handle: AtomicU64::new(1),
            fail_commits: AtomicU32::new(0),
            canary_files_outside: AtomicBool::new(false),
        }
    }

    pub(crate) fn counters(&self) -> XftlCounters {
        self.counters.snapshot()
    }

    /// Attach `fs`; `false` (and nothing changed) if files of the current one are open.
    pub(crate) fn attach(&self, fs: FlashFs<D>) -> bool {
        let mut m = lock(&self.mounted);
        if m.as_ref().is_some_and(|m| m.open_handles > 0) {
            return false;
        }
        *m = Some(Mounted {
            fs,
            locks: LockTable::new(),
            open_handles: 0,
            barrier: HashSet::new(),
            apps: AppTable::default(),
        });
        true
    }

    /// The file layer, if no file is open.
    pub(crate) fn detach(&self) -> Option<FlashFs<D>> {
        let mut m = lock(&self.mounted);
        if m.as_ref().is_some_and(|m| m.open_handles > 0) {
            return None;
        }
        m.take().map(|m| m.fs)
    }

    /// Run `f` on the attached file layer; `SQLITE_IOERR` (with the fix) if none is attached.
    pub(crate) fn with_mounted<R>(
        &self,
        f: impl FnOnce(&mut Mounted<D>) -> R,
    ) -> Result<R, SqliteError> {
        let mut g = lock(&self.mounted);
        match g.as_mut() {
            Some(m) => {
                m.fs.device_mut().set_issuer(thread_issuer());
                Ok(f(m))
            }
            None => Err(SqliteError::with_message(
                ResultCode::IOERR,
                format!(
                    "no flash file layer attached to VFS {}: call XftlVfs::attach first",
                    self.name
                ),
            )),
        }
    }
}
