#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! `joj bench --fs host --dir D` with D missing makes it, with its missing parents, as
//! `joj trace --dir` makes its own (it used to refuse: `does not exist; fix: create it (mkdir
//! -p)`). A `--dir` run leaves things as it found them: at its end it removes the files it made
//! and then each directory it made, when empty; a directory that was there stays (one it made
//! that holds a file it did not make stays too: `made::tests`).

mod common;

use std::path::Path;

/// `joj bench --fs host -n 5 --dir DIR`: the exit code and stderr.
fn bench_in(dir: &Path) -> (Option<i32>, String) {
    let out = common::joj_command()
        .args(["bench", "--fs", "host", "-n", "5", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_missing_dir_is_made_and_removed_when_the_run_leaves_it_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a").join("b");
    let (code, err) = bench_in(&dir);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("removed the directories it made"),
        "the removal is not said: {err}"
    );
    assert!(!tmp.path().join("a").exists(), "{err}");
    assert!(tmp.path().exists());
}

#[test]
fn a_dir_that_was_there_stays_even_when_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("e");
    std::fs::create_dir(&dir).unwrap();
    let (code, err) = bench_in(&dir);
    assert_eq!(code, Some(0), "{err}");
    assert!(dir.is_dir(), "{err}");
    assert!(!err.contains("removed the directories"), "{err}");
}
