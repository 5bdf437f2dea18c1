//! Asking for an image smaller than mkfs accepts fails up front, naming the minimum, and makes
//! nothing.

mod common;

use joj_linux::{FsKind, ScratchError, ScratchFs, ScratchOptions};

#[test]
fn xfs_below_300_mib_is_refused_before_anything_is_made() {
    if !common::machine_ready(&[FsKind::Xfs]) {
        return;
    }
    let options = ScratchOptions {
        size_bytes: 128 << 20,
        ..Default::default()
    };
    let err = ScratchFs::create(FsKind::Xfs, options).unwrap_err();
    assert!(
        matches!(err, ScratchError::TooSmall { min_bytes, .. } if min_bytes == 300 << 20),
        "{err}"
    );
    assert!(err.to_string().contains("fix:"));
    let ours = format!("xfs-{}-", std::process::id());
    let made = std::fs::read_dir("/run/joj")
        .map(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(&ours))
        })
        .unwrap_or(false);
    assert!(!made, "a scratch directory was made");
}
