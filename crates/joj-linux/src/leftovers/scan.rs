//! The sweep's look at the machine: what exists ([`seen`]) and which pids are live processes
//! ([`liveness`]). Reads only; the parsing is pure and unit-tested.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::decide::{Liveness, Seen, TempEntry};
use super::error::{LeftoverError, Scope};
use crate::mounts::unescape;
use crate::names;
use crate::prereq::TRACEFS_ROOT;
use crate::scratch::RUN_DIR;

/// What exists of what joj makes: everything in `scope`, listed before any liveness is asked.
pub(super) fn seen(scope: Scope) -> Result<Seen, LeftoverError> {
    let euid = rustix::process::geteuid().as_raw();
    let temp_root = std::env::temp_dir();
    let mut seen = Seen {
        run_dir: RUN_DIR.into(),
        instances_dir: Path::new(TRACEFS_ROOT).join("instances"),
        temp_dirs: temp_entries(&temp_root)?,
        temp_root,
        euid,
        other_pid_namespace: Some(names::own_pid_namespace())
            .filter(|&ns| ns != names::INITIAL_PID_NAMESPACE),
        ..Seen::default()
    };
    if scope == Scope::TempDirs {
        return Ok(seen);
    }
    if euid != 0 {
        return Err(LeftoverError::NeedsRoot { euid });
    }
    seen.trace_instances = dir_names(&seen.instances_dir)?;
    seen.scratch_dirs = dir_names(&seen.run_dir)?;
    let mountinfo = Path::new("/proc/self/mountinfo");
    seen.mounts = mount_points(&read(mountinfo)?);
    seen.loops = loops()?;
    Ok(seen)
}

fn read(path: &Path) -> Result<String, LeftoverError> {
    std::fs::read_to_string(path).map_err(|source| LeftoverError::Scan {
        path: path.into(),
        source,
    })
}

/// The entries of `dir` (none if `dir` does not exist).
fn entries(dir: &Path) -> Result<Vec<std::fs::DirEntry>, LeftoverError> {
    let scan_err = |source| LeftoverError::Scan {
        path: dir.into(),
        source,
    };
    match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(vec![]),
        r => r.map_err(scan_err)?.map(|e| e.map_err(scan_err)).collect(),
    }
}

/// The entries of `dir` that are directories (none if `dir` does not exist).
fn dirs_in(dir: &Path) -> Result<Vec<(String, std::fs::Metadata)>, LeftoverError> {
    Ok(entries(dir)?
        .into_iter()
        .filter_map(|entry| {
            // Not followed: a symbolic link to a directory is not a directory joj made.
            let meta = entry.metadata().ok()?;
            let name = entry.file_name().to_str()?.to_string();
            meta.is_dir().then_some((name, meta))
        })
        .collect())
}

/// The names of the directories in `dir` (none if `dir` does not exist), by the type the
/// directory listing gives: no `stat` of each, which on the mount point of a dead recording
/// disk fails (`ENOTCONN`) — and it must still be found.
fn dir_names(dir: &Path) -> Result<Vec<String>, LeftoverError> {
    Ok(entries(dir)?
        .into_iter()
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|entry| entry.file_name().to_str().map(str::to_string))
        .collect())
}

fn temp_entries(dir: &Path) -> Result<Vec<TempEntry>, LeftoverError> {
    Ok(dirs_in(dir)?
        .into_iter()
        .map(|(name, meta)| TempEntry {
            name,
            owner_uid: meta.uid(),
            mode: meta.mode() & 0o7777,
        })
        .collect())
}

/// Every bound loop device with its backing file (`/sys/block/loopN/loop/backing_file`).
fn loops() -> Result<Vec<(u32, PathBuf)>, LeftoverError> {
    let sys_block = Path::new("/sys/block");
    let scan_err = |source| LeftoverError::Scan {
        path: sys_block.into(),
        source,
    };
    let mut out = Vec::new();
    // The entries are symbolic links (to `/sys/devices/virtual/block/loopN`).
    for entry in std::fs::read_dir(sys_block).map_err(scan_err)? {
        let name = entry.map_err(scan_err)?.file_name();
        let index = name
            .to_str()
            .and_then(|n| n.strip_prefix("loop")?.parse().ok());
        let Some(index) = index else {
            continue;
        };
        if let Some(backing) = crate::loopdev::backing_file(index) {
            out.push((index, backing));
        }
    }
    Ok(out)
}

