//! A file of the `xftl` VFS: a slot of the attached [`FlashFs`](crate::FlashFs), this handle's
//! lock on it, the batch-atomic file controls as device transactions, and the handle's part
//! in application transactions (`docs/formats/apptxn.md`: enrolment by `PRAGMA xftl_app_txn`,
//! files joining at the first lock, the changed change counter after a transaction ends).

use super::instance::{Device, Mounted, Refusal, Xftl, bump};
use crate::apptxn::error::AppTxnError;
use crate::flashfs::{FileId, FsError};
use joj_device::Tid;
use joj_vfs::{
    DeviceCharacteristics, FileControl, HandleLock, LockLevel, PragmaRequest, ReadOutcome,
    ResultCode, SqliteError, SyncFlags, VfsFile,
};
use std::sync::atomic::Ordering;

/// The pragma that enrolls a connection's database handle in an application transaction.
pub(crate) const APP_TXN_PRAGMA: &str = "xftl_app_txn";

/// `SQLITE_FCNTL_COMMIT_PHASETWO`: sent to the main database when SQLite commits.
const COMMIT_PHASETWO: i32 = 22;

/// The schema cookie in page 1 of a database (SQLite's file format: offset 40, 4 bytes).
const SCHEMA_COOKIE: std::ops::Range<usize> = 40..44;

/// Offset and length of SQLite's change-counter check (`pagerSharedLock` reads 16 bytes at 24).
const COUNTER_CHECK: (u64, usize) = (24, 16);

pub(crate) struct XFile<D: 'static> {
    pub(crate) inst: &'static Xftl<D>,
    pub(crate) id: u32,
    /// This handle's identity in the application-transaction tables.
    pub(crate) hid: u64,
    pub(crate) lock: HandleLock,
    pub(crate) delete_on_close: bool,
    pub(crate) main_db: bool,
    pub(crate) name: String,
    /// This handle began the batch open on its file (SQLite's `BEGIN_ATOMIC_WRITE`) and has
    /// not committed or rolled it back: only then is the batch its own. Every connection to
    /// a database has a handle of the same file, and closing another one must not end it.
    pub(crate) batch_open: bool,
}

/// The SQLite code for a file-layer error (`io` for the plain I/O errors).
pub(crate) fn fs_code(e: &FsError, io: ResultCode) -> ResultCode {
    match e {
        FsError::FileTooLarge { .. } | FsError::NoFreeSlot { .. } => ResultCode::FULL,
        FsError::NoSuchFile(_) => ResultCode::CANTOPEN,
        _ => io,
    }
}

