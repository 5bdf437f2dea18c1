//! Recording disks of a dying joj: `kill -9` while one of its threads waits in `fsync` on the
//! filesystem above its recording disk leaves that thread in uninterruptible sleep for a write
//! only the (killed) daemon thread could answer. The process stays a zombie leader with that
//! thread, `/dev/fuse` stays open, and nothing it held is a leftover yet. Aborting the FUSE
//! connection (fusectl's `abort`) fails the pending request; the thread exits, the process
//! dies, and the sweep that follows removes the rest.
//!
//! A joj is dying when SIGKILL is pending for it (its stuck thread cannot take it), or when its
//! leader is a zombie while other threads remain: joj's main thread ends only by ending the
//! process (a kill, or `exit`, which takes every thread with it). Both were seen: the leader
//! itself stuck in a direct read of the WAL with SIGKILL pending, and a zombie leader with a
//! thread stuck in `fsync`.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::error::LeftoverError;
use super::scan::parse_stat;
use crate::names;
use crate::scratch::RUN_DIR;

const FUSECTL: &str = "/sys/fs/fuse/connections";
/// How long to wait for a dying process to go once its connection is aborted.
const DEATH_WAIT: Duration = Duration::from_secs(10);
/// How long a joj must stay dying, with the same mount, before its disk is aborted: a joj
/// leaving normally passes through a zombie leader with threads for a moment only.
const STILL_DYING_AFTER: Duration = Duration::from_millis(200);

/// The recording disk of a joj that looked dying: its FUSE mount as `/proc/self/mountinfo`
/// writes it (the mount point field, escapes kept) and the minor device number that names its
/// connection in fusectl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DyingDisk {
    pub pid: u32,
    pub minor: u32,
    pub mount: String,
}

/// What [`abort_dying`] did: the disks it aborted, and what it could not do.
#[derive(Debug, Default)]
pub(super) struct Aborts {
    pub aborted: Vec<DyingDisk>,
    pub problems: Vec<LeftoverError>,
}

/// The recording-disk FUSE mounts of `/proc/self/mountinfo` text whose owners are dying (a
/// pure function of the text and `dying`).
pub(super) fn dying_mounts(mountinfo: &str, dying: impl Fn(u32) -> bool) -> Vec<DyingDisk> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let (dev, mount) = (fields.get(2)?, fields.get(4)?);
            // Only joj's: a FUSE mount directly in joj's run directory (anyone may mount FUSE
            // in a directory of their own, under any name).
            let fstype = fields.iter().skip_while(|f| **f != "-").nth(1)?;
            if !matches!(*fstype, "fuse" | "fuse.joj")
                || Path::new(mount).parent() != Some(Path::new(RUN_DIR))
            {
                return None;
            }
            let name = Path::new(mount).file_name()?.to_str()?;
            let pid = names::recording_dir_pid(name)?;
            let minor = dev.split_once(':')?.1.parse().ok()?;
            dying(pid).then(|| DyingDisk {
                pid,
                minor,
                mount: (*mount).to_string(),
            })
        })
        .collect()
}

/// Whether `disk`'s mount is in the mountinfo text with the same device number. A mount point
/// is never mounted again once gone (its name is random and its directory removed), so while
/// this holds the number still names `disk`'s connection and no other.
pub(super) fn still_mounted(mountinfo: &str, disk: &DyingDisk) -> bool {
    mountinfo.lines().any(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        fields.get(4) == Some(&disk.mount.as_str())
            && fields
                .get(2)
                .and_then(|dev| dev.split_once(':'))
                .is_some_and(|(_, minor)| minor.parse() == Ok(disk.minor))
    })
}

/// Aborts the FUSE connection of `disk` if it is still the one mounted at `disk.mount`.
/// Returns whether it was aborted (false: the mount is gone, nothing to abort).
///
/// The number in fusectl is a device number, which the kernel gives to the next mount as soon
/// as the old one goes: a number read from mountinfo a moment ago may name another joj's disk
/// by now. So the connection's `abort` file is opened first, and only then is the mount checked
/// to be there with that number: the open file then belongs to `disk`'s connection (a file of a
/// connection that went meanwhile aborts nothing), and writing it can reach no other.
pub fn abort(disk: &DyingDisk) -> Result<bool, LeftoverError> {
    // fusectl may not be mounted; if mounting fails, the open below says so.
    if std::fs::read_dir(FUSECTL).map_or(true, |mut d| d.next().is_none()) {
        let _ = rustix::mount::mount(
            "none",
            FUSECTL,
            "fusectl",
            rustix::mount::MountFlags::empty(),
            None,
        );
    }
    let path = format!("{FUSECTL}/{}/abort", disk.minor);
    let fix = |e: &dyn std::fmt::Display| {
        LeftoverError::Abort(format!(
            "cannot abort the recording disk of dying joj {} ({path}: {e}); fix: `mount -t \
             fusectl none {FUSECTL}` and `echo 1 > {path}`",
            disk.pid
        ))
    };
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(fix(&e)),
    };
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| fix(&e))?;
    if !still_mounted(&mountinfo, disk) {
        return Ok(false);
    }
    file.write_all(b"1").map_err(|e| fix(&e))?;
    Ok(true)
}

