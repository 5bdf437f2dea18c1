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
    let mut counts = CutCounts::default();
    let mut seed = 0u64;
    while counts.cuts < 5_000 {
        if let Err(e) = trial(seed, IftlCanary::None, &mut counts) {
            panic!("seed {seed}: {e}");
        }
        seed += 1;
    }
    eprintln!("{seed} trials: {counts:?}");
    assert!(counts.in_lazy_gc >= 100, "cuts inside lazy GC: {counts:?}");
    assert!(
        counts.in_recovery >= 100,
        "cuts inside recovery: {counts:?}"
    );
    assert!(counts.in_commit >= 10, "cuts inside a commit: {counts:?}");
}
