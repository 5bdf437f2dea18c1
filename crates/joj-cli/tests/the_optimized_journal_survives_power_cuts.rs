//! The eMMC paper's optimized journal under power cuts: a PostMark-like run of file creates,
//! appends and deletes recorded block by block on a real ext4, read as the optimized journal
//! issues it (each jbd2 transaction one packed reliable write, durable without a flush, the
//! commit flushes dropped), and hundreds of crash images recovered by the kernel and checked by
//! `e2fsck -fn`. Every image mounts and is clean, and shows every acknowledged operation; the
//! canary (reliable write atomic per page only) is caught; bad combinations are named.

mod common;

use common::count;
use joj_linux::FsKind;
use serde_json::Value;

/// `joj crash fs --fs ext4 --workload postmark ARGS --json` (40 transactions, 400 states):
/// (exit ok, document, stderr); the run leaves nothing behind.
fn crash(args: &[&str]) -> (bool, Value, String) {
    let mut all = vec![
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--workload",
        "postmark",
        "--json",
    ];
    all.extend_from_slice(&["--transactions", "40", "--states", "400", "--seed", "11"]);
    all.extend_from_slice(args);
    common::joj_json_leaving_nothing(&all)
}

#[test]
fn every_image_of_the_optimized_journal_recovers_clean_with_every_acknowledged_operation() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let (ok, doc, err) = crash(&["--emmc-journal"]);
    assert!(ok, "{err}\n{doc:#}");
    assert_eq!(count(&doc, "transactions"), 40);
    assert_eq!(count(&doc, "states_explored"), 400, "{doc:#}");
    assert_eq!(count(&doc, "violations"), 0, "{doc:#}");
    assert_eq!(count(&doc, "fsck_failures"), 0, "{doc:#}");
    assert_eq!(doc["log"]["write_bytes"], doc["log"]["traced_write_bytes"]);
    let ej = &doc["emmc_journal"];
    // One jbd2 transaction per fsync at least, each one group, every commit flush dropped.
    assert!(count(ej, "groups") >= 40, "{ej}");
    assert_eq!(
        count(ej, "groups"),
        count(ej, "post_commit_flushes_dropped"),
        "{ej}"
    );
    assert!(count(ej, "preflushes_dropped") > 0, "{ej}");
    assert!(
        count(&doc["log"], "epochs") < count(&doc["log"], "flushes"),
        "{doc:#}"
    );
    let mount = &doc["mount"];
    assert_eq!(count(mount, "images"), 400, "{mount}");
    assert!(count(mount, "images_replaying") > 0, "{mount}");
    assert!(mount["mean_ms"].as_f64().unwrap() > 0.0, "{mount}");
}

#[test]
fn a_commit_atomic_per_page_only_is_caught() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let (ok, doc, err) = crash(&["--emmc-journal", "--canary", "per-page-reliable"]);
    assert!(
        ok,
        "the per-page-reliable canary must be caught: {err}\n{doc:#}"
    );
    assert!(
        count(&doc, "violations") + count(&doc, "fsck_failures") > 0,
        "{doc:#}"
    );
}

#[test]
fn the_same_run_read_plainly_recovers_clean_too() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let (ok, doc, err) = crash(&[]);
    assert!(ok, "{err}\n{doc:#}");
    assert_eq!(count(&doc, "violations"), 0, "{doc:#}");
    assert_eq!(count(&doc, "fsck_failures"), 0, "{doc:#}");
    assert!(doc["emmc_journal"].is_null(), "{doc:#}");
}

#[test]
fn bad_combinations_are_named_with_their_fix() {
    for (args, says) in [
        (
            &["crash", "fs", "--fs", "xfs", "--emmc-journal"][..],
            "no internal jbd2 journal",
        ),
        (
            &["crash", "fs", "--fs", "ext4-nojournal", "--emmc-journal"][..],
            "no internal jbd2 journal",
        ),
        (
            &[
                "crash",
                "fs",
                "--fs",
                "ext4",
                "--canary",
                "per-page-reliable",
            ][..],
            "add --emmc-journal",
        ),
        (
            &[
                "crash",
                "fs",
                "--fs",
                "ext4",
                "--workload",
                "postmark",
                "--canary",
                "sync-off",
            ][..],
            "runs no SQLite",
        ),
        (
            &[
                "crash",
                "fs",
                "--fs",
                "ext4",
                "--workload",
                "postmark",
                "--synchronous",
                "normal",
            ][..],
            "drop --synchronous",
        ),
        (&["crash", "fs", "--emmc-journal"][..], "needs --fs"),
    ] {
        let out = common::run_joj(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(err.contains("fix"), "{args:?}: {err}");
    }
}
