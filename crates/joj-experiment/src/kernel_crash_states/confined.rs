//! SQLite confined to a crash image: a VFS that opens, deletes and checks only paths beneath
//! the image's mount point, by name as the image has them — never through a symbolic link.
//!
//! A crash image may come from a saved log, which anyone can write: the checker must not be
//! led out of it. The mount already follows no symbolic link and opens no device node
//! (`joj_linux::fs::FOREIGN_MOUNT_FLAGS`), but two paths of SQLite's own do not go through the
//! kernel's resolution alone: the unix VFS's `xFullPathname` reads symbolic links itself
//! (`readlink`, allowed on a `nosymfollow` mount) and substitutes their targets, and a hot
//! rollback journal names a super-journal by an absolute path written in the journal, which
//! SQLite checks, opens and may delete. [`ConfinedVfs`] sits between SQLite (or waldio) and the
//! unix VFS: every name SQLite passes to `xOpen`, `xDelete`, `xAccess` and `xFullPathname`
//! must lie beneath the root by its text (no `..`), and each component of it is looked up with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)`
//! ([`joj_linux::Beneath`]): a link, a way out, a mount crossing, or a file that is not a
//! regular file or a directory is refused, and the refusal is kept so the checker can stop the
//! run with it ([`Confinement::take_refusal`]). Full pathnames are the root joined with the
//! name's own components, no link resolved.
//!
//! One VFS is registered per slot (`joj-confined-N`, with waldio over it as
//! `waldio-confined-N`), for the life of the process; a [`Confinement`] holds a slot and sets
//! its root while a checker reads one image. Without a root, the VFS refuses everything.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use joj_linux::{Beneath, BeneathEntry, BeneathError};
use joj_vfs::{
    Access, BaseFile, BaseVfs, FileName, FullPathname, OpenFlags, ResultCode, SqliteError, Vfs,
    VfsFile,
};

use crate::error::ExperimentError;

/// Confinements alive at once (two checking workers per run; a few runs in one process).
const SLOTS: usize = 8;

/// Which slots are taken.
static TAKEN: Mutex<[bool; SLOTS]> = Mutex::new([false; SLOTS]);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The root a slot's VFS confines SQLite to, and the first refusal since it was set.
#[derive(Default)]
struct SlotState {
    root: Option<Arc<Beneath>>,
    refused: Option<String>,
}

/// The VFS of one slot (see the module documentation).
pub struct ConfinedVfs {
    base: BaseVfs,
    state: Mutex<SlotState>,
}

impl ConfinedVfs {
    /// Whether `path` may be used: beneath the root by its text, and every component found as
    /// a directory or, last, a regular file (or missing). Otherwise the refusal is kept and
    /// returned as an error of `code`.
    fn admit(&self, what: &str, path: &Path, code: ResultCode) -> Result<(), SqliteError> {
        let mut state = lock(&self.state);
        let refusal = match &state.root {
            None => format!(
                "SQLite's {what} of {}: no crash image is mounted for this VFS",
                path.display()
            ),
            Some(root) => match root.entry(path) {
                Ok(BeneathEntry::Missing | BeneathEntry::File { .. }) => return Ok(()),
                Ok(BeneathEntry::Directory) => format!(
                    "SQLite's {what} of {}: a directory, where SQLite wants a file",
                    path.display()
                ),
                Err(e) => format!("SQLite's {what} of {}: {e}", path.display()),
            },
        };
        state.refused.get_or_insert_with(|| refusal.clone());
        Err(SqliteError::with_message(code, refusal))
    }
}

impl Vfs for ConfinedVfs {
    type File = ConfinedFile;

    fn open(
        &'static self,
        name: Option<&FileName<'_>>,
        flags: OpenFlags,
    ) -> Result<(ConfinedFile, OpenFlags), SqliteError> {
        // A file without a name is a temporary file SQLite's own VFS places; it is not in the
        // image.
        if let Some(n) = name {
            self.admit("open", n.path(), ResultCode::CANTOPEN)?;
        }
        let (base, out) = self.base.open(name, flags)?;
        Ok((ConfinedFile { base }, out))
    }

    fn delete(&self, path: &Path, sync_dir: bool) -> Result<(), SqliteError> {
        self.admit("delete", path, ResultCode::IOERR_DELETE)?;
        self.base.delete(path, sync_dir)
    }

    fn access(&self, path: &Path, check: Access) -> Result<bool, SqliteError> {
        self.admit("check", path, ResultCode::IOERR_ACCESS)?;
        self.base.access(path, check)
    }

