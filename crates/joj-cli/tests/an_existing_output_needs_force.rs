//! A command never replaces an existing file it was told to write unless `--force` is given:
//! `trace import -o`, `trace plot -o` and `--save` of crash, compare and restart refuse, naming
//! the fix, before any work, and leave the file as it was; with `--force` the file is replaced
//! whole (written beside it, then renamed over it), leaving nothing else behind.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;
mod in_dir;

use in_dir::{joj, names};
use std::path::Path;

const BLKPARSE: &str = "  7,0    1        6     0.000004500  1234  D  WS 2048 + 8 [joj]\n";
const KEEP: &str = "the user's own file\n";

fn refused(args: &[&str], dir: &Path) {
    let (ok, out, err) = joj(args, dir);
    assert!(!ok, "{args:?} must refuse to replace keep.out");
    assert!(
        err.contains("keep.out already exists") && err.contains("--force"),
        "{args:?}: {err}"
    );
    assert_eq!(out, "", "{args:?} refused before the work: nothing printed");
    assert_eq!(std::fs::read_to_string(dir.join("keep.out")).unwrap(), KEEP);
}

#[test]
fn an_existing_output_needs_force() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("sda.txt"), BLKPARSE).unwrap();
    std::fs::write(d.join("keep.out"), KEEP).unwrap();
    let (ok, _, err) = joj(&["trace", "import", "-o", "t.jsonl", "sda.txt"], d);
    assert!(ok, "{err}");
    let before = names(d);

    refused(&["trace", "import", "-o", "keep.out", "sda.txt"], d);
    refused(&["trace", "plot", "-o", "keep.out", "t.jsonl"], d);
    // Each of these would run for minutes (or need a scratch filesystem) if the refusal came
    // after the run.
    refused(&["crash", "device", "--save", "keep.out"], d);
    refused(&["compare", "--save", "keep.out"], d);
    refused(&["restart", "--save", "keep.out"], d);
    assert_eq!(names(d), before, "nothing left behind");

    let (ok, _, err) = joj(
        &["trace", "plot", "--force", "-o", "keep.out", "t.jsonl"],
        d,
    );
    assert!(ok, "{err}");
    assert!(
        std::fs::read_to_string(d.join("keep.out"))
            .unwrap()
            .starts_with("<svg")
    );
    let (ok, _, err) = joj(
        &["trace", "import", "--force", "-o", "keep.out", "sda.txt"],
        d,
    );
    assert!(ok, "{err}");
    let (_, records) = joj_trace::read_trace_file(&d.join("keep.out")).unwrap();
    assert_eq!(records.len(), 1);
    let (ok, out, err) = joj(
        &[
            "crash",
            "device",
            "--force",
            "--save",
            "keep.out",
            "--json",
            "--workload",
            "rl-bench",
            "--rl-divisor",
            "100",
            "--cuts",
            "3",
        ],
        d,
    );
    assert!(ok, "{err}");
    let printed: serde_json::Value = serde_json::from_str(&out).unwrap();
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("keep.out")).unwrap()).unwrap();
    assert_eq!(saved, printed);
    assert_eq!(
        names(d),
        before,
        "replaced in place, nothing else left behind"
    );
}
