//! Every output path is checked before the run: a `--save` in a missing directory, a `--save`
//! that is a directory, an `--out` that cannot be a directory, an image path in a missing
//! directory. Each is refused with a message naming the path and the fix, before anything is
//! printed or created. (Were the check after the run, `joj crash` here would run 1000 power
//! cuts first, and `compare` would need a scratch filesystem.)

mod common;
mod in_dir;

use in_dir::joj;
use std::path::Path;

fn refused(args: &[&str], dir: &Path, says: &[&str]) {
    let (ok, out, err) = joj(args, dir);
    assert!(!ok, "{args:?} must be refused");
    assert_eq!(out, "", "{args:?}: refused before the run, nothing printed");
    for s in says {
        assert!(err.contains(s), "{args:?} must say {s:?}: {err}");
    }
    assert!(err.contains("fix:"), "{args:?}: {err}");
}

#[test]
fn a_bad_save_path_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("results")).unwrap();
    std::fs::write(d.join("a-file"), "x").unwrap();
    let missing = ["--save", "the directory missing does not exist"];

    let crash = [
        "crash",
        "device",
        "--workload",
        "rl-bench",
        "--rl-divisor",
        "100",
    ];
    refused(
        &[&crash[..], &["--save", "missing/x.json"]].concat(),
        d,
        &missing,
    );
    refused(
        &["compare", "-n", "10", "--save", "missing/x.json"],
        d,
        &missing,
    );
    refused(
        &[
            "restart",
            "--transactions",
            "10",
            "--save",
            "missing/x.json",
        ],
        d,
        &missing,
    );
    refused(
        &[&crash[..], &["--save", "results"]].concat(),
        d,
        &["--save", "results is a directory"],
    );
    refused(
        &["compare", "-n", "10", "--save", "a-file/x.json"],
        d,
        &["a-file is not a directory"],
    );
    refused(
        &[
            "bench",
            "--fs",
            "ext4",
            "--trace",
            "-n",
            "10",
            "--out",
            "a-file/traces",
        ],
        d,
        &["--out", "a-file is not a directory"],
    );
    refused(
        &["device", "format", "missing/dev.img"],
        d,
        &["the directory missing does not exist"],
    );

    let mut left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["a-file", "results"], "nothing created");
}
