//! An output path that is the same file as an input — by the same name, through a symlink or
//! through a hard link — is refused before anything is written, naming the fix; the input is
//! untouched and nothing is left beside it. `--force` does not change that. A device profile
//! file given to `--device` is an input of crash, restart, compare and apptxn.

mod common;
mod in_dir;

use in_dir::{joj, names};

const BLKPARSE: &str = "  7,0    1        6     0.000004500  1234  D  WS 2048 + 8 [joj]\n\
                        7,0    1        7     0.000005500  1234  D  FN [jbd2/loop0-8]\n";

#[test]
fn an_output_never_replaces_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("sda.txt"), BLKPARSE).unwrap();
    let (ok, _, err) = joj(&["trace", "import", "-o", "run.trace.jsonl", "sda.txt"], d);
    assert!(ok, "{err}");
    let trace = std::fs::read(d.join("run.trace.jsonl")).unwrap();
    std::os::unix::fs::symlink("run.trace.jsonl", d.join("link.jsonl")).unwrap();
    std::fs::hard_link(d.join("run.trace.jsonl"), d.join("hard.jsonl")).unwrap();
    std::fs::write(d.join("phone.json"), "{}\n").unwrap();
    let before = names(d);

    for output in [
        "run.trace.jsonl",
        "./run.trace.jsonl",
        "link.jsonl",
        "hard.jsonl",
    ] {
        for force in [false, true] {
            let mut args = vec!["trace", "plot", "-o", output, "run.trace.jsonl"];
            if force {
                args.push("--force");
            }
            let (ok, _, err) = joj(&args, d);
            assert!(!ok, "plotting over the input must fail: {args:?}");
            assert!(
                err.contains("same file as the input run.trace.jsonl") && err.contains("fix:"),
                "{args:?}: {err}"
            );
        }
    }
    let (ok, _, err) = joj(
        &["trace", "import", "--force", "-o", "sda.txt", "sda.txt"],
        d,
    );
    assert!(!ok);
    assert!(err.contains("same file as the input sda.txt"), "{err}");

    // A device profile given as a file is an input of the run too.
    for cmd in [
        &["crash", "device"][..],
        &["restart"],
        &["compare"],
        &["apptxn"],
    ] {
        let flags = ["--device", "phone.json", "--force", "--save", "phone.json"];
        let (ok, _, err) = joj(&[cmd, &flags[..]].concat(), d);
        assert!(!ok);
        assert!(err.contains("same file as the input phone.json"), "{err}");
    }
    assert_eq!(
        std::fs::read_to_string(d.join("phone.json")).unwrap(),
        "{}\n"
    );

    assert_eq!(std::fs::read(d.join("run.trace.jsonl")).unwrap(), trace);
    assert_eq!(
        std::fs::read_to_string(d.join("sda.txt")).unwrap(),
        BLKPARSE
    );
    assert_eq!(names(d), before, "nothing written, nothing left behind");
}
