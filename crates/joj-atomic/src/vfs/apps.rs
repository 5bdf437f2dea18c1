//! The application transactions of one mounted file layer (`docs/formats/apptxn.md` §2–4):
//! which handle is enrolled in which transaction, which transaction holds which file, which
//! handles hold SQLite locks, which handles must see a changed file change counter once, and
//! which are fenced because their transaction ended under their open SQL transaction.
//!
//! Pure bookkeeping: the decisions (`access`) are functions of this state; the file layer and
//! the device are driven by the caller.

use crate::apptxn::error::AppTxnError;
use crate::flashfs::FileId;
use joj_device::Tid;
use std::collections::{HashMap, HashSet};

/// How a touch of a file by a handle (or by a transaction's plain-file call) goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Nobody holds the file and no outsider locks it: `by` may hold it now.
    Join(Tid),
    /// The toucher's own transaction holds it, or the toucher is in none and nobody does.
    Go,
    /// Wait: an outsider holds a lock on it, or (for a handle in no transaction) a transaction
    /// holds it.
    Busy,
    /// Another transaction holds it: the toucher's transaction loses.
    Conflict { holder: Tid },
}

#[derive(Debug, Default)]
struct AppState {
    files: Vec<FileId>,
    /// The first failure seen inside the transaction (it will be aborted with it).
    failure: Option<AppTxnError>,
}

#[derive(Debug, Default)]
pub(crate) struct AppTable {
    txns: HashMap<Tid, AppState>,
    /// Handle → the transaction it is enrolled in.
    members: HashMap<u64, Tid>,
    /// File slot → the transaction holding it.
    holders: HashMap<u32, Tid>,
    /// File slot → handles holding a SQLite lock (SHARED or more) on it.
    lockers: HashMap<u32, HashSet<u64>>,
    /// Open handle → its file slot.
    open: HashMap<u64, u32>,
    /// Handles whose next change-counter read must report a change (§3).
    stale: HashSet<u64>,
    /// Handles that reported it and whose next read of page 1 must report a changed schema
    /// cookie (§3).
    schema_stale: HashSet<u64>,
    /// Handles holding RESERVED or more (SQLite's writer of their file).
    writers: HashSet<u64>,
    /// Fenced handle → the transaction that ended under its open SQL transaction (§4).
    fenced: HashMap<u64, Tid>,
    /// Enrolled handles that wrote pages since their SQL transaction began: SQLite has not
    /// committed it yet (`SQLITE_FCNTL_COMMIT_PHASETWO` clears the mark, §4).
    dirty: HashSet<u64>,
}

/// Why SQLite may not open a database's rollback journal now (`docs/formats/apptxn.md` §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JournalRefusal {
    /// The database is held by this application transaction.
    Held(Tid),
    /// The database's writer is fenced: this transaction ended under it.
    Fenced(Tid),
}

impl AppTable {
    pub(crate) fn begin(&mut self, tid: Tid) {
        self.txns.insert(tid, AppState::default());
    }

    pub(crate) fn is_open(&self, tid: Tid) -> bool {
        self.txns.contains_key(&tid)
    }

    pub(crate) fn member(&self, hid: u64) -> Option<Tid> {
        self.members.get(&hid).copied()
    }

    /// Enroll handle `hid` in `tid` (`None`: leave). `false` if `tid` is not open.
    pub(crate) fn enroll(&mut self, hid: u64, tid: Option<Tid>) -> bool {
        match tid {
            Some(t) if self.is_open(t) => {
                self.members.insert(hid, t);
                true
            }
            Some(_) => false,
            None => {
                self.members.remove(&hid);
                true
            }
        }
    }

    pub(crate) fn opened(&mut self, hid: u64, slot: u32) {
        self.open.insert(hid, slot);
    }

    pub(crate) fn closed(&mut self, hid: u64) {
        if let Some(slot) = self.open.remove(&hid) {
            self.unlocked(hid, slot);
        }
        self.members.remove(&hid);
        self.stale.remove(&hid);
        self.schema_stale.remove(&hid);
        self.dirty.remove(&hid);
    }

    /// Enrolled handle `hid` wrote a page of its SQL transaction.
    pub(crate) fn wrote(&mut self, hid: u64) {
        if self.members.contains_key(&hid) {
            self.dirty.insert(hid);
        }
    }

