//! Where a scratch filesystem's images live when no image directory is asked for: a tmpfs of
//! joj's own, mounted on the scratch directory, so the loop devices are backed by memory
//! whatever the host's `/run` is. A loop device over a file on a disk's filesystem is not
//! memory-backed even with the file in the page cache: the loop driver turns a flush into an
//! `fsync` of its backing file, which writes and flushes the host disk (measured here: with
//! `/run` on the VM's ext4, 1,000 DELETE-mode commits took 0.91–1.04 s on a loop under `/run`
//! and 0.40–0.41 s on one under a tmpfs). Every "memory-backed" figure of joj rests on this.
//!
//! The tmpfs is `nodev,nosuid,noexec`, mode 0700, and sized to the images it is to hold
//! ([`ScratchFs`](crate::ScratchFs) gives the size; the images are sparse, so only what the
//! filesystem writes takes memory). It is unmounted after the loop devices are detached and the
//! images deleted ([`crate::cleanup`]); a killed run's is found by [`crate::leftovers`].

use std::path::Path;

/// `TMPFS_MAGIC` and `RAMFS_MAGIC` (`linux/magic.h`): what [`is_memory`] accepts.
const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// Room beyond the images: the mount point directory and rounding to pages.
const SLACK_BYTES: u64 = 1 << 20;

/// Mount a tmpfs able to hold `image_bytes` of images on `dir`.
pub(crate) fn mount_on(dir: &Path, image_bytes: u64) -> std::io::Result<()> {
    use rustix::mount::MountFlags;
    let data = std::ffi::CString::new(format!(
        "mode=0700,size={}",
        image_bytes.saturating_add(SLACK_BYTES)
    ))
    .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let flags = MountFlags::NODEV | MountFlags::NOSUID | MountFlags::NOEXEC;
    rustix::mount::mount("joj-scratch", dir, "tmpfs", flags, data.as_c_str())?;
    Ok(())
}

/// Whether the filesystem holding `path` keeps its files in memory only (tmpfs, ramfs).
pub fn is_memory(path: &Path) -> std::io::Result<bool> {
    let st = rustix::fs::statfs(path)?;
    #[allow(clippy::unnecessary_cast)] // f_type's width differs between architectures
    let magic = st.f_type as i64;
    Ok(magic == TMPFS_MAGIC || magic == RAMFS_MAGIC)
}

/// The most image bytes (or emulated device state) a run may keep in memory: half of this
/// machine's memory, as a tmpfs holds by default.
pub fn limit_bytes() -> std::io::Result<u64> {
    // SAFETY: sysinfo fills the struct it is given.
    let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::sysinfo(&mut info) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    #[allow(clippy::unnecessary_cast)] // field widths differ between architectures
    let total = (info.totalram as u64).saturating_mul(u64::from(info.mem_unit));
    Ok(total / 2)
}

/// The most memory an emulated device in this process may hold: [`limit_bytes`], and no more
/// than the process may still allocate — its address-space limit (`RLIMIT_AS`, `ulimit -v`)
/// less what it maps already, and its cgroup's `memory.max` less `memory.current`. A model
/// beyond either is refused before it is made, rather than aborted by a failed allocation
/// part-way (a profile at the page bound took 6.2 GB and died under a 4 GB `ulimit -v`).
pub fn model_limit_bytes() -> std::io::Result<u64> {
    let mut limit = limit_bytes()?;
    if let Some(room) = address_space_room() {
        limit = limit.min(room);
    }
    if let Some(room) = cgroup_room() {
        limit = limit.min(room);
    }
    Ok(limit)
}

/// `RLIMIT_AS` less this process's mapped size (`VmSize` of `/proc/self/status`), if limited.
fn address_space_room() -> Option<u64> {
    let lim = rustix::process::getrlimit(rustix::process::Resource::As).current?;
    let status = small_file("/proc/self/status")?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(lim.saturating_sub(kib.saturating_mul(1024)))
}

/// The cgroup (v2) of this process: `memory.max` less `memory.current`, if it has a limit.
fn cgroup_room() -> Option<u64> {
    let cgroup = small_file("/proc/self/cgroup")?;
    // cgroup v2: the one line "0::/path".
    let path = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    if path.contains("..") {
        return None;
    }
    let dir = format!("/sys/fs/cgroup{path}");
    let max: u64 = small_file(&format!("{dir}/memory.max"))?
        .trim()
        .parse()
        .ok()?;
    let current: u64 = small_file(&format!("{dir}/memory.current"))?
        .trim()
        .parse()
        .ok()?;
    Some(max.saturating_sub(current))
}

/// A small kernel-made text file (at most 64 KiB read), or `None`.
fn small_file(path: &str) -> Option<String> {
    let bytes =
        joj_trace::input::read_all(Path::new(path), 64 << 10, "a /proc or cgroup file").ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_shm_is_memory_and_proc_is_not() {
        assert!(is_memory(Path::new("/dev/shm")).expect("statfs /dev/shm"));
        assert!(is_memory(Path::new("/proc")).is_ok_and(|m| !m));
    }

    #[test]
    fn the_model_limit_is_at_most_the_machine_limit() {
        let model = model_limit_bytes().expect("limits");
        assert!(model <= limit_bytes().expect("sysinfo"), "{model}");
    }

    #[test]
    fn the_limit_is_some_memory() {
        let limit = limit_bytes().expect("sysinfo");
        assert!(limit > 64 << 20, "{limit}");
    }
}