/// Why a batch commit failed.
#[derive(Debug, thiserror::Error)]
enum CommitFailure {
    #[error("injected commit failure")]
    Injected,
    #[error("the batch this handle began was ended before its commit")]
    Lost,
    #[error(transparent)]
    Fs(#[from] FsError),
}

/// Refuse `what` through handle `hid` of file `name` with `code` while the handle is fenced
/// (`docs/formats/apptxn.md` §4).
fn unfenced<D>(m: &Mounted<D>, hid: u64, name: &str, code: ResultCode) -> Result<(), SqliteError> {
    match m.apps.fence(hid) {
        None => Ok(()),
        Some(tid) => Err(SqliteError::with_message(
            code,
            format!(
                "{name}: application transaction {tid} ended without a commit while this \
                 connection's SQL transaction was open; its changes went with it (roll back: \
                 the next transaction reads the database as it is)"
            ),
        )),
    }
}

/// Handle `hid` let go of its write lock: if its SQL transaction wrote pages and ended without a
/// commit, its application transaction fails (`docs/formats/apptxn.md` §4).
fn sql_rolled_back<D>(m: &mut Mounted<D>, hid: u64, name: &str) {
    if let Some(tid) = m.apps.rolled_back(hid) {
        let file = name.to_string();
        m.apps.fail(tid, AppTxnError::RolledBack { tid, file });
    }
}

/// Record file-layer error `e` of handle `hid` as its application transaction's failure (if
/// it is in one), after taking its SQLite code and message.
fn record<D: Device>(m: &mut Mounted<D>, hid: u64, e: FsError, io: ResultCode) -> SqliteError {
    let err = SqliteError::with_message(fs_code(&e, io), e.to_string());
    if let Some(tid) = m.apps.member(hid) {
        m.apps.fail(tid, AppTxnError::from_fs(tid, e));
    }
    err
}

impl<D: Device> XFile<D> {
    /// `PRAGMA xftl_app_txn [= <tid> | none]`: enroll this handle, or answer its transaction.
    fn app_txn_pragma(&mut self, p: &mut PragmaRequest<'_>) -> Result<(), SqliteError> {
        let (inst, hid, level) = (self.inst, self.hid, self.lock.level());
        let value = p
            .value()
            .map(|v| v.trim().trim_matches('\'').to_ascii_lowercase());
        let r = inst.with_mounted(|m| match value.as_deref() {
            None => Ok(m.apps.member(hid)),
            Some(_) if level != LockLevel::None => Err(
                "the connection is inside a transaction; enroll it between statements".to_string(),
            ),
            Some("none" | "0") => {
                m.apps.enroll(hid, None);
                Ok(None)
            }
            Some(v) => {
                // `<tid>` or `<tid>@<vfs>` (the API names its VFS: ids are per device).
                let (t, vfs) = v.split_once('@').unwrap_or((v, &inst.name));
                match t.parse::<u32>() {
                    _ if !vfs.eq_ignore_ascii_case(&inst.name) => Err(format!(
                        "the transaction is on VFS {vfs}, this database on {}",
                        inst.name
                    )),
                    Ok(t) if m.apps.enroll(hid, Some(Tid(t))) => Ok(Some(Tid(t))),
                    Ok(t) => Err(format!("no open application transaction {t}")),
                    Err(_) => Err(format!("{v:?} is not a transaction id")),
                }
            }
        })?;
        match r {
            Ok(t) => p.reply(&t.map_or_else(|| "none".to_string(), |t| t.to_string())),
            Err(msg) => {
                p.reply(&msg)?;
                Err(SqliteError::with_message(ResultCode::ERROR, msg))
            }
        }
    }

    /// A write of `id`: the journal barrier after a failed batch (`docs/formats/xftl.md` §3),
    /// then the file layer's write (under the file's transaction, if it is in one).
    fn write_plain_or_app(
        inst: &Xftl<D>,
        m: &mut Mounted<D>,
        id: FileId,
        offset: u64,
        data: &[u8],
    ) -> Result<(), FsError> {
        if m.barrier.remove(&id.0) && !m.fs.in_batch(id) {
            // SQLite's retry after a failed batch creates the journal from its in-memory
            // copy and writes database pages without syncing it first: make the journal
            // (data and size) durable before the first database page can reach flash.
            let journal = format!("{}-journal", m.fs.name(id));
            if let Some(j) = m.fs.lookup(&journal) {
                m.fs.sync(j)?;
                bump(&inst.counters.journal_barriers);
            }
        }
        m.fs.write(id, offset, data)
    }

    fn fail(&self, code: ResultCode, what: &str, e: impl std::fmt::Display) -> SqliteError {
        SqliteError::with_message(code, format!("{what} {}: {e}", self.name))
    }

    fn begin_batch(&mut self) -> Result<(), SqliteError> {
        bump(&self.inst.counters.batch_begins);
        let id = FileId(self.id);
        self.inst
            .with_mounted(|m| m.fs.begin_batch(id))?
            .map_err(|e| {
                SqliteError::with_message(ResultCode::IOERR, format!("begin batch: {e}"))
            })?;
        self.batch_open = true;
        Ok(())
    }

    /// Commit the batch; on failure (a real one or an injected one) the batch is aborted and
    /// the database's journal gets a barrier before SQLite's retry writes the database.
    fn commit_batch(&mut self) -> Result<(), SqliteError> {
        let inst = self.inst;
        let id = FileId(self.id);
        let began = std::mem::take(&mut self.batch_open);
        let inject = inst
            .fail_commits
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok();
        let r = inst.with_mounted(|m| {
            if inject {
                m.fs.rollback_batch(id);
                return Err(CommitFailure::Injected);
            }
            // A batch this handle began that is no longer open was ended by something else:
            // its pages are not all in one device transaction, and the commit must not be
            // acknowledged as if they were.
            if began && !m.fs.in_batch(id) && m.fs.app_txn(id).is_none() {
                return Err(CommitFailure::Lost);
            }
            Ok(m.fs.commit_batch(id)?)
        })?;
        match r {
            Ok(()) => {
                bump(&inst.counters.batch_commits);
                Ok(())
            }
            Err(e) => {
                let _ = inst.with_mounted(|m| m.barrier.insert(id.0));
                bump(&inst.counters.batch_commit_errors);
                bump(&inst.counters.batch_rollbacks);
                Err(SqliteError::with_message(
                    ResultCode::IOERR_WRITE,
                    format!("commit batch: {e}"),
                ))
            }
        }
    }

