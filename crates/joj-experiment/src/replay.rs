//! A traced run, replayed through an emulated device: the `device` section of a run result.
//!
//! The run's captured requests are replayed back to back through a fresh device of the
//! profile, every traced device laid out as a partition of that one device (an ext4 external
//! journal and its filesystem share the eMMC, as a phone's partitions do).
//! `modeled_ops_per_sec` counts the run's transactions. What the model leaves out (CPU time of
//! SQLite, the filesystem and the block layer) is stated in `docs/device-model.md`.

use joj_device::{AgingSpec, DeviceSummary, ReplayOptions, replay_with};
use joj_trace::TraceRecord;

use crate::error::ExperimentError;
use crate::stack::DevicePlan;

/// Replay `records` (a run of `transactions` transactions with seed `seed`, which also ages
/// the device) through `plan`'s device and return the `device` section, with
/// `modeled_ops_per_sec = transactions / modeled_s`.
pub fn replay_records(
    records: &[TraceRecord],
    transactions: u64,
    seed: u64,
    plan: &DevicePlan,
) -> Result<DeviceSummary, ExperimentError> {
    let opts = ReplayOptions {
        partitions: true,
        aging: plan.aging_validity.map(|v| AgingSpec {
            validity_percent: v,
            seed,
        }),
        ..ReplayOptions::default()
    };
    let report = replay_with(records, &plan.profile, &opts)?;
    let summary = DeviceSummary::from_replay(&report, Some(transactions.max(1)));
    Ok(match &plan.completion {
        Some(host) => summary.with_completion(host, report.completions()),
        None => summary,
    })
}
