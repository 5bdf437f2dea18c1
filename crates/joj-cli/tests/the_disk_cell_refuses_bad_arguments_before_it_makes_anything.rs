//! `workflow/scripts/timecheck_disk_cell.py`, one cell of the calibrated-disk check (a
//! calibration, then the cell's runs), checks every argument before it makes a folder, a file
//! or a loop device: a journal mode or operation joj does not have, a size out of bounds or a
//! relative disk folder is refused with its usage (a config value is an input like any other).
//!
//! Needs the system Python (`/usr/bin/python3`): without it the test fails and names it.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

#[test]
fn the_disk_cell_refuses_bad_arguments_before_it_makes_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("timecheck");
    let disk = tmp.path().join("disk");
    let (o, d) = (out_dir.to_str().unwrap(), disk.to_str().unwrap());
    let good = ["0", "/bin/false", d, "wal", "insert", "100", "3"]; // /bin/false: an executable
    for (at, bad, says) in [
        (0, "-1", "WAIT_S"),
        (0, "99999", "WAIT_S"),
        (3, "wal; rm -rf /", "MODE"),
        (4, "select", "OP"),
        (5, "0", "N is"),
        (5, "10000000", "N is"),
        (6, "21", "RUNS"),
        (2, "relative/dir", "DISK_DIR"),
        (1, "/nonexistent/joj", "JOJ is"),
    ] {
        let mut args = good;
        args[at] = bad;
        let mut all = vec![o];
        all.extend(args);
        let out = common::workflow_script("timecheck_disk_cell.py", &all);
        assert!(!out.status.success(), "{bad:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(says) && err.contains("usage:"),
            "{bad:?}: {err}"
        );
        assert!(!out_dir.exists() && !disk.exists(), "{bad:?} made a folder");
    }
    let out = common::workflow_script("timecheck_disk_cell.py", &[o, "0"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("usage:"));
}
