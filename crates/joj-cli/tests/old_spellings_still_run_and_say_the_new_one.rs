//! Flags renamed for one vocabulary keep their old spelling for a release: the command line
//! parses as before, and joj says the new spelling on stderr. `--help` at the end stops each
//! before any work, after clap has read every flag before it.

mod common;

#[test]
fn old_spellings_still_run_and_say_the_new_one() {
    let old: &[(&[&str], &str)] = &[
        (&["bench", "--sync", "normal"], "--synchronous"),
        (&["speed", "-n", "5", "-s", "off"], "--transactions"),
        (&["restart", "-n", "5"], "--transactions"),
        (&["apptxn", "-j", "xftl", "-n", "5"], "--ftl"),
        (&["crash", "--cuts", "3", "-n", "5"], "joj crash device"),
        (
            &[
                "crash",
                "--fs",
                "ext4",
                "-j",
                "wal",
                "--fs-canary",
                "skip-sync",
                "--save-dir",
                "d",
            ],
            "joj crash fs",
        ),
        (
            &["crash", "--from-log", "l", "--fs-workload", "postmark"],
            "--workload",
        ),
        (&["replay", "t", "--profile", "emmc5"], "--device"),
        (
            &[
                "replay",
                "t",
                "--profile-for",
                "main=emmc5",
                "--same-profile-ok",
            ],
            "--device-for",
        ),
        (
            &["device", "run", "--profile", "emmc5", "--ops", "10"],
            "--requests",
        ),
        (
            &["device", "format", "img", "--profile", "emmc5"],
            "--device",
        ),
    ];
    for (args, new) in old {
        let out = common::run_joj(&[args, &["--help"][..]].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        assert!(
            err.contains("note:") && err.contains(new),
            "{args:?}: {err}"
        );
    }
}
