//! A command that syncs often fills the kernel's buffer of block events; joj trace then stops,
//! saying how many events were lost — and the fix it names must be one the user can give: it
//! used to say "start the tracer with a bigger buffer_kb", which no flag of joj trace set.
//! `--buffer-kib` is that flag: the same run loses events in a buffer of 1 MiB per CPU and none
//! in the default one.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

const SYNCS: &str = "import os
fd = os.open('w.db', os.O_CREAT | os.O_RDWR, 0o644)
for i in range(8000):
    os.pwrite(fd, b'x' * 100, (i % 64) * 4096)
    os.fdatasync(fd)
";

fn trace(dir: &std::path::Path, buffer: Option<&str>) -> std::process::Output {
    let mut cmd = common::joj_command();
    cmd.current_dir(dir)
        .args(["trace", "--image-mib", "64", "--out"]);
    cmd.arg(dir.join("out"));
    if let Some(kib) = buffer {
        cmd.args(["--buffer-kib", kib]);
    }
    cmd.args(["--", "/usr/bin/python3", "-c", SYNCS])
        .output()
        .unwrap()
}

#[test]
fn events_lost_in_a_small_buffer_name_buffer_kib_and_the_default_loses_none() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let small = trace(dir.path(), Some("1024"));
    let stderr = String::from_utf8_lossy(&small.stderr);
    assert_eq!(small.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the 1024 KiB per-CPU buffer filled up")
            && stderr.contains("joj trace --buffer-kib 4096"),
        "{stderr}"
    );
    let default = trace(dir.path(), None);
    assert!(
        default.status.success(),
        "{}",
        String::from_utf8_lossy(&default.stderr)
    );
}
