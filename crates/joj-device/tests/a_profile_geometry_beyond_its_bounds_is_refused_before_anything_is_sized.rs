//! A profile's geometry is bounded field by field before the model sizes anything by it:
//! parallel units (`channels × dies_per_channel × planes_per_die`) at most 4096, pages per
//! block at most 4096, blocks at most 2^22. The refusal names the profile's field, at load.
//! (Probe 2026-11-28: 2^26 channels of one page each took 4.7 GB before "trace record 0:
//! geometry too small … 67108864 frontiers"; 2^28 aborted past 10 GB.)

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_device::config::{MAX_BLOCKS, MAX_PAGES_PER_BLOCK, MAX_UNITS};
use joj_device::{Profile, ProfileError};

/// A profile of one-page blocks of 512 B, every count 1 but those given.
fn geometry(channels: u32, pages_per_block: u32, blocks_per_plane: u32) -> String {
    let mut p = Profile::builtin("emmc5").unwrap();
    let g = &mut p.geometry;
    g.page_bytes = 512;
    g.pages_per_block = pages_per_block;
    g.blocks_per_plane = blocks_per_plane;
    g.planes_per_die = 1;
    g.dies_per_channel = 1;
    g.channels = channels;
    serde_json::to_string(&p).unwrap()
}

fn refused_field(json: &str) -> (&'static str, u64) {
    match Profile::from_json(json) {
        Err(ProfileError::OutOfRange { field, value, .. }) => (field, value),
        other => panic!("refused naming a field, not {other:?}"),
    }
}

#[test]
fn a_profile_geometry_beyond_its_bounds_is_refused_before_anything_is_sized() {
    let units = "geometry.channels × dies_per_channel × planes_per_die";
    assert_eq!(refused_field(&geometry(1 << 26, 1, 1)), (units, 1 << 26));
    assert_eq!(refused_field(&geometry(1 << 28, 1, 1)), (units, 1 << 28));
    assert_eq!(
        refused_field(&geometry(MAX_UNITS as u32 + 1, 1, 1)).0,
        units
    );
    assert_eq!(
        refused_field(&geometry(1, 1 << 28, 1)),
        ("geometry.pages_per_block", 1 << 28)
    );
    assert_eq!(
        refused_field(&geometry(1, MAX_PAGES_PER_BLOCK + 1, 8)).0,
        "geometry.pages_per_block"
    );
    assert_eq!(
        refused_field(&geometry(1, 1, 1 << 24)),
        ("geometry.blocks_per_plane × parallel units", 1 << 24)
    );
    let e = Profile::from_json(&geometry(1 << 26, 1, 1))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("geometry.channels") && e.contains("4096") && e.contains("fix:"),
        "{e}"
    );
    // Each bound is a device (with blocks enough for its spare ones: a write frontier per unit).
    for (c, ppb, bpp) in [
        (MAX_UNITS as u32, 4, 16),
        (1, MAX_PAGES_PER_BLOCK, 128),
        (1, 1, MAX_BLOCKS as u32),
    ] {
        let json = geometry(c, ppb, bpp);
        assert!(Profile::from_json(&json).is_ok(), "{c} × {ppb} × {bpp}");
    }
}