    fn full_pathname(&self, name: &Path) -> Result<FullPathname, SqliteError> {
        let mut state = lock(&self.state);
        let refusal = match &state.root {
            None => format!(
                "SQLite's naming of {}: no crash image is mounted for this VFS",
                name.display()
            ),
            Some(root) => match root.relative(name) {
                Ok(rel) => return Ok(FullPathname::new(root.absolute(&rel))),
                Err(e) => format!("SQLite's naming of {}: {e}", name.display()),
            },
        };
        state.refused.get_or_insert_with(|| refusal.clone());
        Err(SqliteError::with_message(ResultCode::CANTOPEN, refusal))
    }

    fn delegate(&self) -> Option<BaseVfs> {
        Some(self.base)
    }
}

/// A file of the image, opened by the unix VFS after its name was admitted.
pub struct ConfinedFile {
    base: BaseFile,
}

impl VfsFile for ConfinedFile {
    joj_vfs::forward_to_base!(base, everything);
}

/// A slot's VFS confining SQLite to one mounted image while it is held; the slot is freed, and
/// its VFS refuses everything again, when it is dropped.
pub struct Confinement {
    slot: usize,
    vfs: &'static ConfinedVfs,
    root: Arc<Beneath>,
}

impl Confinement {
    /// Confines a free slot's VFS to `root`.
    pub fn new(root: Beneath) -> Result<Confinement, ExperimentError> {
        let slot = {
            let mut taken = lock(&TAKEN);
            let Some(slot) = taken.iter().position(|t| !t) else {
                return Err(ExperimentError::CrashStates(format!(
                    "all {SLOTS} confined SQLite VFSs are in use (each checker holds one); fix: \
                     check fewer crash-state runs at once in one process"
                )));
            };
            taken[slot] = true;
            slot
        };
        let registered = (|| {
            let base = BaseVfs::find("unix").ok_or_else(|| joj_vfs::VfsError::NoBaseVfs {
                name: "unix".into(),
            })?;
            Ok::<_, ExperimentError>(joj_vfs::register_vfs(&Self::name_of(slot), |_| {
                ConfinedVfs {
                    base,
                    state: Mutex::default(),
                }
            })?)
        })();
        let vfs = match registered {
            Ok(r) => r.vfs(),
            Err(e) => {
                lock(&TAKEN)[slot] = false;
                return Err(e);
            }
        };
        let root = Arc::new(root);
        *lock(&vfs.state) = SlotState {
            root: Some(root.clone()),
            refused: None,
        };
        Ok(Confinement { slot, vfs, root })
    }

    fn name_of(slot: usize) -> String {
        format!("joj-confined-{slot}")
    }

    /// The name to open a connection on the image with.
    pub fn vfs_name(&self) -> String {
        Self::name_of(self.slot)
    }

    /// waldio over this slot's VFS.
    pub fn waldio(&self) -> Result<joj_waldio::WaldioVfs, joj_waldio::WaldioError> {
        joj_waldio::register_over(&format!("waldio-confined-{}", self.slot), &self.vfs_name())
    }

    pub fn beneath(&self) -> &Beneath {
        &self.root
    }

    /// The first path SQLite asked for that the VFS refused since the last call, if any.
    pub fn take_refusal(&self) -> Option<String> {
        lock(&self.vfs.state).refused.take()
    }
}

impl Drop for Confinement {
    fn drop(&mut self) {
        *lock(&self.vfs.state) = SlotState::default();
        lock(&TAKEN)[self.slot] = false;
    }
}

/// A crash image that leads out of its filesystem, or holds what joj's workload never writes
/// (a symbolic link, a FIFO, a device node where its files are), in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ImageEscape(pub String);

