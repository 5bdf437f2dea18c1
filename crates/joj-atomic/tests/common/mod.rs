//! Shared by the joj-atomic tests: the small device they run on.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
#![allow(dead_code)]

pub mod bank;
pub mod kill;

use joj_atomic::{FlashFs, FsOptions, XDevice, new_device};
use joj_device::Emmc;
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

/// `JOJ_SEED`, the seed a test starts from (a failure prints the one to rerun), else `default`.
pub fn seed(default: u64) -> u64 {
    env_u64("JOJ_SEED", default)
}

/// `JOJ_CUTS`, the power cuts (or trials) a crash test makes, else `default`.
pub fn cuts(default: u64) -> u64 {
    env_u64("JOJ_CUTS", default)
}

/// The number in environment variable `name`, else `default`.
fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Power goes `after_ns` after `fs`'s device's last command (`seed` picks what tears); the device
/// recovers, passes its invariants, and the file layer mounts again.
pub fn cut_and_remount(
    fs: FlashFs<XDevice>,
    after_ns: u64,
    seed: u64,
    p: &Profile,
) -> Result<FlashFs<XDevice>, String> {
    let cut = fs.into_device().power_loss(after_ns, seed);
    let (dev, _) = Emmc::recover(cut, p).map_err(|e| format!("device recovery: {e}"))?;
    dev.ftl().check_invariants();
    FlashFs::mount(dev).map_err(|e| format!("mount: {e}"))
}
