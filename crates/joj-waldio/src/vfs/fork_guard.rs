//! A child forked while a group-sync WAL is open inherits the WAL's descriptor, and with it the
//! open file description that holds group sync's exclusive OFD lock (`DirectFile::ofd_lock`).
//! The lock is the description's: once the parent closed the database, the child's copy kept
//! it, and the parent's own reopen and every other process were refused ("database is locked")
//! until the child exited — a worker pool forked by an application with the database open
//! locked it out of its own database (found by a review of H148, 2026-11-29; H152).
//!
//! At fork, the child's copy of each such descriptor is pointed at `/dev/null` (`dup3`), so the
//! description is the parent's alone. The number stays taken: the inherited state's later close
//! closes `/dev/null`, never a file the child opened since. The child never uses that
//! descriptor (an inherited group-sync WAL refuses every call: `usable_in_this_process`). The
//! child's table is emptied: its numbers are no group-sync WAL's in the child.
//! Hand-written: `pthread_atfork` with a lock-free table is all it takes, and the handler may
//! only make async-signal-safe calls (no allocation, no lock).

use std::sync::Once;
use std::sync::atomic::{AtomicI32, Ordering};

/// Descriptors of group-sync WALs open in this process (-1: a free slot). A process with more
/// than this many open at once leaves the rest to its children, as before.
const SLOTS: usize = 64;
static GROUP_FDS: [AtomicI32; SLOTS] = [const { AtomicI32::new(-1) }; SLOTS];
static INSTALLED: Once = Once::new();

/// `fd` holds group sync's lock: a child forked from now on gets `/dev/null` in its place.
pub(crate) fn guard(fd: i32) {
    INSTALLED.call_once(|| {
        // SAFETY: registers a handler that makes only async-signal-safe calls.
        unsafe { libc::pthread_atfork(None, None, Some(in_the_child)) };
    });
    for slot in &GROUP_FDS {
        if slot
            .compare_exchange(-1, fd, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

/// `fd` is about to be closed: forget it (before the number can be reused).
pub(crate) fn unguard(fd: i32) {
    for slot in &GROUP_FDS {
        if slot
            .compare_exchange(fd, -1, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

extern "C" fn in_the_child() {
    // SAFETY: open, dup3 and close are async-signal-safe; the descriptors are this process's.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null < 0 {
            return;
        }
        for slot in &GROUP_FDS {
            let fd = slot.load(Ordering::SeqCst);
            if fd >= 0 {
                libc::dup3(null, fd, libc::O_CLOEXEC);
                // In this child the number holds `/dev/null`, no group-sync WAL: forgotten, or
                // a file the child puts there after closing its copy (a daemon closing all it
                // inherited, then opening its log) was pointed at `/dev/null` in the child's
                // own children, and their writes to it vanished (review of H152's fix).
                slot.store(-1, Ordering::SeqCst);
            }
        }
        libc::close(null);
    }
}
