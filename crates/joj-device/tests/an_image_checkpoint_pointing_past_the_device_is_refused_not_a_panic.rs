//! A device image's checkpoint is as its writer chose: a logical page pointing past the last
//! physical page (5000 on a device of 1024, or 0xFFFFFFFE) is a clear error naming the page, not
//! an index out of bounds in recovery. (Probe 2026-11-28: `joj device inspect --device
//! smalloob.json A_cp_past_end.img` panicked, exit 101.)

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_device::Profile;

use joj_device::image::{self, hash64};

// Header offsets of `docs/formats/device-image.md`: magic 8, version 4, flags 4, geometry
// 8 × 4, logical, checkpoint sequence and programmed pages 8 each, then the body's length.
const OFF_LOGICAL: usize = 8 + 4 + 4 + 32;
const OFF_BODY_SUM: usize = OFF_LOGICAL + 8 * 4;
const OFF_HEADER_SUM: usize = OFF_BODY_SUM + 8;
const HEADER_BYTES: usize = OFF_HEADER_SUM + 8;

/// A freshly formatted image of `p` whose checkpoint maps logical page 0 to `ppn`, with both
/// checksums made good again.
fn image_mapping_page_0_to(p: &Profile, ppn: u32, dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join(format!("cp_{ppn:x}.img"));
    image::format(&path, p, false).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let blocks = p.geometry.blocks() as usize;
    let programmed = u64::from_le_bytes(
        bytes[OFF_LOGICAL + 16..OFF_LOGICAL + 24]
            .try_into()
            .unwrap(),
    );
    assert_eq!(programmed, 0, "a fresh image has no page programmed");
    let entry = HEADER_BYTES + 8 * blocks;
    bytes[entry..entry + 4].copy_from_slice(&ppn.to_le_bytes());
    let body_end = bytes.len() - image::TRAILER.len();
    let body_sum = hash64(&bytes[HEADER_BYTES..body_end]);
    bytes[OFF_BODY_SUM..OFF_BODY_SUM + 8].copy_from_slice(&body_sum.to_le_bytes());
    let header_sum = hash64(&bytes[..OFF_HEADER_SUM]);
    bytes[OFF_HEADER_SUM..HEADER_BYTES].copy_from_slice(&header_sum.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    path
}

#[test]
fn an_image_checkpoint_pointing_past_the_device_is_refused_not_a_panic() {
    let p = common::small_image_profile();
    let dir = tempfile::tempdir().unwrap();
    let pages = p.geometry.physical_pages();
    for ppn in [5000, 0xFFFF_FFFE, pages as u32] {
        let path = image_mapping_page_0_to(&p, ppn, dir.path());
        assert!(image::inspect(&path).is_ok(), "the sections check out");
        let e = image::open(&path, &p).expect_err("a corrupt checkpoint is refused");
        let text = e.to_string();
        assert!(
            text.contains(&format!("physical page {ppn}"))
                && text.contains(&format!("beyond the device's {pages} pages"))
                && text.contains("fix:"),
            "{ppn}: {text}"
        );
    }
    // The last page of the device is a page of it, not corruption by its number.
    let path = image_mapping_page_0_to(&p, pages as u32 - 1, dir.path());
    if let Err(e) = image::open(&path, &p) {
        assert!(!e.to_string().contains("beyond the device"), "{e}");
    }
}
