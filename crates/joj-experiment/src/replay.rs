//! A traced run, replayed through an emulated device: the `device` section of a run result.
//!
//! The run's captured requests are replayed back to back through a fresh device of the
//! profile, every traced device laid out as a partition of that one device (an ext4 external
//! journal and its filesystem share the eMMC, as a phone's partitions do) — unless the plan
//! gives the external journal its own profile: then each device is its own emulated device,
//! timed as the host sees them (`joj_device::replay_devices`), and the result carries a
//! section per device besides the run's.
//! `modeled_ops_per_sec` counts the run's transactions. What the model leaves out (CPU time of
//! SQLite, the filesystem and the block layer) is stated in `docs/device-model.md`.

use joj_device::{
    AgingSpec, DeviceProfile, DeviceSummary, ReplayOptions, replay_devices, replay_with,
};
use joj_trace::TraceRecord;

use crate::error::ExperimentError;
use crate::result::DeviceSection;
use crate::stack::DevicePlan;

/// The `device` section of a replayed run, and with a journal profile each device's own.
pub type Replayed = (DeviceSummary, Option<Vec<DeviceSection>>);

/// Replay `records` (a run of `transactions` transactions with seed `seed`, which also ages
/// the device) through `plan`'s device and return the `device` section, with
/// `modeled_ops_per_sec = transactions / modeled_s`. `journal_devs` are the trace's external
/// journal devices (`major:minor`), which `plan.journal_device` applies to.
pub fn replay_records(
    records: &[TraceRecord],
    transactions: u64,
    seed: u64,
    plan: &DevicePlan,
    journal_devs: &[String],
) -> Result<Replayed, ExperimentError> {
    let opts = ReplayOptions {
        partitions: true,
        aging: plan.aging_validity.map(|v| AgingSpec {
            validity_percent: v,
            seed,
        }),
        ..ReplayOptions::default()
    };
    let txns = Some(transactions.max(1));
    if let Some(journal) = &plan.journal_device {
        return per_device(records, txns, plan, journal, journal_devs, opts);
    }
    if let Some(mib) = plan.emmc_journal_mib {
        let profile = crate::trace_replay::emmc_journal_profile(&plan.profile);
        let opts = ReplayOptions {
            partitions: false,
            ..opts
        };
        let (report, stats) = joj_device::replay_ejournal(records, &profile, &opts, mib)?;
        let mut summary = DeviceSummary::from_replay(&report, txns);
        summary.emmc_journal = Some(stats);
        return Ok(match &plan.completion {
            Some(host) => (summary.with_completion(host, report.completions()), None),
            None => (summary, None),
        });
    }
    let report = replay_with(records, &plan.profile, &opts)?;
    let summary = DeviceSummary::from_replay(&report, txns);
    Ok(match &plan.completion {
        Some(host) => (summary.with_completion(host, report.completions()), None),
        None => (summary, None),
    })
}

/// Each device of `records` through its own profile: `journal` for `journal_devs`, the plan's
/// for the others.
fn per_device(
    records: &[TraceRecord],
    txns: Option<u64>,
    plan: &DevicePlan,
    journal: &joj_device::Profile,
    journal_devs: &[String],
    opts: ReplayOptions,
) -> Result<Replayed, ExperimentError> {
    let mut devs: Vec<&str> = Vec::new();
    for r in records {
        if !devs.contains(&r.dev.as_str()) {
            devs.push(&r.dev);
        }
    }
    let assign: Vec<DeviceProfile> = devs
        .iter()
        .map(|d| DeviceProfile {
            dev: d.to_string(),
            profile: if journal_devs.iter().any(|j| j == d) {
                journal.clone()
            } else {
                plan.profile.clone()
            },
        })
        .collect();
    let opts = ReplayOptions {
        partitions: false,
        ..opts
    };
    // The two profiles were named apart on purpose; one name for both is two devices of a kind.
    let report = replay_devices(records, &assign, &opts, true)?;
    let sections = report
        .devices
        .iter()
        .map(|r| {
            let dev = r.dev.clone().unwrap_or_default();
            DeviceSection {
                role: if journal_devs.contains(&dev) {
                    "journal"
                } else {
                    "main"
                }
                .to_string(),
                dev,
                device: DeviceSummary::from_replay(r, txns),
            }
        })
        .collect();
    Ok((report.summary(txns), Some(sections)))
}
