//! The memory an emulated device may take in this process, checked before the device is made.
//!
//! A device's per-page state is allocated when it is made (`NandMedium::for_profile`): a
//! profile at the page bound (`MAX_PHYSICAL_PAGES`) takes some 7 GB before its first request.
//! A failed allocation aborts the process, so every device of a profile is checked against the
//! budget first. The budget is the process's to set (`joj` sets it at start from what the
//! machine, `ulimit -v` and its cgroup leave, `joj_linux::memory::model_limit_bytes`); a library
//! user that sets none is not limited.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::Profile;
use crate::error::DeviceError;

static LIMIT_BYTES: AtomicU64 = AtomicU64::new(u64::MAX);

/// Devices made from now on may hold at most `bytes` of model state.
pub fn set_limit_bytes(bytes: u64) {
    LIMIT_BYTES.store(bytes, Ordering::Relaxed);
}

/// The budget set (`u64::MAX`: none).
pub fn limit_bytes() -> u64 {
    LIMIT_BYTES.load(Ordering::Relaxed)
}

/// Whether a model of `model_bytes` fits `limit_bytes` (the policy, pure).
pub fn fits(model_bytes: u64, limit_bytes: u64) -> bool {
    model_bytes <= limit_bytes
}

/// Refuse a device of `profile` whose state from the start exceeds the budget.
pub fn check(profile: &Profile) -> Result<(), DeviceError> {
    let model_bytes = profile.model_memory_bytes(0);
    let limit_bytes = limit_bytes();
    if fits(model_bytes, limit_bytes) {
        return Ok(());
    }
    Err(DeviceError::TooLargeForMemory {
        profile: profile.name.clone(),
        pages: profile.geometry.physical_pages(),
        model_bytes,
        limit_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_fits_up_to_the_limit_and_not_beyond() {
        assert!(fits(10, 10));
        assert!(!fits(11, 10));
        assert!(fits(u64::MAX, u64::MAX), "no budget: everything fits");
    }
}
