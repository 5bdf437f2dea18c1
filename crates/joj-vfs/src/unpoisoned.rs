//! Locks taken also after another thread panicked holding them. What joj's VFSs and runners
//! keep behind a lock (counters, registries, observers, last errors, buffers with their own
//! checks) is valid at every instant, and a VFS must keep answering SQLite after a panic the
//! shim turned into an error; one place says so instead of a helper per module.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// `m` locked, poisoned or not.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `l` read-locked, poisoned or not.
pub fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

/// `l` write-locked, poisoned or not.
pub fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}
