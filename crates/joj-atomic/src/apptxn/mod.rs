//! Application transactions (i-FTL §IV.A, the paper's `TX_BEGIN … TX_END`): any number of SQL
//! statements on several SQLite connections and databases, and writes to plain files of the
//! flash file layer, committed or aborted as one device transaction, with SQLite's journal and
//! the file layer's journal off. Rules, cache refresh and crash argument:
//! `docs/formats/apptxn.md`.
//!
//! What it keeps: a transaction's files are held by it alone until it ends (two-phase locking at
//! file granularity; the second transaction to touch a held file aborts); any failure inside it
//! aborts all of it and returns one [`AppTxnError`]; a commit is one device commit, durable on
//! return; an abort (or a drop without commit) is one device abort.
//!
//! The API is the seam a loadable SQLite extension will expose through SQL functions: begin,
//! enroll (a `PRAGMA` the VFS answers), commit, abort.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use joj_atomic::{FlashFs, FsOptions, new_device};
//! let dev = new_device(&joj_device::Profile::builtin("galaxy-s5")?)?;
//! let vfs = joj_atomic::register("xftl")?;
//! vfs.attach(FlashFs::format(dev, FsOptions::default())?)?;
//! vfs.create_file("ledger.log")?;
//! let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_CREATE;
//! let a = rusqlite::Connection::open_with_flags_and_vfs("a.db", flags, vfs.name())?;
//! let b = rusqlite::Connection::open_with_flags_and_vfs("b.db", flags, vfs.name())?;
//! for c in [&a, &b] {
//!     c.execute_batch("PRAGMA journal_mode=OFF; CREATE TABLE IF NOT EXISTS account(id, balance);")?;
//! }
//! let mut tx = vfs.begin_app()?; // TX_BEGIN
//! tx.enroll(&a)?;
//! tx.enroll(&b)?;
//! tx.execute(&a, "UPDATE account SET balance = balance - 10 WHERE id = 1", [])?;
//! tx.execute(&b, "INSERT INTO account VALUES (102, 1500)", [])?;
//! tx.append("ledger.log", b"1 -> 102: 10\n")?;
//! tx.commit()?; // TX_END: one device commit, durable on return
//! # Ok(())
//! # }
//! ```

pub mod error;

use crate::flashfs::{FileId, FlashFs, FsError};
use crate::vfs::{APP_TXN_PRAGMA, Device, Mounted, Refusal, Xftl};
use error::AppTxnError;
use joj_device::{Tid, TransactionalDevice};
use rusqlite::Connection;
use std::sync::atomic::Ordering;

/// An open application transaction on an `xftl` VFS whose device is of type `D`.
pub struct AppTxn<D: TransactionalDevice + Send + 'static> {
    inst: &'static Xftl<D>,
    tid: Tid,
    ended: bool,
}

impl<D: TransactionalDevice + Send + 'static> std::fmt::Debug for AppTxn<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppTxn")
            .field("tid", &self.tid)
            .field("ended", &self.ended)
            .finish()
    }
}

/// Abort `tid` in the mounted layer: one device abort, its files as before, its handles out.
fn abort_in<D: Device>(m: &mut Mounted<D>, tid: Tid) -> Result<(), FsError> {
    let files = m.apps.files(tid);
    let r = m.fs.abort_app(tid, &files);
    m.apps.end(tid);
    r
}

