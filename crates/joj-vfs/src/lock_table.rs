//! SQLite's file locks inside one process, for VFSs whose files are not OS files (the `xftl` VFS,
//! the coming i-FTL VFS, test VFSs).
//!
//! A [`LockTable`] holds, per file, how many handles read (SHARED or more), which handle writes
//! (RESERVED or more), and whether that writer is waiting for readers to leave (PENDING) or has
//! the file to itself (EXCLUSIVE). Each open handle keeps its own level in a [`HandleLock`]. The
//! rules are SQLite's (`os_unix.c`, "locking"):
//!
//! - SHARED is granted unless another handle holds PENDING or EXCLUSIVE.
//! - RESERVED is granted to one handle at a time; readers may still come and go.
//! - EXCLUSIVE first takes PENDING (no new readers); it is granted once this handle is the only
//!   reader left, else the handle stays at PENDING and gets `SQLITE_BUSY` (SQLite retries).
//! - Unlocking to SHARED gives up writing; unlocking to NONE gives up reading as well.
//! - A lock request at or below the handle's level changes nothing.

use crate::flags::LockLevel;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};

/// Identifies handles in every lock table of the process.
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

/// One open handle's lock level on its file.
#[derive(Debug)]
pub struct HandleLock {
    id: u64,
    level: LockLevel,
}

impl HandleLock {
    /// A handle holding no lock.
    pub fn new() -> HandleLock {
        HandleLock {
            id: NEXT_HANDLE.fetch_add(1, Ordering::Relaxed),
            level: LockLevel::None,
        }
    }

    pub fn level(&self) -> LockLevel {
        self.level
    }
}

impl Default for HandleLock {
    fn default() -> Self {
        HandleLock::new()
    }
}

/// Another handle holds the lock that was asked for (`SQLITE_BUSY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy;

#[derive(Debug, Default, Clone, Copy)]
struct FileLocks {
    /// Handles at SHARED or more.
    readers: u32,
    /// The handle at RESERVED or more.
    writer: Option<u64>,
    /// The writer waits for readers to leave: no new reader is let in.
    pending: bool,
    exclusive: bool,
}

/// The locks of every file of one file layer, by file key `K`.
#[derive(Debug)]
pub struct LockTable<K> {
    files: HashMap<K, FileLocks>,
}

impl<K> Default for LockTable<K> {
    fn default() -> Self {
        LockTable {
            files: HashMap::new(),
        }
    }
}

impl<K: Eq + Hash + Clone> LockTable<K> {
    pub fn new() -> LockTable<K> {
        LockTable::default()
    }

    /// Raise `handle`'s lock on `file` to `want` (SQLite's `xLock`).
    pub fn lock(&mut self, file: &K, handle: &mut HandleLock, want: LockLevel) -> Result<(), Busy> {
        if handle.level >= want {
            return Ok(());
        }
        // The key is cloned only for a file no handle holds a lock on yet.
        if !self.files.contains_key(file) {
            self.files.insert(file.clone(), FileLocks::default());
        }
        let Some(l) = self.files.get_mut(file) else {
            unreachable!("the entry was just made");
        };
        let others_write = l.writer.is_some_and(|w| w != handle.id);
        match want {
            LockLevel::None => {}
            LockLevel::Shared => {
                if others_write && (l.pending || l.exclusive) {
                    return Err(Busy);
                }
                l.readers += 1;
            }
            LockLevel::Reserved => {
                if others_write {
                    return Err(Busy);
                }
                l.writer = Some(handle.id);
            }
            LockLevel::Pending | LockLevel::Exclusive => {
                if others_write {
                    return Err(Busy);
                }
                l.writer = Some(handle.id);
                l.pending = true;
                if want == LockLevel::Exclusive {
                    if l.readers > 1 {
                        handle.level = LockLevel::Pending;
                        return Err(Busy);
                    }
                    l.exclusive = true;
                }
            }
        }
        handle.level = want;
        Ok(())
    }

