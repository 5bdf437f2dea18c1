//! `workflow/scripts/observer_cost.py`, which measures what watching a run costs its host time
//! (results: "What the modeled runs' lean is made of"), checks every argument before it runs
//! joj or makes a tracefs instance: a binary that is not an executable file, rounds or
//! transactions out of bounds, a cell that is not a journal mode and operation joj has.
//!
//! Needs the system Python (`/usr/bin/python3`): without it the test fails and names it.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

#[test]
fn the_observer_cost_script_refuses_bad_arguments_before_it_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("ran");
    // A stand-in joj that leaves a mark if it is ever run.
    let fake = tmp.path().join("joj");
    std::fs::write(&fake, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    let mut perms = std::fs::metadata(&fake).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&fake, perms).unwrap();
    let joj = fake.to_str().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let good = [joj, "2", "100", "wal:insert"];
    for (at, bad, says) in [
        (0, dir, "JOJ is"),
        (0, "/nonexistent/joj", "JOJ is"),
        (1, "0", "ROUNDS"),
        (1, "101", "ROUNDS"),
        (1, "-3", "ROUNDS"),
        (1, "\u{b2}", "ROUNDS"),
        (2, "0", "N is"),
        (2, "1000001", "N is"),
        (3, "wal", "a cell is"),
        (3, "memory:insert", "a cell is"),
        (3, "wal:select", "a cell is"),
        (3, "wal:insert; rm -rf /", "a cell is"),
    ] {
        let mut args = good;
        args[at] = bad;
        let out = common::workflow_script("observer_cost.py", &args);
        assert!(!out.status.success(), "{bad:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(says) && err.contains("usage:"),
            "{bad:?}: {err}"
        );
        assert!(!marker.exists(), "{bad:?}: joj was run");
    }
    let out = common::workflow_script("observer_cost.py", &[joj, "1"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("usage:"));
    assert!(!marker.exists());
}
