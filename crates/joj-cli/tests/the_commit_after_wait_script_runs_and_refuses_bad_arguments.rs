//! `workflow/scripts/commit_after_wait.py` (docs/device-model.md, "A commit after a wait")
//! times the same commit back to back, after a sleep and after a busy wait: it prints one line
//! for each, and refuses a wait or a block count out of bounds before it makes a database.
//!
//! Needs the system Python (`/usr/bin/python3`): without it the test fails and names it.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use std::process::Command;

fn script() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../workflow/scripts/commit_after_wait.py")
}

#[test]
fn the_commit_after_wait_script_runs_and_refuses_bad_arguments() {
    assert!(
        std::path::Path::new("/usr/bin/python3").exists(),
        "needs /usr/bin/python3 (Debian's python3)"
    );
    let tmp = tempfile::tempdir().unwrap();
    for bad in [
        &["0", "3"][..],
        &["101", "3"],
        &["1", "2"],
        &["1", "301"],
        &["x"],
    ] {
        let out = Command::new("/usr/bin/python3")
            .arg(script())
            .args(bad)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("usage"),
            "{bad:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!tmp.path().join("commit_after_wait.db").exists(), "{bad:?}");
    }
    let out = Command::new("/usr/bin/python3")
        .arg(script())
        .args(["0.1", "3"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    for kind in [
        "back to back: 100 commits",
        "after a 0.1 ms sleep: 100 commits",
        "after a 0.1 ms spin: 100 commits",
    ] {
        assert!(said.contains(kind), "{said}");
    }
}
