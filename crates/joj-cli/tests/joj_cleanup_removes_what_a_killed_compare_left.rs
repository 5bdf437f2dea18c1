//! `kill -9` of `joj compare` inside a traced row leaves its tracefs instance, mount, loop
//! device and directory under `/run/joj`; `joj cleanup` removes them, one line for the dead
//! pid, and a second `joj cleanup` finds nothing of it.

mod common;

use common::{SIGKILL, held_by, run_joj, signal, spawn_joj};

#[test]
fn joj_cleanup_removes_what_a_killed_compare_left() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let args = [
        "compare",
        "--fs",
        "ext4",
        "--modes",
        "delete",
        "-n",
        "100000",
        "--image-mib",
        "64",
    ];
    let mut killed = spawn_joj(&args, out.path());
    let pid = killed.id();
    common::wait_for_the_window(pid);
    signal(pid, SIGKILL);
    killed.wait();
    let left = held_by(pid);
    assert!(left.all_there(), "kill -9 left nothing to sweep: {left:?}");

    let cleanup = run_joj(&["cleanup"]);
    let stdout = String::from_utf8_lossy(&cleanup.stdout);
    assert!(
        cleanup.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&cleanup.stderr)
    );
    let prefix = format!("removed leftovers of dead joj {pid}: ");
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in:\n{stdout}"));
    for thing in [&left.instances, &left.mounts, &left.loops, &left.dirs] {
        for t in thing {
            assert!(line.contains(t.as_str()), "{t} not in: {line}");
        }
    }
    assert!(
        held_by(pid).nothing(),
        "left after cleanup: {:?}",
        held_by(pid)
    );

    let again = run_joj(&["cleanup"]);
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success(), "{stdout}");
    assert!(!stdout.contains(&format!(" {pid}")), "{stdout}");
}
