#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! `joj device run --data full` keeps the data of every page it writes in memory; a device
//! whose run would write more than joj keeps in memory (half of the machine's) is refused
//! before it runs, naming the fix. (Found by a probe of 2026-11-28: `--data full --precondition
//! 1%` on emmc5 aborted at a 6 GB cap after 13 s; the bound was only the device's size, up to
//! 2 TiB.)

mod common;

#[test]
fn a_device_run_beyond_memory_is_refused_before_it_runs() {
    // 64 GiB raw, preconditioned (1 % filled, then two random passes over the whole device):
    // more than half of any machine this suite runs on.
    let (ok, out, err) = common::run_joj_text(&[
        "device",
        "run",
        "--raw-gib",
        "64",
        "--data",
        "full",
        "--precondition",
        "1%",
        "--requests",
        "10",
    ]);
    assert!(!ok, "{out}");
    assert!(
        err.contains("more than joj keeps in memory") && err.contains("fix: --data oob"),
        "{err}"
    );
    assert!(out.is_empty(), "refused before the run: {out}");

    // The same device without its pages' data runs.
    let (ok, _, err) = common::run_joj_text(&[
        "device",
        "run",
        "--raw-gib",
        "1",
        "--data",
        "full",
        "--precondition",
        "1%",
        "--requests",
        "10",
    ]);
    assert!(ok, "{err}");
}
