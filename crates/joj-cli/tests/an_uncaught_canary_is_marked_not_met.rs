//! A canary that got through the device power cuts (`joj crash device --canary` with no cut
//! failing) shows the check too weak for the run: the workflow's tables must never show it as
//! a pass. `workflow/scripts/paper_figures.py` makes X-FTL's "crash safety" row `not met`
//! (its figure begins `NOT MET`), and `workflow/scripts/crashtable.py` marks the canary's row
//! "NOT caught"; a caught canary beside sound runs that all pass is `met`.
//!
//! Needs the system Python (`/usr/bin/python3`): without it the test fails and names it.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use std::path::Path;
use std::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn python() -> &'static str {
    let p = "/usr/bin/python3";
    assert!(
        Path::new(p).is_file(),
        "{p} is missing: this test runs the workflow's scripts; install python3"
    );
    p
}

/// A `joj crash device` document with the fields the scripts read.
fn crash_doc(canary: bool, cuts: u64, failed: u64) -> serde_json::Value {
    serde_json::json!({
        "workload": "xftl-synthetic", "profile": "galaxy-s5", "transactions": 40,
        "cuts": cuts, "seed": 42, "canary": canary, "aging_validity": null,
        "gc_runs_per_run": 0, "commands_per_run": 1025, "cuts_after_gc": 0,
        "passed": cuts - failed, "failed": failed, "in_flight_durable": 0,
        "in_flight_lost": cuts, "torn_pages": 0,
        "paths": {"batch_commits": 10, "batch_commit_errors": 1, "journal_opens": 2},
        "failures": []
    })
}

/// The X-FTL crash-safety row of paper_figures.py over a results folder holding one sound
/// run and one canary run that `caught` or not; and crashtable.py's rows of the two.
fn judged(caught: bool) -> (serde_json::Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    std::fs::create_dir_all(results.join("xftl")).unwrap();
    std::fs::create_dir_all(results.join("tables")).unwrap();
    let sound = results.join("xftl/crash-synthetic-gs5.json");
    let canary = results.join("xftl/crash-synthetic-gs5-canary.json");
    std::fs::write(&sound, crash_doc(false, 20, 0).to_string()).unwrap();
    std::fs::write(
        &canary,
        crash_doc(true, 20, if caught { 3 } else { 0 }).to_string(),
    )
    .unwrap();
    let doc = results.join("tables/paper-figures.json");
    let made = Command::new(python())
        .arg(format!("{ROOT}/workflow/scripts/paper_figures.py"))
        .arg(format!("{ROOT}/docs/results/README.md"))
        .arg(&results)
        .arg("quick")
        .arg(&doc)
        .arg(results.join("tables/paper-figures.md"))
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let figures: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&doc).unwrap()).unwrap();
    let row = figures["paper_figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["paper"] == "X-FTL (SIGMOD'13)" && r["figure"] == "crash safety")
        .expect("X-FTL's crash-safety row")
        .clone();
    let table = Command::new(python())
        .arg(format!("{ROOT}/workflow/scripts/crashtable.py"))
        .arg(&sound)
        .arg(&canary)
        .output()
        .unwrap();
    assert!(
        table.status.success(),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );
    (row, String::from_utf8(table.stdout).unwrap())
}

#[test]
fn an_uncaught_canary_is_marked_not_met() {
    let (row, table) = judged(false);
    let this_run = row["this_run"].as_str().unwrap();
    assert!(
        this_run.starts_with("NOT MET") && this_run.contains("canary caught in 0 of 1 runs"),
        "a canary not caught is shown as: {this_run}"
    );
    assert_eq!(row["this_run_verdict"], "not met", "{row}");
    let canary_row = table.lines().find(|l| l.contains("canary")).unwrap();
    assert!(
        canary_row.contains("NOT caught") && canary_row.contains("not met"),
        "crashtable.py's canary row: {canary_row}"
    );
}

#[test]
fn a_caught_canary_beside_passing_sound_runs_is_met() {
    let (row, table) = judged(true);
    let this_run = row["this_run"].as_str().unwrap();
    assert!(
        !this_run.contains("NOT MET") && this_run.contains("canary caught in 1 of 1 runs"),
        "{this_run}"
    );
    assert_eq!(row["this_run_verdict"], "met", "{row}");
    let canary_row = table.lines().find(|l| l.contains("canary")).unwrap();
    assert!(
        canary_row.contains("(canary, caught)") && !canary_row.contains("not met"),
        "{canary_row}"
    );
}
