//! What a dead joj left behind, found and removed. A joj that dies without running its cleanup
//! — `kill -9`, an allocation failure's abort, any crash — leaves what its cleanup registry
//! ([`crate::cleanup`]) held: a tracefs instance (with up to 128 MiB of kernel trace buffers),
//! a mounted scratch filesystem, its loop devices, images and directory under `/run/joj`, or a
//! `--fs host` run's temporary directory. Nothing of this goes away by itself.
//!
//! Every one of those carries its maker's pid in its name ([`crate::names`]); a thing is a
//! leftover when that pid is no live process ([`decide`] says why a live pid always keeps its
//! things). [`find`] looks ([`Scope`]: all of it needs root, except this user's temporary
//! directories), [`remove`] removes what it found in the order that frees each thing
//! (tracefs instance → unmount → detach loop devices → images and directories), and
//! [`sweep`] does both. Runs that make scratch filesystems or temporary directories sweep first
//! ([`sweep_and_report`]); `joj cleanup` sweeps on request.

mod decide;
mod dying;
mod error;
mod removal;
mod scan;

use std::sync::{Mutex, PoisonError};

pub use decide::{Decision, Kept, Leftover, Liveness, Resource, Seen, TempEntry, decide};
pub use dying::DyingDisk;
pub use error::{LeftoverError, Scope};
pub use removal::Sweep;

/// Serialises this process's sweeps (threads of a test binary start runs at once): a second
/// one then finds nothing the first removed.
static SWEEPING: Mutex<()> = Mutex::new(());

/// What of `scope` exists on this machine, split into the things of dead processes (to remove)
/// and of live ones (kept). Fails without root unless `scope` is [`Scope::TempDirs`].
pub fn find(scope: Scope) -> Result<Decision, LeftoverError> {
    let seen = scan::seen(scope)?;
    Ok(decide::decide(&seen, scan::liveness))
}

/// Aborts the recording disks of dying joj processes (killed while a thread waited on their
/// recording disk: see [`dying`]) and waits for those processes to go, so that [`find`] then
/// sees them dead. Returns a [`Sweep`] of what it aborted ([`Sweep::aborted`]) and what it
/// could not abort, with the fix. Needs root (does nothing otherwise).
pub fn abort_dying() -> Sweep {
    if !rustix::process::geteuid().is_root() {
        return Sweep::default();
    }
    let aborts = dying::abort_dying();
    Sweep {
        aborted: aborts.aborted,
        problems: aborts.problems,
        ..Sweep::default()
    }
}

/// Aborts `disk`'s FUSE connection if that disk is still mounted where it was with the same
/// number (never another disk that took the number since): whether it was aborted.
pub fn abort_recording_disk(disk: &DyingDisk) -> Result<bool, LeftoverError> {
    dying::abort(disk)
}

/// Removes `found` (things of dead processes, as [`find`] returns them), continuing past
/// failures.
pub fn remove(found: Vec<Leftover>) -> Sweep {
    let _one_at_a_time = SWEEPING.lock().unwrap_or_else(PoisonError::into_inner);
    removal::remove_all(found)
}

/// Finds and removes every leftover this process can: everything as root, otherwise this
/// user's temporary directories. Never fails: what went wrong is in [`Sweep::problems`].
pub fn sweep() -> Sweep {
    let root = rustix::process::geteuid().is_root();
    let scope = if root {
        Scope::Everything
    } else {
        Scope::TempDirs
    };
    let _one_at_a_time = SWEEPING.lock().unwrap_or_else(PoisonError::into_inner);
    let aborted = abort_dying();
    let mut sweep = match find(scope) {
        Ok(decision) => removal::remove_all(decision.remove),
        Err(e) => Sweep {
            problems: vec![e],
            ..Sweep::default()
        },
    };
    sweep.add(aborted);
    sweep
}

/// [`sweep`], saying on stderr what it removed (one line per dead process) and what it could
/// not remove (with the fix). For the start of a run; silent when there was nothing.
pub fn sweep_and_report() {
    let sweep = sweep();
    for line in sweep.lines() {
        eprintln!("joj: {line}");
    }
    for problem in &sweep.problems {
        eprintln!("joj: warning: {problem}");
    }
}
