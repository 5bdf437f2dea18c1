//! A command that leaves a daemon or a background job behind: joj trace waits for every task
//! (their I/O is part of the run), and used to do so silently — a run of `sh -c 'sleep 15 &'`
//! sat for 15 s with nothing said, then reported the shell's 0.003 s. It now says once why it
//! waits; a command that leaves nothing running is not told anything.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

fn trace(script: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = common::joj_command()
        .current_dir(dir.path())
        .args(["trace", "--image-mib", "64", "--out"])
        .arg(dir.path().join("out"))
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

#[test]
fn a_background_job_left_running_is_said_once_and_a_plain_command_says_nothing() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let said = "waiting for the task(s) it left running";
    let left = trace("(sleep 0.5; echo done > f) & exit 0");
    assert_eq!(left.matches(said).count(), 1, "{left}");
    let plain = trace("echo x > f");
    assert!(!plain.contains(said), "{plain}");
}
