//! `joj crash --from-log` checks the log against `--fs` and `-j` before anything is made: an
//! ext4 log checked as `--fs xfs -j waldio` used to report every state as a violation (false
//! data loss). A log that does not say what it is needs both flags; one that does (every log
//! joj records now) gives its own as the defaults and refuses flags that disagree, naming both.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::FsKind;

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A log without labels whose image is an ext4 with a `joj` directory.
fn unlabelled_ext4_log(dir: &std::path::Path) -> std::path::PathBuf {
    let staging = tempfile::tempdir().unwrap();
    std::fs::create_dir(staging.path().join("joj")).unwrap();
    common::crafted_ext4_log(staging.path(), dir)
}

#[test]
fn an_ext4_log_checked_as_xfs_is_refused_naming_both() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4, FsKind::Xfs]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = unlabelled_ext4_log(dir.path());
    let (out, left) = common::joj_leaving(&[
        "crash",
        "fs",
        "--fs",
        "xfs",
        "--journal",
        "waldio",
        "--from-log",
        log.to_str().unwrap(),
        "--states",
        "10",
    ]);
    let err = stderr_of(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("the log's image is ext4, not xfs")
            && err.contains("fix: check it as what it is, --fs ext4"),
        "{err}"
    );
    assert!(!err.contains("violated"), "states were checked: {err}");
    assert!(left.nothing(), "the run left {left:?}");
}

#[test]
fn a_log_that_does_not_say_its_mode_needs_the_flag() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = unlabelled_ext4_log(dir.path());
    let (out, left) = common::joj_leaving(&[
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--from-log",
        log.to_str().unwrap(),
        "--states",
        "10",
    ]);
    let err = stderr_of(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("does not say which journal mode") && err.contains("fix: give --journal"),
        "{err}"
    );
    assert!(left.nothing(), "the run left {left:?}");
}

#[test]
fn a_recorded_log_says_what_it_is_and_refuses_other_flags() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().to_str().unwrap();
    let (ok, doc, err) = common::joj_json_leaving_nothing(&[
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--journal",
        "wal",
        "--transactions",
        "5",
        "--states",
        "20",
        "--seed",
        "3",
        "--json",
        "--out",
        save,
        "--save-log",
    ]);
    assert!(ok, "{err}");
    let log = doc["saved_log"].as_str().expect("a saved log").to_string();

    // No flag at all: the log's own filesystem, mode and seed.
    let (ok, again, err) = common::joj_json_leaving_nothing(&[
        "crash",
        "fs",
        "--from-log",
        &log,
        "--states",
        "20",
        "--json",
    ]);
    assert!(ok, "{err}");
    assert_eq!((&again["fs"], &again["mode"]), (&doc["fs"], &doc["mode"]));
    assert_eq!(again["seed"], 3);
    assert_eq!(again["states_by_kind"], doc["states_by_kind"]);
    assert!(
        again["image_checked_before_mount"]
            .as_str()
            .is_some_and(|s| s.contains("e2fsck")),
        "{again:#}"
    );

    for (flag, value, said) in [
        (
            "--journal",
            "waldio",
            "-j waldio, but the log says it was recorded with journal=wal",
        ),
        (
            "--fs",
            "ext4-writeback",
            "--fs ext4-writeback, but the log says it was recorded with fs=ext4",
        ),
        (
            "--synchronous",
            "normal",
            "--synchronous normal, but the log says it was recorded with synchronous=full",
        ),
    ] {
        let (out, left) = common::joj_leaving(&[
            "crash",
            "fs",
            "--from-log",
            &log,
            flag,
            value,
            "--states",
            "20",
        ]);
        let err = stderr_of(&out);
        assert!(!out.status.success(), "{flag} {value}: {err}");
        assert!(err.contains(said) && err.contains("fix:"), "{err}");
        assert!(left.nothing(), "the run left {left:?}");
    }
}
