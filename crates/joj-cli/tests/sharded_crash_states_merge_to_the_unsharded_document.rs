//! `joj crash fs --fs … --from-log LOG --shard K/N` and `joj crash merge PARTS…`: a run recorded
//! once (`--record-only`), checked whole and in 1, 2 and 3 shares; the merged parts are the
//! unsharded document — the same states, verdicts, counts, found states and mount cost — but
//! for the two timings. Parts of different runs, a missing or repeated share, an edited part
//! and bad shard specs are refused, each naming its fix.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::{count, run_joj};
use joj_linux::FsKind;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `joj ARGS --json`: the document, which must come with exit status `ok`.
fn joj_doc(args: &[&str], ok: bool) -> Value {
    let (success, doc, err) = common::joj_json_leaving_nothing(args);
    assert_eq!(success, ok, "{args:?}: {err}\n{doc:#}");
    doc
}

/// Records `-j mode` (with `more`) once on ext4 and returns the saved log.
fn record(dir: &Path, mode: &str, more: &[&str]) -> PathBuf {
    let save = dir.join(mode);
    let mut args = vec![
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--journal",
        mode,
        "--transactions",
        "25",
        "--seed",
        "7",
        "--record-only",
        "--json",
        "--out",
        save.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    let doc = joj_doc(&args, true);
    let log = PathBuf::from(doc["saved_log"].as_str().expect("saved_log"));
    assert!(log.is_file(), "{doc:#}");
    assert_eq!(doc["log"]["write_bytes"], doc["log"]["traced_write_bytes"]);
    log
}

/// The document without the timings of its run.
fn untimed(mut doc: Value) -> Value {
    for key in ["check_s", "states_per_s"] {
        doc.as_object_mut().unwrap().remove(key);
    }
    doc
}

/// Checks `log` whole and in N = 1, 2, 3 shares; each merge gives the whole document.
fn merges_to_the_whole(dir: &Path, log: &Path, ok: bool) -> Value {
    let log = log.to_str().unwrap();
    let whole = joj_doc(
        &[
            "crash",
            "fs",
            "--fs",
            "ext4",
            "--from-log",
            log,
            "--states",
            "150",
            "--json",
        ],
        ok,
    );
    for n in 1..=3 {
        let mut parts = Vec::new();
        for k in (1..=n).rev() {
            let part = dir.join(format!("part-{k}-of-{n}.json"));
            let shard = format!("{k}/{n}");
            let doc = joj_doc(
                &[
                    "crash",
                    "fs",
                    "--fs",
                    "ext4",
                    "--from-log",
                    log,
                    "--states",
                    "150",
                    "--shard",
                    &shard,
                    "--json",
                    "--save",
                    part.to_str().unwrap(),
                    "--force",
                ],
                // A share's exit status is not the verdict: that is the merge's.
                true,
            );
            assert_eq!(doc["format"], "joj-crash-part");
            parts.push(part.to_str().unwrap().to_string());
        }
        let mut args = vec!["crash", "merge", "--json"];
        args.extend(parts.iter().map(String::as_str));
        let merged = joj_doc(&args, ok);
        assert_eq!(
            untimed(merged.clone()),
            untimed(whole.clone()),
            "{n} shares merged differ from the whole run"
        );
        assert!(merged["check_s"].as_f64().unwrap() > 0.0);
    }
    whole
}

#[test]
fn sharded_runs_merge_to_exactly_the_unsharded_document() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = record(dir.path(), "wal", &[]);
    let whole = merges_to_the_whole(dir.path(), &log, true);
    assert_eq!(count(&whole, "states_explored"), 150);
    assert_eq!(count(&whole, "violations"), 0, "{whole:#}");
    assert!(count(&whole, "images_checked") > 0);
    // The log says what tracefs counted when it was recorded.
    assert_eq!(
        whole["log"]["write_bytes"],
        whole["log"]["traced_write_bytes"]
    );
    assert!(whole["mount"]["images"].as_u64().unwrap() > 0, "{whole:#}");
    // A canary's violations, found states and verdict merge the same way (exit status 0: it is
    // caught).
    let canary = record(dir.path(), "waldio", &["--canary", "skip-sync"]);
    let caught = merges_to_the_whole(dir.path(), &canary, true);
    assert!(count(&caught, "violations") > 0, "{caught:#}");
    assert!(!caught["found"].as_array().unwrap().is_empty());
}

