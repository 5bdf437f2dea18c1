//! SIGTERM to `joj trace` while its command runs (and keeps syncing, so it is often stopped by
//! the supervisor): joj kills the command, which works inside the scratch filesystem, then
//! removes the filesystem, loop device and tracefs instance, and exits with 143.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Run, SIGTERM, signal, wait_for_the_window};

#[test]
fn sigterm_of_joj_trace_kills_the_command_and_leaves_nothing() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let pid_file = out.path().join("command.pid");
    let script = format!(
        "echo $$ > {}; while true; do echo x >> f; sync; sleep 0.05; done",
        pid_file.display()
    );
    let mut run = Run(common::joj_command()
        .args(["trace", "--fs", "ext4", "--out"])
        .arg(out.path())
        .args(["--", "sh", "-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap());
    let pid = run.id();
    wait_for_the_window(pid);
    let t0 = Instant::now();
    while !pid_file.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let command: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    signal(pid, SIGTERM);
    let status = run.wait();
    assert_eq!(status.code(), Some(143), "{status:?}");
    common::assert_nothing_left_by(pid, Duration::from_secs(5), "after SIGTERM");
    // The command is gone (an exited task no longer has a working directory).
    assert!(
        std::fs::read_link(format!("/proc/{command}/cwd")).is_err(),
        "the command {command} still runs"
    );
}
