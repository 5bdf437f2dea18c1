//! The process's registry of joj's VFSs: from a name or a `sqlite3_vfs` pointer to the Rust
//! instance, which callers get back only as the type it was registered with.

use super::errors::ErrorLog;
use crate::base::BaseVfs;
use crate::connect::Connecting;
use crate::error::SqliteError;
use libsqlite3_sys as ffi;
use std::any::Any;
use std::sync::{Mutex, MutexGuard};

/// Runs a registered VFS's `on_connect` on its type-erased registration.
pub(crate) type OnConnect =
    fn(&'static (dyn Any + Send + Sync), &mut Connecting<'_>) -> Result<(), SqliteError>;

/// One registered VFS. Everything it refers to is leaked at registration.
#[derive(Clone, Copy)]
pub(crate) struct Entry {
    pub(crate) name: &'static str,
    /// The `sqlite3_vfs` SQLite knows it by.
    pub(crate) vfs: BaseVfs,
    /// The `Registration<V>`.
    pub(crate) instance: &'static (dyn Any + Send + Sync),
    /// `V`'s type name, for errors.
    pub(crate) type_name: &'static str,
    pub(crate) errors: &'static ErrorLog,
    pub(crate) on_connect: OnConnect,
}

static ENTRIES: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The registry, locked (registration holds it so that a name is registered once).
pub(crate) fn lock() -> MutexGuard<'static, Vec<Entry>> {
    crate::unpoisoned::lock(&ENTRIES)
}

pub(crate) fn by_name(name: &str) -> Option<Entry> {
    lock().iter().find(|e| e.name == name).copied()
}

pub(crate) fn by_pointer(vfs: *const ffi::sqlite3_vfs) -> Option<Entry> {
    lock()
        .iter()
        .find(|e| std::ptr::eq(e.vfs.as_ptr(), vfs))
        .copied()
}

/// The entry whose registration (`Registration<V>`, type-erased) is at `reg`.
pub(crate) fn by_registration(reg: *const std::ffi::c_void) -> Option<Entry> {
    lock()
        .iter()
        .find(|e| {
            std::ptr::eq(
                e.instance as *const (dyn Any + Send + Sync) as *const (),
                reg as *const (),
            )
        })
        .copied()
}