    fn rollback_batch(&mut self) {
        self.batch_open = false;
        let (inst, id) = (self.inst, FileId(self.id));
        let _ = inst.with_mounted(|m| {
            if m.fs.in_batch(id) {
                m.fs.rollback_batch(id);
                bump(&inst.counters.batch_rollbacks);
            }
        });
    }
}

impl<D: Device> VfsFile for XFile<D> {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError> {
        let (id, hid, name) = (FileId(self.id), self.hid, &self.name);
        let check = (offset, buf.len()) == COUNTER_CHECK;
        let r = self.inst.with_mounted(|m| {
            unfenced(m, hid, name, ResultCode::IOERR_READ)?;
            match m.fs.read(id, offset, buf) {
                Ok(n) => {
                    if check && m.apps.take_stale(hid) {
                        // An application transaction this file was in ended: make SQLite drop
                        // its page cache (`docs/formats/apptxn.md` §3).
                        for b in &mut buf[..4] {
                            *b = !*b;
                        }
                    } else if offset == 0 && n >= SCHEMA_COOKIE.end && m.apps.take_schema_stale(hid)
                    {
                        // ... and, when it reads page 1 again, its schema (§3).
                        for b in &mut buf[SCHEMA_COOKIE] {
                            *b = !*b;
                        }
                    }
                    Ok(n)
                }
                Err(e) => {
                    let e = record(m, hid, e, ResultCode::IOERR_READ);
                    Err(self.fail(e.code(), "read", e))
                }
            }
        })?;
        r.map(|n| ReadOutcome::from_filled(buf, n))
    }

    fn write(&mut self, data: &[u8], offset: u64) -> Result<(), SqliteError> {
        let (inst, id, hid) = (self.inst, FileId(self.id), self.hid);
        inst.with_mounted(|m| {
            unfenced(m, hid, &self.name, ResultCode::IOERR_WRITE)?;
            let r = Self::write_plain_or_app(inst, m, id, offset, data);
            if r.is_ok() {
                m.apps.wrote(hid);
            }
            r.map_err(|e| {
                let e = record(m, hid, e, ResultCode::IOERR_WRITE);
                self.fail(e.code(), "write", e)
            })
        })?
    }

    fn truncate(&mut self, size: u64) -> Result<(), SqliteError> {
        let (id, hid) = (FileId(self.id), self.hid);
        self.inst.with_mounted(|m| {
            unfenced(m, hid, &self.name, ResultCode::IOERR_TRUNCATE)?;
            m.fs.truncate(id, size).map_err(|e| {
                let e = record(m, hid, e, ResultCode::IOERR_TRUNCATE);
                self.fail(e.code(), "truncate", e)
            })
        })?
    }

    fn sync(&mut self, _flags: SyncFlags) -> Result<(), SqliteError> {
        if self.main_db {
            bump(&self.inst.counters.db_syncs);
        }
        let (id, hid) = (FileId(self.id), self.hid);
        self.inst.with_mounted(|m| {
            unfenced(m, hid, &self.name, ResultCode::IOERR_FSYNC)?;
            m.fs.sync(id)
                .map_err(|e| self.fail(ResultCode::IOERR_FSYNC, "sync", e))
        })?
    }

    fn file_size(&mut self) -> Result<u64, SqliteError> {
        let id = FileId(self.id);
        self.inst.with_mounted(|m| m.fs.size(id))
    }

