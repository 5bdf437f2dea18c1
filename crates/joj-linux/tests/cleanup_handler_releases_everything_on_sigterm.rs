//! With the cleanup handler installed, SIGTERM releases the scratch filesystem and tracer and
//! the process exits with 128 + 15. The test re-runs its own binary as the child that gets the
//! signal.

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use joj_linux::{BlockTracer, FsKind, ScratchFs};

const CHILD_ENV: &str = "JOJ_LINUX_SIGNAL_CHILD";

/// The child: set up, report paths on stdout, wait to be killed.
#[test]
fn child_waits_for_a_signal() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return; // Only meaningful when started by the parent test below.
    }
    joj_linux::install_cleanup_handler().unwrap();
    joj_linux::install_cleanup_handler().unwrap(); // idempotent
    let fs = ScratchFs::create(FsKind::Ext4, common::small_options(FsKind::Ext4)).unwrap();
    let tracer = BlockTracer::start(&fs.dev_ids(), 1024).unwrap();
    println!(
        "READY {} {}",
        fs.dir().display(),
        tracer.instance_path().display()
    );
    std::thread::sleep(Duration::from_secs(60));
    panic!("no signal arrived");
}

#[test]
fn sigterm_cleans_up_and_exits_143() {
    if std::env::var_os(CHILD_ENV).is_some() || !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_waits_for_a_signal",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut ready = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        // libtest may print `test child_waits_for_a_signal ... ` on the same line first.
        if let Some(rest) = line.split_once("READY ").map(|(_, r)| r) {
            let (dir, instance) = rest.split_once(' ').unwrap();
            ready = Some((PathBuf::from(dir), PathBuf::from(instance)));
            break;
        }
    }
    let (dir, instance) = ready.expect("child never got ready");
    assert!(dir.exists() && instance.exists());

    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 15), "{status:?}");

    assert!(common::loops_backed_under(&dir).is_empty());
    assert!(common::mounts_under(&dir).is_empty());
    assert!(!dir.exists(), "{} left", dir.display());
    assert!(!instance.exists(), "{} left", instance.display());
}
