#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! `joj bench --fs host --dir D` (Mobibench's `-p D`) is run again and again in the same
//! directory, as a Mobibench user does. joj never writes into a database it did not make, so a
//! run removes, at its end, the files it made in D — each database, the journals SQLite made
//! beside it, a file workload's files — and says so; the next run then finds D as the first
//! did. It used to leave `joj-0.db`, and the second run was refused with `./joj-0.db already
//! exists: joj creates its own databases …`. A file that was in D before the run is still
//! refused and left as it was.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

/// Every name in `dir` with its bytes.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// `joj bench --fs host --dir DIR ARGS` run in `cwd`: the exit code and stderr.
fn bench_in(cwd: &Path, dir: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = common::joj_command()
        .current_dir(cwd)
        .args(["bench", "--fs", "host", "--dir", dir])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn two_runs_in_a_row_in_one_directory_both_run() {
    for args in [
        &["-n", "10"][..],
        &["-n", "10", "-j", "wal"],
        &["-n", "10", "-j", "truncate"],
        &["-n", "10", "-j", "persist", "-t", "2"],
        &["-n", "10", "-j", "waldio"],
        &["-a", "0", "-f", "64", "-r", "4"],
    ] {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
        let before = contents(tmp.path());
        let runs: Vec<_> = (1..=2)
            .map(|_| {
                let ran = bench_in(tmp.path(), ".", args);
                (ran, contents(tmp.path()))
            })
            .collect();
        for (run, ((code, err), _)) in runs.iter().enumerate() {
            assert_eq!(*code, Some(0), "{args:?}, run {}: {err}", run + 1);
        }
        for (run, ((_, err), after)) in runs.iter().enumerate() {
            assert!(
                err.contains("removed the files it made"),
                "{args:?}, run {} does not say what it removed: {err}",
                run + 1
            );
            assert_eq!(
                *after,
                before,
                "{args:?}, run {} left the directory other than it found it",
                run + 1
            );
        }
    }
}

#[test]
fn a_database_that_was_there_before_is_still_refused_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("joj-0.db"), "SOMEONE ELSE'S").unwrap();
    let before = contents(tmp.path());
    let (code, err) = bench_in(tmp.path(), ".", &["-n", "10"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(
            "./joj-0.db already exists: joj creates its own databases and never writes \
             into one it did not make"
        ) && err.contains("fix:"),
        "{err}"
    );
    assert!(!err.contains("removed"), "{err}");
    assert_eq!(contents(tmp.path()), before);
}

/// Ctrl-C in the middle of a `--dir` run leaves the directory as the run's end does: the files
/// it made so far are removed, the rest kept, and the next run in it runs. (It used to die at
/// once on the signal, leaving `joj-0.db` and its journal; the next run was then refused.)
#[test]
fn ctrl_c_in_a_dir_run_removes_what_it_made() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
    let before = contents(tmp.path());
    let log = tmp.path().join("..").join(format!(
        "{}-stderr.txt",
        tmp.path().file_name().unwrap().to_string_lossy()
    ));
    let mut run = common::Run(
        common::joj_command()
            .current_dir(tmp.path())
            .args(["bench", "--fs", "host", "--dir", ".", "-n", "100000000"])
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let t0 = std::time::Instant::now();
    while !tmp.path().join("joj-0.db").exists() {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "the run never made its database"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    common::signal(run.id(), common::SIGINT);
    let status = run.wait();
    let said = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    assert_eq!(status.code(), Some(130), "{status:?}: {said}");
    assert!(said.contains("removed the files it made"), "{said}");
    assert_eq!(contents(tmp.path()), before, "{said}");
    let (code, err) = bench_in(tmp.path(), ".", &["-n", "10"]);
    assert_eq!(code, Some(0), "{err}");
}
