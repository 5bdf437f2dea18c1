//! The host temporary directory of a `--fs host` run that names no directory:
//! `$TMPDIR/joj-<pid>-XXXXXX` (mode 0700), recorded in the cleanup registry like a scratch
//! filesystem, so it is removed on [`RunTempDir::close`], on drop and — once
//! [`crate::install_cleanup_handler`] ran — on SIGINT / SIGTERM; and carrying the pid in its
//! name, so that the one a killed process leaves is found by the next run
//! ([`crate::leftovers`]). Needs no root.
//!
//! Removal takes the workload's files (`joj-*`) and the directory, never anything else: a file
//! joj did not put there keeps the directory, and is reported.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::cleanup::{self, CleanupProblem};
use crate::names;

/// Making or removing a run's temporary directory failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TempDirError {
    #[error(
        "cannot create a temporary directory in {parent}: {source}; fix: check free space and \
         permissions there, or name a directory with --dir"
    )]
    Create {
        parent: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the temporary directory was removed by the signal handler while being made; fix: \
         nothing — the process is exiting on SIGINT/SIGTERM"
    )]
    Interrupted,
    #[error(transparent)]
    Cleanup(#[from] CleanupProblem),
}

/// A run's temporary host directory, registered for cleanup.
#[derive(Debug)]
pub struct RunTempDir {
    /// Registry entry holding the directory; released exactly once.
    id: u64,
    path: PathBuf,
}

impl RunTempDir {
    /// Makes `joj-<pid>-XXXXXX` in the system's temporary directory (`$TMPDIR`, else `/tmp`).
    pub fn create() -> Result<Self, TempDirError> {
        Self::create_in(&std::env::temp_dir())
    }

    /// Makes `joj-<pid>-XXXXXX` in `parent`.
    pub fn create_in(parent: &Path) -> Result<Self, TempDirError> {
        let id = cleanup::open_entry();
        // From here on, drop releases the registry entry.
        let mut me = Self {
            id,
            path: PathBuf::new(),
        };
        me.path = cleanup::track(id, |res| {
            let dir = tempfile::Builder::new()
                .prefix(&names::temp_dir_prefix(std::process::id()))
                .rand_bytes(names::RANDOM_CHARS)
                .permissions(std::fs::Permissions::from_mode(0o700))
                .tempdir_in(parent)
                .map_err(|source| TempDirError::Create {
                    parent: parent.into(),
                    source,
                })?
                .keep();
            res.temp_dirs.push(dir.clone());
            Ok(dir)
        })
        .unwrap_or(Err(TempDirError::Interrupted))?;
        Ok(me)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the directory and the workload's files in it.
    pub fn close(self) -> Result<(), TempDirError> {
        // Drop runs next and finds the registry entry already taken.
        let problems = self.release();
        match problems.into_iter().next() {
            Some(p) => Err(p.into()),
            None => Ok(()),
        }
    }

    fn release(&self) -> Vec<CleanupProblem> {
        cleanup::release(self.id)
    }
}

impl Drop for RunTempDir {
    fn drop(&mut self) {
        for p in self.release() {
            eprintln!("joj-linux: warning: {p}");
        }
    }
}
