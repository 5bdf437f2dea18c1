//! `joj … | head -1`: when the reader of stdout goes away, joj stops printing and exits 0
//! without a panic (it used to die with "failed printing to stdout: Broken pipe", rc 101).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

/// Runs joj with a stdout pipe whose reading end is closed before joj writes anything, so
/// every write gets EPIPE.
fn with_stdout_closed(args: &[&str]) -> (Option<i32>, String) {
    let mut child = common::spawn_joj_piped(args);
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_ends_waldio_inspect_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(conn);
    let (code, err) = with_stdout_closed(&["waldio", "inspect", db.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
}

#[test]
fn a_closed_stdout_ends_a_table_and_a_json_document_quietly() {
    for args in [
        &["bench", "-n", "5"][..],
        &["bench", "-n", "5", "--json"],
        &["--version"],
    ] {
        let (code, err) = with_stdout_closed(args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
