//! SIGTERM or Ctrl-C (SIGINT) of a `--fs host` run that names no directory: joj removes the
//! temporary directory it made (`$TMPDIR/joj-<pid>-XXXXXX`) and exits with 128 + signal. No
//! root needed: `TMPDIR` points at a directory of the test's own.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::Path;

use common::{SIGINT, SIGTERM, long_host_run, signal, temp_dirs_of};

/// Starts a long host run with `TMPDIR=tmp`, waits until its database is in its temporary
/// directory, sends `sig`, and returns the exit code.
fn signalled_host_run(tmp: &Path, sig: i32) -> (u32, Option<i32>) {
    let out = tempfile::tempdir().unwrap();
    let mut child = long_host_run(tmp, out.path());
    let pid = child.id();
    std::thread::sleep(std::time::Duration::from_millis(200));
    signal(pid, sig);
    (pid, child.wait().unwrap().code())
}

#[test]
fn sigterm_of_a_host_run_removes_its_temp_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let (pid, code) = signalled_host_run(tmp.path(), SIGTERM);
    assert_eq!(code, Some(128 + SIGTERM));
    assert_eq!(
        temp_dirs_of(pid, tmp.path()),
        Vec::<std::path::PathBuf>::new()
    );
}

#[test]
fn sigint_of_a_host_run_removes_its_temp_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let (pid, code) = signalled_host_run(tmp.path(), SIGINT);
    assert_eq!(code, Some(128 + SIGINT));
    assert_eq!(
        temp_dirs_of(pid, tmp.path()),
        Vec::<std::path::PathBuf>::new()
    );
}
