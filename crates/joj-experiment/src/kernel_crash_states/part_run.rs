//! What a part's `run` may hold ([`check`]): the report of the whole run as far as the plan
//! decides it (docs/formats/crash-part.md). `joj crash merge` starts the merged document from
//! it and adds what the states show, so its check fields must be empty (a part that said
//! `violations` 2^64 − 1 had the merge's first violation wrap it to 0), and its counts must be
//! counts a run of at most [`MAX_TRANSACTIONS`] transactions and [`MAX_STATES`] states makes,
//! that add up as a run's do (a part that said 2^64 − 1 transactions, writes and torn states
//! was printed as such, its in-flight share wrapped to 1.8 × 10^21 %).

use super::MAX_STATES;
use super::error::PartFault;
use super::options::MAX_TRANSACTIONS;
use super::report::{Coverage, CrashFsReport};
use joj_linux::record::{MAX_LOG_BYTES, MAX_RECORDS};

/// The refusal of `run.field`, which is `value` and should be `want`.
fn fault(field: &str, value: impl std::fmt::Display, want: &str) -> PartFault {
    PartFault::Run {
        field: field.to_string(),
        value: value.to_string(),
        want: want.to_string(),
    }
}

/// Checks `run` (see the module header).
pub fn check(run: &CrashFsReport) -> Result<(), PartFault> {
    check_empty(run)?;
    if !(1..=MAX_TRANSACTIONS).contains(&run.transactions) {
        let want = format!("from 1 to {MAX_TRANSACTIONS}, as a run records");
        return Err(fault("transactions", run.transactions, &want));
    }
    let log = &run.log;
    let within = |field: &str, value: u64, max: u64, what: &str| {
        if value > max {
            Err(fault(field, value, &format!("at most {max}, {what}")))
        } else {
            Ok(())
        }
    };
    let records = "the records a saved log holds";
    within("log.writes", log.writes, MAX_RECORDS, records)?;
    within("log.flushes", log.flushes, MAX_RECORDS, records)?;
    within(
        "log.epochs",
        log.epochs,
        log.flushes + 1,
        "its flushes and one",
    )?;
    within(
        "log.write_bytes",
        log.write_bytes,
        MAX_LOG_BYTES,
        "the bytes a saved log holds",
    )?;
    let traced = "as much again as the log holds (tracefs's account of the same run)";
    if let Some(b) = log.traced_write_bytes {
        within("log.traced_write_bytes", b, 2 * MAX_LOG_BYTES, traced)?;
    }
    if let Some(f) = log.traced_flushes {
        within("log.traced_flushes", f, 2 * MAX_RECORDS, traced)?;
    }
    within(
        "states_explored",
        run.states_explored,
        MAX_STATES,
        "as --states takes",
    )?;
    let k = &run.states_by_kind;
    let kinds = [k.flush_boundary, k.after_flush, k.prefix, k.subset, k.torn];
    let sum = kinds.iter().try_fold(0u64, |a, n| a.checked_add(*n));
    if sum != Some(run.states_explored) {
        let sum = sum.map_or("more than 2^64".into(), |s| s.to_string());
        let want = format!("the states explored ({}), by kind", run.states_explored);
        return Err(fault("states_by_kind (added up)", sum, &want));
    }
    if let Some(c) = &run.coverage {
        check_coverage(c, run.states_explored, log.epochs)?;
    }
    Ok(())
}

/// The fields a check fills are empty in a part's `run`.
fn check_empty(run: &CrashFsReport) -> Result<(), PartFault> {
    let empty = "0 in a part: the merge counts it from the states";
    for (field, value) in [
        ("images_checked", run.images_checked),
        ("violations", run.violations),
        ("lost_acknowledged", run.lost_acknowledged),
        ("broken", run.broken),
        ("unmountable", run.unmountable),
        ("fsck_failures", run.fsck_failures),
        ("largest_loss", run.largest_loss),
        ("losing_acknowledged", run.losing_acknowledged),
    ] {
        if value != 0 {
            return Err(fault(field, value, empty));
        }
    }
    let none = "empty in a part: the merge makes it from the states";
    if run.mount.is_some() {
        return Err(fault("mount", "given", none));
    }
    if !run.found.is_empty() {
        return Err(fault("found", format!("{} states", run.found.len()), none));
    }
    if run.saved.is_some() || run.saved_log.is_some() {
        return Err(fault(
            "saved",
            "given",
            "null in a part: a merge saves nothing",
        ));
    }
    Ok(())
}

/// Each epoch's coverage is a share of states, the epochs are the log's, their states add up
/// to the run's, and the summary is the one they give.
fn check_coverage(c: &Coverage, states: u64, epochs: u64) -> Result<(), PartFault> {
    if c.per_epoch.len() as u64 != epochs {
        let want = format!("one entry for each of the log's {epochs} epochs");
        return Err(fault(
            "coverage.per_epoch",
            format!("{} entries", c.per_epoch.len()),
            &want,
        ));
    }
    let mut sum = 0u64;
    for (i, e) in c.per_epoch.iter().enumerate() {
        let field = |name: &str| format!("coverage.per_epoch[{i}].{name}");
        if !(0.0..=1.0).contains(&e.share) {
            return Err(fault(&field("share"), e.share, "a share, from 0 to 1"));
        }
        // Infinite where 2^writes passes what an f64 holds; never below the states checked.
        if e.fault_model_states.is_nan() || e.fault_model_states < e.states as f64 {
            let want = "at least its states checked: every state the fault model allows";
            return Err(fault(
                &field("fault_model_states"),
                e.fault_model_states,
                want,
            ));
        }
        if e.in_flight_states > e.states {
            let want = format!("at most its states ({}): subsets and torn writes", e.states);
            return Err(fault(&field("in_flight_states"), e.in_flight_states, &want));
        }
        sum = sum.saturating_add(e.states);
    }
    if sum != states {
        let want = format!("the states explored ({states})");
        return Err(fault("coverage.per_epoch[*].states (added up)", sum, &want));
    }
    let again = Coverage::of(c.per_epoch.clone());
    let summary = |c: &Coverage| {
        (
            c.epochs,
            c.epochs_with_writes,
            c.epochs_checked,
            c.epochs_with_in_flight_checked,
        )
    };
    if summary(&again) != summary(c)
        || again.share_median.to_bits() != c.share_median.to_bits()
        || again.share_max.to_bits() != c.share_max.to_bits()
    {
        let want = "what its per_epoch entries give".to_string();
        return Err(fault("coverage", "a summary of other epochs", &want));
    }
    Ok(())
}