    /// SQLite committed handle `hid`'s SQL transaction.
    pub(crate) fn committed(&mut self, hid: u64) {
        self.dirty.remove(&hid);
    }

    /// Handle `hid` let go of its write lock. If its SQL transaction wrote pages and did not
    /// commit (a `ROLLBACK`, a failed autocommit statement, a close inside `BEGIN`), the
    /// transaction it is enrolled in, which SQLite's rollback cannot be trusted to restore (with
    /// the journal off it writes nothing back), is returned to be failed.
    pub(crate) fn rolled_back(&mut self, hid: u64) -> Option<Tid> {
        if self.dirty.remove(&hid) {
            self.member(hid)
        } else {
            None
        }
    }

    /// Handle `hid` holds RESERVED or more (`true`) or less (`false`).
    pub(crate) fn writing(&mut self, hid: u64, yes: bool) {
        if yes {
            self.writers.insert(hid);
        } else {
            self.writers.remove(&hid);
        }
    }

    /// The transaction that ended under `hid`'s open SQL transaction, while `hid` is fenced.
    pub(crate) fn fence(&self, hid: u64) -> Option<Tid> {
        self.fenced.get(&hid).copied()
    }

    /// Whether the rollback journal of the database in `slot` may not be opened now.
    pub(crate) fn journal_refused(&self, slot: u32) -> Option<JournalRefusal> {
        if let Some(&t) = self.holders.get(&slot) {
            return Some(JournalRefusal::Held(t));
        }
        let lockers = self.lockers.get(&slot)?;
        lockers.iter().find_map(|h| {
            self.fenced
                .get(h)
                .filter(|_| self.writers.contains(h))
                .map(|&t| JournalRefusal::Fenced(t))
        })
    }

    pub(crate) fn locked(&mut self, hid: u64, slot: u32) {
        self.lockers.entry(slot).or_default().insert(hid);
    }

    /// Handle `hid` let go of its last lock on `slot`: its fence, if any, lifts.
    pub(crate) fn unlocked(&mut self, hid: u64, slot: u32) {
        self.fenced.remove(&hid);
        self.writers.remove(&hid);
        if let Some(s) = self.lockers.get_mut(&slot) {
            s.remove(&hid);
            if s.is_empty() {
                self.lockers.remove(&slot);
            }
        }
    }

    /// How a touch of file `slot` by transaction `by` (`None`: a handle in no transaction)
    /// goes; `hid` is the touching handle, if a handle touches it.
    pub(crate) fn access(&self, slot: u32, by: Option<Tid>, hid: Option<u64>) -> Access {
        match (self.holders.get(&slot).copied(), by) {
            (Some(h), Some(t)) if h == t => Access::Go,
            (Some(h), Some(_)) => Access::Conflict { holder: h },
            (Some(_), None) => Access::Busy,
            (None, None) => Access::Go,
            (None, Some(t)) => {
                let outsider = self.lockers.get(&slot).is_some_and(|s| {
                    s.iter()
                        .any(|&o| Some(o) != hid && self.members.get(&o) != Some(&t))
                });
                if outsider {
                    Access::Busy
                } else {
                    Access::Join(t)
                }
            }
        }
    }

    /// `tid` holds `slot` from now until it ends.
    pub(crate) fn hold(&mut self, slot: u32, tid: Tid) {
        self.holders.insert(slot, tid);
        if let Some(s) = self.txns.get_mut(&tid) {
            s.files.push(FileId(slot));
        }
    }

    /// Record `e` as `tid`'s failure unless it has one already.
    pub(crate) fn fail(&mut self, tid: Tid, e: AppTxnError) {
        if let Some(s) = self.txns.get_mut(&tid) {
            s.failure.get_or_insert(e);
        }
    }

    pub(crate) fn take_failure(&mut self, tid: Tid) -> Option<AppTxnError> {
        self.txns.get_mut(&tid).and_then(|s| s.failure.take())
    }

    /// Whether an enrolled handle of `tid` still holds a SQLite lock (a statement is open).
    pub(crate) fn statement_open(&self, tid: Tid) -> bool {
        self.lockers
            .values()
            .flatten()
            .any(|h| self.members.get(h) == Some(&tid))
    }

