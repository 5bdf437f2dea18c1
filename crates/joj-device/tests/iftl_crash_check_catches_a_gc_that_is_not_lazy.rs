//! Canary: a GC that erases the old pages of open transactions (traditional, not lazy). The crash trial of
//! `iftl_power_cuts_keep_exactly_committed_txns.rs` must catch it, so we know it can.

#[path = "common/iftl.rs"]
mod common;
#[path = "common/iftl_crash.rs"]
mod crash;

use crash::{CutCounts, trial};
use joj_device::IftlCanary;

#[test]
fn the_crash_trial_catches_the_canary() {
    let mut counts = CutCounts::default();
    let (mut caught, mut panicked) = (Vec::new(), 0);
    for seed in 0..300u64 {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            trial(seed, IftlCanary::EagerGc, &mut counts)
        }));
        match r {
            Ok(Err(_)) => caught.push(seed),
            Ok(Ok(())) => {}
            Err(_) => panicked += 1,
        }
    }
    eprintln!(
        "the checker caught the canary in {} of 300 trials (seeds {:?}…); {panicked} trials \
         tripped an internal assertion instead",
        caught.len(),
        &caught[..caught.len().min(5)]
    );
    assert!(caught.len() >= 3, "the crash trial cannot tell the canary");
}
