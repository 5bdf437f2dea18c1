//! ≥ 5,000 power cuts at instants when a NAND command or an NVM store starts or ends — inside
//! host writes, commits, aborts, lazy GC, and inside recovery itself — across interleaved
//! transactions: after each, the recovered device shows exactly the acknowledged commits (the
//! one under way all or nothing), none of any other transaction, and its invariants hold.
//! Every random choice comes from the trial's seed; a failure prints it.

#[path = "common/iftl.rs"]
mod common;
#[path = "common/iftl_crash.rs"]
mod crash;

use crash::{CutCounts, trial};
use joj_device::IftlCanary;

#[test]
fn five_thousand_cuts_show_exactly_the_committed_transactions() {
    // Trial seeds run from `JOJ_SEED` (default 0) up; a failure names its seed, and
    // `JOJ_SEED=<seed>` reruns it first. `JOJ_CUTS` raises the number of cuts.
    let first: u64 = std::env::var("JOJ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let want: u64 = std::env::var("JOJ_CUTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5_000);
    let mut counts = CutCounts::default();
    let mut seed = first;
    while counts.cuts < want {
        if let Err(e) = trial(seed, IftlCanary::None, &mut counts) {
            panic!("seed {seed} (rerun with JOJ_SEED={seed}): {e}");
        }
        seed += 1;
    }
    eprintln!("{} trials from seed {first}: {counts:?}", seed - first);
    assert!(counts.in_lazy_gc >= 100, "cuts inside lazy GC: {counts:?}");
    assert!(
        counts.in_recovery >= 100,
        "cuts inside recovery: {counts:?}"
    );
    assert!(
        counts.in_commit >= 10,
        "cuts inside a commit or plain write: {counts:?}"
    );
}
