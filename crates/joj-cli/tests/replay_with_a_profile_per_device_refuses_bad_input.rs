//! `joj replay --profile-for` refuses, naming the fix: a device not in the trace, a device of
//! the trace left without a profile, one profile for two devices unless `--same-profile-ok`,
//! a malformed `DEV=PROFILE`, and `--completion` (which times one device back to back).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::process::Output;

/// A two-device trace in joj-trace format (header, then one record per line).
fn two_device_trace(dir: &std::path::Path) -> std::path::PathBuf {
    let records: Vec<joj_trace::TraceRecord> = (0..4)
        .map(|i| {
            let dev = if i % 2 == 0 { "7:0" } else { "7:1" };
            joj_trace::TraceRecord::new(i, dev, joj_trace::Op::Write, i * 8, 8)
        })
        .collect();
    common::two_device_trace(dir, &records)
}

fn replay(trace: &std::path::Path, args: &[&str]) -> Output {
    common::joj_command()
        .arg("replay")
        .arg(trace)
        .args(args)
        .output()
        .unwrap()
}

fn refused(out: &Output, says: &str) {
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(says), "expected {says:?} in: {err}");
}

#[test]
fn replay_with_a_profile_per_device_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let t = two_device_trace(dir.path());
    let a = ["--device-for", "7:0=galaxy-s5"];
    refused(
        &replay(&t, &[&a[..], &["--device-for", "7:9=emmc5"]].concat()),
        "trace has no request for device 7:9",
    );
    refused(&replay(&t, &a), "device 7:1 of the trace has no profile");
    refused(
        &replay(&t, &[&a[..], &["--device-for", "7:1=galaxy-s5"]].concat()),
        "--same-device-ok",
    );
    refused(
        &replay(&t, &["--device-for", "7:0"]),
        "expected DEV=PROFILE",
    );
    refused(
        &replay(&t, &["--device-for", "journal=emmc5"]),
        "no single device of the trace is called journal",
    );
    refused(
        &replay(
            &t,
            &[
                &a[..],
                &["--device-for", "7:1=emmc5", "--completion", "poll"],
            ]
            .concat(),
        ),
        "--completion applies to one back-to-back device",
    );
    let ok = replay(
        &t,
        &[
            &a[..],
            &["--device-for", "7:1=galaxy-s5", "--same-device-ok"],
        ]
        .concat(),
    );
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}
