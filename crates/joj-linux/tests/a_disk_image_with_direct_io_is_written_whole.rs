//! A scratch filesystem whose images are on a disk and reached with direct I/O
//! (`--image-dir DIR --loop-direct-io`) has every byte of its image files written before the
//! run: no hole and no unwritten extent of DIR's filesystem is left for a first write to
//! allocate, whose record DIR's journal would commit at the loop device's next flush
//! (docs/measurement.md, "Known limits"). mkfs's own bytes are kept: the filesystem mounts and
//! holds a file. Without direct I/O the images stay sparse.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::fiemap::fiemap_path;
use joj_linux::loopdev::LoopOptions;
use joj_linux::{FsKind, ScratchFs, ScratchOptions};

/// Bytes of the file at `path` that no written extent of its filesystem covers.
fn not_written(path: &std::path::Path) -> u64 {
    let size = std::fs::metadata(path).unwrap().len();
    let written: u64 = fiemap_path(path)
        .unwrap()
        .iter()
        .filter(|e| !e.is_unwritten())
        .map(|e| e.length_bytes)
        .sum();
    size.saturating_sub(written)
}

fn made(kind: FsKind, dir: &std::path::Path, direct_io: bool) -> ScratchFs {
    ScratchFs::create(
        kind,
        ScratchOptions {
            image_dir: Some(dir.to_path_buf()),
            loop_options: LoopOptions {
                direct_io,
                ..Default::default()
            },
            ..common::small_options(kind)
        },
    )
    .unwrap()
}

#[test]
fn a_direct_io_image_on_a_disk_has_no_hole_and_no_unwritten_extent() {
    if !common::machine_ready(&[FsKind::Ext4, FsKind::Ext4ExtJournal]) {
        return;
    }
    // /var/tmp is on the disk (a tmpfs would not do O_DIRECT the same way, nor journal extents).
    let dir = tempfile::Builder::new()
        .prefix("joj-written-")
        .tempdir_in("/var/tmp")
        .unwrap();
    for kind in [FsKind::Ext4, FsKind::Ext4ExtJournal] {
        let fs = made(kind, dir.path(), true);
        for d in fs.devices() {
            assert_eq!(
                not_written(&d.image),
                0,
                "{kind:?}: {} still has holes or unwritten extents",
                d.image.display()
            );
        }
        let file = fs.mount_path().join("kept");
        std::fs::write(&file, b"mkfs's bytes are intact").unwrap();
        fs.sync().unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"mkfs's bytes are intact");
        fs.close().unwrap();

        let sparse = made(kind, dir.path(), false);
        assert!(
            not_written(&sparse.main_device().image) > 0,
            "{kind:?}: without direct I/O the image was expected to stay sparse"
        );
        sparse.close().unwrap();
    }
}

/// `written::write_whole` on a file of known bytes with holes, an unwritten (fallocated) range
/// and a partial last block: afterwards every 4 KiB block is written and the content is byte
/// for byte what it was.
#[test]
fn writing_a_file_whole_changes_none_of_its_bytes() {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;
    const K: u64 = 4096;
    let dir = tempfile::Builder::new()
        .prefix("joj-written-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let path = dir.path().join("image");
    let f = std::fs::File::create(&path).unwrap();
    let size = 64 * K + 1000; // a partial last block
    f.set_len(size).unwrap();
    let data = |seed: u8, len: usize| (0..len).map(|i| seed ^ (i as u8)).collect::<Vec<u8>>();
    f.write_all_at(&data(0x11, 3 * K as usize), 0).unwrap(); // written, then a hole
    f.write_all_at(&data(0x22, 100), 10 * K + 7).unwrap(); // inside a block
    // SAFETY: fallocate on an open file; mode 0 | KEEP_SIZE allocates unwritten blocks.
    let rc = unsafe {
        libc::fallocate(
            f.as_raw_fd(),
            libc::FALLOC_FL_KEEP_SIZE,
            (20 * K) as i64,
            (8 * K) as i64,
        )
    };
    assert_eq!(rc, 0, "fallocate: {}", std::io::Error::last_os_error());
    f.write_all_at(&data(0x33, 1000), 64 * K).unwrap(); // the partial last block
    f.sync_all().unwrap();
    drop(f);
    let before = std::fs::read(&path).unwrap();
    assert!(not_written(&path) > 0, "the file was made with holes");

    let n = joj_linux::written::write_whole(&path).unwrap();
    assert!(n.is_some_and(|n| n > 0), "{n:?}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "a byte changed");
    assert_eq!(not_written(&path), 0, "holes or unwritten extents are left");
}

/// Images in a memory filesystem (no disk journal to pay, and no FIEMAP on a tmpfs) are left
/// sparse with direct I/O, as before: the scratch filesystem is made.
#[test]
fn a_direct_io_image_in_memory_stays_sparse_and_is_made() {
    if !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("joj-written-")
        .tempdir_in("/dev/shm")
        .unwrap();
    let fs = made(FsKind::Ext4, dir.path(), true);
    let size = std::fs::metadata(&fs.main_device().image).unwrap().len();
    use std::os::unix::fs::MetadataExt;
    let held = std::fs::metadata(&fs.main_device().image).unwrap().blocks() * 512;
    assert!(held < size, "the image in memory was written whole");
    fs.close().unwrap();
}
