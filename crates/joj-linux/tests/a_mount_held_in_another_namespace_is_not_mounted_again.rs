//! A copy of the scratch filesystem's mount in another mount namespace — a process that ran
//! `unshare -m` (a container, a sandbox) while the filesystem was mounted — keeps the
//! filesystem alive after joj unmounts it here, and a mount of the device would then show that
//! filesystem, not what was written to the image since: crash checks judged stale states so
//! while another engineer's sandboxed tests ran on the same machine. `unmount` waits for the
//! copy to go, and refuses, naming the cause, while it stays.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::{FsKind, ScratchError, ScratchFs};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `sleep SECONDS` in a mount namespace of its own, copied from this one (private propagation:
/// an unmount here does not reach it), once that namespace holds `mount`.
fn holder(mount: &std::path::Path, seconds: &str) -> Child {
    let mut child = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sleep", seconds])
        .stdin(Stdio::null())
        .spawn()
        .expect("unshare (util-linux)");
    let info = format!("/proc/{}/mountinfo", child.id());
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        let comm =
            std::fs::read_to_string(format!("/proc/{}/comm", child.id())).unwrap_or_default();
        let held = std::fs::read_to_string(&info).unwrap_or_default();
        if comm.trim() == "sleep" && held.contains(mount.to_str().unwrap()) {
            return child;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!(
        "unshare did not start sleep in a namespace holding {}",
        mount.display()
    );
}

#[test]
fn a_mount_held_in_another_namespace_is_waited_for_then_refused() {
    if !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let mut fs = ScratchFs::create(FsKind::Ext4, common::small_options(FsKind::Ext4)).unwrap();

    // A copy that goes within the wait: the unmount waits for it, then succeeds.
    let mut short = holder(fs.mount_path(), "1");
    let start = Instant::now();
    fs.unmount().unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(500),
        "{:?}",
        start.elapsed()
    );
    short.wait().unwrap();

    // A copy that stays: refused, naming the cause and where to look.
    fs.mount().unwrap();
    let mut long = holder(fs.mount_path(), "60");
    let err = fs.unmount().unwrap_err();
    long.kill().unwrap();
    long.wait().unwrap();
    assert!(matches!(err, ScratchError::HeldElsewhere { .. }), "{err}");
    assert!(err.to_string().contains("lsns -t mnt"), "{err}");

    // Once it is gone the device mounts again, and everything is released.
    fs.mount().unwrap();
    fs.unmount().unwrap();
    fs.close().unwrap();
}
