//! `kill -9` of a traced run on a scratch ext4 runs no cleanup: its tracefs instance, mount,
//! loop device and directory under `/run/joj` stay. The next run that makes a scratch
//! filesystem finds them by the dead pid in their names, removes them and says so on stderr.

mod common;

#[test]
fn a_run_after_a_killed_run_removes_its_leftovers() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let (pid, left) = common::traced_run_killed_by(common::SIGKILL, out.path());
    common::next_run_removes(pid, &left, out.path());
}
