//! Shared by the kernel-level tests: prerequisite gating, a small traced run, leak checks.
//!
//! The tests need root, loop devices, tracefs and the filesystem tools. When something is
//! missing they fail, naming it, unless the developer opted out with `JOJ_SKIP_KERNEL_TESTS=1`
//! (`joj_linux::testgate`).

#![allow(dead_code)]

use joj_experiment::{FsChoice, RunOptions, RunResult, Workload};
use joj_linux::FsKind;
use joj_workload::DbWorkload;

/// Whether the machine can run a traced test on `kinds`; fails the test when it cannot, unless
/// kernel-level tests are skipped on purpose.
pub fn kernel_ready(kinds: &[FsKind]) -> bool {
    joj_linux::testgate::kernel_test(kinds)
}

/// A paper workload of 100 transactions with 8 KiB pages in `journal`, on a host directory.
pub fn paper_on_host(
    paper: joj_workload::paper::PaperWorkload,
    journal: joj_workload::JournalMode,
    start: joj_workload::StartState,
) -> RunResult {
    let w = DbWorkload {
        paper: Some(paper),
        transactions: 100,
        journal,
        page_size: 8192,
        start,
        ..Default::default()
    };
    joj_experiment::run(&Workload::Db(w), &RunOptions::default()).expect("run")
}

/// Run `w` traced on a fresh `kind` scratch filesystem of the kind's minimum size.
pub fn traced(kind: FsKind, w: DbWorkload) -> RunResult {
    let opts = RunOptions {
        fs: FsChoice::Scratch(kind),
        trace: true,
        image_size_bytes: kind.min_size_bytes().max(256 << 20),
        trace_buffer_kb: 8 * 1024,
        ..RunOptions::default()
    };
    joj_experiment::run(&Workload::Db(w), &opts).expect("traced run")
}

/// Every cross-check of the run holds.
pub fn assert_checks(r: &RunResult) {
    assert!(!r.checks.is_empty(), "a traced run has cross-checks");
    for c in &r.checks {
        assert!(c.ok, "check {} failed: {}", c.name, c.detail);
    }
}

/// Loop devices backed by files under /run/joj, mounts under /run/joj, tracefs instances
/// named joj-*, of this process (their names carry its pid; another joj running on the machine
/// is not this test's doing): what joj could leave behind.
pub fn leftovers() -> (Vec<String>, Vec<String>, Vec<String>) {
    let ours = |path: &str| {
        path.starts_with("/run/joj") && path.contains(&format!("-{}-", std::process::id()))
    };
    let mut loops = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/sys/block") {
        for e in entries.flatten() {
            let backing =
                std::fs::read_to_string(e.path().join("loop/backing_file")).unwrap_or_default();
            if ours(backing.trim()) {
                loops.push(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(str::to_string))
        .filter(|m| ours(m))
        .collect();
    let instances = std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&format!("joj-{}-", std::process::id())))
                .collect()
        })
        .unwrap_or_default();
    (loops, mounts, instances)
}
