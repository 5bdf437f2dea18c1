#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! `--emmc-journal` replays the run's trace with the optimized journal after the run. A replay
//! that could only fail is refused before the run, with the fix: a `--journal-region-mib`
//! larger than the whole device (the region goes above the filesystem's blocks), and
//! `--fs ext4-extjournal`, which traces two devices where the replay takes one. Both used to be
//! refused only after the run (13.6 s of `-n 20000` wasted), its trace and plot written. `joj
//! replay` refuses such a region before it reads the trace.

mod common;

/// `joj bench -n 50 --device emmc5 --emmc-journal ARGS --out OUT`: the exit code and stderr,
/// and whether the run wrote anything to OUT.
fn bench(args: &[&str]) -> (Option<i32>, String, bool) {
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .args(["bench", "-n", "50", "--device", "emmc5", "--emmc-journal"])
        .args(args)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let wrote = std::fs::read_dir(out.path())
        .map(|d| d.count() > 0)
        .unwrap_or(false);
    (
        run.status.code(),
        String::from_utf8_lossy(&run.stderr).into_owned(),
        wrote,
    )
}

#[test]
fn a_region_larger_than_the_device_is_refused_before_the_run() {
    let (code, err, wrote) = bench(&["--fs", "ext4", "--journal-region-mib", "1048576"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("--journal-region-mib 1048576")
            && err.contains("whole capacity is 7656 MiB")
            && err.contains("fix:"),
        "{err}"
    );
    assert!(!wrote, "the run ran: {err}");
}

#[test]
fn an_external_journal_filesystem_is_refused_before_the_run() {
    let (code, err, wrote) = bench(&["--fs", "ext4-extjournal"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("--fs ext4-extjournal traces two") && err.contains("fix: --fs ext4"),
        "{err}"
    );
    assert!(!wrote, "the run ran: {err}");
}

#[test]
fn joj_replay_refuses_the_region_before_it_reads_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .args([
            "replay",
            "--device",
            "emmc5",
            "--emmc-journal",
            "--journal-region-mib",
            "1048576",
        ])
        .arg(dir.path().join("no-such.trace.jsonl"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("a journal region of 1048576 MiB is larger than the whole device")
            && err.contains("fix:"),
        "{err}"
    );
}
