//! A crash image whose database (or a file SQLite opens beside it) is a FIFO or a device node
//! is refused with an error naming it: a FIFO used to make the checker wait forever on its
//! first read, and a device node is a host device (the mount also opens none: `nodev`).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use joj_linux::FsKind;
use rustix_like::{mkfifo, mknod_char};

/// The two calls the test needs, through the shell's tools rather than a crate.
mod rustix_like {
    use std::path::Path;
    use std::process::Command;

    fn run(cmd: &mut Command) {
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn mkfifo(path: &Path) {
        run(Command::new("mkfifo").arg(path));
    }

    /// A character device node `major:minor` at `path`.
    pub fn mknod_char(path: &Path, major: u32, minor: u32) {
        run(Command::new("mknod")
            .arg(path)
            .arg("c")
            .arg(major.to_string())
            .arg(minor.to_string()));
    }
}

/// `joj crash fs --fs ext4 --journal MODE --from-log L` of an image made from `staging`, stopped
/// after 60 s if it hangs: refused, naming `said`, leaving nothing.
fn refused_in_time(staging: &Path, mode: &str, said: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let log = common::crafted_ext4_log(staging, dir.path());
    let mut child = common::joj_command()
        .args([
            "crash",
            "fs",
            "--fs",
            "ext4",
            "--journal",
            mode,
            "--states",
            "10",
            "--from-log",
        ])
        .arg(&log)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(60) {
            common::signal(pid, common::SIGINT);
            let _ = child.wait();
            panic!("-j {mode}: joj hung on the image's special file (stopped after 60 s)");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "-j {mode}: accepted: {err}");
    for s in said.iter().chain(&["fix:"]) {
        assert!(err.contains(s), "-j {mode}: no `{s}` in: {err}");
    }
    let left = common::held_by(pid);
    assert!(left.nothing(), "-j {mode}: the run left {left:?}");
}

#[test]
fn a_fifo_for_the_database_is_refused_without_waiting_on_it() {
    let Some(staging) = common::ext4_staging() else {
        return;
    };
    mkfifo(&staging.path().join("joj/crash.db"));
    for mode in ["wal", "waldio"] {
        refused_in_time(staging.path(), mode, &["joj/crash.db is a FIFO"]);
    }
}

#[test]
fn a_device_node_beside_the_database_is_refused() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let staging = tempfile::tempdir().unwrap();
    let joj = staging.path().join("joj");
    std::fs::create_dir(&joj).unwrap();
    std::fs::write(joj.join("crash.db"), b"").unwrap();
    // /dev/null's numbers: harmless even if it were opened.
    mknod_char(&joj.join("crash.db-wal"), 1, 3);
    refused_in_time(
        staging.path(),
        "wal",
        &["joj/crash.db-wal is a character device"],
    );
}
