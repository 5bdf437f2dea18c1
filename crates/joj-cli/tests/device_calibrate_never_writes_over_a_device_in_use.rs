//! `joj device calibrate /dev/X --destroy-data` writes over the device's first `--size-mib`
//! MiB. `--destroy-data` says nothing on the device matters; it never covers a device that a
//! mounted filesystem (or md, device-mapper, swap) holds: writing under a live filesystem
//! corrupts it while the kernel still uses it. Such a device is refused before anything is
//! written, as mkfs refuses it; so is a device smaller than the region.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::loopdev::{LoopDevice, LoopOptions};
use joj_linux::{FsKind, ScratchFs, ScratchOptions};

/// `joj device calibrate DEV --destroy-data` over 64 MiB: whether it succeeded, its stderr,
/// and the folder its profile was to go in (as `dev.json`).
fn calibrate_64_mib(dev: &std::path::Path) -> (bool, String, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let p = out.path().join("dev.json");
    let (ok, _, err) = common::run_joj_text(&[
        "device",
        "calibrate",
        dev.to_str().unwrap(),
        "--destroy-data",
        "--size-mib",
        "64",
        "--samples",
        "10",
        "-o",
        p.to_str().unwrap(),
    ]);
    (ok, err, out)
}

#[test]
fn a_mounted_device_is_refused_and_left_as_it_was() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let fs = ScratchFs::create(FsKind::Ext4, ScratchOptions::default()).unwrap();
    std::fs::write(fs.mount_path().join("precious"), b"keep me").unwrap();
    let dev = fs.main_device().path.clone();
    let (ok, err, out) = calibrate_64_mib(&dev);
    assert!(!ok, "a mounted device was calibrated (written over)");
    assert!(err.contains("in use"), "{err}");
    assert!(err.contains("fix: unmount"), "{err}");
    assert!(!out.path().join("dev.json").exists());
    // The filesystem is untouched: it still reads its file after its cache is dropped.
    std::fs::write("/proc/sys/vm/drop_caches", "3").unwrap();
    assert_eq!(
        std::fs::read(fs.mount_path().join("precious")).unwrap(),
        b"keep me"
    );
    fs.close().unwrap();
}

#[test]
fn a_device_smaller_than_the_region_is_refused_before_it_is_written() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let image = dir.path().join("small.img");
    let f = std::fs::File::create(&image).unwrap();
    f.set_len(32 << 20).unwrap();
    drop(f);
    let lo = LoopDevice::attach(&image, &LoopOptions::default()).unwrap();
    let (ok, err, _) = calibrate_64_mib(lo.path());
    assert!(!ok);
    assert!(
        err.contains("32 MiB") && err.contains("--size-mib"),
        "{err}"
    );
    // Nothing was written: the image is still a hole.
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&image).unwrap().blocks(), 0, "{err}");
    lo.detach().unwrap();
}
