#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! SIGTERM in the middle of an untraced run on a scratch filesystem (`bench`, `speed` and
//! `restart` without `--trace`): the cleanup detaches the filesystem under the workload, whose
//! next commit then fails. That failure is the signal's doing: joj must not report it (it used
//! to say "SQLite failed while COMMIT: disk I/O error", or "the filesystem is full … fix:
//! --image-mib") nor exit with it (1) while the cleanup is still releasing, leaving
//! `/run/joj/<fs>-<pid>-*` and its tmpfs behind. It waits for the cleanup and exits with 143.
//!
//! The race is made certain rather than likely: the test holds the run's loop device open, as
//! udev's probing or a monitoring tool may, so the cleanup waits seconds for the device to go
//! while the workload's error is at hand at once.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{Run, SIGTERM, held_by, signal};

/// The run's database on its scratch filesystem, once the workload is committing to it.
fn database_of(pid: u32) -> Option<PathBuf> {
    let dir = held_by(pid).dirs.into_iter().next()?;
    let db = PathBuf::from(dir).join("mnt/joj/joj-0.db");
    std::fs::metadata(&db)
        .is_ok_and(|m| m.len() > 0)
        .then_some(db)
}

#[test]
fn a_signal_during_an_untraced_run_exits_with_it_and_leaves_nothing() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let log = out.path().join("stderr.txt");
    let mut run = Run(common::joj_command()
        .args([
            "bench",
            "--fs",
            "ext4",
            "--image-mib",
            "64",
            "-n",
            "1000000",
            "-j",
            "delete",
            "--out",
        ])
        .arg(out.path())
        .current_dir(out.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap());
    let pid = run.id();
    let t0 = Instant::now();
    while database_of(pid).is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run never started: {:?}",
            held_by(pid)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let loops = held_by(pid).loops;
    assert_eq!(loops.len(), 1, "{loops:?}");
    let holder = std::fs::File::open(&loops[0]).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    signal(pid, SIGTERM);
    let status = run.wait();
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(143), "{status:?}: {said}");
    assert!(
        said.contains("joj: interrupted (SIGTERM): the run stops here"),
        "{said}"
    );
    assert!(!said.contains("error:"), "{said}");
    // The kernel frees the loop device once its last opener, this test, lets go.
    drop(holder);
    common::assert_nothing_left_by(pid, Duration::from_secs(5), "after SIGTERM");
}
