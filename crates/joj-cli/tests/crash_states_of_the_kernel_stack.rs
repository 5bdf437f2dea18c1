//! `joj crash fs --fs`: a run of SQLite on a real ext4 recorded through the FUSE-backed loop
//! device, crash states built from its block writes and flushes, each recovered by the kernel,
//! read by the mode's own VFS and checked by e2fsck. The CI sweep: durable modes show no
//! violation and no fsck failure; every canary is caught; the log agrees with tracefs; bad
//! input is named with its fix; nothing is left behind.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::count;
use joj_linux::FsKind;
use serde_json::Value;

/// `joj crash fs --fs ext4 ARGS --json`: (exit ok, the document, stderr); the run leaves nothing.
fn crash(args: &[&str]) -> (bool, Value, String) {
    let mut all = vec!["crash", "fs", "--fs", "ext4", "--json"];
    all.extend_from_slice(args);
    common::joj_json_leaving_nothing(&all)
}

/// The recorded run is the real run: the log's bytes and flushes are tracefs's.
fn log_agrees_with_tracefs(doc: &Value) {
    let log = &doc["log"];
    assert!(
        count(log, "writes") > 0 && count(log, "flushes") > 0,
        "{log}"
    );
    assert_eq!(log["write_bytes"], log["traced_write_bytes"], "{log}");
    assert_eq!(log["flushes"], log["traced_flushes"], "{log}");
}

fn durable(mode: &str, more: &[&str]) -> Value {
    let mut args = vec![
        "--journal",
        mode,
        "--transactions",
        "25",
        "--states",
        "400",
        "--seed",
        "7",
    ];
    args.extend_from_slice(more);
    let (ok, doc, err) = crash(&args);
    assert!(ok, "{mode}: {err}\n{doc:#}");
    assert_eq!(count(&doc, "violations"), 0, "{doc:#}");
    assert_eq!(count(&doc, "fsck_failures"), 0, "{doc:#}");
    assert_eq!(count(&doc, "transactions"), 25);
    assert!(count(&doc, "states_explored") >= 100, "{doc:#}");
    assert!(count(&doc, "images_checked") > 0);
    log_agrees_with_tracefs(&doc);
    in_flight_has_its_share(&doc);
    doc
}

/// The states by kind add up, and unless every state was checked, at least half are writes
/// in flight (subsets and torn writes).
fn in_flight_has_its_share(doc: &Value) {
    let k = &doc["states_by_kind"];
    let of = |kind| count(k, kind);
    let in_flight = of("subset") + of("torn");
    let all = of("flush_boundary") + of("after_flush") + of("prefix") + in_flight;
    assert_eq!(all, count(doc, "states_explored"), "{k}");
    assert!(doc["exhaustive"] == true || 2 * in_flight >= all, "{k}");
    assert_eq!(
        doc["coverage"]["per_epoch"].as_array().map(Vec::len),
        Some(count(&doc["log"], "epochs") as usize)
    );
}

#[test]
fn stock_wal_keeps_every_acknowledged_commit_on_ext4() {
    if joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        durable("wal", &[]);
    }
}

#[test]
fn a_rollback_journal_keeps_every_acknowledged_commit_on_ext4() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    for mode in ["truncate", "persist"] {
        assert_eq!(durable(mode, &[])["window"]["kind"], "durable");
    }
    let extra = durable("delete", &["--synchronous", "extra"]);
    assert_eq!(extra["window"]["kind"], "durable", "{extra:#}");
}

/// WAL at `synchronous=NORMAL` is judged against its stated window (the commits since the last
/// checkpoint) and stays within it.
#[test]
fn wal_at_normal_stays_within_its_window() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let doc = durable("wal", &["--synchronous", "normal"]);
    assert_eq!(doc["synchronous"], "NORMAL");
    assert_eq!(doc["window"]["transactions"], 64, "{doc:#}");
    assert!(count(&doc, "largest_loss") <= 64, "{doc:#}");
}

/// SQLite's documented window, found on the real stack: at `synchronous=FULL`, DELETE mode does
/// not sync the directory after unlinking its journal (the commit point), so a cut right after
/// a commit brings the journal back and rolls that one transaction back.
#[test]
fn delete_mode_at_full_can_lose_exactly_its_last_commit() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let doc = durable("delete", &[]);
    assert_eq!(doc["window"]["transactions"], 1, "{doc:#}");
    assert_eq!(count(&doc, "largest_loss"), 1, "{doc:#}");
}

