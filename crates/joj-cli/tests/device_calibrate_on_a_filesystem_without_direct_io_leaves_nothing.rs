//! `joj device calibrate DIR` times the disk with `O_DIRECT`. On a filesystem that refuses
//! direct I/O (ramfs refuses it at open, after the kernel has made the file), it used to leave
//! an empty `DIR/joj-calibrate-<pid>.img` that `joj cleanup` did not know and a later run of the
//! same pid called "not joj's". The test file is made without `O_DIRECT` (certainly joj's),
//! switched to direct I/O, and removed when the switch is refused, with the fix named.

mod common;

mod tmpfs;

#[test]
fn a_filesystem_without_direct_io_is_refused_naming_the_fix_and_leaves_no_file() {
    if !joj_linux::testgate::root_test() {
        return;
    }
    let ramfs = tmpfs::Tmpfs::mount_kind("ramfs", "mode=0755");
    let common::RefusedCalibration {
        ok,
        err,
        left,
        profile_written,
    } = common::calibrate_small(ramfs.path());
    assert!(!ok, "calibrated a filesystem without direct I/O: {err}");
    assert!(left.is_empty(), "left behind: {left:?} ({err})");
    assert!(
        err.contains("does not do direct I/O") && err.contains("fix:") && err.contains("ext4"),
        "{err}"
    );
    assert!(!profile_written, "a profile was written: {err}");
}
