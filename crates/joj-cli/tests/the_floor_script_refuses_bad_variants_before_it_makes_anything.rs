//! `workflow/scripts/trace_floor.sh`, which measures what `joj trace`'s surroundings and a BPF
//! observer cost a program (docs/measurement.md, "Cost of watching"), checks its variants before
//! it makes a filesystem, a loop device or a tracefs instance: an unknown part, two readers, two
//! BPF observers in one run, the block events taken twice, a part named twice.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use std::process::Command;

#[test]
fn the_floor_script_refuses_bad_variants_before_it_makes_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let app = tmp.path().join("app.py");
    std::fs::write(&app, "raise SystemExit('the app was run')\n").unwrap();
    let script = format!(
        "{}/../../workflow/scripts/trace_floor.sh",
        env!("CARGO_MANIFEST_DIR")
    );
    for (variant, says) in [
        ("nope", "unknown variant"),
        ("ovl+kprobe", "unknown variant"),
        ("poll1+poll10", "two readers"),
        ("bpf+bpfblk", "two observers"),
        ("bpf+bpfoff", "two observers"),
        ("blk+bpfblk", "block events twice"),
        ("ovl+blk+bpfblk", "block events twice"),
        ("ovl+bpf+ovl", "a part twice"),
        ("blk+blk", "a part twice"),
    ] {
        let out = Command::new("bash")
            .arg(&script)
            .args([app.to_str().unwrap(), "wal", "1", "base", variant])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{variant}: {err}");
        assert!(err.contains(says), "{variant}: {err}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("base "),
            "{variant}: a round ran"
        );
    }
}
