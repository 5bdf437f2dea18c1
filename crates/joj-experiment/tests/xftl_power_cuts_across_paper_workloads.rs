//! Power cuts at random device commands while the X-FTL paper's workloads run on the xftl stack
//! (`joj crash`): after every cut the device recovers and passes its own check, `PRAGMA
//! integrity_check` passes, and the database equals the state after exactly the acknowledged
//! transactions (or one more, when one was under way). Batch commits fail at random so that
//! SQLite's journal path is cut too. The canary device, which acknowledges commits before they
//! are durable, must be caught. More cuts: `joj crash --cuts N` (docs/results/x-ftl.md, "Crash
//! safety").
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

#[path = "../../joj-workload/tests/paper_common/mod.rs"]
mod paper_common;

use joj_device::Profile;
use joj_experiment::device_power_cuts::{CrashOptions, CrashReport, run};
use joj_experiment::{ExperimentError, StackError};
use joj_workload::paper::{PaperWorkload, TpccMix, rlbench};
use paper_common::tpcc;

fn cuts(workload: PaperWorkload, profile: &str, transactions: u64, n: u64) -> CrashReport {
    let opts = CrashOptions::new(
        workload,
        Profile::builtin(profile).unwrap(),
        transactions,
        n,
    );
    let r = run(&opts, |_| {}).unwrap();
    eprintln!(
        "{} on {profile}: {} cuts among {} commands; passed {}, in flight durable {} / lost {}, \
         torn pages {}; paths {:?}",
        r.workload,
        r.cuts,
        r.commands_per_run,
        r.passed,
        r.in_flight_durable,
        r.in_flight_lost,
        r.torn_pages,
        r.paths
    );
    assert_eq!(
        r.failed, 0,
        "{} of {} cuts broke durability: {:#?}",
        r.failed, r.cuts, r.failures
    );
    assert_eq!(r.passed, n);
    assert!(
        r.in_flight_lost > 0,
        "no cut fell inside a transaction: {r:?}"
    );
    assert!(r.paths.batch_commits > 0, "the batch path never ran: {r:?}");
    assert!(
        r.paths.journal_opens > 0 && r.paths.batch_commit_errors > 0,
        "the journal path never ran: {r:?}"
    );
    r
}

#[test]
fn synthetic_survives_power_cuts_on_both_profiles() {
    let w = PaperWorkload::XftlSynthetic {
        rows: 5000,
        pages_per_txn: 5,
    };
    let r = cuts(w, "galaxy-s5", 40, 300);
    assert!(r.torn_pages > 0, "no delayed cut tore a program: {r:?}");
    cuts(w, "openssd", 30, 100);
}

#[test]
fn tpcc_write_intensive_survives_power_cuts() {
    cuts(tpcc(TpccMix::WriteIntensive), "galaxy-s5", 30, 100);
}

/// One whole pass of RL Benchmark per trial: creates, index builds, large transactions and the
/// drops are all cut.
#[test]
fn rl_bench_survives_power_cuts() {
    let w = PaperWorkload::RlBench { divisor: 25 };
    cuts(w, "galaxy-s5", rlbench::transactions_per_pass(25), 300);
}

/// On a device aged to 50 % GC validity the runs garbage-collect; half the cuts come right after
/// a command that ran GC, while its copies and erases are under way.
#[test]
fn cuts_on_an_aged_device_keep_acknowledged_commits() {
    let opts = CrashOptions {
        aging_validity: Some(50),
        ..CrashOptions::new(
            PaperWorkload::RlBench { divisor: 25 },
            Profile::builtin("galaxy-s5")
                .unwrap()
                .with_blocks_per_plane(64),
            rlbench::transactions_per_pass(25),
            40,
        )
    };
    let r = run(&opts, |_| {}).unwrap();
    eprintln!(
        "aged: {} GC runs per run, {} of {} cuts passed",
        r.gc_runs_per_run, r.passed, r.cuts
    );
    assert!(
        r.gc_runs_per_run > 0,
        "the aged device never collected: {r:?}"
    );
    assert!(
        r.cuts_after_gc > 0 && r.cuts_after_gc < r.cuts,
        "half the cuts aim right after GC: {r:?}"
    );
    assert_eq!(r.failed, 0, "{:#?}", r.failures);
}

#[test]
fn a_device_that_acknowledges_before_durable_is_caught() {
    let opts = CrashOptions {
        canary: true,
        ..CrashOptions::new(
            PaperWorkload::RlBench { divisor: 25 },
            Profile::builtin("galaxy-s5").unwrap(),
            rlbench::transactions_per_pass(25),
            100,
        )
    };
    let r = run(&opts, |_| {}).unwrap();
    eprintln!("canary caught by {} of {} cuts", r.failed, r.cuts);
    assert!(r.failed > 0, "100 cuts could not tell an early ack: {r:?}");
    assert!(r.verdict_ok());
    // What the canary breaks is durability, not integrity: each failure is an acknowledged
    // transaction missing from an otherwise consistent database.
    assert!(
        r.failures.iter().all(|t| t
            .failure
            .as_deref()
            .is_some_and(|f| f.contains("transactions acknowledged"))),
        "{:#?}",
        r.failures
    );
}

#[test]
fn no_cut_or_no_transaction_is_a_clear_error() {
    let opts = CrashOptions::new(
        paper_common::SYNTHETIC,
        Profile::builtin("galaxy-s5").unwrap(),
        0,
        10,
    );
    match run(&opts, |_| {}) {
        Err(ExperimentError::Stack(StackError::Zero { what })) => assert!(what.contains("-n")),
        other => panic!("expected a configuration error, got {other:?}"),
    }
    let no_cuts = CrashOptions {
        cuts: 0,
        transactions: 1,
        ..opts
    };
    match run(&no_cuts, |_| {}) {
        Err(ExperimentError::Stack(StackError::Zero { what: "--cuts" })) => {}
        other => panic!("expected a configuration error, got {other:?}"),
    }
}
