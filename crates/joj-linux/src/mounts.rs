//! Every mount that keeps one of joj's loop devices busy, wherever it is: the mounts of the
//! device itself (joj's own, and any a traced command made of the scratch filesystem — a bind
//! mount elsewhere) and whatever was mounted over or under their mount points (a command that
//! mounted a tmpfs inside, or on top of, the scratch filesystem). Detaching a loop device that
//! is still mounted only marks it for autoclear: it stays bound to its image until the last
//! mount goes, so these are unmounted first, deepest and most recently stacked first.

use std::path::{Path, PathBuf};

use std::time::Duration;

use crate::dev::DevNum;

/// Attempts at a plain unmount of a busy filesystem before falling back to a lazy one.
const UNMOUNT_ATTEMPTS: u32 = 20;
const UNMOUNT_RETRY_DELAY: Duration = Duration::from_millis(50);

/// A mount that could not be taken away.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot unmount {path}: {source}; fix: stop processes using it (`fuser -m {path}`), then `umount {path}`",
    path = .path.display()
)]
pub struct UnmountError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// A `mountinfo` field with its octal escapes (of space, tab, newline, backslash) undone.
pub(crate) fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut rest = field;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 4);
        match code.and_then(|c| u8::from_str_radix(c, 8).ok()) {
            Some(byte) => {
                out.push(char::from(byte));
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Syncs and unmounts `path`, retrying while busy, lazily as a last resort (with a warning).
pub(crate) fn unmount(path: &Path) -> Result<(), UnmountError> {
    use rustix::mount::{UnmountFlags, unmount};
    if let Ok(dir) = std::fs::File::open(path) {
        // Best effort: unmount syncs as well; this just gets the writeback done while we can
        // still report errors on the right object.
        let _ = rustix::fs::syncfs(&dir);
    }
    let failed = |e: rustix::io::Errno| UnmountError {
        path: path.into(),
        source: e.into(),
    };
    let mut last = None;
    for _ in 0..UNMOUNT_ATTEMPTS {
        match unmount(path, UnmountFlags::empty()) {
            Ok(()) => return Ok(()),
            // Not a mount point (any more): nothing of ours is mounted there.
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOENT) => return Ok(()),
            Err(e @ rustix::io::Errno::BUSY) => {
                last = Some(e);
                std::thread::sleep(UNMOUNT_RETRY_DELAY);
            }
            Err(e) => return Err(failed(e)),
        }
    }
    eprintln!(
        "joj-linux: warning: {} stayed busy ({}); detaching it lazily — the kernel unmounts it \
         and frees its loop device when the last user goes away",
        path.display(),
        last.map_or_else(String::new, |e| e.to_string()),
    );
    unmount(path, UnmountFlags::DETACH).map_err(failed)
}

/// The mount points strictly below `dir` (which an overlay of `dir` would not show), as
/// `mountinfo` lists them.
pub fn mounts_below(mountinfo: &str, dir: &Path) -> Vec<PathBuf> {
    let mut below: Vec<PathBuf> = parse(mountinfo)
        .into_iter()
        .map(|m| m.point)
        .filter(|p| p != dir && p.starts_with(dir))
        .collect();
    below.sort();
    below.dedup();
    below
}

/// One line of `/proc/self/mountinfo`: the mount point and the `major:minor` of what is
/// mounted.
struct Mounted {
    point: PathBuf,
    dev: String,
}

fn parse(mountinfo: &str) -> Vec<Mounted> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            let dev = f.nth(2)?.to_string();
            let point = PathBuf::from(unescape(f.nth(1)?));
            Some(Mounted { point, dev })
        })
        .collect()
}

/// The mounts to take away, in order, so that nothing mounts device `dev` (`major:minor`):
/// every mount of it, and every mount at or below one of its mount points, deepest first and,
/// at one mount point, the one stacked last first (`mountinfo` lists mounts in mount order).
pub(crate) fn holding(mountinfo: &str, dev: &str) -> Vec<PathBuf> {
    let all = parse(mountinfo);
    let roots: Vec<&Path> = all
        .iter()
        .filter(|m| m.dev == dev)
        .map(|m| m.point.as_path())
        .collect();
    let mut order: Vec<(usize, &Path)> = all
        .iter()
        .enumerate()
        .filter(|(_, m)| roots.iter().any(|r| m.point.starts_with(r)))
        .map(|(i, m)| (i, m.point.as_path()))
        .collect();
    order.sort_by(|(i, a), (j, b)| {
        let depth = |p: &Path| p.components().count();
        depth(b).cmp(&depth(a)).then(j.cmp(i))
    });
    order.into_iter().map(|(_, p)| p.to_path_buf()).collect()
}

/// Unmounts every mount that keeps `dev` busy ([`holding`]); the mount points taken away, in
/// the order they went. Stops at the first that cannot be unmounted.
pub(crate) fn unmount_holding(dev: DevNum) -> Result<Vec<PathBuf>, UnmountError> {
    let read = || {
        std::fs::read_to_string("/proc/self/mountinfo").map_err(|source| UnmountError {
            path: "/proc/self/mountinfo".into(),
            source,
        })
    };
    let dev = dev.to_string();
    let mut gone = Vec::new();
    // Each pass unmounts what it found; a mount that appeared meanwhile is found by the next.
    for _ in 0..4 {
        let points = holding(&read()?, &dev);
        if points.is_empty() {
            break;
        }
        for p in points {
            unmount(&p)?;
            gone.push(p);
        }
    }
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_below_a_directory_are_those_strictly_inside_it() {
        let info = "22 1 254:0 / / rw - ext4 /dev/vda rw\n\
                    30 22 0:5 / /home/u/app/data rw - tmpfs tmpfs rw\n\
                    31 22 0:6 / /home/u/application rw - tmpfs tmpfs rw\n\
                    32 22 0:7 / /home/u/app rw - tmpfs tmpfs rw\n";
        assert_eq!(
            mounts_below(info, Path::new("/home/u/app")),
            [PathBuf::from("/home/u/app/data")]
        );
        assert_eq!(
            mounts_below(info, Path::new("/home/u/other")),
            Vec::<PathBuf>::new()
        );
    }

    #[test]
    fn every_mount_holding_a_device_is_found_deepest_and_latest_first() {
        let text = "\
22 1 253:0 / / rw - ext4 /dev/vda rw
90 22 7:3 / /run/joj/ext4-12-aB3dE6/mnt rw - ext4 /dev/loop3 rw
91 90 0:50 / /run/joj/ext4-12-aB3dE6/mnt/joj/sub rw - tmpfs none rw
92 22 7:3 / /mnt/elsewhere rw - ext4 /dev/loop3 rw
93 92 0:51 / /mnt/elsewhere rw - tmpfs none rw
94 22 7:4 / /mnt/other rw - ext4 /dev/loop4 rw
95 22 0:52 / /mnt/elsewhere2 rw - tmpfs none rw
";
        assert_eq!(
            holding(text, "7:3"),
            vec![
                PathBuf::from("/run/joj/ext4-12-aB3dE6/mnt/joj/sub"),
                PathBuf::from("/run/joj/ext4-12-aB3dE6/mnt"),
                // A tmpfs stacked on the bind mount goes before it.
                PathBuf::from("/mnt/elsewhere"),
                PathBuf::from("/mnt/elsewhere"),
            ]
        );
        assert!(holding(text, "7:9").is_empty());
    }
}
