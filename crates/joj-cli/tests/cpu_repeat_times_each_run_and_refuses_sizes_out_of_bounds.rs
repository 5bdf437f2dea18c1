//! `workflow/scripts/cpu_repeat.py`, the floor under the checks of modeled time (results:
//! measurement-stack.md, "This machine's own repeatability"), writes one CPU and one wall time
//! per run asked for, and refuses sizes out of its bounds, and an OUT that is not a regular
//! file, before it writes anything (a config value is an input like any other; fewer than five
//! runs would leave no window of five).
//!
//! Needs the system Python (`/usr/bin/python3`): without it the test fails and names it.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

#[test]
fn cpu_repeat_times_each_run_and_refuses_sizes_out_of_bounds() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("noise.json");
    let out = common::workflow_script("cpu_repeat.py", &[rec.to_str().unwrap(), "5", "0.01", "0"]);
    assert!(out.status.success(), "{out:?}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    assert_eq!(doc["tag"], "noise:cpu");
    for key in ["cpu_s", "wall_s"] {
        let xs = doc[key].as_array().unwrap();
        assert_eq!(xs.len(), 5, "{doc}");
        assert!(xs.iter().all(|x| x.as_f64().unwrap() > 0.0), "{doc}");
    }
    for bad in [
        ["4", "0.01", "0"],
        ["5", "1000", "0"],
        ["5", "0.01", "-1"],
        ["5", "x", "0"],
    ] {
        let gone = tmp.path().join("refused.json");
        let out = common::workflow_script(
            "cpu_repeat.py",
            &[gone.to_str().unwrap(), bad[0], bad[1], bad[2]],
        );
        assert!(!out.status.success(), "{bad:?} was accepted");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("RUNS 5–1000"),
            "{bad:?}: {out:?}"
        );
        assert!(!gone.exists(), "{bad:?} wrote a record");
    }
    // An OUT that is a symbolic link is refused, and what it names is left as it was.
    let kept = tmp.path().join("kept");
    std::fs::write(&kept, "kept").unwrap();
    let link = tmp.path().join("link.json");
    std::os::unix::fs::symlink(&kept, &link).unwrap();
    let out = common::workflow_script("cpu_repeat.py", &[link.to_str().unwrap(), "5", "0.01", "0"]);
    assert!(!out.status.success(), "a symlink OUT was accepted");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not a regular file"),
        "{out:?}"
    );
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "kept");
}
