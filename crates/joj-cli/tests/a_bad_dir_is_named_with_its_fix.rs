//! `-p/--dir` that cannot hold the run's files is named for what it is — missing and not
//! makeable, not a directory, read-only — with the fix, before anything runs (it used to be
//! SQLite's "unable to open database file" for all three). A missing one that can be made is
//! made (`a_missing_bench_dir_is_made_and_removed_at_the_end`).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

mod tmpfs;

fn bench_in(dir: &std::path::Path) -> (Option<i32>, String) {
    let out = common::joj_command()
        .args(["bench", "-n", "5", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_unmakeable_dir_or_a_file_as_dir_is_named_with_its_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, "keep me").unwrap();
    let (code, err) = bench_in(&file.join("nope"));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("nope is missing and could not be made (") && err.contains("fix: create it"),
        "{err}"
    );

    let (code, err) = bench_in(&file);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("is not a directory; fix:"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
}

#[test]
fn a_read_only_dir_is_named_with_its_fix() {
    if !joj_linux::testgate::root_test() {
        return;
    }
    let ro = tmpfs::Tmpfs::mount("ro,size=1m");
    let (code, err) = bench_in(ro.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("is on a read-only filesystem; fix: give a directory on a writable"),
        "{err}"
    );
}
