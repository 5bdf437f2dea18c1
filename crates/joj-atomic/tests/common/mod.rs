//! Shared by the joj-atomic tests: the small device they run on.

#![allow(dead_code)]

pub mod bank;
pub mod kill;

use joj_atomic::{FlashFs, FsOptions, XDevice, new_device};
use joj_device::Profile;

/// galaxy-s5 cut to `blocks_per_plane` blocks per plane, so recovery scans stay short.
pub fn profile(blocks_per_plane: u32) -> Profile {
    Profile::builtin("galaxy-s5")
        .unwrap()
        .with_blocks_per_plane(blocks_per_plane)
}

/// A fresh device of `profile` with an empty file layer: 64 MiB, 8 file slots.
pub fn formatted(profile: &Profile) -> FlashFs<XDevice> {
    FlashFs::format(
        new_device(profile).unwrap(),
        FsOptions {
            fs_bytes: 64 << 20,
            slots: 8,
        },
    )
    .unwrap()
}
