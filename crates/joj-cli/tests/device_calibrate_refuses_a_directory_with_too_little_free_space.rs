//! `joj device calibrate DIR --size-mib N` writes an N MiB test file in DIR. A filesystem with
//! less free space than that is refused before anything is written, naming both sizes and the
//! fix (it used to fill the filesystem and fail late with `No space left on device`, no fix).

mod common;

mod tmpfs;

#[test]
fn a_directory_with_less_free_space_than_the_test_file_is_refused_before_writing() {
    if !joj_linux::testgate::root_test() {
        return;
    }
    let small = tmpfs::Tmpfs::mount("size=1m");
    let common::RefusedCalibration {
        ok,
        err,
        left,
        profile_written,
    } = common::calibrate_small(small.path());
    assert!(
        !ok,
        "calibrated a directory without room for its test file: {err}"
    );
    assert!(
        err.contains("1 MiB free")
            && err.contains("64 MiB test file")
            && err.contains("nothing was written")
            && err.contains("fix: give a directory on a filesystem with more free space"),
        "{err}"
    );
    assert!(left.is_empty(), "left behind: {left:?} ({err})");
    assert!(!profile_written, "a profile was written: {err}");
}
