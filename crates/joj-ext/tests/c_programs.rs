//! C programs against the system's SQLite: the example loads the extension, or links it and
//! registers it as an auto-extension; an entry-point call with an older SQLite version is
//! refused with a message naming both versions.

mod common;

use std::path::Path;
use std::process::Command;

fn example() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/waldio_demo.c")
}

fn rows_and_commits(stdout: &[u8]) -> (u64, u64) {
    let text = String::from_utf8_lossy(stdout);
    let rows = text
        .lines()
        .find_map(|l| l.strip_prefix("rows "))
        .expect("rows line")
        .parse()
        .unwrap();
    let state: serde_json::Value = serde_json::from_str(
        text.lines()
            .find_map(|l| l.strip_prefix("waldio "))
            .expect("waldio line"),
    )
    .unwrap();
    (rows, state["counters"]["commits"].as_u64().unwrap())
}

#[test]
fn the_c_example_loads_the_extension_and_writes_through_waldio() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::cc(dir.path(), "demo", &example(), &[]);
    let out = common::run_ok(
        Command::new(&exe)
            .arg(common::lib())
            .arg(dir.path().join("demo.db"))
            .arg("500"),
    );
    let (rows, commits) = rows_and_commits(&out.stdout);
    assert_eq!(rows, 500);
    assert!(commits >= 500, "each insert a waldio commit: {commits}");
}

#[test]
fn the_c_example_linked_with_libjoj_registers_it_as_an_auto_extension() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::cc(dir.path(), "linked", &example(), &["-DJOJ_LINKED", "-ljoj"]);
    let out = common::run_ok(
        Command::new(&exe)
            .arg("-")
            .arg(dir.path().join("linked.db"))
            .arg("200"),
    );
    assert_eq!(rows_and_commits(&out.stdout).0, 200);
}

#[test]
fn a_sqlite_older_than_the_headers_is_refused_naming_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/too_old.c");
    let exe = common::cc(dir.path(), "too_old", &src, &["-ljoj"]);
    let out = common::run_ok(&mut Command::new(&exe));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("rc 1\n"), "SQLITE_ERROR expected: {text}");
    assert!(
        text.contains("this SQLite is 3.8.0, older than the 3.")
            && text.contains("rebuild it against this SQLite's headers"),
        "{text}"
    );
}
