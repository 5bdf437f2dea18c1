//! What the sweep looks at, and what can go wrong while it looks or removes.

use std::path::PathBuf;

use crate::cleanup::CleanupProblem;

/// What a sweep looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Everything joj makes: tracefs instances, mounts, loop devices, scratch directories (all
    /// need root) and this user's host temporary directories.
    Everything,
    /// Only this user's host temporary directories (what a user who is not root can have left).
    TempDirs,
}

/// Looking for or removing a dead joj's leftovers failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeftoverError {
    #[error(
        "looking for leftover loop devices, mounts and tracefs instances needs root (effective \
         uid is {euid}); only this user's temporary directories were looked at; fix: run it as \
         root (e.g. `sudo joj cleanup`)"
    )]
    NeedsRoot { euid: u32 },
    #[error(
        "cannot read {path} while looking for leftovers of dead joj runs: {source}; fix: check \
         that it exists and is readable (as root)"
    )]
    Scan {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("leftover of dead joj {pid}: {problem}")]
    Remove { pid: u32, problem: CleanupProblem },
    /// A dying joj's recording disk could not be aborted (the message names the fix).
    #[error("{0}")]
    Abort(String),
}
