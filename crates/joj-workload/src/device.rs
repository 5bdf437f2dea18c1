//! A traced run, replayed through an emulated device: the `device` section of a run result.
//!
//! The run's captured trace (the file `run` wrote) is replayed back to back through a fresh
//! device of the profile, every traced device laid out as a partition of that one device (an
//! ext4 external journal and its filesystem share the eMMC, as a phone's partitions do).
//! `modeled_ops_per_sec` counts the run's transactions. What the model leaves out (CPU time of
//! SQLite, the filesystem and the block layer) is stated in `docs/device-model.md`.

use std::path::Path;

use joj_device::{AgingSpec, DeviceSummary, Profile, ReplayOptions, load_trace, replay_with};

use crate::WorkloadError;
use crate::compare::Comparison;
use crate::result::RunResult;

/// Replay the trace file of `result` through `profile` and return the `device` section, with
/// `modeled_ops_per_sec = result.transactions / modeled_s`.
pub fn replay_run(
    result: &RunResult,
    profile: &Profile,
    aging_validity: Option<u32>,
) -> Result<DeviceSummary, WorkloadError> {
    let Some(trace) = &result.trace_file else {
        return Err(WorkloadError::Config(
            "the run has no trace file to replay through a device: run it traced, on a scratch \
             filesystem (--trace with --fs ext4, xfs, ...), with an output directory"
                .into(),
        ));
    };
    let loaded = load_trace(Path::new(trace))?;
    let opts = ReplayOptions {
        partitions: true,
        aging: aging_validity.map(|v| AgingSpec {
            validity_percent: v,
            seed: result.config.seed,
        }),
        ..ReplayOptions::default()
    };
    let report = replay_with(&loaded.records, profile, &opts)?;
    Ok(DeviceSummary::from_replay(
        &report,
        Some(result.transactions.max(1)),
    ))
}

/// Set `result.device` from its replay through `profile` (optionally aged). A run that has its
/// device section already (`xftl`, which ran on the device) keeps it.
pub fn attach(
    result: &mut RunResult,
    profile: &Profile,
    aging_validity: Option<u32>,
) -> Result<(), WorkloadError> {
    if result.device.is_none() {
        result.device = Some(replay_run(result, profile, aging_validity)?);
    }
    Ok(())
}

/// Set the `device` section of every row of a comparison.
pub fn attach_all(
    comparison: &mut Comparison,
    profile: &Profile,
    aging_validity: Option<u32>,
) -> Result<(), WorkloadError> {
    for row in &mut comparison.rows {
        attach(&mut row.result, profile, aging_validity)?;
    }
    Ok(())
}