impl<D: TransactionalDevice + Send + 'static> AppTxn<D> {
    /// Open a transaction: one device `begin_txn`.
    pub(crate) fn begin(inst: &'static Xftl<D>) -> Result<AppTxn<D>, AppTxnError> {
        let r = inst
            .with_mounted(|m| {
                let t = m.fs.device_mut().begin_txn()?;
                m.apps.begin(t);
                Ok(t)
            })
            .map_err(|_| AppTxnError::NoFileLayer {
                vfs: inst.name.clone(),
            })?;
        let tid = r.map_err(|source| AppTxnError::Begin { source })?;
        Ok(AppTxn {
            inst,
            tid,
            ended: false,
        })
    }

    /// The transaction's id: its device `Tid` (the paper's Tx-ID).
    pub fn tid(&self) -> Tid {
        self.tid
    }

    fn with<R>(&self, f: impl FnOnce(&mut Mounted<D>) -> R) -> Result<R, AppTxnError> {
        self.inst
            .with_mounted(f)
            .map_err(|_| AppTxnError::NoFileLayer {
                vfs: self.inst.name.clone(),
            })
    }

    /// Abort after `e`; the failure the VFS recorded, if any, is returned instead (it is the
    /// cause, `e` its symptom).
    fn fail(&mut self, e: AppTxnError) -> AppTxnError {
        let tid = self.tid;
        let recorded = self
            .with(|m| {
                let f = m.apps.take_failure(tid);
                // The abort's own error adds nothing to `e`: the device's recovery drops `tid`.
                let _ = abort_in(m, tid);
                f
            })
            .ok()
            .flatten();
        self.ended = true;
        recorded.unwrap_or(e)
    }

    /// Refuse if ended; abort if the VFS recorded a failure since the last call.
    fn check_open(&mut self) -> Result<(), AppTxnError> {
        let tid = self.tid;
        if self.ended {
            return Err(AppTxnError::Ended { tid });
        }
        let r = self.with(|m| {
            if !m.apps.is_open(tid) {
                return Err(AppTxnError::Ended { tid });
            }
            m.apps.take_failure(tid).map_or(Ok(()), Err)
        });
        match r {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e @ AppTxnError::Ended { .. })) | Err(e) => {
                self.ended = true;
                Err(e)
            }
            Ok(Err(e)) => Err(self.fail(e)),
        }
    }

    /// Enroll `conn`'s main database in this transaction (see [`AppTxn::enroll_schema`]).
    pub fn enroll(&mut self, conn: &Connection) -> Result<(), AppTxnError> {
        self.enroll_schema(conn, "main")
    }

    /// Enroll database `schema` of `conn`: from now until the transaction ends, every read and
    /// write of it runs under this transaction. `conn` must be between statements, with
    /// `journal_mode=OFF` (or the batch-atomic path) and `locking_mode=NORMAL`.
    pub fn enroll_schema(&mut self, conn: &Connection, schema: &str) -> Result<(), AppTxnError> {
        self.check_open()?;
        let tid = self.tid;
        let sql = format!(
            "PRAGMA \"{}\".{APP_TXN_PRAGMA} = '{}@{}'",
            schema.replace('"', "\"\""),
            tid.0,
            self.inst.name.replace('\'', "''"),
        );
        let reason = match conn.query_row(&sql, [], |r| r.get::<_, String>(0)) {
            Ok(s) if s == tid.to_string() => return Ok(()),
            Ok(s) => format!("the VFS answered {s:?}"),
            Err(rusqlite::Error::QueryReturnedNoRows) => {
                "its file is not on an xftl VFS (SQLite ignored the pragma)".to_string()
            }
            Err(e) => e.to_string(),
        };
        Err(self.fail(AppTxnError::NotEnrolled {
            tid,
            schema: schema.to_string(),
            reason,
        }))
    }

    /// Run statements of enrolled connections (`f`); any error aborts the transaction.
    pub fn sql<R>(&mut self, f: impl FnOnce() -> rusqlite::Result<R>) -> Result<R, AppTxnError> {
        self.check_open()?;
        let r = f();
        let tid = self.tid;
        let recorded = self.with(|m| m.apps.take_failure(tid));
        match (r, recorded) {
            (Ok(v), Ok(None)) => Ok(v),
            (_, Ok(Some(e))) | (_, Err(e)) => Err(self.fail(e)),
            (Err(source), Ok(None)) => Err(self.fail(AppTxnError::Sql { tid, source })),
        }
    }

    /// One statement on an enrolled connection.
    pub fn execute(
        &mut self,
        conn: &Connection,
        sql: &str,
        params: impl rusqlite::Params,
    ) -> Result<usize, AppTxnError> {
        self.sql(|| conn.execute(sql, params))
    }

    /// Run `f` on plain file `name`, which joins this transaction.
    fn on_file<R>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut FlashFs<D>, FileId) -> Result<R, FsError>,
    ) -> Result<R, AppTxnError> {
        self.check_open()?;
        let tid = self.tid;
        let canary = self.inst.canary_files_outside.load(Ordering::Relaxed);
        let r = self.with(|m| {
            let Some(id) = m.fs.lookup(name) else {
                return Err(AppTxnError::FileLayer {
                    tid,
                    source: FsError::NoSuchFile(name.into()),
                });
            };
            if canary {
                let v = f(&mut m.fs, id).and_then(|v| m.fs.sync(id).map(|()| v));
                return v.map_err(|e| AppTxnError::from_fs(tid, e));
            }
            match m.touch(id.0, Some(tid), None) {
                Ok(()) => {}
                Err(Refusal::Busy) => {
                    return Err(AppTxnError::Busy {
                        tid,
                        file: name.into(),
                    });
                }
                Err(Refusal::Conflict) => {
                    return Err(m.apps.take_failure(tid).unwrap_or(AppTxnError::Busy {
                        tid,
                        file: name.into(),
                    }));
                }
            }
            f(&mut m.fs, id).map_err(|e| AppTxnError::from_fs(tid, e))
        });
        match r {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) | Err(e) => Err(self.fail(e)),
        }
    }

    /// Create plain file `name` (empty) inside this transaction: it exists for everyone only
    /// once the transaction commits; an abort leaves no file. A name that exists is refused
    /// (`FileLayer` with `FsError::Exists`).
    pub fn create_file(&mut self, name: &str) -> Result<(), AppTxnError> {
        self.check_open()?;
        let tid = self.tid;
        let r = self.with(|m| {
            let id = m.fs.create_app(name, tid)?;
            m.apps.hold(id.0, tid);
            Ok(())
        });
        match r {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(self.fail(AppTxnError::from_fs(tid, e))),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Write `data` at `offset` of plain file `name` (which must exist).
    pub fn write_file(&mut self, name: &str, offset: u64, data: &[u8]) -> Result<(), AppTxnError> {
        self.on_file(name, |fs, id| fs.write(id, offset, data))
    }

    /// Append `data` to plain file `name`; returns the offset it went to.
    pub fn append(&mut self, name: &str, data: &[u8]) -> Result<u64, AppTxnError> {
        self.on_file(name, |fs, id| {
            let at = fs.size(id);
            fs.write(id, at, data)?;
            Ok(at)
        })
    }

    /// Read plain file `name` at `offset` as this transaction sees it; returns the bytes that
    /// were inside the file (the rest of `buf` is zeros).
    pub fn read_file(
        &mut self,
        name: &str,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<usize, AppTxnError> {
        self.on_file(name, |fs, id| fs.read(id, offset, buf))
    }

    /// Size of plain file `name` as this transaction sees it.
    pub fn file_size(&mut self, name: &str) -> Result<u64, AppTxnError> {
        self.on_file(name, |fs, id| Ok(fs.size(id)))
    }

    /// Commit: every file's changed size and every page written, in one device commit,
    /// durable on return. On an error the transaction is aborted and the error returned.
    pub fn commit(mut self) -> Result<(), AppTxnError> {
        self.check_open()?;
        let tid = self.tid;
        let r = self.with(|m| {
            if m.apps.statement_open(tid) {
                return Err(AppTxnError::OpenStatement { tid });
            }
            let files = m.apps.files(tid);
            // `commit_app` aborts `tid` itself on an error.
            let r = m.fs.commit_app(tid, &files);
            m.apps.end(tid);
            r.map_err(|e| AppTxnError::from_fs(tid, e))
        });
        match r {
            Ok(Ok(())) => {
                self.ended = true;
                Ok(())
            }
            Ok(Err(e @ AppTxnError::OpenStatement { .. })) => Err(self.fail(e)),
            Ok(Err(e)) | Err(e) => {
                self.ended = true;
                Err(e)
            }
        }
    }

    /// Abort: one device abort; every file as before the transaction. The in-memory state is
    /// reverted even if the device refuses (a dead device's recovery drops the transaction).
    pub fn abort(mut self) -> Result<(), AppTxnError> {
        let tid = self.tid;
        if self.ended {
            return Err(AppTxnError::Ended { tid });
        }
        self.ended = true;
        self.with(|m| abort_in(m, tid))?
            .map_err(|e| AppTxnError::from_fs(tid, e))
    }
}

impl<D: TransactionalDevice + Send + 'static> Drop for AppTxn<D> {
    /// A transaction dropped without commit is aborted.
    fn drop(&mut self) {
        if !self.ended {
            let tid = self.tid;
            let _ = self.with(|m| abort_in(m, tid));
        }
    }
}
