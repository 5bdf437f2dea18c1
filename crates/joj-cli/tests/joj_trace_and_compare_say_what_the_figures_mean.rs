//! `joj trace` and `joj compare` end with what the figures mean (the JOJ share, the syncs per
//! commit, which mode would cut what, from the run's own numbers); a traced command's document
//! says `null` for what was not measured and names byte units; file data joj could not place is
//! one line, listed with `--verbose`; the devices' own counters agree with the trace.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

const WAL_APP: &str = "import sqlite3
db = sqlite3.connect('app.db', isolation_level=None)
db.execute('PRAGMA journal_mode=WAL'); db.execute('PRAGMA synchronous=FULL')
db.execute('CREATE TABLE t(x)')
for i in range(100): db.execute('INSERT INTO t VALUES(?)', ('x' * 100,))
";

fn joj(dir: &std::path::Path, args: &[&str]) -> (String, String) {
    let run = common::joj_command()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&run.stdout).into_owned(),
        String::from_utf8_lossy(&run.stderr).into_owned(),
    );
    assert!(run.status.success(), "joj {args:?}: {err}");
    (out, err)
}

#[test]
fn a_traced_wal_app_is_told_its_joj_share_and_what_waldio_would_do() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (text, _) = joj(
        dir.path(),
        &["trace", "--", "/usr/bin/python3", "-c", WAL_APP],
    );
    let meaning = text
        .split_once("what this means:\n")
        .unwrap_or_else(|| panic!("no 'what this means':\n{text}"))
        .1;
    assert!(
        meaning.contains("app.db (")
            && meaning.contains("each commit syncs")
            && meaning.contains("the journaling of journal")
            && meaning.contains("waldio"),
        "{meaning}"
    );
    // File data joj could not place is said in one line, not one per file.
    assert!(!text.contains("unplaced:"), "{text}");
    assert!(text.matches("note: some file data").count() <= 1, "{text}");
    if text.contains("note: some file data") {
        let (verbose, _) = joj(
            dir.path(),
            &[
                "trace",
                "--verbose",
                "--",
                "/usr/bin/python3",
                "-c",
                WAL_APP,
            ],
        );
        assert!(verbose.contains("snapshot(s):"), "{verbose}");
    }
}

#[test]
fn a_commands_document_says_null_for_what_it_did_not_measure() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let doc = common::joj_trace_json(&[], &["/usr/bin/python3", "-c", WAL_APP]);
    assert!(doc["latency_us"].is_null(), "{}", doc["latency_us"]);
    assert!(doc["config"]["threads"].is_null());
    assert!(doc["syscalls"]["read_calls"].is_null());
    assert!(doc["syscalls"]["write_calls"].as_u64().unwrap() >= 100);
    assert!(doc["files"]["wal_bytes"].as_u64().unwrap() >= 100 * 4096);
    assert!(
        doc["block_per_txn"]["data_by_role"]["wal_bytes"]
            .as_f64()
            .unwrap()
            > 4096.0
    );
    let kernel = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "kernel_counters")
        .expect("a kernel_counters check");
    assert_eq!(kernel["ok"], true, "{kernel}");
}

#[test]
fn compare_says_which_mode_would_sync_less_and_write_less() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (text, _) = joj(
        dir.path(),
        &[
            "compare",
            "--fs",
            "ext4",
            "-n",
            "50",
            "--modes",
            "wal,delete,waldio",
            "--out",
            out.path().to_str().unwrap(),
        ],
    );
    let meaning = text
        .split_once("what this means:\n")
        .unwrap_or_else(|| panic!("no 'what this means':\n{text}"))
        .1;
    assert!(
        meaning.contains("DELETE syncs") && meaning.contains("WAL would sync"),
        "{meaning}"
    );
    assert!(meaning.contains("waldio writes"), "{meaning}");
    assert!(meaning.contains("the journaling of journal"), "{meaning}");
}
