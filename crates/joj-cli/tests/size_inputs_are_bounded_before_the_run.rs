//! Every size-like number is checked against its bound before it sizes anything: a huge count
//! is refused with the bound and the fix, nothing is allocated for it, and nothing is left
//! behind (it used to abort allocating 80 GB, skipping every cleanup).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::Path;
use std::process::Output;

fn joj(args: &[&str], tmp: &Path) -> Output {
    common::joj_command()
        .args(args)
        // A run on the host makes its temporary directory here, so the test can see it.
        .env("TMPDIR", tmp)
        .output()
        .unwrap()
}

/// The command fails (status 1, no panic or abort) and its message contains every `needle`.
fn refused(args: &[&str], needles: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let out = joj(args, tmp.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(1 | 2)),
        "{args:?}: {:?}\n{err}",
        out.status
    );
    assert!(
        !err.contains("panicked") && !err.contains("memory allocation"),
        "{args:?}: {err}"
    );
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` missing in: {err}");
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "{args:?} left {left:?}");
}

#[test]
fn a_huge_transaction_count_is_refused_and_leaves_no_temp_dir() {
    refused(
        &["bench", "-n", "10000000000"],
        &["'-n <N>': it is above 6400000000"],
    );
    // Within what -n may say for 64 threads, above what one thread may run: the library's
    // own bound.
    refused(
        &["bench", "-n", "200000000"],
        &[
            "transactions per thread 200000000",
            "fix: give at most 100000000",
        ],
    );
    refused(
        &[
            "bench",
            "--transactions",
            "10000000000",
            "--start",
            "steady",
        ],
        &["it is above 100000000"],
    );
}

#[test]
fn every_size_like_flag_has_a_bound_naming_the_fix() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["bench", "--threads", "100000", "-n", "100000"],
            "'--threads <THREADS>': it is above 64",
        ),
        (&["bench", "-t", "64", "-D", "10", "-n", "64"], "databases"),
        (&["bench", "-T", "100000", "-n", "2"], "it is above 1000"),
        (
            &["bench", "--statements", "100000000", "-n", "1"],
            "it is above 10000",
        ),
        (
            &["bench", "-i", "99999999999999", "-n", "2"],
            "it is above 3600000",
        ),
        (
            &[
                "bench",
                "--prefill-kib",
                "99999999999",
                "-d",
                "1",
                "-n",
                "2",
            ],
            "it is above 16777216",
        ),
        (
            &["bench", "-a", "0", "-f", "99999999999999999"],
            "'-f <KIB>': it is above",
        ),
        (
            &["bench", "-a", "0", "-f", "200000", "-r", "100000"],
            "'--record-kib <RECORD_KIB>': it is above",
        ),
        (
            &[
                "crash",
                "device",
                "--cuts",
                "2",
                "--transactions",
                "10000000000",
            ],
            "it is above 100000",
        ),
        (
            &[
                "crash",
                "device",
                "--cuts",
                "100000000000",
                "--transactions",
                "5",
            ],
            "it is above 1000000",
        ),
        (
            &[
                "crash",
                "device",
                "--blocks-per-plane",
                "4000000",
                "--cuts",
                "1",
                "--transactions",
                "2",
            ],
            "physical pages",
        ),
        (
            &["device", "run", "--raw-gib", "3000", "--requests", "10"],
            "it is above 2048",
        ),
        (
            &["device", "run", "--requests", "100000000000000"],
            "--requests",
        ),
        (&["device", "run", "--io-size", "2048m"], "--io-size"),
        (&["device", "run", "--raw-gib", "17179869185"], "--raw-gib"),
        (
            &["crash", "device", "--max-delay-us", "99999999999999999"],
            "--max-delay-us",
        ),
        (
            &["device", "run", "--random-passes", "1e9"],
            "--random-passes",
        ),
        (
            &["bench", "--fs", "ext4", "--image-mib", "999999999"],
            "--image-mib",
        ),
    ];
    for (args, needle) in cases {
        refused(args, &[needle, "fix:"]);
    }
}

#[test]
fn a_negative_count_is_named_as_negative() {
    refused(
        &["bench", "-n", "-5"],
        &["'-5'", "cannot be negative", "fix:"],
    );
    refused(
        &["device", "run", "--random-passes", "-1"],
        &["--random-passes -1", "fix:"],
    );
}

#[test]
fn restart_on_host_is_refused_saying_why() {
    refused(
        &["restart", "--fs", "host"],
        &[
            "cuts the power of a filesystem joj makes",
            "fix: pick a scratch filesystem",
        ],
    );
}

/// A scratch image is sized against the filesystem that holds it before any file is made,
/// and a too-small one names the flag to raise.
#[test]
fn a_scratch_image_beyond_its_filesystem_or_below_the_minimum_is_refused() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    // In memory (the default), bounded by half of it; on a disk (--image-dir), by that disk's
    // filesystem.
    let disk = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = disk.path().to_str().unwrap();
    let on_disk = format!("does not fit in {dir}");
    for (extra, said) in [
        (&[][..], "more than joj keeps in memory"),
        (&["--image-dir", dir][..], on_disk.as_str()),
    ] {
        let mut args = vec![
            "bench",
            "--fs",
            "ext4",
            "--image-mib",
            "16000000",
            "-n",
            "5",
        ];
        args.extend_from_slice(extra);
        refused(&args, &[said, "fix: ask for at most"]);
    }
    refused(
        &["bench", "--fs", "ext4", "--image-mib", "1", "-n", "5"],
        &["too small for ext4", "--image-mib 32"],
    );
}

/// A traced scratch run and a compare with a huge count make no filesystem (they used to
/// abort allocating 80 GB after making one, leaving it behind).
#[test]
fn a_huge_count_on_a_scratch_filesystem_is_refused_before_it_is_made() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    for args in [
        &["bench", "--fs", "ext4", "--trace", "-n", "200000000"][..],
        &["compare", "--fs", "ext4", "-n", "200000000"],
    ] {
        let before = std::fs::read_dir("/run/joj").map_or(0, |d| d.count());
        refused(args, &["fix: give at most 100000000"]);
        let after = std::fs::read_dir("/run/joj").map_or(0, |d| d.count());
        assert!(after <= before, "{args:?} made a scratch directory");
    }
}

#[test]
fn a_transaction_count_for_a_file_workload_is_refused() {
    // It used to be ignored: the run wrote the default 1 MiB file whatever -n said.
    for flag in ["-n", "--transactions"] {
        refused(
            &["bench", "--fs", "host", "--op", "randwrite", flag, "10"],
            &[flag, "file workload", "--file-kib", "fix"],
        );
    }
}
