//! `joj apptxn --device /etc/passwd` used to say "profile does not parse: expected value at
//! line 1 column 1", naming no file. A profile file that is not one is now named, with the
//! parser's complaint and the fix (a profile JSON file or a built-in name); the same for every
//! command that takes a profile.

mod common;

use common::run_joj;

#[test]
fn a_profile_file_that_does_not_parse_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    std::fs::write(&trace, "x\n").unwrap();
    let trace = trace.to_str().unwrap();
    for args in [
        vec!["apptxn", "--device", "/etc/passwd", "--transactions", "2"],
        vec!["replay", trace, "--device", "/etc/passwd"],
        vec![
            "device",
            "run",
            "--device",
            "/etc/passwd",
            "--requests",
            "10",
        ],
    ] {
        let out = run_joj(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("/etc/passwd is not a device profile: expected value at line 1")
                && stderr.contains("fix: give a profile JSON file")
                && stderr.contains("galaxy-s5"),
            "{args:?}: {stderr}"
        );
    }
}
