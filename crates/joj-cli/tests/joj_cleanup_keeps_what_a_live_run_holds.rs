//! `joj cleanup` while a traced run is in its window removes nothing of it — a live pid keeps
//! its things — and says what it kept and which process keeps it. The run then ends on Ctrl-C
//! as usual, leaving nothing.

mod common;

use common::{LONG_TRACED_BENCH, SIGINT, held_by, run_joj, signal, spawn_joj};

#[test]
fn joj_cleanup_keeps_what_a_live_run_holds() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let mut live = spawn_joj(&LONG_TRACED_BENCH, out.path());
    let pid = live.id();
    common::wait_for_the_window(pid);
    let before = held_by(pid);

    let cleanup = run_joj(&["cleanup"]);
    let stdout = String::from_utf8_lossy(&cleanup.stdout);
    assert!(cleanup.status.success(), "{stdout}");
    assert_eq!(held_by(pid), before, "cleanup touched a live run's things");
    let kept = stdout
        .lines()
        .find(|l| l.ends_with(&format!(": process {pid} (joj) is alive")))
        .unwrap_or_else(|| panic!("no kept line for {pid} in:\n{stdout}"));
    assert!(
        kept.contains(&format!("tracefs instance joj-{pid}-")),
        "{kept}"
    );
    assert!(!stdout.contains(&format!("dead joj {pid}:")), "{stdout}");

    signal(pid, SIGINT);
    assert_eq!(live.wait().code(), Some(130));
    common::assert_nothing_left_by(pid, std::time::Duration::from_secs(5), "after the run");
}
