//! The sectors `ScratchFs::file_extents` reports hold the file's bytes: reading the raw
//! device there (O_DIRECT, past any cache) gives back exactly what was written — on ext4, xfs,
//! and btrfs, where FIEMAP's addresses go through the chunk map.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;

use joj_linux::{FsKind, ScratchFs};

const FILE_BYTES: usize = 300 * 1024;

fn pattern() -> Vec<u8> {
    (0..FILE_BYTES).map(|i| (i * 7 % 253) as u8).collect()
}

fn located_bytes_match(kind: FsKind) {
    if !common::machine_ready(&[kind]) {
        return;
    }
    let fs = ScratchFs::create(kind, common::small_options(kind)).unwrap();
    let path = fs.mount_path().join("data");
    std::fs::write(&path, pattern()).unwrap();
    fs.sync().unwrap();

    let located = fs.file_extents(&path).unwrap();
    assert!(located.skipped.is_empty(), "{:?}", located.skipped);
    assert!(!located.extents.is_empty());
    let raw = fiemap_in_file_order(&path);

    let mut dev = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&fs.main_device().path)
        .unwrap();
    let mut on_disk = Vec::new();
    // btrfs DUP would list two copies per extent; data is `single`, so one per file extent.
    assert_eq!(
        located.extents.len(),
        raw,
        "one device extent per file extent"
    );
    for e in &located.extents {
        assert_eq!(e.dev, fs.main_device().dev.to_string());
        let len = (e.sectors * 512) as usize;
        // O_DIRECT wants an aligned buffer: read into an over-allocated one at a 4 KiB boundary.
        let mut buf = vec![0u8; len + 4096];
        let off = buf.as_ptr().align_offset(4096);
        dev.seek(SeekFrom::Start(e.sector * 512)).unwrap();
        dev.read_exact(&mut buf[off..off + len]).unwrap();
        on_disk.extend_from_slice(&buf[off..off + len]);
    }
    drop(dev); // An open device would defer the loop detach at close.
    assert!(on_disk.len() >= FILE_BYTES);
    assert!(
        on_disk[..FILE_BYTES] == pattern()[..],
        "{kind}: the located sectors do not hold the file"
    );
    fs.close().unwrap();
}

fn fiemap_in_file_order(path: &std::path::Path) -> usize {
    let extents = joj_linux::fiemap_path(path).unwrap();
    assert!(
        extents
            .windows(2)
            .all(|w| w[0].logical_bytes < w[1].logical_bytes)
    );
    extents.len()
}

#[test]
fn ext4() {
    located_bytes_match(FsKind::Ext4);
}

#[test]
fn xfs() {
    located_bytes_match(FsKind::Xfs);
}

#[test]
fn btrfs() {
    located_bytes_match(FsKind::Btrfs);
}
