//! The kernel parses every crash image it mounts, and a saved log's image may be crafted to
//! attack that parser. Before the first mount of a `--from-log` image, joj runs the
//! filesystem's own checker, read-only, on it (on a loop device, unmounted): a damaged image
//! is refused, naming the checker's complaint, and no state of it is mounted.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

/// Zeroes the root directory's inode (inode 2) of a 4 KiB-block ext4 image.
fn break_the_root_inode(image: &mut [u8]) {
    let u16_at = |at: usize| u16::from_le_bytes([image[at], image[at + 1]]) as usize;
    let u32_at = |at: usize| u32::from_le_bytes(image[at..at + 4].try_into().unwrap()) as usize;
    // The superblock at byte 1024: the inode size at 88; the group descriptors in block 1,
    // the first group's inode table (low 32 bits) at byte 8 of its descriptor.
    let inode_size = u16_at(1024 + 88);
    let inode_table = u32_at(4096 + 8);
    let root = inode_table * 4096 + inode_size;
    image[root..root + inode_size].fill(0);
}

#[test]
fn a_damaged_ext4_image_is_refused_before_it_is_mounted() {
    let Some(staging) = common::ext4_staging() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = common::crafted_ext4_log_edited(staging.path(), dir.path(), break_the_root_inode);
    let (out, left) = common::joj_leaving(&[
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--journal",
        "wal",
        "--from-log",
        log.to_str().unwrap(),
        "--states",
        "10",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("e2fsck, run read-only on the log's image before the kernel mounts")
            && err.contains("fix:"),
        "{err}"
    );
    assert!(!err.contains("state 0"), "a state was checked: {err}");
    assert!(left.nothing(), "the run left {left:?}");

    // The same log undamaged passes the check (and its states are checked).
    let clean = tempfile::tempdir().unwrap();
    let log = common::crafted_ext4_log(staging.path(), clean.path());
    let (out, left) = common::joj_leaving(&[
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--journal",
        "wal",
        "--from-log",
        log.to_str().unwrap(),
        "--states",
        "10",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("the log's image before any mount: e2fsck -f -n: clean"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(left.nothing(), "the run left {left:?}");
}
