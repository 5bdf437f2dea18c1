//! `joj syscalls record -o R --keep-strace K` writes two files; when they are one file — by
//! the same name, through another spelling of the directory, or through a link to it — it is
//! refused before the command runs, naming both options and the fix.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;
mod in_dir;

use in_dir::{joj, names};

#[test]
fn syscalls_record_refuses_one_file_for_both_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::os::unix::fs::symlink("sub", d.join("via")).unwrap();
    std::fs::write(d.join("sub/old.jsonl"), "kept\n").unwrap();
    let before = names(d);
    for (output, keep, force) in [
        ("r3.jsonl", "r3.jsonl", false),
        ("r3.jsonl", "./r3.jsonl", true),
        ("sub/r.jsonl", "via/r.jsonl", false),
        ("sub/old.jsonl", "via/old.jsonl", true),
    ] {
        let mut args = vec![
            "syscalls",
            "record",
            "--root",
            ".",
            "-o",
            output,
            "--keep-strace",
            keep,
        ];
        if force {
            args.push("--force");
        }
        args.extend(["--", "touch", "ran"]);
        let (ok, _, err) = joj(&args, d);
        assert!(!ok, "{args:?}");
        assert!(
            err.contains(&format!(
                "--keep-strace {keep} is the same file as -o/--output {output}"
            )) && err.contains("fix: give the two outputs different paths"),
            "{args:?}: {err}"
        );
        assert_eq!(names(d), before, "{args:?}: the command never ran");
        assert_eq!(names(&d.join("sub")), ["old.jsonl"], "{args:?}");
    }
    assert_eq!(
        std::fs::read_to_string(d.join("sub/old.jsonl")).unwrap(),
        "kept\n"
    );
}