    fn lock(&mut self, level: LockLevel) -> Result<(), SqliteError> {
        let (id, hid, name, handle) = (self.id, self.hid, &self.name, &mut self.lock);
        let first = handle.level() == LockLevel::None && level >= LockLevel::Shared;
        let up = level > handle.level();
        self.inst.with_mounted(|m| {
            if up {
                unfenced(m, hid, name, ResultCode::IOERR_LOCK)?;
            }
            if first {
                // The file joins the handle's application transaction, or the touch waits or
                // loses (`docs/formats/apptxn.md` §2).
                let by = m.apps.member(hid);
                m.touch(id, by, Some(hid))
                    .map_err(|refusal| match refusal {
                        Refusal::Busy => SqliteError::busy(),
                        Refusal::Conflict => SqliteError::with_message(
                            ResultCode::IOERR_LOCK,
                            format!(
                                "{name}: held by another application transaction; this one lost \
                                 and must abort"
                            ),
                        ),
                    })?;
            }
            m.locks
                .lock(&id, handle, level)
                .map_err(|_| SqliteError::busy())?;
            if first {
                m.apps.locked(hid, id);
            }
            if level >= LockLevel::Reserved {
                m.apps.writing(hid, true);
            }
            Ok(())
        })?
    }

    fn unlock(&mut self, level: LockLevel) -> Result<(), SqliteError> {
        let (id, hid, name, handle) = (self.id, self.hid, &self.name, &mut self.lock);
        self.inst.with_mounted(|m| {
            m.locks.unlock(&id, handle, level);
            if level < LockLevel::Reserved {
                m.apps.writing(hid, false);
                sql_rolled_back(m, hid, name);
            }
            if level == LockLevel::None {
                m.apps.unlocked(hid, id);
            }
        })
    }

    fn check_reserved_lock(&mut self) -> Result<bool, SqliteError> {
        let id = self.id;
        self.inst.with_mounted(|m| m.locks.is_reserved(&id))
    }

    fn file_control(&mut self, control: FileControl<'_>) -> Result<(), SqliteError> {
        match control {
            // A fenced handle's batch: refused with a code that is not an I/O error, so SQLite
            // does not fall back to writing a journal from its cached pages (§4).
            FileControl::BeginAtomicWrite => {
                let (inst, hid) = (self.inst, self.hid);
                inst.with_mounted(|m| unfenced(m, hid, &self.name, ResultCode::ABORT))??;
                self.begin_batch()
            }
            FileControl::CommitAtomicWrite => self.commit_batch(),
            FileControl::RollbackAtomicWrite => {
                self.rollback_batch();
                Ok(())
            }
            FileControl::SizeHint(_) => Ok(()),
            FileControl::Other(o) if o.op() == COMMIT_PHASETWO => {
                let hid = self.hid;
                self.inst.with_mounted(|m| m.apps.committed(hid))?;
                Err(SqliteError::not_found())
            }
            FileControl::Pragma(mut p)
                if p.name()
                    .is_some_and(|n| n.eq_ignore_ascii_case(APP_TXN_PRAGMA)) =>
            {
                self.app_txn_pragma(&mut p)
            }
            _ => Err(SqliteError::not_found()),
        }
    }

    fn sector_size(&mut self) -> u32 {
        let page = self.inst.with_mounted(|m| m.fs.page_bytes());
        page.map_or(4096, |p| p.min(u64::from(u32::MAX)) as u32)
    }

    fn device_characteristics(&mut self) -> DeviceCharacteristics {
        DeviceCharacteristics::BATCH_ATOMIC | DeviceCharacteristics::POWERSAFE_OVERWRITE
    }

    fn close(mut self) -> Result<(), SqliteError> {
        let (inst, id) = (self.inst, FileId(self.id));
        let _ = inst.with_mounted(|m| {
            // A handle closed inside a batch it began (a process going away): the batch is
            // aborted. Another connection's batch on the same file is left alone.
            if self.batch_open && m.fs.in_batch(id) {
                m.fs.rollback_batch(id);
                bump(&inst.counters.batch_rollbacks);
            }
            m.locks.unlock(&id.0, &mut self.lock, LockLevel::None);
            sql_rolled_back(m, self.hid, &self.name);
            m.apps.closed(self.hid);
            m.open_handles = m.open_handles.saturating_sub(1);
            if self.delete_on_close {
                let _ = m.fs.delete(&self.name);
            }
        });
        Ok(())
    }
}
