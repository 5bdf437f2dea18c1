//! What one registered waldio VFS holds (there may be several, over different base VFSs):
//! its base, default options, counters, tap, observer and error log.

use crate::counters::AtomicWaldioCounters;
use crate::io::Tap;
use crate::options::{OptionsError, WaldioOptions};
use joj_vfs::{BaseVfs, ErrorLog, FileName, FileObserver, SqliteError};
use std::sync::{Arc, RwLock};

/// The logs a database opened through waldio: rollback journals since it last opened a WAL, and
/// whether the last log was a WAL (the database then is in WAL mode, whatever journals it
/// opened before the switch). The count starts again at each WAL: a database deleted and made
/// again at the same path, or one that left WAL mode, is judged on its journals since.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Logs {
    pub(crate) rollback_journals: u64,
    pub(crate) wal_since: bool,
}

/// One registered waldio VFS.
pub(crate) struct Waldio {
    pub(crate) base: BaseVfs,
    pub(crate) defaults: RwLock<WaldioOptions>,
    pub(crate) counters: Arc<AtomicWaldioCounters>,
    pub(crate) tap: RwLock<Option<Arc<dyn Tap>>>,
    pub(crate) observer: RwLock<Option<Arc<dyn FileObserver>>>,
    /// Errors outside VFS calls (the group-sync timer's) are reported here.
    pub(crate) errors: ErrorLog,
    /// Databases that opened a rollback journal through this VFS, with how many times and
    /// whether a WAL was opened through waldio since the last one (then they are in WAL mode).
    pub(crate) not_in_wal: std::sync::Mutex<std::collections::BTreeMap<std::path::PathBuf, Logs>>,
}

impl Waldio {
    pub(crate) fn new(base: BaseVfs, errors: ErrorLog) -> Waldio {
        Waldio {
            base,
            defaults: RwLock::new(WaldioOptions::default()),
            counters: Arc::default(),
            tap: RwLock::new(None),
            observer: RwLock::new(None),
            errors,
            not_in_wal: std::sync::Mutex::new(std::collections::BTreeMap::new()),
        }
    }

    /// A warning, to `sqlite3_log` and to stderr. Never an error for the application's call:
    /// stderr may be a file the process cannot write (a full disk, `RLIMIT_FSIZE`), where
    /// `eprintln!` would panic and the open that warned would fail.
    fn say(&self, message: &str) {
        self.errors.warn(message);
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "waldio: warning: {message}");
    }

    /// The option `waldio_journal=wal` could not switch a database: `why` says what and the fix.
    pub(crate) fn switch_not_made(&self, why: &SqliteError) {
        let message = format!(
            "waldio_journal=wal did not switch the database to WAL mode: {}",
            why.message()
                .unwrap_or("the WAL cannot be kept in its directory")
        );
        self.say(&message);
    }

    /// A rollback journal of `db` was opened through waldio: the database is not in WAL mode,
    /// so waldio is not in use for it. Said once per database, at its second rollback journal
    /// (on stderr and to `sqlite3_log`),
    /// unless the database is about to be switched (`switching`: option `waldio_journal=wal`,
    /// and a header with waldio's reserve; `reserve`: what the header keeps, when it was read).
    pub(crate) fn rollback_journal_of(
        &self,
        db: &std::path::Path,
        switching: bool,
        reserve: Option<u8>,
    ) {
        crate::counters::bump(&self.counters.rollback_journal_opens, 1);
        // Said at the second journal: the first may be the transaction that creates the
        // database or switches it to WAL (PRAGMA journal_mode=WAL is itself such a transaction).
        let first = {
            let mut seen = lock(&self.not_in_wal);
            let logs = seen.entry(db.to_path_buf()).or_default();
            logs.rollback_journals += 1;
            logs.wal_since = false;
            logs.rollback_journals == 2
        };
        let short = reserve.filter(|r| *r < crate::layout::RESERVE_NEEDED);
        if let (true, true, Some(r)) = (first, switching, short) {
            let message = format!(
                "{} stays in its rollback-journal mode although waldio_journal=wal asks for WAL: \
                 it keeps {r} reserved bytes per page and waldio needs {}; fix: convert it once \
                 from a connection not on waldio (SELECT waldio_convert('{}'), or joj waldio \
                 convert), which puts it in WAL mode through waldio",
                db.display(),
                crate::layout::RESERVE_NEEDED,
                db.display()
            );
            self.say(&message);
        } else if first && !switching {
            let message = format!(
                "{} is in a rollback-journal mode (DELETE, TRUNCATE or PERSIST), so waldio is not \
                 in use for it: its commits go through SQLite's rollback journal as without \
                 waldio; fix: run PRAGMA journal_mode=WAL on the connection, or open it with the \
                 URI parameter waldio_journal=wal (for every connection of the process: SELECT \
                 joj_make_default('waldio', 'waldio_journal=wal'))",
                db.display()
            );
            self.say(&message);
        }
    }

    /// `db` opened its WAL through waldio: it is in WAL mode now (its earlier rollback journals
    /// were before the switch, and are forgotten).
    pub(crate) fn wal_of(&self, db: &std::path::Path) {
        if let Some(logs) = lock(&self.not_in_wal).get_mut(db) {
            *logs = Logs {
                rollback_journals: 0,
                wal_since: true,
            };
        }
    }

    pub(crate) fn defaults(&self) -> WaldioOptions {
        read(&self.defaults)
    }

    pub(crate) fn tap(&self) -> Option<Arc<dyn Tap>> {
        read(&self.tap)
    }

    pub(crate) fn observer(&self) -> Option<Arc<dyn FileObserver>> {
        read(&self.observer)
    }

    /// Options for a WAL: the defaults overridden by the WAL name's URI parameters.
    pub(crate) fn options_for(&self, name: &FileName<'_>) -> Result<WaldioOptions, OptionsError> {
        self.defaults()
            .with_uri_params(|key| name.uri_parameter(key))
    }
}

pub(crate) fn read<T: Clone>(l: &RwLock<T>) -> T {
    joj_vfs::unpoisoned::read(l).clone()
}

pub(crate) fn write<T>(l: &RwLock<T>, value: T) {
    *joj_vfs::unpoisoned::write(l) = value;
}

pub(crate) use joj_vfs::unpoisoned::lock;