/// The mount points in a `/proc/<pid>/mountinfo` text (the fifth field, octal escapes of space,
/// tab, newline and backslash undone).
pub(super) fn mount_points(mountinfo: &str) -> Vec<PathBuf> {
    mountinfo
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|m| PathBuf::from(unescape(m)))
        .collect()
}

/// Whether `pid` is a live process (see [`super::decide`] for what "live" decides). This
/// process is live. A pid whose state cannot be read is taken as live: when in doubt, keep.
pub(super) fn liveness(pid: u32) -> Liveness {
    if pid == std::process::id() {
        return Liveness::Alive {
            command: "this process".into(),
        };
    }
    let unknown = || Liveness::Alive {
        command: "?".into(),
    };
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(text) => parse_stat(&text).map_or_else(unknown, ProcStat::liveness),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Liveness::Dead,
        // The process went away between open and read.
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Liveness::Dead,
        Err(_) => unknown(),
    }
}

/// The fields of `/proc/<pid>/stat` liveness needs.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ProcStat {
    pub command: String,
    pub state: char,
    pub threads: u64,
}

impl ProcStat {
    /// A zombie whose last thread has exited is dead; a zombie thread-group leader whose other
    /// threads still run is not.
    fn liveness(self) -> Liveness {
        if matches!(self.state, 'Z' | 'X' | 'x') && self.threads <= 1 {
            Liveness::Dead
        } else {
            Liveness::Alive {
                command: self.command,
            }
        }
    }
}

/// `pid (comm) state ppid ...`: `comm` may hold spaces and parentheses, so it ends at the last
/// `)`; `num_threads` is the 20th field.
pub(super) fn parse_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let command = text.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    // Fields after comm start at the 3rd (state); num_threads is the 20th.
    let threads = fields.get(20 - 3)?.parse().ok()?;
    Some(ProcStat {
        command,
        state,
        threads,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_the_fifth_field_unescaped() {
        let text = "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw\n\
                    90 36 7:3 / /run/joj/ext4-12-aB3dE6/mnt rw,relatime - ext4 /dev/loop3 rw\n\
                    91 36 7:4 / /run/joj/my\\040dir\\134x rw - ext4 /dev/loop4 rw\n";
        assert_eq!(
            mount_points(text),
            vec![
                PathBuf::from("/mnt/parent"),
                PathBuf::from("/run/joj/ext4-12-aB3dE6/mnt"),
                PathBuf::from("/run/joj/my dir\\x"),
            ]
        );
        assert_eq!(unescape("a\\9zz\\"), "a\\9zz\\");
    }

    #[test]
    fn stat_is_read_past_a_command_with_spaces_and_parentheses() {
        let live = "4242 (joj (a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 3 0 \
                    973320 0 0";
        assert_eq!(
            parse_stat(live),
            Some(ProcStat {
                command: "joj (a) b".into(),
                state: 'S',
                threads: 3
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn a_reaped_or_zombie_process_is_dead_and_a_running_one_live() {
        let zombie = "14326 (python3) Z 14266 14264 11846 0 -1 4227148 222 0 0 0 0 0 0 0 20 0 \
                      1 0 973320 0 0";
        assert_eq!(parse_stat(zombie).unwrap().liveness(), Liveness::Dead);
        let leader = zombie.replace(" 0 1 0 973320", " 0 4 0 973320");
        assert!(matches!(
            parse_stat(&leader).unwrap().liveness(),
            Liveness::Alive { .. }
        ));
        assert_eq!(
            liveness(std::process::id()),
            Liveness::Alive {
                command: "this process".into()
            }
        );
        // pid_max is at most 2^22: this pid is never a process.
        assert_eq!(liveness(4_194_304 + 1), Liveness::Dead);
    }
}
