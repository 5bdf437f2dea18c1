//! An image header may state any body length and the file may be sparse: a header whose
//! geometry needs a few KiB but whose `body_bytes` is the whole 1 GiB file is refused from its
//! header, before the body is read or allocated. (Probe 2026-11-28: `joj device inspect
//! sparse1g.img`, 8 KB on disk, read 1 GB before its checksum failed; `sparse8g.img` aborted
//! allocating 8 GiB.)

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_device::image::{self, hash64};

const OFF_BODY_BYTES: usize = 8 + 4 + 4 + 32 + 8 * 3;
const OFF_HEADER_SUM: usize = OFF_BODY_BYTES + 16;
const HEADER_BYTES: usize = OFF_HEADER_SUM + 8;

#[test]
fn a_sparse_image_claiming_a_huge_body_is_refused_before_it_is_read() {
    let p = common::small_image_profile();
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.img");
    image::format(&good, &p, false).unwrap();
    let mut header = std::fs::read(&good).unwrap()[..HEADER_BYTES].to_vec();
    let file_bytes: u64 = 1 << 30;
    let body_bytes = file_bytes - (HEADER_BYTES + image::TRAILER.len()) as u64;
    header[OFF_BODY_BYTES..OFF_BODY_BYTES + 8].copy_from_slice(&body_bytes.to_le_bytes());
    let sum = hash64(&header[..OFF_HEADER_SUM]);
    header[OFF_HEADER_SUM..].copy_from_slice(&sum.to_le_bytes());
    let path = dir.path().join("sparse1g.img");
    let f = std::fs::File::create(&path).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &header, 0).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, image::TRAILER, file_bytes - 8).unwrap();
    drop(f);
    for e in [
        image::inspect(&path).expect_err("inspect refuses it"),
        image::open(&path, &p).expect_err("open refuses it"),
    ] {
        assert!(
            matches!(e, joj_device::ImageError::Malformed { .. }),
            "refused from the header, before the body's checksum is computed: {e:?}"
        );
        let text = e.to_string();
        assert!(
            text.contains(&format!("the header says the body is {body_bytes} bytes"))
                && text.contains("fix:"),
            "{text}"
        );
    }
    // With a profile of another geometry, that is what is named, still before the body is read.
    let mut other = common::small_image_profile();
    other.geometry.blocks_per_plane = 64;
    let e = image::open(&path, &other).expect_err("another geometry");
    assert!(
        matches!(e, joj_device::ImageError::GeometryMismatch { .. }),
        "{e:?}"
    );
}
