//! The pure half of the sweep: given what a scan of the machine saw ([`Seen`]) and whether each
//! pid is a live process, which of it a dead joj left behind ([`Decision`]).
//!
//! A thing is joj's only by its name ([`crate::names`]): the pid in it is the process that made
//! it. A thing is a leftover only if that pid is not a live process.
//!
//! **A live pid keeps its things, whatever the process is.** With `pid_max` as low as 32768 a
//! dead joj's pid is reused, and the process then holding it may be no joj at all. We still keep
//! its things, because telling a reuser from the owner is not reliable: the owner may be a test
//! binary or a renamed copy of joj (so the executable's name proves nothing), and tracefs
//! instances (and tmpfs on older kernels) have no creation time to compare with the process's
//! start. Keeping them wrongly only delays the sweep until that process exits; removing them
//! wrongly would unmount a live measurement. `joj cleanup` prints what it kept and the live
//! process that keeps it, so a person can judge.
//!
//! A zombie (exited, not yet reaped) is dead: its descriptors are closed and it runs no code.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::names;

/// What a scan of the machine saw, before any decision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// Where scratch directories are made ([`crate::scratch::RUN_DIR`]).
    pub run_dir: PathBuf,
    /// Names of the directories in `run_dir`.
    pub scratch_dirs: Vec<String>,
    /// Every mount point of the mount namespace.
    pub mounts: Vec<PathBuf>,
    /// Every bound loop device: its index and its backing file as sysfs names it.
    pub loops: Vec<(u32, PathBuf)>,
    /// tracefs's `instances` directory.
    pub instances_dir: PathBuf,
    /// Names of the tracefs instances.
    pub trace_instances: Vec<String>,
    /// The host's temporary directory (`$TMPDIR` or `/tmp`).
    pub temp_root: PathBuf,
    /// The directories in `temp_root`.
    pub temp_dirs: Vec<TempEntry>,
    /// This process's effective uid: only temporary directories it owns can be its runs'.
    pub euid: u32,
    /// This process's pid namespace when it is not the initial one: only tracefs instances
    /// made in it name a pid that means something here ([`names`]).
    pub other_pid_namespace: Option<u64>,
}

/// A directory in the host's temporary directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TempEntry {
    pub name: String,
    pub owner_uid: u32,
    /// Permission bits.
    pub mode: u32,
}

/// Whether a pid is a live process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    Dead,
    /// `command` is the process's name (`comm`), for the report of what was kept.
    Alive {
        command: String,
    },
}

/// One thing joj makes, in the order the sweep removes them: a tracefs instance holds no
/// device, but a mount holds its loop devices and a loop device its image.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resource {
    TraceInstance(PathBuf),
    Mount(PathBuf),
    /// `/dev/loop<index>`, serving `backing` (as sysfs names it).
    Loop {
        index: u32,
        backing: PathBuf,
    },
    /// A recording disk's FUSE mount (`<run_dir>/rec-<pid>-XXXXXX`): it serves the images of
    /// loop devices, so it goes after them. Its dead daemon answers nothing (`ENOTCONN`).
    RecordingMount(PathBuf),
    /// The tmpfs on a scratch directory that holds its images ([`crate::memory`]): unmounted
    /// after the loop devices on them are detached.
    ScratchMemory(PathBuf),
    /// A scratch directory: removed with the images and the mount point in it, nothing else.
    ScratchDir(PathBuf),
    /// A host temporary directory: removed with the workload files in it, nothing else.
    TempDir(PathBuf),
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resource::TraceInstance(p) => {
                let name = p.file_name().unwrap_or(p.as_os_str());
                write!(f, "tracefs instance {}", name.to_string_lossy())
            }
            Resource::Mount(p) => write!(f, "{} (mount)", p.display()),
            Resource::Loop { index, .. } => write!(f, "/dev/loop{index}"),
            Resource::RecordingMount(p) => write!(f, "{} (recording disk mount)", p.display()),
            Resource::ScratchMemory(p) => write!(f, "{} (tmpfs of its images)", p.display()),
            Resource::ScratchDir(p) => write!(f, "{} (images and directory)", p.display()),
            Resource::TempDir(p) => write!(f, "{} (temporary directory)", p.display()),
        }
    }
}

/// A thing of joj's and the pid in its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    pub pid: u32,
    pub resource: Resource,
}

/// The things of a live process, which the sweep leaves alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub pid: u32,
    /// The live process's name.
    pub command: String,
    pub resources: Vec<Resource>,
}

/// What to remove and what to keep.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    /// Things of dead processes, in removal order ([`Resource`]'s order; deeper mounts first).
    pub remove: Vec<Leftover>,
    /// Things of live processes, by pid.
    pub keep: Vec<Kept>,
}

/// Which of what `seen` holds is joj's, and of those which are a dead process's. `liveness` is
/// asked once per pid, after the scan: a process that starts after the scan with a reused pid
/// makes things the scan did not see.
pub fn decide(seen: &Seen, mut liveness: impl FnMut(u32) -> Liveness) -> Decision {
    let mut by_pid: BTreeMap<u32, Vec<Resource>> = BTreeMap::new();
    for (pid, resource) in ours(seen) {
        by_pid.entry(pid).or_default().push(resource);
    }
    let mut decision = Decision::default();
    for (pid, resources) in by_pid {
        match liveness(pid) {
            Liveness::Dead => decision.remove.extend(
                resources
                    .into_iter()
                    .map(|resource| Leftover { pid, resource }),
            ),
            Liveness::Alive { command } => decision.keep.push(Kept {
                pid,
                command,
                resources,
            }),
        }
    }
    decision
        .remove
        .sort_by(|a, b| removal_order(&a.resource, &b.resource));
    decision
}

