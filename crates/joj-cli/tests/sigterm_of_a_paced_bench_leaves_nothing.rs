//! SIGTERM to `joj bench --device P` (paced, the default with a device): the pacer's own
//! tracefs instance, whose per-CPU files the workload thread holds open between its drains,
//! is removed with everything else, and joj exits with 143. The cleanup used to find that
//! instance busy for its 5 s of retries and leave it (`cannot remove tracefs instance …:
//! Device or resource busy`).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Run, SIGTERM, held_by, signal, wait_for_the_window};

#[test]
fn sigterm_of_a_paced_bench_leaves_nothing() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let mut run = Run(common::joj_command()
        .args([
            "bench",
            "--fs",
            "ext4",
            "--image-mib",
            "64",
            "--device",
            "emmc5",
            "-n",
            "1000000",
            "--out",
        ])
        .arg(out.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap());
    let pid = run.id();
    wait_for_the_window(pid);
    // The run's block trace and the pacer's stream: two instances.
    let t0 = Instant::now();
    while held_by(pid).instances.len() < 2 {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the pacer never started: {:?}",
            held_by(pid)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    signal(pid, SIGTERM);
    let status = run.wait();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut run.0.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(143), "{status:?}: {stderr}");
    assert!(!stderr.contains("cannot remove"), "{stderr}");
    common::assert_nothing_left_by(pid, Duration::from_secs(5), "after SIGTERM");
}
