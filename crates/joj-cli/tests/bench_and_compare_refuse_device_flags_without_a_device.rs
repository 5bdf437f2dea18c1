//! Every flag of the device group of `joj bench` and `joj compare` (`--gc-validity`,
//! `--emmc-journal`, `--journal-device`, `--completion`, `--wakeup-us`, `--pace`, `--no-pace`)
//! is an option of the device: given without `--device` the command line is refused before
//! anything runs, naming the flag and `--device`, the fix. (The library cannot be asked for them
//! without a device: they live in its `DevicePlan`.)

mod common;

#[test]
fn bench_and_compare_refuse_device_flags_without_a_device() {
    let flags: [&[&str]; 8] = [
        &["--gc-validity", "50"],
        &["--emmc-journal"],
        &["--journal-device", "emmc5"],
        &["--completion", "poll"],
        &["--completion", "interrupt", "--wakeup-us", "5"],
        &["--wakeup-us", "5"],
        &["--pace"],
        &["--no-pace"],
    ];
    for command in ["bench", "compare"] {
        for flag in flags {
            let out_dir = tempfile::tempdir().unwrap();
            let mut args = vec![
                command,
                "--fs",
                "host",
                "-n",
                "5",
                "--out",
                out_dir.path().to_str().unwrap(),
            ];
            args.extend(flag);
            let (ok, stdout, stderr) = common::run_joj_text(&args);
            assert!(!ok, "{args:?} must fail");
            assert!(stdout.is_empty(), "{args:?}: nothing ran: {stdout}");
            assert!(
                stderr.contains("required arguments were not provided")
                    && stderr.contains("--device <PROFILE>"),
                "{args:?}: the fix, --device, is named: {stderr}"
            );
            assert!(
                stderr.contains(flag[0]),
                "{args:?}: the flag is named: {stderr}"
            );
            assert_eq!(
                std::fs::read_dir(out_dir.path()).unwrap().count(),
                0,
                "{args:?}: nothing was written"
            );
        }
    }
    // With --device the same flags get past the command line (here to the stack's own rule: a
    // device replays a trace, which needs a scratch filesystem).
    let out_dir = tempfile::tempdir().unwrap();
    let (ok, _, stderr) = common::run_joj_text(&[
        "bench",
        "--fs",
        "host",
        "-n",
        "5",
        "--out",
        out_dir.path().to_str().unwrap(),
        "--device",
        "emmc5",
        "--gc-validity",
        "50",
        "--no-pace",
    ]);
    assert!(!ok);
    assert!(stderr.contains("needs a scratch filesystem"), "{stderr}");
}