fn refused(args: &[&str], what: &[&str]) {
    let out = run_joj(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} ran");
    for w in what.iter().chain(&["fix:"]) {
        assert!(err.contains(w), "{args:?}: no {w:?} in: {err}");
    }
}

#[test]
fn bad_shard_specs_and_a_shard_without_one_log_are_refused() {
    for bad in ["0/0", "3/2", "0/3", "1/0", "x", "2"] {
        refused(
            &[
                "crash",
                "fs",
                "--fs",
                "ext4",
                "--from-log",
                "l",
                "--shard",
                bad,
            ],
            &[bad, "K/N"],
        );
    }
    refused(
        &["crash", "fs", "--fs", "ext4", "--shard", "1/2"],
        &["--record-only", "--from-log"],
    );
    refused(
        &["crash", "fs", "--fs", "ext4", "--record-only"],
        &["--save-dir"],
    );
    refused(&["crash", "--shard", "1/2"], &["needs --fs"]);
}

#[test]
fn parts_of_different_runs_missing_repeated_or_edited_are_refused() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let wal = record(dir.path(), "wal", &[]);
    let truncate = record(dir.path(), "truncate", &[]);
    let part = |log: &Path, shard: &str, name: &str| -> String {
        let p = dir.path().join(name);
        joj_doc(
            &[
                "crash",
                "fs",
                "--fs",
                "ext4",
                "--from-log",
                log.to_str().unwrap(),
                "--states",
                "60",
                "--shard",
                shard,
                "--json",
                "--save",
                p.to_str().unwrap(),
            ],
            true,
        );
        p.to_str().unwrap().to_string()
    };
    let (w1, w2, t2) = (
        part(&wal, "1/2", "w1.json"),
        part(&wal, "2/2", "w2.json"),
        part(&truncate, "2/2", "t2.json"),
    );
    refused(
        &["crash", "merge", &w1, &t2],
        &["different runs", "w1.json", "t2.json"],
    );
    refused(&["crash", "merge", &w1], &["shard 2 of 2 missing"]);
    refused(&["crash", "merge", &w1, &w1, &w2], &["both shard 1 of 2"]);
    // Another --states is another plan: a different run.
    let w2_other = dir.path().join("w2-other.json");
    joj_doc(
        &[
            "crash",
            "fs",
            "--fs",
            "ext4",
            "--from-log",
            wal.to_str().unwrap(),
            "--states",
            "61",
            "--shard",
            "2/2",
            "--json",
            "--save",
            w2_other.to_str().unwrap(),
        ],
        true,
    );
    refused(
        &["crash", "merge", &w1, w2_other.to_str().unwrap()],
        &["different runs"],
    );
    // A part with a state taken out.
    let mut edited: Value = serde_json::from_str(&std::fs::read_to_string(&w2).unwrap()).unwrap();
    edited["states"].as_array_mut().unwrap().pop();
    let edited_path = dir.path().join("w2-edited.json");
    std::fs::write(&edited_path, edited.to_string()).unwrap();
    refused(
        &["crash", "merge", &w1, edited_path.to_str().unwrap()],
        &["w2-edited.json", "not exactly"],
    );
    // Not a part at all; and the merge's --save never replaces a part.
    refused(&["crash", "merge", wal.to_str().unwrap()], &["not JSON"]);
    refused(
        &["crash", "merge", &w1, &w2, "--save", &w1, "--force"],
        &["--save"],
    );
    let merged = run_joj(&["crash", "merge", &w1, &w2, "--json"]);
    assert!(merged.status.success(), "{merged:?}");
}
