//! A traced command that fails because the scratch filesystem is full used to be told "fix:
//! make the command succeed on its own first". joj now asks the filesystem, after the traced
//! window, whether 1 MiB more could be allocated, and when not says so with the fix:
//! `--image-mib`. A command that fails with room to spare is told that the command itself failed.

mod common;

use common::run_joj;

#[test]
fn a_command_that_fills_the_scratch_filesystem_is_told_to_use_image_mib() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let out = out.path().to_str().unwrap();
    let run = run_joj(&[
        "trace",
        "--image-mib",
        "64",
        "--out",
        out,
        "--",
        "dd",
        "if=/dev/zero",
        "of=fill",
        "bs=1M",
        "count=200",
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("with the scratch filesystem full")
            && stderr.contains(
                "fix: give the command a larger scratch filesystem (--image-mib, now 64)"
            ),
        "{stderr}"
    );
    let run = run_joj(&["trace", "--image-mib", "64", "--out", out, "--", "false"]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        !stderr.contains("full")
            && stderr.contains("the traced command failed (exit status 1)")
            && stderr.contains("fix the command"),
        "{stderr}"
    );
}

/// A sparse file of the starting directory (one byte in each of 200 MiB) that the command opens
/// for writing: the overlay copies it up whole and dense, the scratch filesystem runs out, the
/// failed copy-up gives its space back — so the filesystem is not full by the end, and joj used
/// to say the command "fails the same way without joj" (it does not). The command's ENOSPC now
/// points at the scratch filesystem and `--image-mib`.
#[test]
fn enospc_with_room_again_by_the_end_points_at_image_mib() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let sparse = std::fs::File::create(project.path().join("frag.db")).unwrap();
    for i in 0..200u64 {
        std::os::unix::fs::FileExt::write_at(&sparse, b"x", i << 20).unwrap();
    }
    drop(sparse);
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .current_dir(project.path())
        .args(["trace", "--image-mib", "64", "--out"])
        .arg(out.path())
        .args(["--", "sh", "-c", ": >> frag.db"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("ran out of space (ENOSPC) on the scratch filesystem")
            && stderr.contains("--image-mib")
            && !stderr.contains("fails the same way without joj"),
        "{stderr}"
    );
}