/// [`Resource`]'s order, with a mount below another unmounted first.
pub(super) fn removal_order(a: &Resource, b: &Resource) -> std::cmp::Ordering {
    match (a, b) {
        (Resource::Mount(x), Resource::Mount(y)) => {
            let depth = |p: &Path| p.components().count();
            depth(y).cmp(&depth(x)).then_with(|| x.cmp(y))
        }
        _ => a.cmp(b),
    }
}

/// Every thing in `seen` whose name makes it joj's, with the pid in the name.
fn ours(seen: &Seen) -> Vec<(u32, Resource)> {
    let mut found = Vec::new();
    for name in &seen.trace_instances {
        if let Some(pid) = names::trace_instance_pid(
            name,
            seen.other_pid_namespace
                .unwrap_or(names::INITIAL_PID_NAMESPACE),
        ) {
            found.push((pid, Resource::TraceInstance(seen.instances_dir.join(name))));
        }
    }
    for mount in &seen.mounts {
        if let Some(pid) = scratch_pid_of(mount, &seen.run_dir) {
            let resource = if mount.parent() == Some(seen.run_dir.as_path()) {
                Resource::ScratchMemory(mount.clone())
            } else {
                Resource::Mount(mount.clone())
            };
            found.push((pid, resource));
        } else if let Some(pid) = recording_pid_of(mount, &seen.run_dir) {
            found.push((pid, Resource::RecordingMount(mount.clone())));
        }
    }
    for (index, backing) in &seen.loops {
        if let Some(pid) = image_owner(backing, &seen.run_dir) {
            let (index, backing) = (*index, backing.clone());
            found.push((pid, Resource::Loop { index, backing }));
        }
    }
    for name in &seen.scratch_dirs {
        if let Some(pid) = names::scratch_dir_pid(name).or_else(|| names::recording_dir_pid(name)) {
            found.push((pid, Resource::ScratchDir(seen.run_dir.join(name))));
        }
    }
    for entry in &seen.temp_dirs {
        // Owned by us and private, as joj makes them: a directory someone named by hand
        // in the shared temporary directory is not joj's, whatever its name.
        let private = entry.owner_uid == seen.euid && entry.mode & 0o077 == 0;
        if let Some(pid) = names::temp_dir_pid(&entry.name).filter(|_| private) {
            found.push((pid, Resource::TempDir(seen.temp_root.join(&entry.name))));
        }
    }
    found
}

/// The pid of the scratch directory `path` is in (or is), when it is one of `run_dir`'s.
fn scratch_pid_of(path: &Path, run_dir: &Path) -> Option<u32> {
    let first = path.strip_prefix(run_dir).ok()?.components().next()?;
    names::scratch_dir_pid(first.as_os_str().to_str()?)
}

/// The pid of the recording disk `path` is (only the directory itself is its mount).
fn recording_pid_of(path: &Path, run_dir: &Path) -> Option<u32> {
    let rest = path.strip_prefix(run_dir).ok()?;
    let mut parts = rest.components();
    let first = parts.next()?;
    if parts.next().is_some() {
        return None;
    }
    names::recording_dir_pid(first.as_os_str().to_str()?)
}

/// The pid of the process that made the image a loop device serves. Only an image directly
/// inside one of `run_dir`'s scratch directories or recording disks is joj's: a
/// `<kind>-<pid>-<role>-….img` whose pid is its directory's, or a crash copy's `<role>.img`
/// (not on a recording disk). An image of joj's name anywhere else (copied out to keep,
/// attached by hand) is not ours, whatever its name.
fn image_owner(backing: &Path, run_dir: &Path) -> Option<u32> {
    let shown = backing.to_str()?;
    let path = Path::new(shown.strip_suffix(" (deleted)").unwrap_or(shown));
    let name = path.file_name()?.to_str()?;
    let dir = path.parent()?;
    if dir.parent() != Some(run_dir) {
        return None;
    }
    if let Some(disk_pid) = recording_pid_of(dir, run_dir) {
        return names::image_pid(name).filter(|&pid| pid == disk_pid);
    }
    let dir_pid = scratch_pid_of(dir, run_dir)?;
    match names::image_pid(name) {
        Some(pid) => (pid == dir_pid).then_some(pid),
        None => names::is_crash_image(name).then_some(dir_pid),
    }
}

/// One line per pid, `what` then the pid then the things: `removed leftovers of dead joj 12:
/// tracefs instance joj-12-0, /dev/loop3`.
pub fn lines_by_pid(what: &str, found: &[Leftover]) -> Vec<String> {
    let mut by_pid: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for l in found {
        by_pid
            .entry(l.pid)
            .or_default()
            .push(l.resource.to_string());
    }
    by_pid
        .into_iter()
        .map(|(pid, things)| format!("{what} {pid}: {}", things.join(", ")))
        .collect()
}

#[cfg(test)]
mod tests;