/// How a failed lookup in a crash image reads: an I/O error (`Ok`, its words) is the image
/// being broken, which a crash can do; anything else — a link, a way out, a special file —
/// is an escape.
pub fn broken_or_escape(e: BeneathError) -> Result<String, ImageEscape> {
    match e {
        BeneathError::Io { .. } => Ok(e.to_string()),
        e => Err(ImageEscape(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::{Connection, OpenFlags};
    use std::path::PathBuf;

    /// A hot rollback journal (copied while a transaction had spilled pages into the database)
    /// whose trailer names the super-journal `super_path`, in `root/joj/`; returns the
    /// database's path.
    fn hot_journal_naming(root: &Path, super_path: &Path) -> PathBuf {
        let work = tempfile::tempdir().unwrap();
        let db = work.path().join("crash.db");
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode=DELETE; PRAGMA cache_size=2;
             CREATE TABLE t(x BLOB);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<100)
             INSERT INTO t SELECT randomblob(1000) FROM n;
             BEGIN; UPDATE t SET x = randomblob(1000);",
        )
        .unwrap();
        let dir = root.join("joj");
        std::fs::create_dir(&dir).unwrap();
        for name in ["crash.db", "crash.db-journal"] {
            std::fs::copy(work.path().join(name), dir.join(name)).unwrap();
        }
        conn.execute_batch("ROLLBACK").unwrap();
        // SQLite's super-journal trailer: the locking page's number, the name, its length,
        // the sum of its bytes, the journal magic (all big-endian).
        let name = super_path.as_os_str().as_encoded_bytes();
        let mut trailer = (0x4000_0000u32 / 4096 + 1).to_be_bytes().to_vec();
        trailer.extend_from_slice(name);
        trailer.extend_from_slice(&(name.len() as u32).to_be_bytes());
        let sum = name.iter().fold(0u32, |a, &b| a.wrapping_add(u32::from(b)));
        trailer.extend_from_slice(&sum.to_be_bytes());
        trailer.extend_from_slice(&[0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]);
        let mut j = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join("crash.db-journal"))
            .unwrap();
        std::io::Write::write_all(&mut j, &trailer).unwrap();
        dir.join("crash.db")
    }

    fn read_count(db: &Path, vfs: Option<&str>) -> rusqlite::Result<i64> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = match vfs {
            Some(v) => Connection::open_with_flags_and_vfs(db, flags, v)?,
            None => Connection::open_with_flags(db, flags)?,
        };
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
    }

    /// A super-journal named outside the image is never opened, checked or deleted: SQLite's
    /// own VFS, as a control, deletes a host file the journal names when that file lists the
    /// journal.
    #[test]
    fn a_hot_journals_super_journal_outside_the_image_is_refused() {
        let host = tempfile::tempdir().unwrap();
        let super_path = host.path().join("x.db-mj0A1B2C9D3");
        let listing = |root: &Path| {
            let mut b = root
                .join("joj/crash.db-journal")
                .into_os_string()
                .into_encoded_bytes();
            b.push(0);
            b
        };

        let control = tempfile::tempdir().unwrap();
        let db = hot_journal_naming(control.path(), &super_path);
        std::fs::write(&super_path, listing(control.path())).unwrap();
        assert_eq!(read_count(&db, None).unwrap(), 100);
        assert!(!super_path.exists(), "the control: stock SQLite deletes it");

        let image = tempfile::tempdir().unwrap();
        let db = hot_journal_naming(image.path(), &super_path);
        std::fs::write(&super_path, listing(image.path())).unwrap();
        let before = std::fs::read(&super_path).unwrap();
        let confined = Confinement::new(Beneath::open_root(image.path()).unwrap()).unwrap();
        assert!(read_count(&db, Some(&confined.vfs_name())).is_err());
        let refusal = confined.take_refusal().expect("a refusal");
        assert!(
            refusal.contains(&super_path.display().to_string())
                && refusal.contains("not a path inside"),
            "{refusal}"
        );
        assert_eq!(std::fs::read(&super_path).unwrap(), before);
    }

    #[test]
    fn a_database_reached_through_a_link_is_refused_and_a_plain_one_reads() {
        let image = tempfile::tempdir().unwrap();
        let host = tempfile::tempdir().unwrap();
        let conn = Connection::open(host.path().join("h.db")).unwrap();
        conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES(1);")
            .unwrap();
        drop(conn);
        std::fs::create_dir(image.path().join("joj")).unwrap();
        std::os::unix::fs::symlink(host.path().join("h.db"), image.path().join("joj/link.db"))
            .unwrap();
        std::fs::copy(host.path().join("h.db"), image.path().join("joj/plain.db")).unwrap();
        let confined = Confinement::new(Beneath::open_root(image.path()).unwrap()).unwrap();
        let vfs = confined.vfs_name();
        assert_eq!(
            read_count(&image.path().join("joj/plain.db"), Some(&vfs)).unwrap(),
            1
        );
        assert!(confined.take_refusal().is_none());
        assert!(read_count(&image.path().join("joj/link.db"), Some(&vfs)).is_err());
        let refusal = confined.take_refusal().expect("a refusal");
        assert!(refusal.contains("symbolic link"), "{refusal}");
        // Outside the root altogether.
        assert!(read_count(&host.path().join("h.db"), Some(&vfs)).is_err());
        assert!(confined.take_refusal().is_some());
    }
}
