//! `strace -f joj trace -- true`: strace follows joj's children, so the command joj starts
//! already has a tracer and its `PTRACE_TRACEME` fails. joj used to say "Operation not
//! permitted … fix: check that it is an executable program"; it now says the command is
//! already traced (naming joj's tracer) and that joj trace must run outside strace -f, and it
//! leaves nothing.

mod common;

use std::process::Command;

#[test]
fn joj_trace_under_strace_says_ptrace_is_taken() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let Ok(strace) = joj_linux::prereq::find_tool("strace") else {
        panic!("strace is needed for this test; fix: apt-get install strace");
    };
    let out = tempfile::tempdir().unwrap();
    let log = out.path().join("strace.txt");
    let child = Command::new(strace)
        .args(["-f", "-o"])
        .arg(&log)
        .arg("--")
        .arg(common::JOJ)
        .args(["trace", "--image-mib", "64", "--out"])
        .arg(out.path())
        .args(["--", "true"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("it is already being traced")
            && stderr.contains("joj itself runs under a tracer (process ")
            && stderr.contains("fix: run joj trace outside strace -f"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("check that it is an executable"),
        "{stderr}"
    );
    // strace runs joj in a child of its own: its pid starts strace's first line.
    let text = std::fs::read_to_string(&log).unwrap();
    let pid: u32 = text
        .split_whitespace()
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in strace's log: {}", &text[..text.len().min(200)]));
    let left = common::held_by(pid);
    assert!(left.nothing(), "left {left:?}");
}
