//! `workflow/scripts/timecheck_table.py` reads records that may come from someone else's
//! results folder: a FIFO, a device, a symbolic link, a file over 16 MiB, text that is not a
//! record, and a noise record whose runs are not numbers are each refused with an error that
//! names the file, within seconds (never read without end, never followed).
//!
//! Needs the system Python (`/usr/bin/python3`) and `mkfifo`: without them the test fails and
//! names them.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The table over `record`: (exit status success, stderr), killed after 20 s.
fn table(record: &std::path::Path) -> (bool, String) {
    let mut child = Command::new("/usr/bin/python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../workflow/scripts/timecheck_table.py"
        ))
        .arg(record)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("/usr/bin/python3 is missing: this test runs the workflow's timecheck_table.py");
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("{} was still being read after 20 s", record.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn hostile_records_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    let made = Command::new("mkfifo").arg(p("fifo")).status();
    assert!(
        made.is_ok_and(|s| s.success()),
        "mkfifo failed or is missing"
    );
    let secret = p("secret.json");
    std::fs::write(
        &secret,
        r#"{"tag": "noise:cpu", "cpu_s": [1, 1, 1, 1, 1], "gap_s": 1, "load": 0}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink(&secret, p("link.json")).unwrap();
    std::fs::File::create(p("huge.json"))
        .unwrap()
        .set_len((16 << 20) + 1)
        .unwrap();
    std::fs::write(p("list.json"), "[1, 2]").unwrap();
    std::fs::write(
        p("words.json"),
        r#"{"tag": "noise:cpu", "cpu_s": ["a", "b", "c", "d", "e"], "gap_s": 1, "load": 0}"#,
    )
    .unwrap();
    let cases = [
        (p("fifo"), "is not a regular file"),
        (
            std::path::PathBuf::from("/dev/zero"),
            "is not a regular file",
        ),
        (p("link.json"), "not a symlink"),
        (p("huge.json"), "is larger than 16 MiB"),
        (p("list.json"), "is not a record"),
        (p("words.json"), "needs cpu_s"),
    ];
    for (path, why) in cases {
        let (ok, err) = table(&path);
        assert!(!ok, "{} was accepted", path.display());
        assert!(
            err.contains(why),
            "{}: want {why:?} in {err}",
            path.display()
        );
    }
    // The same record read directly is fine: only the way to it was refused.
    assert!(table(&secret).0);
}
