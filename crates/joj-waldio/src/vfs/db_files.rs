//! The main database files this process has open through waldio, by the name SQLite gave them
//! and the file (device, inode) each was when it opened: how the WAL's open reads a database's
//! header and marks it without a descriptor of its own, and how a WAL reaches its own database
//! when another file has taken the name since (a database deleted or renamed while a connection
//! keeps it open, and a new one made under its name: docs/robustness.md H132).
//!
//! Closing any descriptor of a file drops every POSIX lock the process holds on it, so waldio
//! never opens a database file itself (docs/formats/waldio.md, "Locks"): it goes through the
//! base file SQLite opened ([`SharedBaseFile`](joj_vfs::SharedBaseFile)). SQLite opens a WAL
//! only for a database it has open (the WAL's name is derived from the database's), through the
//! same VFS stack, so the database is here when its WAL opens.

use super::instance::lock;
use joj_vfs::{BaseFile, WeakBaseFile};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A file's (device, inode).
pub(crate) type FileKey = (u64, u64);

/// The file at `path` now (`None`: none, or it cannot be seen). SQLite's names of a database
/// are full paths with links resolved; no descriptor is opened (closing one would drop the
/// process's locks on the file).
pub(crate) fn key_of(path: &Path) -> Option<FileKey> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

type Files = HashMap<PathBuf, Vec<(Option<FileKey>, WeakBaseFile)>>;
static DB_FILES: Mutex<Option<Files>> = Mutex::new(None);

/// Remember `file`, an open main database called `path`, which was the file `key` when it
/// opened.
pub(crate) fn add(path: &Path, key: Option<FileKey>, file: WeakBaseFile) {
    let mut g = lock(&DB_FILES);
    let files = g.get_or_insert_with(HashMap::new);
    let list = files.entry(path.to_path_buf()).or_default();
    list.retain(|(_, f)| f.is_open());
    list.push((key, file));
}

/// Forget the closed files of `path`.
pub(crate) fn prune(path: &Path) {
    let mut g = lock(&DB_FILES);
    if let Some(files) = g.as_mut() {
        if let Some(list) = files.get_mut(path) {
            list.retain(|(_, f)| f.is_open());
            if list.is_empty() {
                files.remove(path);
            }
        }
    }
}

/// Run `f` on an open main database file called `path` that is the file now at that name
/// (`None`: none is open here).
pub(crate) fn with_database<R>(path: &Path, f: impl FnOnce(&mut BaseFile) -> R) -> Option<R> {
    with_database_of(path, key_of(path), f)
}

/// Run `f` on an open main database file called `path` that was the file `key` when it opened
/// (`None`: none is open here). Without a key, any file of that name.
pub(crate) fn with_database_of<R>(
    path: &Path,
    key: Option<FileKey>,
    f: impl FnOnce(&mut BaseFile) -> R,
) -> Option<R> {
    // Copies of the references: the calls on the file run without the registry locked.
    let candidates: Vec<WeakBaseFile> = lock(&DB_FILES)
        .as_ref()
        .and_then(|m| m.get(path))
        .map(|list| {
            list.iter()
                .filter(|(k, _)| key.is_none() || *k == key)
                .map(|(_, f)| f.clone())
                .collect()
        })
        .unwrap_or_default();
    let mut f = Some(f);
    for c in candidates {
        if let Some(r) = c.with(|file| (f.take().expect("called once"))(file)) {
            return Some(r);
        }
    }
    None
}
