//! `--cpus-awake` holds every CPU out of its idle states for the run and no longer
//! (docs/device-model.md, "CPUs held awake"): while `joj bench --cpus-awake` or `joj device
//! calibrate --cpus-awake` runs, the CPU latency the kernel enforces (`/dev/cpu_dma_latency`,
//! the smallest request anyone holds) is 0 µs; without the option, and once joj has exited, it
//! is not; the result says which. (One test function: a second one running beside it would see
//! the other's request.)
//!
//! Needs root and a scratch ext4 (it watches a real run); a kernel without PM QoS fails it,
//! naming the device.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::cpu_latency::current_limit_us;
use std::time::Duration;

/// Run joj with `args` and read the enforced CPU latency every 2 ms while it runs: (whether it
/// was ever 0, the JSON document it printed).
fn watch(args: &[&str]) -> (bool, serde_json::Value) {
    let mut child = common::spawn_joj_piped(args);
    let mut zero = false;
    while child.try_wait().unwrap().is_none() {
        zero |= current_limit_us().unwrap() == 0;
        std::thread::sleep(Duration::from_millis(2));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (zero, serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn the_request_is_held_while_the_run_lasts_and_dropped_after() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    assert_ne!(
        current_limit_us().unwrap(),
        0,
        "something on this machine already holds the CPUs awake: this test cannot tell joj's \
         request from it"
    );
    let bench = [
        "bench", "--fs", "ext4", "-j", "delete", "-n", "400", "--json",
    ];
    let (zero, doc) = watch(&bench);
    assert!(!zero, "without --cpus-awake the CPUs were held awake");
    assert_eq!(doc["config"]["cpus_awake"], false, "{}", doc["config"]);

    let (zero, doc) = watch(&[&bench[..], &["--cpus-awake"]].concat());
    assert!(zero, "bench --cpus-awake never held the CPU latency at 0");
    assert_eq!(doc["config"]["cpus_awake"], true, "{}", doc["config"]);
    assert_ne!(
        current_limit_us().unwrap(),
        0,
        "the request outlived the joj that made it"
    );

    // A calibration of a directory on this machine's disk, small and short.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let profile = dir.path().join("p.json");
    let (zero, doc) = watch(&[
        "device",
        "calibrate",
        dir.path().to_str().unwrap(),
        "--size-mib",
        "64",
        "--samples",
        "10",
        "--cpus-awake",
        "--json",
        "-o",
        profile.to_str().unwrap(),
    ]);
    assert!(
        zero,
        "device calibrate --cpus-awake never held the CPU latency at 0"
    );
    assert_eq!(doc["measured"]["cpus_awake"], true, "{}", doc["measured"]);
    assert_ne!(
        current_limit_us().unwrap(),
        0,
        "the calibration's request outlived it"
    );
}
