//! The README's extension commands, run as they are written (with the built library's path):
//! the distribution's `sqlite3` shell and `python3` load the extension, create a waldio
//! database, write 10,000 rows in 10,000 transactions, reopen it and read them back.

mod common;

use std::process::Command;

#[test]
fn the_sqlite3_shell_writes_10000_transactions_through_waldio_and_reads_them_back() {
    common::sqlite3();
    let dir = tempfile::tempdir().unwrap();
    let block = common::readme_block("extension-shell");
    let out = common::run_ok(
        Command::new("sh")
            .args(["-e", "-c", &block])
            .current_dir(dir.path()),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().any(|l| l.trim() == "10000|50005000"),
        "the reopened database must hold rows 1..10000; the shell printed:\n{stdout}"
    );
    let header = std::fs::read(dir.path().join("rows.db")).unwrap();
    assert_eq!(header[19], 0x57, "a waldio database in WAL mode is marked");
}

#[test]
fn python_writes_10000_transactions_through_waldio_and_reads_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let code = common::readme_block("extension-python");
    let out = common::run_ok(
        Command::new(common::python())
            .args(["-c", &code])
            .current_dir(dir.path()),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("(10000, 50005000)"), "{stdout}");
    let state: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert!(
        state["counters"]["commits"].as_u64().unwrap() >= 10_000,
        "every transaction was a waldio commit: {state}"
    );
    assert_eq!(state["defaults"]["sync"], "full");
    assert_eq!(
        state["not_in_wal_mode"],
        serde_json::json!([]),
        "the example puts its database in WAL mode: {state}"
    );
}

#[test]
fn the_shell_and_python_examples_run_one_after_the_other_in_one_directory() {
    // As a reader runs them: the same directory, the shell's first, then Python's.
    common::sqlite3();
    let dir = tempfile::tempdir().unwrap();
    common::run_ok(
        Command::new("sh")
            .args(["-e", "-c", &common::readme_block("extension-shell")])
            .current_dir(dir.path()),
    );
    let out = common::run_ok(
        Command::new(common::python())
            .args(["-c", &common::readme_block("extension-python")])
            .current_dir(dir.path()),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().next(), Some("(10000, 50005000)"), "{stdout}");
}
