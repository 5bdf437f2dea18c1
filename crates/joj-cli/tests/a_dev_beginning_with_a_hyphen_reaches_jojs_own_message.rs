//! `joj replay --dev -1:0` (and `--device-for -1:0=emmc5`) got clap's "unexpected argument
//! '-1' found", as if `-1` were a flag; the value now reaches joj, which names the trace's
//! devices and the fix.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

#[test]
fn a_dev_beginning_with_a_hyphen_reaches_jojs_own_message() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("b.txt");
    std::fs::write(&trace, "8,0 1 6 0.000000000 1 D WS 2048 + 8 [x]\n").unwrap();
    for args in [["--dev", "-1:0"], ["--device-for", "-1:0=emmc5"]] {
        let out = common::joj_command()
            .arg("replay")
            .arg(&trace)
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("joj: error: ")
                && err.contains("-1:0")
                && err.contains("8:0")
                && err.contains("fix:"),
            "{args:?}: {err}"
        );
    }
}
