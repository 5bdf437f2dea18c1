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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_shm_is_memory_and_proc_is_not() {
        assert!(is_memory(Path::new("/dev/shm")).expect("statfs /dev/shm"));
        assert!(is_memory(Path::new("/proc")).is_ok_and(|m| !m));
    }

    #[test]
    fn the_limit_is_some_memory() {
        let limit = limit_bytes().expect("sysinfo");
        assert!(limit > 64 << 20, "{limit}");
    }
}