/// The disks of dying joj processes now.
fn dying_now() -> Vec<DyingDisk> {
    let Ok(mountinfo) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    dying_mounts(&mountinfo, |pid| {
        stat(pid).is_some_and(|s| s.state == 'Z' && s.threads > 1) || sigkill_pending(pid)
    })
}

fn stat(pid: u32) -> Option<super::scan::ProcStat> {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| parse_stat(&t))
}

/// Aborts the recording disks of joj processes dying now and still dying a moment later, and
/// waits for those processes to go.
pub(super) fn abort_dying() -> Aborts {
    let first = dying_now();
    if first.is_empty() {
        return Aborts::default();
    }
    std::thread::sleep(STILL_DYING_AFTER);
    let dying: Vec<DyingDisk> = dying_now()
        .into_iter()
        .filter(|d| first.contains(d))
        .collect();
    let mut aborts = Aborts::default();
    for disk in dying {
        match abort(&disk) {
            Ok(true) => aborts.aborted.push(disk),
            Ok(false) => {}
            Err(problem) => aborts.problems.push(problem),
        }
    }
    let t0 = Instant::now();
    while t0.elapsed() < DEATH_WAIT
        && aborts
            .aborted
            .iter()
            .any(|d| stat(d.pid).is_some_and(|s| s.threads > 1))
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    aborts
}

/// Whether SIGKILL is pending for the process (`ShdPnd` of `/proc/<pid>/status`).
fn sigkill_pending(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .is_ok_and(|t| shared_pending_has_sigkill(&t))
}

/// `ShdPnd:` is the shared pending set in hex, bit `n - 1` for signal `n` (SIGKILL is 9).
fn shared_pending_has_sigkill(status: &str) -> bool {
    status
        .lines()
        .find_map(|l| l.strip_prefix("ShdPnd:"))
        .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << 8) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_recording_disks_of_zombie_leaders_with_threads_are_dying() {
        let info = "45 27 0:40 / /run/joj/rec-3239-MxFWor rw - fuse joj-recording-disk rw\n\
                    46 27 0:41 / /run/joj/rec-3240-AbCdEf rw - fuse joj-recording-disk rw\n\
                    47 27 0:42 / /run/joj/rec-3241-AbCdEf rw - fuse joj-recording-disk rw\n\
                    48 27 7:3 / /run/joj/joj-ext4-3239-AbCdEf/mnt rw - ext4 /dev/loop3 rw\n\
                    49 27 0:43 / /home/u/rec-3239-AbCdEf rw - fuse.sshfs u@h: rw\n\
                    50 27 0:44 / /run/joj/rec-3239-QwErTy rw - tmpfs none rw\n\
                    51 27 0:45 / /home/u/rec-3239-ZxCvBn rw - fuse.joj joj-recording-disk rw\n";
        let disk = DyingDisk {
            pid: 3239,
            minor: 40,
            mount: "/run/joj/rec-3239-MxFWor".into(),
        };
        assert_eq!(dying_mounts(info, |pid| pid == 3239), vec![disk]);
    }

    #[test]
    fn a_disk_is_still_mounted_only_at_its_mount_point_with_its_number() {
        let disk = DyingDisk {
            pid: 3239,
            minor: 40,
            mount: "/run/joj/rec-3239-MxFWor".into(),
        };
        let line = |dev: &str, mount: &str| format!("45 27 {dev} / {mount} rw - fuse x rw\n");
        assert!(still_mounted(
            &line("0:40", "/run/joj/rec-3239-MxFWor"),
            &disk
        ));
        // The number went to another disk; the mount went; the number is another's.
        assert!(!still_mounted(
            &line("0:40", "/run/joj/rec-3300-QwErTy"),
            &disk
        ));
        assert!(!still_mounted("", &disk));
        assert!(!still_mounted(
            &line("0:41", "/run/joj/rec-3239-MxFWor"),
            &disk
        ));
    }

    #[test]
    fn a_pending_sigkill_is_read_from_the_shared_set() {
        assert!(shared_pending_has_sigkill(
            "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000100\n"
        ));
        assert!(!shared_pending_has_sigkill("ShdPnd:\t0000000000004000\n"));
        assert!(!shared_pending_has_sigkill("Name: joj\n"));
    }
}
