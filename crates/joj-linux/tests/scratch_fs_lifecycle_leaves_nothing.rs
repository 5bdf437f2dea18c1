//! Every filesystem kind is made, mounted with its mode, on images in memory (a tmpfs of its
//! own, whatever the host's `/run` is), usable, and leaves no loop device, mount, image or
//! directory behind after `close`.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::{FsKind, ScratchFs};

fn lifecycle(kind: FsKind) {
    if !common::machine_ready(&[kind]) {
        return;
    }
    let fs = ScratchFs::create(kind, common::small_options(kind)).unwrap();
    let dir = fs.dir().to_path_buf();
    assert!(dir.starts_with("/run/joj"), "{}", dir.display());
    assert_eq!(fs.kind(), kind);
    assert_eq!(
        common::fs_type_at(fs.mount_path()).as_deref(),
        Some(kind.fs_type())
    );
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let line = mountinfo
        .lines()
        .find(|l| l.split(' ').nth(4) == Some(fs.mount_path().to_str().unwrap()))
        .unwrap();
    let mode = match kind {
        FsKind::Ext4 | FsKind::Ext4ExtJournal => Some("data=ordered"),
        FsKind::Ext4Writeback => Some("data=writeback"),
        FsKind::Ext4DataJournal => Some("data=journal"),
        _ => None,
    };
    if let Some(mode) = mode {
        assert!(line.contains(mode), "{kind}: {line}");
    }
    // The kinds without a journal area have none in their layout; the others have one.
    let journaled = !matches!(kind, FsKind::Ext4NoJournal | FsKind::Btrfs);
    assert_eq!(!fs.journal_layout().is_empty(), journaled, "{kind}");
    if kind == FsKind::Ext4NoJournal {
        let dump = std::process::Command::new("dumpe2fs")
            .args(["-h", fs.devices()[0].path.to_str().unwrap()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&dump.stdout);
        let features = text
            .lines()
            .find(|l| l.starts_with("Filesystem features:"))
            .unwrap();
        assert!(!features.contains("has_journal"), "{features}");
    }
    let expected_devices = if kind.needs_journal_device() { 2 } else { 1 };
    assert_eq!(fs.devices().len(), expected_devices);
    assert_eq!(common::loops_backed_under(&dir).len(), expected_devices);
    for d in fs.devices() {
        assert_eq!(d.dev.major, 7, "loop devices have major 7");
        assert!(d.image.exists());
        assert!(
            joj_linux::memory::is_memory(&d.image).unwrap(),
            "{kind}: image {} is not in memory",
            d.image.display()
        );
    }

    common::append_and_fsync(&fs.mount_path().join("f"), 100_000);
    fs.close().unwrap();

    assert!(
        common::loops_backed_under(&dir).is_empty(),
        "{kind}: loop device left"
    );
    assert!(common::mounts_under(&dir).is_empty(), "{kind}: mount left");
    assert!(!dir.exists(), "{kind}: {} left", dir.display());
}

#[test]
fn ext4() {
    lifecycle(FsKind::Ext4);
}

#[test]
fn ext4_writeback() {
    lifecycle(FsKind::Ext4Writeback);
}

#[test]
fn ext4_datajournal() {
    lifecycle(FsKind::Ext4DataJournal);
}

#[test]
fn ext4_extjournal() {
    lifecycle(FsKind::Ext4ExtJournal);
}

#[test]
fn ext4_nojournal() {
    lifecycle(FsKind::Ext4NoJournal);
}

#[test]
fn xfs() {
    lifecycle(FsKind::Xfs);
}

#[test]
fn btrfs() {
    lifecycle(FsKind::Btrfs);
}
