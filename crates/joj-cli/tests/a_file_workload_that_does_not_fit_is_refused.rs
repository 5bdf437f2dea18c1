//! A file workload larger than the free space of its directory is refused before any file is
//! made, naming the sizes and the fix (it used to fill the filesystem, fail with "No space left
//! on device" and leave the data file behind).

mod common;

mod tmpfs;

#[test]
fn a_file_workload_that_does_not_fit_is_refused_and_leaves_nothing() {
    if !joj_linux::testgate::root_test() {
        return;
    }
    let small = tmpfs::Tmpfs::mount("size=2m");
    let mnt = small.path();
    let out = common::joj_command()
        .args(["bench", "-a", "0", "-f", "8192", "--dir"])
        .arg(mnt)
        .output()
        .unwrap();
    let left: Vec<_> = std::fs::read_dir(mnt)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("writes 8 MiB")
            && err.contains("2 MiB free")
            && err.contains("fix: a smaller file"),
        "{err}"
    );
    assert!(left.is_empty(), "left behind: {left:?}");
}