#[test]
fn waldio_keeps_every_acknowledged_commit_on_ext4() {
    if joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        durable("waldio", &[]);
    }
}

#[test]
fn waldio_fua_keeps_every_acknowledged_commit_on_ext4() {
    if joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        durable("waldio-fua", &[]);
    }
}

/// The option decides, not `PRAGMA synchronous` (docs/formats/waldio.md): waldio `full` under an
/// application at OFF (SQLite then syncs the database at no checkpoint) and at NORMAL (Android's
/// default in WAL mode) keeps every acknowledged commit. 40 transactions hold a checkpoint and
/// the restart after it; with waldio's sync of the database before a WAL header taken out, the
/// OFF run's check finds 145 broken states.
#[test]
fn waldio_keeps_every_acknowledged_commit_whatever_the_app_sets_for_synchronous() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    for (sync, shown) in [("off", "OFF"), ("normal", "NORMAL")] {
        let (ok, doc, err) = crash(&[
            "--journal",
            "waldio",
            "--synchronous",
            sync,
            "--transactions",
            "40",
            "--states",
            "400",
            "--seed",
            "7",
        ]);
        assert!(ok, "{sync}: {err}\n{doc:#}");
        assert_eq!(doc["synchronous"], shown, "{doc:#}");
        assert_eq!(doc["window"]["kind"], "durable", "{doc:#}");
        assert_eq!(count(&doc, "violations"), 0, "{sync}: {doc:#}");
        assert_eq!(count(&doc, "fsck_failures"), 0, "{doc:#}");
        assert_eq!(count(&doc, "transactions"), 40);
        log_agrees_with_tracefs(&doc);
        in_flight_has_its_share(&doc);
    }
}

/// A small recorded run of `mode` with `canary`: 25 transactions, 400 states, seed 7.
fn canary_args<'a>(mode: &'a str, canary: &'a str) -> Vec<&'a str> {
    vec![
        "--journal",
        mode,
        "--canary",
        canary,
        "--transactions",
        "25",
        "--states",
        "400",
        "--seed",
        "7",
    ]
}

fn caught(mode: &str, canary: &str, more: &[&str]) -> Value {
    let mut args = canary_args(mode, canary);
    args.extend_from_slice(more);
    let (ok, doc, err) = crash(&args);
    assert!(ok, "the {canary} canary must be caught: {err}\n{doc:#}");
    assert!(count(&doc, "lost_acknowledged") > 0, "{doc:#}");
    doc
}

/// A control: the mode with `canary` keeps every acknowledged commit, in a real recorded run.
fn holds(mode: &str, canary: &str) {
    let (ok, doc, err) = crash(&canary_args(mode, canary));
    assert!(ok, "the {canary} control must hold: {err}\n{doc:#}");
    assert_eq!(count(&doc, "violations"), 0, "{doc:#}");
    assert!(
        count(&doc, "states_explored") >= 400 || doc["exhaustive"] == true,
        "{doc:#}"
    );
    log_agrees_with_tracefs(&doc);
}

#[test]
fn waldio_without_its_fdatasync_is_caught() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().to_str().unwrap();
    let doc = caught("waldio", "skip-sync", &["--out", save]);
    // Every violating state is saved with its log; the saved command rebuilds the same ones.
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(doc["saved"].as_str().unwrap()).unwrap())
            .unwrap();
    let found = saved["found"].as_array().unwrap();
    assert_eq!(found.len() as u64, count(&doc, "violations"), "{saved:#}");
    assert!(
        found
            .iter()
            .all(|f| f["description"].as_str().unwrap().contains("cut before"))
    );
    let log = saved["log"].as_str().unwrap();
    let (ok, again, err) = crash(&[
        "--journal",
        "waldio",
        "--canary",
        "skip-sync",
        "--states",
        "400",
        "--seed",
        "7",
        "--from-log",
        log,
    ]);
    assert!(ok, "{err}");
    assert_eq!(again["violations"], doc["violations"]);
    assert_eq!(again["found"], doc["found"]);
}

#[test]
fn waldio_on_fallocated_extents_with_a_bare_cache_flush_is_caught() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    caught("waldio", "fallocate-flush-only", &[]);
}

#[test]
fn synchronous_off_loses_acknowledged_commits() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    caught("wal", "sync-off", &[]);
}

