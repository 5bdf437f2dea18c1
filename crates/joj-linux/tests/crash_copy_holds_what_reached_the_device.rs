//! A crash copy is the filesystem a power cut would leave: the image needs journal recovery
//! (it was copied while mounted), mounting it recovers every synced file intact, and both the
//! original and the copy leave nothing behind.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::{FsKind, ScratchFs};

fn needs_recovery(dev: &std::path::Path) -> bool {
    let out = std::process::Command::new("dumpe2fs")
        .arg("-h")
        .arg(dev)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let features = text
        .lines()
        .find(|l| l.starts_with("Filesystem features:"))
        .unwrap_or_else(|| panic!("no feature line in dumpe2fs output:\n{text}"));
    features.contains("needs_recovery")
}

#[test]
fn a_crash_copy_recovers_synced_files_and_leaves_nothing() {
    let kind = FsKind::Ext4;
    if !common::machine_ready(&[kind]) {
        return;
    }
    let opts = common::small_options(kind);
    let fs = ScratchFs::create(kind, opts.clone()).unwrap();
    let synced = fs.mount_path().join("synced");
    common::append_and_fsync(&synced, 300_000);
    let want = std::fs::read(&synced).unwrap();
    // Dirty, never synced: whether it reached the device is up to writeback.
    std::fs::write(fs.mount_path().join("dirty"), vec![7u8; 50_000]).unwrap();

    let mut copy = fs.crash_copy(&opts).unwrap();
    let copy_dir = copy.dir().to_path_buf();
    assert_ne!(copy.main_device().dev, fs.main_device().dev);
    assert!(
        needs_recovery(&copy.main_device().path),
        "the copy of a mounted ext4 must need journal recovery"
    );
    assert_eq!(
        copy.journal_layout().extents.len(),
        fs.journal_layout().extents.len()
    );
    assert!(
        copy.journal_layout()
            .extents
            .iter()
            .all(|e| e.dev == copy.main_device().dev.to_string())
    );
    copy.mount().unwrap();
    assert_eq!(
        std::fs::read(copy.mount_path().join("synced")).unwrap(),
        want
    );

    let dir = fs.dir().to_path_buf();
    fs.close().unwrap();
    copy.close().unwrap();
    for d in [dir, copy_dir] {
        assert!(
            common::loops_backed_under(&d).is_empty(),
            "loop device left"
        );
        assert!(common::mounts_under(&d).is_empty(), "mount left");
        assert!(!d.exists(), "{} left", d.display());
    }
}
