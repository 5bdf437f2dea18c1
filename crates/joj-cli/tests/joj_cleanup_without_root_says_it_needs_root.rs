//! `joj cleanup` run by a user who is not root removes what it can — that user's temporary
//! directories of dead host runs — and then fails, saying that loop devices, mounts and tracefs
//! instances need root, with the fix. (Needs root to switch to the user `nobody`.)

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::Command;

const NOBODY: u32 = 65534;

#[test]
fn joj_cleanup_without_root_says_it_needs_root() {
    if !joj_linux::testgate::root_test() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(tmp.path(), Some(NOBODY), Some(NOBODY)).unwrap();
    // A pid that is no process any more: a child that ran and was reaped.
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let left = tmp.path().join(format!("joj-{dead}-AbC123"));
    std::fs::create_dir(&left).unwrap();
    std::fs::set_permissions(&left, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(left.join("joj-0.db"), b"x").unwrap();
    for p in [&left, &left.join("joj-0.db")] {
        std::os::unix::fs::chown(p, Some(NOBODY), Some(NOBODY)).unwrap();
    }

    let out = common::joj_command()
        .arg("cleanup")
        .env("TMPDIR", tmp.path())
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert_eq!(
        stdout,
        format!(
            "removed leftovers of dead joj {dead}: {} (temporary directory)\n",
            left.display()
        )
    );
    assert!(!left.exists());
    assert!(
        stderr.starts_with(
            "joj: error: looking for leftover loop devices, mounts and tracefs instances needs \
             root (effective uid is 65534)"
        ) && stderr.contains("fix: run it as root"),
        "{stderr}"
    );
}