/// What this kernel does with unwritten extents under `fdatasync`: ext4 converts them in a
/// journal transaction that the `fdatasync` commits, so waldio that only fallocates stays
/// durable (it pays the journaling WALDIO's explicit preallocation avoids).
#[test]
fn fallocated_extents_under_fdatasync_stay_durable_on_this_kernel() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    holds("waldio", "fallocate-only");
}

/// WALDIO's claim on the real stack, the control of the canary above: a direct overwrite of
/// the WAL's written, synced preallocation needs no filesystem journaling, so a bare device
/// cache flush per commit (no `fdatasync`) keeps every acknowledged commit.
#[test]
fn a_bare_cache_flush_after_overwriting_written_preallocation_stays_durable() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    holds("waldio", "flush-only");
}

#[test]
fn bad_input_is_named_with_its_fix() {
    let out = common::run_joj(&["crash", "fs", "--fs", "ext4-extjournal"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("second device") && err.contains("fix:"),
        "{err}"
    );

    let out = common::run_joj(&[
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--journal",
        "wal",
        "--canary",
        "skip-sync",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("breaks waldio") && err.contains("fix:"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("not-a-log");
    std::fs::write(
        &foreign,
        b"SQLite format 3\0 and then some more bytes to pass the size",
    )
    .unwrap();
    let out = common::run_joj(&[
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--from-log",
        foreign.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("not a joj-blocklog") && err.contains("fix:"),
        "{err}"
    );

    // OFF is for waldio; a stock mode at OFF is the sync-off canary.
    let out = common::run_joj(&[
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--journal",
        "wal",
        "--synchronous",
        "off",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("--synchronous off is for waldio")
            && err.contains("fix: use --canary sync-off"),
        "{err}"
    );

    let out = common::run_joj(&["crash", "fs", "--canary", "skip-sync"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("needs --fs"), "{err}");

    // A log that is not a regular file is refused before it is read.
    let out = common::run_joj(&["crash", "fs", "--from-log", "/dev/zero"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("not a regular file") && err.contains("fix:"),
        "{err}"
    );
}

/// Waits until `pid` holds a directory whose name starts with `prefix` under /run/joj.
fn wait_for_dir(pid: u32, prefix: &str) {
    let t0 = std::time::Instant::now();
    while !common::held_by(pid)
        .dirs
        .iter()
        .any(|d| d.starts_with(&format!("/run/joj/{prefix}")))
    {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "no {prefix} directory: {:?}",
            common::held_by(pid)
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

fn long_crash_run() -> std::process::Child {
    common::joj_command()
        .args([
            "crash",
            "fs",
            "--fs",
            "ext4",
            "--journal",
            "waldio",
            "--transactions",
            "3000",
            "--states",
            "100000",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// `kill -9` while the run is recorded (its FUSE daemon dies with it, possibly with a thread
/// stuck in `fsync` above it): `joj cleanup` removes the recording disk, the scratch
/// filesystem, its loop device and directories.
#[test]
fn kill_9_while_recording_leaves_nothing_after_joj_cleanup() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let mut child = long_crash_run();
    let pid = child.id();
    wait_for_dir(pid, "rec-");
    std::thread::sleep(std::time::Duration::from_millis(400));
    common::signal(pid, common::SIGKILL);
    // The child may be stuck in D state (a direct read or an fsync waiting on its dead FUSE
    // daemon): `wait` would never return. joj cleanup aborts its recording disk; a process
    // still exiting at that moment is kept and found dead by the next cleanup.
    let mut left = common::held_by(pid);
    for _ in 0..3 {
        let out = common::run_joj(&["cleanup"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let _ = child.try_wait();
        left = common::held_by(pid);
        if left.nothing() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    assert!(left.nothing(), "three joj cleanups left {left:?}");
    child.wait().unwrap();
}

/// Ctrl-C while crash images are checked: the run releases everything itself.
#[test]
fn ctrl_c_while_checking_leaves_nothing() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let mut child = common::joj_command()
        .args([
            "crash",
            "fs",
            "--fs",
            "ext4",
            "--journal",
            "wal",
            "--transactions",
            "50",
            "--states",
            "100000",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_for_dir(pid, &format!("ext4-{pid}-crash-"));
    std::thread::sleep(std::time::Duration::from_millis(500));
    common::signal(pid, common::SIGINT);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let left = common::held_by(pid);
    assert!(left.nothing(), "Ctrl-C left {left:?}");
}
