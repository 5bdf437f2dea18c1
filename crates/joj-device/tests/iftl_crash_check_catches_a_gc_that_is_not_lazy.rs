//! Canary: a GC that erases the old pages of open transactions (traditional, not lazy). The crash trial of
//! `iftl_power_cuts_keep_exactly_committed_txns.rs` must catch it, so we know it can.

#[path = "common/iftl.rs"]
mod common;
#[path = "common/iftl_crash.rs"]
mod crash;

use joj_device::IftlCanary;

#[test]
fn the_crash_trial_catches_the_canary() {
    crash::the_trial_catches(IftlCanary::EagerGc);
}
