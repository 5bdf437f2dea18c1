//! `kill -9` of `joj trace` while the scratch filesystem had been bind-mounted elsewhere, a
//! tmpfs stacked on that bind mount and another mounted inside the scratch filesystem: `joj
//! cleanup` used to print "removed leftovers … /dev/loopN" while the loop device and the bind
//! mount stayed. It now unmounts every mount that holds the device, wherever it is, and says
//! so; and while something still has the device open it says what, fails, and does not claim
//! the device removed — a later `joj cleanup` finishes once it is let go.
//!
//! The traced command runs in a mount namespace of its own (issue 34), so its mounts die with
//! it; the stray mounts are made here, in the test's namespace, as any other process on the
//! machine could make them.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::time::{Duration, Instant};

use common::{SIGKILL, held_by, run_joj, signal};

fn mounted(point: &std::path::Path) -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .any(|l| l.split(' ').nth(4) == point.to_str())
}

#[test]
fn joj_cleanup_removes_what_it_says_and_says_what_it_cannot() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let mut killed = common::Run(
        common::joj_command()
            .args(["trace", "--image-mib", "64", "--out"])
            .arg(dir.path().join("out"))
            .args(["--", "sleep", "600"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = killed.id();
    let t0 = Instant::now();
    while !held_by(pid).all_there() {
        assert!(t0.elapsed() < Duration::from_secs(60), "{:?}", held_by(pid));
        std::thread::sleep(Duration::from_millis(50));
    }
    // The scratch filesystem (its directory's own mount is the tmpfs of its images).
    let scratch = held_by(pid)
        .mounts
        .into_iter()
        .find(|m| m.ends_with("/mnt"))
        .expect("the scratch filesystem's mount");
    let script = format!(
        "mount --bind '{0}' '{1}' && mount -t tmpfs none '{1}' && mkdir '{0}/sub' && mount -t tmpfs none '{0}/sub'",
        scratch,
        elsewhere.display()
    );
    let made = std::process::Command::new("sh")
        .args(["-c", &script])
        .status()
        .unwrap();
    assert!(made.success(), "could not make the stray mounts: {script}");
    assert!(mounted(&elsewhere));
    std::thread::sleep(Duration::from_millis(300));
    signal(pid, SIGKILL);
    killed.wait();
    let left = held_by(pid);
    let device = left.loops.first().expect("the loop device").clone();

    // Something still has the device open: cleanup takes every mount away but says it could
    // not free the device, and why.
    let holder = std::fs::File::open(&device).unwrap();
    let cleanup = run_joj(&["cleanup"]);
    let stdout = String::from_utf8_lossy(&cleanup.stdout);
    let stderr = String::from_utf8_lossy(&cleanup.stderr);
    assert!(!cleanup.status.success(), "{stdout}{stderr}");
    assert!(
        !mounted(&elsewhere),
        "the bind mount stayed: {stdout}{stderr}"
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("removed leftovers of dead joj {pid}: ")))
        .unwrap_or_else(|| panic!("no line for {pid}: {stdout}"));
    assert!(
        line.contains(&format!("{} (mount)", elsewhere.display())),
        "{line}"
    );
    assert!(
        !line.contains(&format!("{device},")) && !line.ends_with(&device),
        "claims {device} removed: {line}"
    );
    assert!(
        stderr.contains(&format!("{device} still serves"))
            && stderr.contains(&format!("open by process {}", std::process::id()))
            && stderr.contains("fix:"),
        "{stderr}"
    );

    // Let go: the device is freed, and a second cleanup finds nothing of it.
    drop(holder);
    let again = run_joj(&["cleanup"]);
    assert!(
        again.status.success(),
        "{}{}",
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&again.stderr)
    );
    let t0 = Instant::now();
    while !held_by(pid).nothing() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "left: {:?}",
            held_by(pid)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
