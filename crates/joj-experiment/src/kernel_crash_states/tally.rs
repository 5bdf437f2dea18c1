//! From checked states to the report's verdicts and counts: one function for an unsharded run
//! and for `joj crash merge` of shards (docs/formats/crash-part.md), so that both give the same
//! document. The states are taken in index order and nothing depends on which worker or shard
//! checked a state: distinct images are counted by their content hash over the whole run, and
//! the mount cost is modeled on one fresh model in index order.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::check::{Outcome, Violation, judge};
use super::jbd2::{Journal, Replay};
use super::mount::{MountCost, MountModel};
use super::planned::FoundState;
use super::report::{CrashFsReport, Found};
use crate::error::ExperimentError;

/// Up to this many violating states are listed in a report (all are saved with `--save-dir`).
pub const FOUND_LISTED: usize = 20;

/// How to rebuild a state: kept for the states that may be reported.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateDetail {
    pub state: FoundState,
    pub description: String,
}

impl StateDetail {
    /// Whether a state with `outcome` and these bounds needs its detail: it would violate full
    /// durability (a superset of every window's violations) or fails the filesystem's checker.
    pub fn needed(outcome: &Outcome, acknowledged: u64, begun: u64) -> bool {
        outcome.fsck.is_some() || judge(outcome, acknowledged, begun, 0).is_some()
    }
}

/// One checked state, as the tally takes it.
#[derive(Debug, Clone, Copy)]
pub struct Checked<'a> {
    pub index: usize,
    /// The image's content hash ([`super::check::content_hash`]).
    pub image: u64,
    pub outcome: &'a Outcome,
    pub acknowledged: u64,
    pub begun: u64,
    pub detail: Option<&'a StateDetail>,
}

/// Fills `report`'s check fields from `states` (in index order) and returns every violating
/// state (the report lists the first [`FOUND_LISTED`]). `journal`: the ext4 journal the mount
/// cost is modeled on, if the image has one.
pub fn tally<'a>(
    report: &mut CrashFsReport,
    journal: Option<&Journal>,
    states: impl IntoIterator<Item = Checked<'a>>,
) -> Result<Vec<Found>, ExperimentError> {
    let allowed_loss = report.judged_as.allowed_loss(report.window);
    let mut mount = match journal {
        Some(j) => Some((MountModel::new(j.clone())?, MountCost::default())),
        None => None,
    };
    // A replay's modeled cost, once per distinct replay (states share images).
    let mut costs: HashMap<Replay, u64> = HashMap::new();
    let mut images = HashSet::new();
    let mut found = Vec::new();
    let mut last = None;
    for s in states {
        assert!(
            last.is_none_or(|l| l < s.index),
            "states are tallied in index order"
        );
        last = Some(s.index);
        images.insert(s.image);
        let (acked, begun, outcome) = (s.acknowledged, s.begun, s.outcome);
        if let Some(k) = outcome.shown.most() {
            report.largest_loss = report.largest_loss.max(acked.saturating_sub(k));
        }
        report.losing_acknowledged += u64::from(matches!(
            judge(outcome, acked, begun, 0),
            Some(Violation::Lost { .. })
        ));
        if let (Some((model, cost)), Some(r)) = (&mut mount, &outcome.replay) {
            let ns = match costs.get(r) {
                Some(&ns) => ns,
                None => {
                    let ns = model.cost_ns(r)?;
                    costs.insert(r.clone(), ns);
                    ns
                }
            };
            cost.add(r, ns);
        }
        let violation = judge(outcome, acked, begun, allowed_loss);
        match &violation {
            Some(Violation::Lost { .. }) => report.lost_acknowledged += 1,
            Some(Violation::Broken(_)) | Some(Violation::FromTheFuture { .. }) => {
                report.broken += 1
            }
            Some(Violation::Unmountable(_)) => report.unmountable += 1,
            None => {}
        }
        report.violations += u64::from(violation.is_some());
        report.fsck_failures += u64::from(outcome.fsck.is_some());
        if violation.is_some() || outcome.fsck.is_some() {
            let detail = s.detail.ok_or_else(|| {
                ExperimentError::CrashStates(format!(
                    "state {} violates or fails the checker, and nothing says how to rebuild it",
                    s.index
                ))
            })?;
            found.push(Found {
                index: s.index,
                state: detail.state.clone(),
                acknowledged: acked,
                begun,
                violation,
                fsck: outcome.fsck.clone(),
                description: detail.description.clone(),
            });
        }
    }
    report.images_checked = images.len() as u64;
    report.mount = mount.map(|(_, cost)| cost);
    report.found = found.iter().take(FOUND_LISTED).cloned().collect();
    Ok(found)
}