    /// Lower `handle`'s lock on `file` to `to` (SQLite's `xUnlock`: SHARED or NONE).
    pub fn unlock(&mut self, file: &K, handle: &mut HandleLock, to: LockLevel) {
        if handle.level <= to {
            return;
        }
        let Some(l) = self.files.get_mut(file) else {
            handle.level = to;
            return;
        };
        if handle.level >= LockLevel::Reserved
            && to < LockLevel::Reserved
            && l.writer == Some(handle.id)
        {
            l.writer = None;
            l.pending = false;
            l.exclusive = false;
        }
        if handle.level >= LockLevel::Shared && to == LockLevel::None {
            l.readers = l.readers.saturating_sub(1);
        }
        if l.readers == 0 && l.writer.is_none() {
            // No handle holds a lock on the file any more.
            self.files.remove(file);
        }
        handle.level = to;
    }

    /// Whether some handle holds RESERVED or more on `file` (SQLite's `xCheckReservedLock`).
    pub fn is_reserved(&self, file: &K) -> bool {
        self.files.get(file).is_some_and(|l| l.writer.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LockLevel::*;

    #[test]
    fn readers_share_and_a_writer_reserves_alongside_them() {
        let mut t = LockTable::new();
        let (mut a, mut b) = (HandleLock::new(), HandleLock::new());
        t.lock(&1, &mut a, Shared).unwrap();
        t.lock(&1, &mut b, Shared).unwrap();
        assert!(!t.is_reserved(&1));
        t.lock(&1, &mut a, Reserved).unwrap();
        assert!(t.is_reserved(&1));
        assert_eq!(
            t.lock(&1, &mut b, Reserved),
            Err(Busy),
            "one writer at a time"
        );
        let mut c = HandleLock::new();
        t.lock(&1, &mut c, Shared).unwrap();
        assert_eq!(c.level(), Shared, "RESERVED lets new readers in");
    }

    #[test]
    fn exclusive_waits_at_pending_for_readers_and_keeps_new_ones_out() {
        let mut t = LockTable::new();
        let (mut w, mut r) = (HandleLock::new(), HandleLock::new());
        t.lock(&"db", &mut w, Shared).unwrap();
        t.lock(&"db", &mut r, Shared).unwrap();
        t.lock(&"db", &mut w, Reserved).unwrap();
        assert_eq!(t.lock(&"db", &mut w, Exclusive), Err(Busy));
        assert_eq!(w.level(), Pending);
        let mut late = HandleLock::new();
        assert_eq!(
            t.lock(&"db", &mut late, Shared),
            Err(Busy),
            "PENDING keeps readers out"
        );
        assert_eq!(late.level(), None);
        t.unlock(&"db", &mut r, None);
        t.lock(&"db", &mut w, Exclusive).unwrap();
        assert_eq!(w.level(), Exclusive);
        assert_eq!(t.lock(&"db", &mut late, Shared), Err(Busy));
    }

    #[test]
    fn unlocking_to_shared_ends_writing_and_to_none_ends_reading() {
        let mut t = LockTable::new();
        let (mut w, mut other) = (HandleLock::new(), HandleLock::new());
        t.lock(&7, &mut w, Shared).unwrap();
        t.lock(&7, &mut w, Reserved).unwrap();
        t.lock(&7, &mut w, Exclusive).unwrap();
        t.unlock(&7, &mut w, Shared);
        assert_eq!(w.level(), Shared);
        assert!(!t.is_reserved(&7));
        t.lock(&7, &mut other, Shared).unwrap();
        t.lock(&7, &mut other, Reserved).unwrap();
        t.unlock(&7, &mut other, None);
        t.unlock(&7, &mut w, None);
        let mut x = HandleLock::new();
        t.lock(&7, &mut x, Shared).unwrap();
        t.lock(&7, &mut x, Exclusive).unwrap();
        assert_eq!(x.level(), Exclusive, "every earlier reader left");
    }

    #[test]
    fn requests_at_or_below_the_level_change_nothing_and_files_are_apart() {
        let mut t = LockTable::new();
        let mut a = HandleLock::new();
        t.lock(&1, &mut a, Shared).unwrap();
        t.lock(&1, &mut a, Reserved).unwrap();
        t.lock(&1, &mut a, Shared).unwrap();
        assert_eq!(a.level(), Reserved);
        t.unlock(&1, &mut a, Reserved);
        assert!(t.is_reserved(&1));
        let mut b = HandleLock::new();
        t.lock(&2, &mut b, Shared).unwrap();
        t.lock(&2, &mut b, Exclusive).unwrap();
        assert!(t.is_reserved(&2) && t.is_reserved(&1));
    }
}