    pub(crate) fn files(&self, tid: Tid) -> Vec<FileId> {
        self.txns
            .get(&tid)
            .map(|s| s.files.clone())
            .unwrap_or_default()
    }

    /// `tid` ended: its files are free, its handles leave it (those still holding a SQLite
    /// lock are fenced, §4: only an abort meets one, a commit is refused while they do), and
    /// every open handle of its files must see a changed change counter at its next check (§3).
    pub(crate) fn end(&mut self, tid: Tid) {
        let Some(s) = self.txns.remove(&tid) else {
            return;
        };
        let slots: HashSet<u32> = s.files.iter().map(|f| f.0).collect();
        for slot in &slots {
            self.holders.remove(slot);
        }
        for hid in self.lockers.values().flatten() {
            if self.members.get(hid) == Some(&tid) {
                self.fenced.insert(*hid, tid);
            }
        }
        self.members.retain(|_, t| *t != tid);
        let members = &self.members;
        self.dirty.retain(|h| members.contains_key(h));
        for (&hid, slot) in &self.open {
            if slots.contains(slot) {
                self.stale.insert(hid);
            }
        }
    }

    /// Whether `hid` must see a changed change counter now (once); if so, its next read of
    /// page 1 must show a changed schema cookie ([`AppTable::take_schema_stale`]).
    pub(crate) fn take_stale(&mut self, hid: u64) -> bool {
        let stale = self.stale.remove(&hid);
        if stale {
            self.schema_stale.insert(hid);
        }
        stale
    }

    /// Whether `hid` must see a changed schema cookie now (once).
    pub(crate) fn take_schema_stale(&mut self, hid: u64) -> bool {
        self.schema_stale.remove(&hid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_held_by_one_transaction_and_outsiders_wait() {
        let mut a = AppTable::default();
        let (t, u) = (Tid(1), Tid(2));
        a.begin(t);
        a.begin(u);
        a.opened(10, 3);
        a.opened(11, 3);
        assert!(a.enroll(10, Some(t)));
        // An outsider's lock makes the joiner wait.
        a.locked(11, 3);
        assert_eq!(a.access(3, Some(t), Some(10)), Access::Busy);
        a.unlocked(11, 3);
        assert_eq!(a.access(3, Some(t), Some(10)), Access::Join(t));
        a.hold(3, t);
        assert_eq!(a.access(3, Some(t), None), Access::Go);
        assert_eq!(a.access(3, Some(u), None), Access::Conflict { holder: t });
        assert_eq!(a.access(3, None, Some(11)), Access::Busy);
        a.end(t);
        assert!(a.take_stale(10) && a.take_stale(11) && !a.take_stale(10));
        assert_eq!(a.member(10), None);
        assert_eq!(a.access(3, None, Some(11)), Access::Go);
    }

    #[test]
    fn an_end_fences_the_enrolled_handles_still_locked_until_they_let_go() {
        let mut a = AppTable::default();
        let t = Tid(1);
        a.begin(t);
        for h in [10, 11, 12] {
            a.opened(h, 3);
        }
        assert!(a.enroll(10, Some(t)) && a.enroll(11, Some(t)));
        a.hold(3, t);
        assert_eq!(a.journal_refused(3), Some(JournalRefusal::Held(t)));
        // 10 writes (RESERVED), 11 left its statements, 12 is in no transaction.
        a.locked(10, 3);
        a.writing(10, true);
        a.end(t);
        assert_eq!(
            (a.fence(10), a.fence(11), a.fence(12)),
            (Some(t), None, None)
        );
        assert_eq!(a.journal_refused(3), Some(JournalRefusal::Fenced(t)));
        a.unlocked(10, 3);
        assert_eq!((a.fence(10), a.journal_refused(3)), (None, None));
    }

    #[test]
    fn a_fenced_reader_does_not_refuse_another_writers_journal() {
        let mut a = AppTable::default();
        let t = Tid(1);
        a.begin(t);
        a.opened(10, 3);
        assert!(a.enroll(10, Some(t)));
        a.hold(3, t);
        a.locked(10, 3);
        a.end(t);
        assert_eq!(a.fence(10), Some(t));
        a.opened(12, 3);
        a.locked(12, 3);
        a.writing(12, true);
        assert_eq!(a.journal_refused(3), None);
    }
}
