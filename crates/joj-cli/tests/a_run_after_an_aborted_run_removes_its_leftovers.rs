//! A run that aborts — as Rust aborts on a failed allocation: SIGABRT, which joj does not
//! handle — runs no cleanup either. The next run that makes a scratch filesystem removes what
//! it left, as after `kill -9`. (The aborted run's working directory is a temporary one, so a
//! core file, where the machine writes them, goes with it.)

mod common;

#[test]
fn a_run_after_an_aborted_run_removes_its_leftovers() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let (pid, left) = common::traced_run_killed_by(common::SIGABRT, out.path());
    common::next_run_removes(pid, &left, out.path());
}
