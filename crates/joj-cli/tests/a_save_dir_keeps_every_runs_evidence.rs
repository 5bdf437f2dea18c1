//! `joj crash fs --fs … --out D` never loses evidence: a `D` that cannot be a folder is
//! refused before the run; a save that fails after the run comes after the printed result; a
//! second run into the same folder gets its own names and leaves the first run's files as they
//! were (replacing them takes `--force`); `--save-log` keeps a clean run's log too.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use joj_linux::FsKind;
use serde_json::Value;

/// A waldio run whose canary is caught (so it saves its log and violations) into `dir`.
fn caught_run_saving_into(dir: &Path, seed: &str) -> Value {
    let (ok, doc, err) = common::joj_json_leaving_nothing(&[
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--journal",
        "waldio",
        "--canary",
        "skip-sync",
        "--transactions",
        "10",
        "--states",
        "40",
        "--seed",
        seed,
        "--json",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(ok, "the canary must be caught: {err}");
    doc
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_second_run_gets_its_own_names_and_the_first_ones_stay() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let first = caught_run_saving_into(dir.path(), "1");
    let log1 = dir.path().join("crash-ext4-waldio.blocklog");
    let json1 = dir.path().join("crash-ext4-waldio-violations.json");
    assert_eq!(first["saved_log"], log1.to_str().unwrap());
    assert_eq!(first["saved"], json1.to_str().unwrap());
    let (log_bytes, json_bytes) = (
        std::fs::read(&log1).unwrap(),
        std::fs::read(&json1).unwrap(),
    );

    let second = caught_run_saving_into(dir.path(), "2");
    let log2 = dir.path().join("crash-ext4-waldio-2.blocklog");
    let json2 = dir.path().join("crash-ext4-waldio-2-violations.json");
    assert_eq!(second["saved_log"], log2.to_str().unwrap(), "{second:#}");
    assert_eq!(second["saved"], json2.to_str().unwrap());
    assert_eq!(
        std::fs::read(&log1).unwrap(),
        log_bytes,
        "the first log was replaced"
    );
    assert_eq!(std::fs::read(&json1).unwrap(), json_bytes);
    let saved: Value = serde_json::from_slice(&std::fs::read(&json2).unwrap()).unwrap();
    assert_eq!(saved["log"], log2.to_str().unwrap(), "{saved:#}");
    assert!(
        saved["replay"]
            .as_str()
            .unwrap()
            .ends_with("crash-ext4-waldio-2.blocklog")
    );
    assert_eq!(
        names(dir.path()),
        [
            "crash-ext4-waldio-2-violations.json",
            "crash-ext4-waldio-2.blocklog",
            "crash-ext4-waldio-violations.json",
            "crash-ext4-waldio.blocklog"
        ]
    );
}

#[test]
fn save_log_keeps_a_clean_runs_log_and_without_it_nothing_is_saved() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().to_str().unwrap();
    let args = [
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
        "--json",
    ];
    let (ok, doc, err) = common::joj_json_leaving_nothing(&[&args[..], &["--out", save]].concat());
    assert!(ok, "{err}");
    assert_eq!(doc["violations"], 0);
    assert!(doc["saved_log"].is_null() && names(dir.path()).is_empty());
    let (ok, doc, err) =
        common::joj_json_leaving_nothing(&[&args[..], &["--out", save, "--save-log"]].concat());
    assert!(ok, "{err}");
    assert_eq!(names(dir.path()), ["crash-ext4-wal.blocklog"], "{doc:#}");
    // The saved log reads back with the same states.
    let (ok, again, err) = common::joj_json_leaving_nothing(&[
        "crash",
        "fs",
        "--from-log",
        doc["saved_log"].as_str().unwrap(),
        "--states",
        "20",
        "--json",
    ]);
    assert!(ok, "{err}");
    assert_eq!(again["log"]["writes"], doc["log"]["writes"]);

    let out = common::run_joj(&["crash", "fs", "--fs", "ext4", "--save-log"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("--save-log") && err.contains("fix: add --save-dir"),
        "{err}"
    );
}

#[test]
fn a_save_dir_that_is_a_file_is_refused_before_the_run() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("results");
    std::fs::write(&file, b"keep me").unwrap();
    let (out, left) = common::joj_leaving(&[
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--journal",
        "waldio",
        "--canary",
        "skip-sync",
        "--transactions",
        "10",
        "--states",
        "20",
        "--out",
        file.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.starts_with("joj: error: --save-dir:") && err.contains("fix:"),
        "{err}"
    );
    assert!(
        out.stdout.is_empty() && !err.contains("state "),
        "the run ran: {err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
    assert!(left.nothing(), "the run left {left:?}");
}

/// The folder is made unusable while the run records: the summary is printed, then the save's
/// error says so.
#[test]
fn a_save_failing_after_the_run_still_prints_the_result_first() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("evidence");
    std::fs::create_dir(&save).unwrap();
    let child = common::joj_command()
        .args([
            "crash",
            "fs",
            "--fs",
            "ext4",
            "--journal",
            "wal",
            "--transactions",
            "2000",
            "--states",
            "10",
        ])
        .arg("--out")
        .arg(&save)
        .arg("--save-log")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = Instant::now();
    while !common::held_by(pid)
        .dirs
        .iter()
        .any(|d| d.starts_with("/run/joj/rec-"))
    {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run never recorded"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::remove_dir(&save).unwrap();
    std::fs::write(&save, b"in the way").unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!out.status.success(), "{stdout}\n{err}");
    assert!(
        stdout.contains("crash states of wal"),
        "no result printed: {stdout}\n{err}"
    );
    assert!(
        err.contains("--save-dir") && err.contains("the result is printed above"),
        "{err}"
    );
    assert!(common::held_by(pid).nothing());
}
