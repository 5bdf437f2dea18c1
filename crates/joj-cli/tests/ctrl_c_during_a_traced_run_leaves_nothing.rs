//! Ctrl-C (SIGINT) in the middle of a traced run on a scratch filesystem: joj says it was
//! interrupted, exits with 130 and leaves no loop device, mount or tracefs instance behind.

mod common;

use std::time::Duration;

use common::{LONG_TRACED_BENCH, Run, SIGINT, signal, wait_for_the_window};

#[test]
fn ctrl_c_during_a_traced_run_leaves_nothing() {
    // The scratch-filesystem prerequisites; the test fails naming what is missing, unless
    // kernel-level tests are skipped on purpose (`JOJ_SKIP_KERNEL_TESTS=1`).
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let log = out.path().join("stderr.txt");
    let mut run = Run(common::joj_command()
        .args(LONG_TRACED_BENCH)
        .arg("--out")
        .arg(out.path())
        .current_dir(out.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap());
    let pid = run.id();
    wait_for_the_window(pid);
    signal(pid, SIGINT);
    let status = run.wait();
    assert_eq!(status.code(), Some(130), "{status:?}");
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.contains("joj: interrupted (SIGINT): the run stops here"),
        "{said}"
    );
    // The loop device is released by the kernel once its last opener is gone.
    common::assert_nothing_left_by(pid, Duration::from_secs(5), "after Ctrl-C");
}
