//! `joj trace` refuses bad input before it makes anything, naming the fix: no command, a
//! command that does not exist, `--fs host`, a `--dir` that is not inside the scratch
//! filesystem. The subcommands still work. (A failing command: a_failed_command_is_said_first_with_its_stderr_and_the_right_fix.)

mod common;

use common::run_joj;

fn refused(args: &[&str], says: &[&str]) {
    let out = run_joj(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} was accepted");
    for s in says {
        assert!(err.contains(s), "{args:?}: {err:?} does not say {s:?}");
    }
    assert!(out.stdout.is_empty(), "{args:?} printed {:?}", out.stdout);
}

#[test]
fn joj_trace_bad_input_is_named_with_its_fix() {
    refused(&["trace"], &["after `--`", "fix:"]);
    refused(&["trace", "--fs", "ext4"], &["after `--`", "fix:"]);
    refused(
        &["trace", "--", "no-such-program-joj-test"],
        &["command not found", "no-such-program-joj-test", "fix:"],
    );
    refused(
        &["trace", "--", "./not/here"],
        &["command not found", "fix:"],
    );
    refused(
        &["trace", "--fs", "host", "--", "true"],
        &["scratch filesystem", "fix:"],
    );
    refused(
        &["trace", "--dir", "/tmp", "--", "true"],
        &["--dir /tmp", "absolute", "fix:"],
    );
    refused(
        &["trace", "--dir", "../up", "--", "true"],
        &["--dir ../up", "..", "fix:"],
    );
    // A subcommand and a command do not mix; the subcommands keep working.
    refused(&["trace", "show", "--", "true"], &[]);
    let out = run_joj(&["trace", "show", "/nonexistent/t.jsonl"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open"));
}

/// The command gets the signal state a shell gives it, not joj's (Rust ignores SIGPIPE): in
/// `yes | head -n 1`, `yes` dies of SIGPIPE quietly instead of failing with "Broken pipe".
#[test]
fn the_traced_command_starts_with_default_signal_handling() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let doc = common::joj_trace_json(&[], &["sh", "-c", "yes | head -n 1 >/dev/null; echo done"]);
    assert_eq!(doc["command"]["exit_code"], 0);
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .args(["trace", "--out"])
        .arg(out.path())
        .args(["--", "sh", "-c", "yes | head -n 1 >/dev/null"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(!err.contains("Broken pipe"), "yes saw EPIPE: {err}");
}
