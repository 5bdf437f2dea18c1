//! One [`SharedWal`] per WAL file (device, inode) in the process: every connection's handle of
//! the WAL points at it, so group-sync buffers and pending blocks are seen by all of them. An
//! OFD lock keeps a group-syncing WAL to one process; a timer thread writes a group whose oldest
//! commit reached the interval. The database's file reaches its WAL here by the database's file
//! (device, inode), the file it was when it opened (the end of a write transaction, the start of
//! a checkpoint's backfill, the wal-index check): by name, a connection whose database was
//! deleted or renamed reached the WAL of the new database made under the name, and dropped its
//! uncommitted frames (docs/robustness.md H132).

use super::db_files::{self, FileKey};
use super::fork_guard;
use super::instance::{Waldio, lock};
use crate::io::DirectFile;
use crate::options::WaldioOptions;
use crate::wal::{IoOp, SyncEdge, WalError, WalState};
use joj_trace::FileRole;
use joj_vfs::{FileEvent, ResultCode, SqliteError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// The shared state of one WAL file in this process.
pub(crate) struct SharedWal {
    pub(crate) state: Mutex<WalState<DirectFile>>,
    pub(crate) path: PathBuf,
    key: (u64, u64),
    /// The database, as SQLite named it, the file it was when the WAL opened, and the VFS (for
    /// a test's tap).
    db: PathBuf,
    db_key: Option<FileKey>,
    inst: &'static Waldio,
    /// The process that opened it. A child forked with the WAL open inherits this state (and
    /// its group buffer: commits the parent acknowledged and will write itself), not the WAL:
    /// its close writes nothing, and under group sync its handles refuse every call.
    pid: u32,
    /// Opened with group sync (the options of a WAL never change while it is open; kept apart
    /// from the state so a forked child can tell without taking the state's lock, which a
    /// thread of its parent may have held when it forked).
    group: bool,
    /// The WAL's descriptor (a group-sync one is guarded at fork: `fork_guard`).
    fd: i32,
}

impl Drop for SharedWal {
    fn drop(&mut self) {
        // Before the state's descriptor closes (the fields drop after this).
        if self.group {
            fork_guard::unguard(self.fd);
        }
    }
}

impl SharedWal {
    /// Whether this process opened the WAL (not a child forked with it open).
    pub(crate) fn opened_in_this_process(&self) -> bool {
        self.pid == std::process::id()
    }

    /// Refused in a child forked while this WAL was open with group sync: the buffer it
    /// inherited holds commits its parent acknowledged and writes, and only the parent may use
    /// the WAL (docs/formats/waldio.md, "Group sync and fork").
    pub(crate) fn usable_in_this_process(&self) -> Result<(), SqliteError> {
        if !self.group || self.opened_in_this_process() {
            return Ok(());
        }
        Err(fail(
            ResultCode::IOERR,
            format!(
                "{}: this connection was opened with group sync by process {}, which forked \
                 this one: the acknowledged commits group sync buffers are in that process, \
                 and only it may use the WAL while it has it open (a connection must not be \
                 used across fork, SQLite's own rule); fix: open the database in this \
                 process after the other closes it, or open both without group sync",
                self.path.display(),
                self.pid
            ),
        ))
    }

    /// The database, as SQLite named it.
    pub(crate) fn database(&self) -> &Path {
        &self.db
    }

    /// Whether this process could open the WAL for reading only.
    pub(crate) fn read_only(&self) -> bool {
        lock(&self.state).io().read_only()
    }

    /// [`sync_database`] of this WAL's database. Called before the WAL's state is locked.
    pub(crate) fn sync_database(&self) -> Result<(), SqliteError> {
        sync_database_of(&self.db, self.db_key, self.inst.tap())
    }
}

/// WALs by (device, inode), and by their database's.
#[derive(Default)]
struct Wals {
    by_file: HashMap<(u64, u64), Weak<SharedWal>>,
    by_database: HashMap<FileKey, Weak<SharedWal>>,
}

impl Wals {
    fn prune(&mut self) {
        self.by_file.retain(|_, w| w.strong_count() > 0);
        self.by_database.retain(|_, w| w.strong_count() > 0);
    }
}

/// Every WAL open in this process, and those a forked child inherited from its parent. A new
/// connection shares only this process's own: a child's own connection is another process's,
/// with a descriptor, a lock and a group buffer of its own, as in any other process (the probe
/// of 2026-11-29 found a child's new connection on its parent's group buffer: lost and
/// malformed commits, H148).
struct WalRegistry {
    pid: u32,
    own: Wals,
    /// Opened by an ancestor before it forked; reached only by the connections inherited with
    /// them (the end of their write transaction, their checkpoints).
    inherited: Wals,
}

static WALS: Mutex<Option<WalRegistry>> = Mutex::new(None);

/// This process's registry: a child's first call moves what it inherited aside.
fn registry(wals: &mut Option<WalRegistry>) -> &mut WalRegistry {
    let pid = std::process::id();
    let reg = wals.get_or_insert_with(|| WalRegistry {
        pid,
        own: Wals::default(),
        inherited: Wals::default(),
    });
    if reg.pid != pid {
        let parents = std::mem::take(&mut reg.own);
        reg.inherited.by_file.extend(parents.by_file);
        reg.inherited.by_database.extend(parents.by_database);
        reg.inherited.prune();
        reg.pid = pid;
    }
    reg
}

/// The WAL of the database file `db` (device, inode) a connection's database file reaches:
/// for a connection opened in this process, the WAL this process opened (never one inherited
/// across fork: a child's own connection is another process's, H148); for one inherited across
/// fork (`inherited`), the WAL it inherited, else one it opened since.
pub(crate) fn of_database(db: Option<FileKey>, inherited: bool) -> Option<Arc<SharedWal>> {
    let db = db?;
    let mut wals = lock(&WALS);
    let reg = registry(&mut wals);
    let find = |w: &Wals| w.by_database.get(&db).and_then(Weak::upgrade);
    if inherited {
        find(&reg.inherited).or_else(|| find(&reg.own))
    } else {
        find(&reg.own)
    }
}

/// Every WAL of `db` this process may act on: its own, and those it inherited without group
/// sync (an inherited group-sync state is never touched: its buffer is the parent's, and its
/// lock may have been held by a thread of the parent when it forked).
fn usable_of_database(db: Option<FileKey>) -> Vec<Arc<SharedWal>> {
    let Some(db) = db else { return Vec::new() };
    let mut wals = lock(&WALS);
    let reg = registry(&mut wals);
    [&reg.own, &reg.inherited]
        .into_iter()
        .filter_map(|w| w.by_database.get(&db).and_then(Weak::upgrade))
        .filter(|w| w.usable_in_this_process().is_ok())
        .collect()
}

/// SQLite is releasing the WAL write lock of `db` (the write transaction committed or rolled
/// back), and still holds it: frames of a rolled-back transaction still in memory are
/// dropped, so that they can never be read or written over frames another connection commits
/// next. Called before the release: after it, another thread's connection in this process may
/// already have written frames of its own into the shared state.
///
/// In a child forked with the WAL open, the connection it inherited and one it opened itself
/// have a state each: the one releasing the lock may be either, and while it holds the lock no
/// other connection of this process has frames pending (SQLite's lock is the process's, shared
/// by both), so both drop theirs. Only the one reached by the database's key, its own, dropped
/// them: an inherited connection's rolled-back frames stayed in its state and were read back
/// over the frames the child's own connection committed in their place (acknowledged rows lost,
/// a malformed database).
pub(crate) fn write_transaction_ended(db: Option<FileKey>) {
    for w in usable_of_database(db) {
        lock(&w.state).drop_uncommitted();
    }
}

/// SQLite is about to copy WAL frames of `db` into the database: commits whose sync the
/// durability option skipped are made durable first (the checkpoint's own WAL sync may have
/// been taken for the last commit's). `inherited`: the checkpointing connection was inherited
/// across fork; if what it inherited was opened with group sync, the checkpoint is refused
/// here — the WAL handle refuses its calls, but at `synchronous=OFF` SQLite asks no WAL sync
/// before this, and the sync owed would write the parent's buffer from the child, over the
/// frames the parent wrote since (H147 by the checkpoint).
pub(crate) fn checkpoint_starts(db: Option<FileKey>, inherited: bool) -> Result<(), SqliteError> {
    if let Some(w) = of_database(db, inherited) {
        w.usable_in_this_process()?;
    }
    for w in usable_of_database(db) {
        let mut st = lock(&w.state);
        st.sync_owed().map_err(|e| {
            fail(
                code_of(&e, ResultCode::IOERR_FSYNC),
                format!("{}: {e}", w.path.display()),
            )
        })?;
    }
    Ok(())
}

fn file_key(fd: std::os::fd::BorrowedFd<'_>) -> std::io::Result<(u64, u64)> {
    let st = rustix::fs::fstat(fd)?;
    Ok((st.st_dev, st.st_ino))
}

/// The SQLite code for a WAL error (`default` for plain I/O errors).
pub(crate) fn code_of(e: &WalError, default: ResultCode) -> ResultCode {
    match e {
        WalError::Full(_) | WalError::NoRoom { .. } => ResultCode::FULL,
        WalError::Io { op, .. } => match op {
            IoOp::Read => ResultCode::IOERR_READ,
            IoOp::Write => ResultCode::IOERR_WRITE,
            IoOp::Sync => ResultCode::IOERR_FSYNC,
            IoOp::Stat => ResultCode::IOERR_FSTAT,
            IoOp::Open => default,
        },
        WalError::MarkBusy { .. } => ResultCode::BUSY,
        WalError::StockWal
        | WalError::StockWalInUse { .. }
        | WalError::Foreign
        | WalError::InvalidHeader { .. }
        | WalError::NewerVersion(_)
        | WalError::TwoWals { .. } => ResultCode::CANTOPEN,
        _ => default,
    }
}

fn fail(code: ResultCode, msg: String) -> SqliteError {
    SqliteError::with_message(code, msg)
}

/// One log per database file in the process: a second name of the file (a hard link) has a
/// WAL of its own name, and the two would each take the other's frames for their own. Stock
/// SQLite refuses such a second name too (its wal-index is the file's, its WAL the name's:
/// `SQLITE_IOERR_SHORT_READ`). `key`: the WAL's (device, inode).
fn refuse_a_second_name(
    reg: &Wals,
    db: &Path,
    db_key: Option<FileKey>,
    key: (u64, u64),
) -> Result<(), SqliteError> {
    let theirs = db_key.and_then(|k| reg.by_database.get(&k).and_then(Weak::upgrade));
    match theirs.filter(|w| w.key != key) {
        Some(other) => Err(fail(
            ResultCode::CANTOPEN,
            format!(
                "{}: this database file is open in this process under another name, {}, whose \
                 WAL is {}; waldio keeps one WAL per database file; fix: open the database by \
                 one name (a hard link is a second name)",
                db.display(),
                other.db.display(),
                other.path.display()
            ),
        )),
        None => Ok(()),
    }
}

/// The WAL file at `path`, opened for direct I/O; a refusal says what to mend.
fn open_direct(
    inst: &'static Waldio,
    path: &Path,
    create: bool,
    mode: u32,
) -> Result<DirectFile, SqliteError> {
    DirectFile::open(path, create, mode, inst.tap()).map_err(|e| {
        // waldio's own refusals (a link, not a regular file) say what is wrong themselves.
        let too_long = e.raw_os_error() == Some(libc::ENAMETOOLONG);
        let hint = if e.kind() == std::io::ErrorKind::Other {
            String::new()
        } else if too_long {
            // SQLite's `-wal` and `-shm` fit where `-waldio`, 3 bytes longer, does not: a
            // database name of 249 to 251 bytes works in stock SQLite (docs/robustness.md).
            format!(
                " (waldio's WAL is named as the database with `-waldio`, 3 bytes longer than \
                 SQLite's `-wal`; its name of {} bytes is more than the filesystem takes; fix: \
                 give the database a name at least 3 bytes shorter)",
                path.file_name().map_or(0, |n| n.len())
            )
        } else {
            " (is the directory writable, and does the filesystem support O_DIRECT?)".into()
        };
        // A new log the directory does not let this process make: the code stock SQLite's
        // unix VFS gives for its `-wal` there (`unixOpen`), so that an application tells a
        // read-only directory from a file that cannot be opened.
        let new_log_refused = create
            && e.raw_os_error() == Some(libc::EACCES)
            && std::fs::symlink_metadata(path).is_err();
        let code = if new_log_refused {
            ResultCode::READONLY_DIRECTORY
        } else {
            ResultCode::CANTOPEN
        };
        fail(
            code,
            format!(
                "cannot open the WAL {} for direct I/O: {e}{hint}",
                path.display()
            ),
        )
    })
}

/// The WAL at `path`, shared with the connections of this process that have it open already
/// (they must have asked for the same durability: [`WaldioOptions::same_log`]), or opened now.
pub(crate) fn open_shared(
    inst: &'static Waldio,
    path: &Path,
    (db, db_key): (&Path, Option<FileKey>),
    create: bool,
    mode: u32,
    opts: WaldioOptions,
) -> Result<Arc<SharedWal>, SqliteError> {
    let file = open_direct(inst, path, create, mode)?;
    // Best effort, as SQLite's unix VFS does it (it ignores both results): a filesystem
    // without owners or modes (vfat) refuses them, and the log is still usable by this process.
    let _ = file.match_database(db);
    let key = file_key(file.fd()).map_err(|e| {
        fail(
            ResultCode::CANTOPEN,
            format!("fstat of {}: {e}", path.display()),
        )
    })?;
    let mut wals = lock(&WALS);
    let reg = &mut registry(&mut wals).own;
    refuse_a_second_name(reg, db, db_key, key)?;
    if let Some(existing) = reg.by_file.get(&key).and_then(Weak::upgrade) {
        let theirs = *lock(&existing.state).options();
        if !theirs.same_log(&opts) {
            return Err(fail(
                ResultCode::CANTOPEN,
                format!(
                    "{} is already open in this process with waldio options {} ({:?}); a \
                     second connection asked for {} ({:?}); open it with the same waldio_sync \
                     and group sync (docs/formats/waldio.md, \"Durability options\")",
                    path.display(),
                    theirs.label(),
                    theirs,
                    opts.label(),
                    opts
                ),
            ));
        }
        if let Some(k) = existing.db_key {
            reg.by_database.insert(k, Arc::downgrade(&existing));
        }
        return Ok(existing);
    }
    let fd = file.raw_fd();
    let group = opts.group.is_some();
    if group {
        // Guarded before its lock is taken: a child forked by another thread from here on gets
        // no copy of a descriptor that holds it (`fork_guard`).
        fork_guard::guard(fd);
    }
    let unguard = || {
        if group {
            fork_guard::unguard(fd);
        }
    };
    if let Err(e) = file.ofd_lock(group) {
        unguard();
        let why = if group {
            "group sync needs the WAL to itself, but another process has it open"
        } else {
            "another process uses this WAL with group sync (its buffer is in that process)"
        };
        return Err(fail(
            ResultCode::BUSY,
            format!("{}: {why} ({e})", path.display()),
        ));
    }
    let mut state = WalState::open(file, opts, inst.counters.clone()).map_err(|e| {
        unguard();
        fail(
            code_of(&e, ResultCode::CANTOPEN),
            format!("{}: {e}", path.display()),
        )
    })?;
    observe_syncs(&mut state, inst, path);
    let shared = Arc::new(SharedWal {
        state: Mutex::new(state),
        path: path.to_path_buf(),
        key,
        db: db.to_path_buf(),
        db_key,
        inst,
        pid: std::process::id(),
        group,
        fd,
    });
    reg.by_file.insert(key, Arc::downgrade(&shared));
    if let Some(k) = db_key {
        reg.by_database.insert(k, Arc::downgrade(&shared));
    }
    drop(wals);
    if let Some(g) = opts.group {
        start_group_timer(inst, Arc::downgrade(&shared), g.interval_ms);
    }
    Ok(shared)
}

/// Group sync's timer: writes a buffer whose oldest commit reached the interval. It holds only
/// a weak reference and ends when the last handle of the WAL closes. Its errors go to the
/// VFS's error log (no SQLite call is waiting for them).
fn start_group_timer(inst: &'static Waldio, wal: Weak<SharedWal>, interval_ms: u64) {
    let tick = std::time::Duration::from_micros((interval_ms.saturating_mul(1000) / 2).max(100));
    let spawned = std::thread::Builder::new()
        .name("waldio-group".into())
        .spawn(move || {
            loop {
                std::thread::sleep(tick);
                let Some(w) = wal.upgrade() else { return };
                let mut st = lock(&w.state);
                if let Err(e) = st.group_tick() {
                    inst.errors.report(&fail(
                        ResultCode::IOERR,
                        format!("group write of {}: {e}", w.path.display()),
                    ));
                }
            }
        });
    if let Err(e) = spawned {
        inst.errors.report(&fail(
            ResultCode::IOERR,
            format!("cannot start the group-sync timer: {e}"),
        ));
    }
}

/// The WAL a handle last closed on this thread: its database's file and its own (device,
/// inode). SQLite closes a WAL and then deletes it by name, in one call on one thread
/// (`sqlite3WalClose`); the delete asks whether the WAL now at the name is that one
/// ([`closed_on_this_thread`]).
struct LastClosed {
    db_key: Option<FileKey>,
    wal_key: (u64, u64),
}

thread_local! {
    static LAST_CLOSED: std::cell::RefCell<Option<LastClosed>> = const { std::cell::RefCell::new(None) };
}

/// The WAL file (device, inode) this thread last closed a handle of for the database file
/// `db_key`.
pub(crate) fn closed_on_this_thread(db_key: Option<FileKey>) -> Option<(u64, u64)> {
    LAST_CLOSED
        .try_with(|l| {
            l.borrow()
                .as_ref()
                .filter(|c| c.db_key.is_some() && c.db_key == db_key)
                .map(|c| c.wal_key)
        })
        .ok()
        .flatten()
}

/// Forget the WAL `shared` was, once its last handle is gone (`shared` is dropped here).
pub(crate) fn release(shared: Arc<SharedWal>) {
    let key = shared.key;
    let _ = LAST_CLOSED.try_with(|l| {
        *l.borrow_mut() = Some(LastClosed {
            db_key: shared.db_key,
            wal_key: key,
        });
    });
    drop(shared);
    let mut wals = lock(&WALS);
    let reg = registry(&mut wals);
    reg.own.prune();
    reg.inherited.prune();
}

/// Tell `inst`'s observer (joj's measurement) around every `fdatasync` of the WAL at `path`.
fn observe_syncs(state: &mut WalState<DirectFile>, inst: &'static Waldio, path: &Path) {
    let observed = path.to_path_buf();
    let fd = state.io().raw_fd();
    state.set_sync_hook(Box::new(move |edge| {
        if let Some(o) = inst.observer() {
            let event = match edge {
                SyncEdge::Before => FileEvent::BeforeSync,
                SyncEdge::After => FileEvent::AfterSync,
            };
            o.file_event(event, &observed, FileRole::Wal, Some(fd));
        }
    }));
}

/// Make database `db` durable (`fdatasync` through the file SQLite has open that was the file
/// `key` when it opened), before SQLite's write of a WAL header or its truncation or deletion
/// of the WAL: each writes a header block that forgets every frame of the log before it, and a
/// checkpoint at `synchronous=OFF` copied those frames into the database without syncing it
/// (docs/formats/waldio.md, cases 3 and 4). Never called with a WAL's state locked: another
/// connection's thread may hold the database's file while it waits for that lock
/// (`index_check`).
pub(crate) fn sync_database_of(
    db: &Path,
    key: Option<FileKey>,
    tap: Option<Arc<dyn crate::io::Tap>>,
) -> Result<(), SqliteError> {
    // SQLite opens a WAL only for a database it has open, and deletes the WAL before it closes
    // the database.
    db_files::with_database_of(db, key, |f| {
        f.sync(joj_vfs::SyncFlags::from_raw(
            libsqlite3_sys::SQLITE_SYNC_NORMAL,
        ))
    })
    .unwrap_or(Ok(()))?;
    if let Some(tap) = tap {
        tap.sync(db);
    }
    Ok(())
}

/// Run `f` on the waldio WAL at `path`, shared if this process has it open, else opened for
/// the call (for delete and access checks). `Ok(None)`: there is no such file.
pub(crate) fn with_existing_wal<R>(
    inst: &Waldio,
    path: &Path,
    f: impl FnOnce(&mut WalState<DirectFile>) -> Result<R, WalError>,
) -> Result<Option<R>, WalError> {
    let file = match DirectFile::open(path, false, 0o644, inst.tap()) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(WalError::Io {
                op: IoOp::Open,
                what: "opening the WAL",
                source: e,
            });
        }
    };
    let key = file_key(file.fd()).map_err(|e| WalError::Io {
        op: IoOp::Stat,
        what: "fstat of the WAL",
        source: e,
    })?;
    let existing = registry(&mut lock(&WALS))
        .own
        .by_file
        .get(&key)
        .and_then(Weak::upgrade);
    match existing {
        Some(shared) => {
            let mut st = lock(&shared.state);
            f(&mut st).map(Some)
        }
        None => {
            let mut st = WalState::open(file, inst.defaults(), inst.counters.clone())?;
            f(&mut st).map(Some)
        }
    }
}
