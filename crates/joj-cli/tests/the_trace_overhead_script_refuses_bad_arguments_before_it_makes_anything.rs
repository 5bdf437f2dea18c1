//! `workflow/scripts/trace_overhead.sh`, which times a program untraced and under `joj trace`
//! (docs/measurement.md, "Per-call costs"), checks its arguments before it makes a work
//! directory, an image, a loop device or a tracefs instance: an unknown program or journal
//! mode, rounds out of 1–100, an unknown variant, a variant named twice, a bad name, a joj that
//! is not an executable file.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use std::process::Command;

fn made() -> Vec<String> {
    let mut names = Vec::new();
    for dir in ["/tmp", "/dev/shm"] {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with("joj-overhead") {
                names.push(n);
            }
        }
    }
    names.sort();
    names
}

#[test]
fn the_trace_overhead_script_refuses_bad_arguments_before_it_makes_anything() {
    let script = format!(
        "{}/../../workflow/scripts/trace_overhead.sh",
        env!("CARGO_MANIFEST_DIR")
    );
    let tmp = tempfile::tempdir().unwrap();
    let not_exec = tmp.path().join("joj");
    std::fs::write(&not_exec, "#!/bin/sh\n").unwrap();
    let not_exec = format!("now={}", not_exec.display());
    let before = made();
    for (args, says) in [
        (vec!["app", "wal"], "usage"),
        (vec!["bench", "1", "base"], "PROGRAM is app or micro"),
        (vec!["app", "wal;rm", "1", "base"], "MODE is one of"),
        (vec!["app", "wal", "1"], "at least one VARIANT"),
        (vec!["micro", "0", "base"], "ROUNDS is 1–100"),
        (vec!["micro", "101", "base"], "ROUNDS is 1–100"),
        (vec!["micro", "1x", "base"], "ROUNDS is 1–100"),
        (vec!["micro", "1", "ovl"], "unknown variant"),
        (vec!["micro", "1", "base", "blk", "base"], "named twice"),
        (
            vec!["micro", "1", "a=/bin/true", "a=/bin/true"],
            "named twice",
        ),
        (vec!["micro", "1", "Now=/bin/true"], "NAME is a-z"),
        (
            vec!["micro", "1", "base=/bin/true"],
            "names an untraced variant",
        ),
        (
            vec!["micro", "1", not_exec.as_str()],
            "not an executable file",
        ),
        (vec!["micro", "1", "now=/tmp"], "not an executable file"),
        (
            vec!["micro", "1", "now=/nonexistent/joj"],
            "not an executable file",
        ),
    ] {
        let out = Command::new("bash")
            .arg(&script)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: a round ran");
    }
    assert_eq!(made(), before, "a refused run left something behind");
}
