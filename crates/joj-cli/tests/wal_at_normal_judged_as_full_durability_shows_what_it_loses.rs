//! `--judge-as full` judges a `synchronous=NORMAL` run against full durability, so a user
//! comparing modes sees what NORMAL loses: on one saved log, the states that pass against
//! NORMAL's window (the commits since the last checkpoint) and lose acknowledged transactions
//! are exactly the violations judged as full.

mod common;

use common::count;
use joj_linux::FsKind;

#[test]
fn wal_at_normal_judged_as_full_durability_shows_what_it_loses() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (ok, window, err) = common::joj_json_leaving_nothing(&[
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--journal",
        "wal",
        "--synchronous",
        "normal",
        "--transactions",
        "100",
        "--states",
        "300",
        "--seed",
        "7",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
        "--save-log",
    ]);
    assert!(ok, "NORMAL stays within its window: {err}");
    assert_eq!(window["judged_as"], "window");
    assert_eq!(count(&window, "violations"), 0, "{window:#}");
    let losing = count(&window, "losing_acknowledged");
    assert!(losing > 0, "no state lost a commit: {window:#}");
    assert!(count(&window, "largest_loss") > 0);

    let log = window["saved_log"].as_str().unwrap();
    let (ok, full, err) = common::joj_json_leaving_nothing(&[
        "crash",
        "fs",
        "--from-log",
        log,
        "--states",
        "300",
        "--judge-as",
        "full",
        "--json",
    ]);
    assert!(!ok, "judged as full, NORMAL must fail: {full:#}");
    assert!(err.contains("judged as full durability"), "{err}");
    assert_eq!(full["judged_as"], "full");
    assert_eq!(
        full["window"]["transactions"], 64,
        "the window stays the mode's"
    );
    assert_eq!(count(&full, "violations"), losing, "{full:#}");
    assert_eq!(count(&full, "lost_acknowledged"), losing);
}
