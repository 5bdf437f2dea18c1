//! Every mount that keeps one of joj's loop devices busy, wherever it is: the mounts of the
//! device itself (joj's own, and any a traced command made of the scratch filesystem — a bind
//! mount elsewhere) and whatever was mounted over or under their mount points (a command that
//! mounted a tmpfs inside, or on top of, the scratch filesystem). Detaching a loop device that
//! is still mounted only marks it for autoclear: it stays bound to its image until the last
//! mount goes, so these are unmounted first, deepest and most recently stacked first.

use std::path::{Path, PathBuf};

use crate::cleanup::{self, CleanupProblem};
use crate::dev::DevNum;

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
            let point = PathBuf::from(crate::leftovers::unescape_mount_field(f.nth(1)?));
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
pub(crate) fn unmount_holding(dev: DevNum) -> Result<Vec<PathBuf>, CleanupProblem> {
    let read = || {
        std::fs::read_to_string("/proc/self/mountinfo").map_err(|source| CleanupProblem::Unmount {
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
            cleanup::unmount(&p)?;
            gone.push(p);
        }
    }
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use super::*;

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
