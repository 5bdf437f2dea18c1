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

use std::path::Path;
use std::time::{Duration, Instant};

use super::scan::parse_stat;
use crate::names;

const FUSECTL: &str = "/sys/fs/fuse/connections";
/// How long to wait for a dying process to go once its connection is aborted.
const DEATH_WAIT: Duration = Duration::from_secs(10);

/// The minor device numbers of the recording-disk FUSE mounts of dying joj processes, from
/// `/proc/self/mountinfo` text, with their pids (a pure function of the text and `stat`).
pub(super) fn dying_mounts(mountinfo: &str, dying: impl Fn(u32) -> bool) -> Vec<(u32, u32)> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let (dev, mount) = (fields.get(2)?, fields.get(4)?);
            let name = Path::new(mount).file_name()?.to_str()?;
            let pid = names::recording_dir_pid(name)?;
            let minor = dev.split_once(':')?.1.parse().ok()?;
            dying(pid).then_some((pid, minor))
        })
        .collect()
}

/// Aborts the recording disks of dying joj processes and waits for those processes to go.
/// Returns what it could not do, for the sweep's problems.
pub(super) fn abort_dying() -> Vec<String> {
    let Ok(mountinfo) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let stat = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|t| parse_stat(&t))
    };
    let dying = dying_mounts(&mountinfo, |pid| {
        stat(pid).is_some_and(|s| s.state == 'Z' && s.threads > 1) || sigkill_pending(pid)
    });
    if dying.is_empty() {
        return Vec::new();
    }
    let mut problems = Vec::new();
    // fusectl may not be mounted; if mounting fails, the write below says so.
    if std::fs::read_dir(FUSECTL).map_or(true, |mut d| d.next().is_none()) {
        let _ = rustix::mount::mount(
            "none",
            FUSECTL,
            "fusectl",
            rustix::mount::MountFlags::empty(),
            None,
        );
    }
    for (pid, minor) in &dying {
        let abort = format!("{FUSECTL}/{minor}/abort");
        if let Err(e) = std::fs::write(&abort, "1") {
            problems.push(format!(
                "cannot abort the recording disk of dying joj {pid} ({abort}: {e}); fix: \
                 `mount -t fusectl none {FUSECTL}` and `echo 1 > {abort}`"
            ));
        }
    }
    let t0 = Instant::now();
    while t0.elapsed() < DEATH_WAIT
        && dying
            .iter()
            .any(|(pid, _)| stat(*pid).is_some_and(|s| s.threads > 1))
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    problems
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
                    48 27 7:3 / /run/joj/joj-ext4-3239-AbCdEf/mnt rw - ext4 /dev/loop3 rw\n";
        assert_eq!(dying_mounts(info, |pid| pid == 3239), vec![(3239, 40)]);
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
