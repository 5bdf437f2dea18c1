//! The sweep's removing half: takes a dead process's things away in [`Resource`]'s order —
//! tracefs instance, unmount, loop devices (with every mount that still holds one, wherever
//! it is: a traced command's bind mount of the scratch filesystem, a mount stacked on it),
//! recording disks' FUSE mounts, then images and directories — and says removed only what is
//! gone (a loop device something still holds is a problem, with what holds it) — and never
//! recursively where a mount could still be: a scratch directory loses only its images and its
//! (empty) mount point, a temporary directory only the workload's files.
//!
//! Another sweep (a second joj starting at the same time) may take a thing first: a thing found
//! gone counts as removed.

use std::path::Path;

use super::decide::{self, Leftover, Resource};
use super::dying::DyingDisk;
use super::error::LeftoverError;
use crate::cleanup::{self, CleanupProblem};
use crate::loopdev;
use crate::names;

/// What a sweep removed (and the recording disks of dying joj it aborted), and what it could
/// not.
#[derive(Debug, Default)]
pub struct Sweep {
    pub removed: Vec<Leftover>,
    pub aborted: Vec<DyingDisk>,
    pub problems: Vec<LeftoverError>,
}

impl Sweep {
    /// One line per dead process: `removed leftovers of dead joj 12345: tracefs instance
    /// joj-12345-0, /run/joj/ext4-12345-aB3dE6/mnt (mount), /dev/loop3, ...`.
    /// Before those, one line per aborted recording disk.
    pub fn lines(&self) -> Vec<String> {
        let aborted = self.aborted.iter().map(|d| {
            format!(
                "aborted the recording disk of dying joj {} (FUSE connection {} at {})",
                d.pid, d.minor, d.mount
            )
        });
        aborted
            .chain(decide::lines_by_pid(
                "removed leftovers of dead joj",
                &self.removed,
            ))
            .collect()
    }

    /// Whether the sweep found nothing to do.
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty() && self.aborted.is_empty() && self.problems.is_empty()
    }

    /// Adds what `other` did to this sweep.
    pub fn add(&mut self, other: Sweep) {
        self.removed.extend(other.removed);
        self.aborted.extend(other.aborted);
        self.problems.extend(other.problems);
    }
}

/// Removes `found`, in removal order whatever order it comes in, continuing past failures.
pub(super) fn remove_all(mut found: Vec<Leftover>) -> Sweep {
    found.sort_by(|a, b| decide::removal_order(&a.resource, &b.resource));
    let mut sweep = Sweep::default();
    for leftover in found {
        let (also, removed) = remove_one(&leftover.resource);
        // Mounts that held a loop device elsewhere (a traced command's) are gone even when the
        // device itself could not be freed: said either way.
        sweep.removed.extend(also.into_iter().map(|p| Leftover {
            pid: leftover.pid,
            resource: Resource::Mount(p),
        }));
        match removed {
            Ok(()) => sweep.removed.push(leftover),
            Err(problem) => sweep.problems.push(LeftoverError::Remove {
                pid: leftover.pid,
                problem,
            }),
        }
    }
    sweep
}

/// Removes one thing; also the mount points that had to go with it (the mounts that held a
/// loop device).
fn remove_one(resource: &Resource) -> (Vec<std::path::PathBuf>, Result<(), CleanupProblem>) {
    match resource {
        Resource::TraceInstance(path) => (Vec::new(), cleanup::remove_trace_instance(path)),
        Resource::Mount(path) | Resource::RecordingMount(path) | Resource::ScratchMemory(path) => {
            (Vec::new(), cleanup::unmount(path))
        }
        Resource::Loop { index, backing } => {
            let (also, detached) = loopdev::detach_stale(*index, backing);
            (also, detached.map_err(CleanupProblem::from))
        }
        Resource::ScratchDir(path) => (Vec::new(), remove_scratch_dir(path)),
        Resource::TempDir(path) => (Vec::new(), cleanup::remove_temp_dir(path)),
    }
}

/// Removes the images in a scratch directory (by their names), its mount point `mnt` and the
/// directory itself. Anything else in it — above all a filesystem still mounted on `mnt` —
/// makes the `rmdir` fail, and the directory stays, reported.
fn remove_scratch_dir(dir: &Path) -> Result<(), CleanupProblem> {
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CleanupProblem::Remove { path, source }
    };
    let gone = |r: std::io::Result<()>| match r {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        r => r,
    };
    let entries = match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        r => r.map_err(failed(dir))?,
    };
    for entry in entries {
        let entry = entry.map_err(failed(dir))?;
        let name = entry.file_name();
        let image = name
            .to_str()
            .is_some_and(|n| names::image_pid(n).is_some() || names::is_crash_image(n));
        if image && entry.file_type().map_err(failed(dir))?.is_file() {
            let path = entry.path();
            gone(std::fs::remove_file(&path)).map_err(failed(&path))?;
        }
    }
    let mnt = dir.join("mnt");
    gone(std::fs::remove_dir(&mnt)).map_err(failed(&mnt))?;
    gone(std::fs::remove_dir(dir)).map_err(failed(dir))
}
