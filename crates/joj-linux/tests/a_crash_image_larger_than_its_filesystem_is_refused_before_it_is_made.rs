//! A crash state's image is made at the size a recorded log gives (`ScratchFs::from_image`):
//! a log saying 2^62 bytes used to fail in `ftruncate` with "File too large; fix: check free
//! space and permissions there". The size is now checked as an asked-for image's is, before
//! anything is made: refused naming what cannot hold it (the images live in a tmpfs: half this
//! machine's memory) and the largest that fits.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::{FsKind, ScratchError, ScratchFs, ScratchOptions};

/// `from_image` with `options` fails without filling an image; its error.
fn refused_unfilled(options: &ScratchOptions) -> ScratchError {
    let mut filled = false;
    let err = ScratchFs::from_image(FsKind::Ext4, options, |_| {
        filled = true;
        Ok(())
    })
    .unwrap_err();
    assert!(!filled, "the image was made");
    err
}

#[test]
fn a_crash_image_larger_than_its_filesystem_is_refused_before_it_is_made() {
    if !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let options = ScratchOptions {
        size_bytes: 1 << 62,
        ..Default::default()
    };
    let err = refused_unfilled(&options);
    assert!(
        matches!(err, ScratchError::TooLargeForMemory { size_bytes, .. } if size_bytes == 1 << 62),
        "{err}"
    );
    assert!(
        err.to_string().contains("more than joj keeps in memory")
            && err.to_string().contains("fix:"),
        "{err}"
    );
    let ours = format!("ext4-{}-", std::process::id());
    let made = std::fs::read_dir("/run/joj")
        .map(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(&ours))
        })
        .unwrap_or(false);
    assert!(!made, "a scratch directory was made");
}

/// The image is made in the scratch directory's tmpfs even when the options name an image
/// directory on a disk: 100 GiB fits this machine's disk but not half its memory, and is
/// refused before anything is filled.
#[test]
fn a_crash_image_is_bounded_by_memory_whatever_the_image_directory() {
    if !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let disk = tempfile::tempdir_in("/var/tmp").unwrap();
    let options = ScratchOptions {
        size_bytes: 100 << 30,
        image_dir: Some(disk.path().to_path_buf()),
        ..Default::default()
    };
    let err = refused_unfilled(&options);
    assert!(
        matches!(err, ScratchError::TooLargeForMemory { .. }),
        "{err}"
    );
}
