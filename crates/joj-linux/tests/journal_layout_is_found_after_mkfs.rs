//! The journal of ext4 (inode 8), ext4 with an external journal (the whole second device) and
//! xfs (the internal log) is located on the device after mkfs; btrfs has none.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::{FsKind, ScratchFs};

fn device_sectors(dev: &joj_linux::ScratchDevice) -> u64 {
    joj_linux::fs::device_sectors(dev.dev).unwrap()
}

#[test]
fn ext4_journal_is_inode_8_inside_the_device() {
    if !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let fs = ScratchFs::create(FsKind::Ext4, common::small_options(FsKind::Ext4)).unwrap();
    let layout = fs.journal_layout().clone();
    let main = fs.main_device().clone();
    assert!(layout.journal_devs.is_empty());
    assert!(!layout.extents.is_empty());
    for e in &layout.extents {
        assert_eq!(e.dev, main.dev.to_string());
        assert!(
            e.sector.is_multiple_of(8),
            "journal starts on a 4 KiB block"
        );
        assert!(e.sector + e.sectors <= device_sectors(&main));
    }
    // mkfs.ext4 gives a 128 MiB filesystem a journal of 4 MiB or more, a whole number of blocks.
    assert!(layout.total_sectors() >= 4 << 11 && layout.total_sectors().is_multiple_of(8));
    fs.close().unwrap();
}

#[test]
fn ext4_external_journal_is_the_whole_second_device() {
    if !common::machine_ready(&[FsKind::Ext4ExtJournal]) {
        return;
    }
    let fs = ScratchFs::create(
        FsKind::Ext4ExtJournal,
        common::small_options(FsKind::Ext4ExtJournal),
    )
    .unwrap();
    let journal = fs.journal_device().unwrap().clone();
    let layout = fs.journal_layout();
    assert_eq!(layout.journal_devs, vec![journal.dev.to_string()]);
    assert_eq!(layout.extents.len(), 1);
    assert_eq!(layout.extents[0].sector, 0);
    assert_eq!(layout.extents[0].sectors, device_sectors(&journal));
    assert!(!layout.overlaps(&fs.main_device().dev.to_string(), 0, u64::MAX / 2));
    fs.close().unwrap();
}

#[test]
fn xfs_log_is_one_extent_inside_the_device() {
    if !common::machine_ready(&[FsKind::Xfs]) {
        return;
    }
    let fs = ScratchFs::create(FsKind::Xfs, common::small_options(FsKind::Xfs)).unwrap();
    let main = fs.main_device().clone();
    let layout = fs.journal_layout();
    assert_eq!(layout.extents.len(), 1);
    let log = &layout.extents[0];
    assert_eq!(log.dev, main.dev.to_string());
    assert!(log.sector > 0 && log.sectors >= 2048, "{log:?}");
    assert!(log.sector + log.sectors <= device_sectors(&main));
    fs.close().unwrap();
}

#[test]
fn btrfs_has_no_journal_area() {
    if !common::machine_ready(&[FsKind::Btrfs]) {
        return;
    }
    let fs = ScratchFs::create(FsKind::Btrfs, common::small_options(FsKind::Btrfs)).unwrap();
    assert!(fs.journal_layout().is_empty());
    fs.close().unwrap();
}
