//! `kill -9` of a `--fs host` run leaves its temporary directory (`joj-<pid>-XXXXXX`, with the
//! database in it). The next host run removes it and says so on stderr — and leaves alone a
//! directory of the same shape that is not private (not made by joj). No root needed:
//! `TMPDIR` points at a directory of the test's own.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{SIGKILL, long_host_run, signal, temp_dirs_of};

#[test]
fn a_host_run_after_a_killed_one_removes_its_temp_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let joj = |args: &[&str]| {
        let mut c = common::joj_command();
        c.args(args)
            .arg("--out")
            .arg(out.path())
            .env("TMPDIR", tmp.path());
        c
    };
    let mut killed = long_host_run(tmp.path(), out.path());
    let pid = killed.id();
    signal(pid, SIGKILL);
    killed.wait().unwrap();
    let left = temp_dirs_of(pid, tmp.path());
    assert_eq!(left.len(), 1, "{left:?}");
    // Same name shape, but readable by all: someone's own directory.
    let decoy = tmp.path().join(format!("joj-{pid}-result"));
    std::fs::create_dir(&decoy).unwrap();
    std::fs::set_permissions(&decoy, std::fs::Permissions::from_mode(0o755)).unwrap();

    let next = joj(&["bench", "--fs", "host", "-n", "5"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(next.status.success(), "{stderr}");
    let line = format!(
        "joj: removed leftovers of dead joj {pid}: {} (temporary directory)",
        left[0].display()
    );
    assert!(
        stderr.lines().any(|l| l == line),
        "no `{line}` in:\n{stderr}"
    );
    assert_eq!(temp_dirs_of(pid, tmp.path()), vec![decoy]);
}
