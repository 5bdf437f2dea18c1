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
    let out = tempfile::tempdir().unwrap();
    let profile = out.path().join("o.json");
    let (ok, _, err) = common::run_joj_text(&[
        "device",
        "calibrate",
        small.path().to_str().unwrap(),
        "-o",
        profile.to_str().unwrap(),
        "--size-mib",
        "64",
        "--samples",
        "10",
    ]);
    let left: Vec<_> = std::fs::read_dir(small.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
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
    assert!(!profile.exists(), "a profile was written: {err}");
}
