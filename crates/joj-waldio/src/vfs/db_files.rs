//! The main database files this process has open through waldio, by the name SQLite gave them:
//! how the WAL's open reads a database's header and marks it without a descriptor of its own.
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

static DB_FILES: Mutex<Option<HashMap<PathBuf, Vec<WeakBaseFile>>>> = Mutex::new(None);

/// Remember `file`, an open main database called `path`.
pub(crate) fn add(path: &Path, file: WeakBaseFile) {
    let mut g = lock(&DB_FILES);
    let files = g.get_or_insert_with(HashMap::new);
    let list = files.entry(path.to_path_buf()).or_default();
    list.retain(WeakBaseFile::is_open);
    list.push(file);
}

/// Forget the closed files of `path`.
pub(crate) fn prune(path: &Path) {
    let mut g = lock(&DB_FILES);
    if let Some(files) = g.as_mut() {
        if let Some(list) = files.get_mut(path) {
            list.retain(WeakBaseFile::is_open);
            if list.is_empty() {
                files.remove(path);
            }
        }
    }
}

/// Run `f` on an open main database file called `path` (`None`: none is open here).
pub(crate) fn with_database<R>(path: &Path, f: impl FnOnce(&mut BaseFile) -> R) -> Option<R> {
    // Copies of the references: the calls on the file run without the registry locked.
    let candidates: Vec<WeakBaseFile> = lock(&DB_FILES)
        .as_ref()
        .and_then(|m| m.get(path))
        .cloned()
        .unwrap_or_default();
    let mut f = Some(f);
    for c in candidates {
        if let Some(r) = c.with(|file| (f.take().expect("called once"))(file)) {
            return Some(r);
        }
    }
    None
}
