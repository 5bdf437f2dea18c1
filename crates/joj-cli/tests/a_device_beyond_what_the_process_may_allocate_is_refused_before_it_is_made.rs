#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! A profile within every bound of its format (2^28 NAND pages of 512 B, the page bound) makes
//! a device whose state takes some 6.5 GB from the start. Under a 3 GB address-space limit
//! (`ulimit -v`, as a shared machine or a container sets one) joj aborted with "memory
//! allocation of 4294967296 bytes failed" and a backtrace (found by a probe of 2026-11-29);
//! now every command that makes a device refuses it first, with the limit and the fix.

mod common;

/// `emmc5` with 2^28 pages of 512 B and no cache.
fn page_bound_profile(dir: &std::path::Path) -> std::path::PathBuf {
    common::edited_profile(dir, "emmc5", "page-bound", |p| {
        p["name"] = "page-bound".into();
        p["geometry"]["page_bytes"] = 512.into();
        p["geometry"]["pages_per_block"] = 4096.into();
        p["geometry"]["blocks_per_plane"] = 8192.into();
        p["cache"]["capacity_bytes"] = 0.into();
    })
}

/// Refused with an error (exit 1), not aborted: the limit and the fix are named.
fn assert_refused(run: &common::Bounded) {
    assert_eq!(
        run.code,
        Some(1),
        "refused with an error, not aborted: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("ulimit -v") && run.stderr.contains("fix:"),
        "the limit and the fix are named: {}",
        run.stderr
    );
}

#[test]
fn device_run_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = page_bound_profile(dir.path());
    // 4 GiB of address space (`common::joj_bounded`): less than the 6.5 GB the model needs.
    let run = common::joj_bounded(&[
        "device",
        "run",
        "--requests",
        "10",
        "--device",
        p.to_str().unwrap(),
    ]);
    assert_refused(&run);
}

#[test]
fn replay_refuses_it_as_the_profiles_fault_not_the_traces() {
    let dir = tempfile::tempdir().unwrap();
    let p = page_bound_profile(dir.path());
    let trace = dir.path().join("one.txt");
    std::fs::write(&trace, "  8,0 1 1 0.0 1 Q WS 2048 + 8 [x]\n").unwrap();
    let run = common::joj_bounded(&[
        "replay",
        trace.to_str().unwrap(),
        "--device",
        p.to_str().unwrap(),
    ]);
    assert!(
        run.stderr.contains("making the emulated device") && !run.stderr.contains("trace record"),
        "{}",
        run.stderr
    );
    assert_refused(&run);
}
