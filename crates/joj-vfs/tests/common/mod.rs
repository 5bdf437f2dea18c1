//! Test VFSs written on the seam, shared by the contract tests:
//!
//! - [`MemVfs`]: every file in memory, locks in a [`joj_vfs::LockTable`] (no shared memory, so
//!   WAL mode only with `locking_mode=EXCLUSIVE`). The model the default VFS is compared with.
//! - [`CountingVfs`]: SQLite's `unix` VFS underneath, every seam method counted by name, with
//!   knobs to fail or panic in chosen calls.
#![allow(dead_code, unused_imports)]

mod counting;
mod mem;

pub use counting::{CountingFile, CountingVfs, Fault};
pub use mem::{MemFile, MemVfs};

use std::sync::atomic::{AtomicU64, Ordering};

/// A VFS name no other test of the same binary uses.
pub fn unique_name(prefix: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}
