//! The README's extension examples — the `sqlite3` shell one and the Python one — run exactly as
//! written under `joj trace`, started from the repository's top directory as a reader would:
//! the command sees that directory with all its files (the relative
//! `target/ext/release/libjoj` loads), and what it writes lands on the traced filesystem, not in
//! the repository.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The code block after `<!-- test: NAME -->` in README.md, unchanged.
fn readme_block(name: &str) -> String {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let marker = format!("<!-- test: {name} -->");
    let after = text
        .split_once(&marker)
        .unwrap_or_else(|| panic!("README.md has no {marker}"))
        .1;
    after
        .split_once("```")
        .and_then(|(_, rest)| rest.split_once('\n'))
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(block, _)| block.to_string())
        .unwrap_or_else(|| panic!("README.md: no code block after {marker}"))
}

/// `joj trace --json -- COMMAND…` started in the repository's top directory: the document and
/// the command's standard output (which --json sends to joj's standard error).
fn trace_from_the_repository(command: &[&str]) -> (serde_json::Value, String) {
    assert!(
        repo().join("target/ext/release/libjoj.so").exists(),
        "the SQLite extension is not built; fix: ./scripts/setup.sh"
    );
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .current_dir(repo())
        .args(["trace", "--json", "--out"])
        .arg(out.path())
        .arg("--")
        .args(command)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "joj trace -- {command:?}: {stderr}");
    (serde_json::from_slice(&run.stdout).unwrap(), stderr)
}

fn wrote_db_on_the_scratch_filesystem(doc: &serde_json::Value, db: &str) {
    assert_eq!(common::traced_file(doc, db)["kind"], "database");
    let wal = common::traced_file(doc, &format!("{db}-waldio"));
    assert!(wal["data_bytes"].as_u64().unwrap() > 0, "{wal}");
    assert!(
        !repo().join(db).exists(),
        "the example's database must land on the traced filesystem, not in the repository"
    );
    assert_eq!(
        doc["command"]["start_dir"],
        repo().to_string_lossy().as_ref()
    );
}

#[test]
fn the_readme_shell_example_runs_unchanged_under_joj_trace() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let block = readme_block("extension-shell");
    let (doc, stdout) = trace_from_the_repository(&["sh", "-e", "-c", &block]);
    assert!(
        stdout.lines().any(|l| l.trim() == "10000|50005000"),
        "the reopened database must hold rows 1..10000; the shell printed:\n{stdout}"
    );
    wrote_db_on_the_scratch_filesystem(&doc, "rows.db");
}

#[test]
fn the_readme_python_example_runs_unchanged_under_joj_trace() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let block = readme_block("extension-python");
    let (doc, stdout) = trace_from_the_repository(&["/usr/bin/python3", "-c", &block]);
    assert!(
        stdout.contains("(10000, 50005000)"),
        "the Python example printed:\n{stdout}"
    );
    wrote_db_on_the_scratch_filesystem(&doc, "rows-py.db");
}
