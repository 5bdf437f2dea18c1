//! `joj trace` runs as root in a directory that may be someone else's (a project checked out
//! from anyone, a folder another user owns). What the command sees there must be the
//! directory as it is, and nothing in it may make root's run write elsewhere unsaid:
//!
//! - a symbolic link leading out of the directory (to a file, or a folder on the way) is
//!   followed as it would be without joj, and the write through it is reported as a write
//!   outside the scratch filesystem, by the path it reached (it used to be listed as a file on
//!   the traced filesystem, the directory "as it was");
//! - a link that stays inside is a file of the traced filesystem;
//! - a device node opens nothing of the host (the overlay is `nodev`; a write through a loop
//!   device's node used to reach its backing file);
//! - the directory shows its own owner and mode (it used to show joj's upper directory's,
//!   `755 root:root`, and a new file took root's group instead of the set-group-ID one).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};

fn trace(project: &std::path::Path, script: &str) -> (std::process::Output, serde_json::Value) {
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .current_dir(project)
        .args(["trace", "--json", "--image-mib", "64", "--out"])
        .arg(out.path())
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&run.stdout).unwrap_or(serde_json::Value::Null);
    (run, doc)
}

#[test]
fn a_write_through_a_link_leading_out_is_reported_where_it_landed() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim");
    let project = tmp.path().join("project");
    std::fs::create_dir(&victim).unwrap();
    std::fs::create_dir_all(project.join("data")).unwrap();
    std::fs::write(victim.join("target"), "root's\n").unwrap();
    std::os::unix::fs::symlink(victim.join("target"), project.join("data.db")).unwrap();
    std::os::unix::fs::symlink("../victim", project.join("sub")).unwrap();
    std::os::unix::fs::symlink("data/inner.db", project.join("inner-link")).unwrap();
    let (run, doc) = trace(
        &project,
        "echo a >> data.db; echo b > sub/new.db; echo c > inner-link",
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let target = victim.join("target").to_str().unwrap().to_string();
    let new = victim.join("new.db").to_str().unwrap().to_string();
    assert_eq!(
        doc["command"]["outside_writes"],
        serde_json::json!([new, target]),
        "{}",
        doc["command"]
    );
    assert!(
        stderr.contains("opened 2 file(s) outside the scratch filesystem for writing")
            && stderr.contains(&target),
        "{stderr}"
    );
    // The writes happened, as without joj, and are said.
    assert_eq!(
        std::fs::read_to_string(victim.join("target")).unwrap(),
        "root's\na\n"
    );
    // A link that stays inside is a file on the traced filesystem, named where it leads.
    common::traced_file(&doc, "data/inner.db");
    assert!(
        !project.join("data/inner.db").exists(),
        "the project as it was"
    );
}

#[test]
fn a_device_node_in_the_directory_opens_nothing_of_the_host() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    // /dev/null's numbers (1:3): were the node opened, the write would succeed.
    rustix::fs::mknodat(
        rustix::fs::CWD,
        project.path().join("node"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 3),
    )
    .unwrap();
    let (run, _) = trace(
        project.path(),
        "if echo x > node; then echo OPENED; else echo REFUSED; fi",
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("REFUSED") && !stderr.contains("OPENED"),
        "{stderr}"
    );
}

#[test]
fn the_directory_shows_its_own_owner_and_mode() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(project.path(), Some(1234), Some(1234)).unwrap();
    std::fs::set_permissions(project.path(), std::fs::Permissions::from_mode(0o2770)).unwrap();
    let m = std::fs::metadata(project.path()).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (1234, 1234, 0o2770));
    let (run, _) = trace(
        project.path(),
        "stat -c 'dir %a %u:%g' .; touch n; stat -c 'file %g' n",
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("dir 2770 1234:1234") && stderr.contains("file 1234"),
        "{stderr}"
    );
}

#[test]
fn a_default_output_folder_planted_as_a_link_is_refused_before_the_run() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&project).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink("../elsewhere", project.join("joj-out")).unwrap();
    for args in [
        &["trace", "--", "touch", "ran"][..],
        &["bench", "--fs", "ext4", "-n", "2", "--trace"][..],
    ] {
        let run = common::joj_command()
            .current_dir(&project)
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("joj-out as the output directory: it is a symbolic link"),
            "{stderr}"
        );
        assert_eq!(
            std::fs::read_dir(&elsewhere).unwrap().count(),
            0,
            "{args:?}"
        );
    }
    assert!(!project.join("ran").exists());
}

/// `/dev/stderr` (`/proc/self/fd/2`) is the command's descriptor, not joj's: resolved as joj,
/// a write to it was put to the file joj's own standard error went to — a log in the project —
/// which was then listed as a traced file with the command's bytes (found by a review).
#[test]
fn a_write_to_dev_stderr_is_not_put_to_jojs_own_files() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let log = std::fs::File::create(project.path().join("build.log")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .current_dir(project.path())
        .args(["trace", "--json", "--image-mib", "64", "--out"])
        .arg(out.path())
        .args([
            "--",
            "sh",
            "-c",
            "echo hi > /dev/stderr; echo x >> inside.txt",
        ])
        .stderr(log)
        .output()
        .unwrap();
    let stderr = std::fs::read_to_string(project.path().join("build.log")).unwrap();
    assert!(run.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let files: Vec<&str> = doc["command"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["inside.txt"], "{}", doc["command"]);
}
