//! `joj trace` shows the command a small starting directory as a copy on the traced filesystem,
//! bind mounted where the directory is (an overlay adds its own work to each of the command's
//! creates, unlinks and writes): the command sees the same path and files, what it writes lands
//! on the traced filesystem, the directory is left as it was. `--overlay`, or a directory a
//! copy would not show as it is (here a FIFO in it), gives the overlay, and says why.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::Path;

/// Reads a file, appends to it, writes a new one, and says where it ran, where a link leads
/// and the options of the mount it runs on.
const SCRIPT: &str = "read l < data.txt && echo \"$l\" > out.txt && echo more >> data.txt && pwd \
     && readlink away && findmnt -n -o OPTIONS -T .";

fn trace(project: &Path, extra: &[&str]) -> (serde_json::Value, String) {
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .current_dir(project)
        .args(["trace", "--json", "--out"])
        .arg(out.path())
        .args(extra)
        .args(["--", "sh", "-c", SCRIPT])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    (serde_json::from_slice(&run.stdout).unwrap(), stderr)
}

fn project() -> tempfile::TempDir {
    let p = tempfile::tempdir().unwrap();
    std::fs::write(p.path().join("data.txt"), "hello\n").unwrap();
    std::os::unix::fs::symlink("/nowhere/else", p.path().join("away")).unwrap();
    p
}

/// What every view must give: the command ran at the directory's own path, saw its files and
/// link, wrote on the traced filesystem, and left the directory as it was.
fn same_for_the_command(project: &Path, doc: &serde_json::Value, stderr: &str) {
    let real = project.canonicalize().unwrap();
    assert!(
        stderr.contains(&format!("{}\n/nowhere/else", real.display())),
        "{stderr}"
    );
    let data = common::traced_file(doc, "data.txt");
    assert_eq!(data["write_calls"], 1, "{data}");
    let out = common::traced_file(doc, "out.txt");
    assert_eq!(out["write_calls"], 1, "{out}");
    assert_eq!(
        std::fs::read_to_string(project.join("data.txt")).unwrap(),
        "hello\n"
    );
    assert!(!project.join("out.txt").exists());
    assert_eq!(doc["command"]["outside_writes_total"], 0);
    // The copy's mount, as the overlay, opens no device node and runs nothing set-user-ID.
    let options = stderr
        .lines()
        .find(|l| l.contains("relatime") || l.starts_with("rw,"))
        .unwrap_or_else(|| panic!("no mount options in {stderr}"));
    assert!(
        options.split(',').any(|o| o == "nodev") && options.split(',').any(|o| o == "nosuid"),
        "{options}"
    );
}

#[test]
fn a_small_directory_is_copied_and_overlay_or_a_fifo_gives_the_overlay_saying_why() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let p = project();
    let (doc, stderr) = trace(p.path(), &[]);
    same_for_the_command(p.path(), &doc, &stderr);
    assert_eq!(
        doc["command"]["start_dir_copy"],
        serde_json::json!({"entries": 2, "bytes": 6}),
        "{}",
        doc["command"]
    );
    assert!(doc["command"]["start_dir_not_copied"].is_null());

    let (doc, stderr) = trace(p.path(), &["--overlay"]);
    same_for_the_command(p.path(), &doc, &stderr);
    assert!(doc["command"]["start_dir_copy"].is_null());
    assert_eq!(doc["command"]["start_dir_not_copied"], "--overlay");

    rustix::fs::mknodat(
        rustix::fs::CWD,
        p.path().join("pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let (doc, stderr) = trace(p.path(), &[]);
    same_for_the_command(p.path(), &doc, &stderr);
    assert!(doc["command"]["start_dir_copy"].is_null());
    assert_eq!(
        doc["command"]["start_dir_not_copied"],
        "pipe is not a regular file, directory or symbolic link"
    );
}

/// Reading the copy writes nothing: its files' access times are set past their change times,
/// so relatime does not update them (an inode write in the window the command's own directory
/// would not have made).
#[test]
fn reading_the_copied_directory_writes_nothing_to_the_traced_filesystem() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let p = tempfile::tempdir().unwrap();
    std::fs::create_dir(p.path().join("sub")).unwrap();
    for i in 0..20 {
        std::fs::write(p.path().join(format!("sub/f{i}")), "x\n").unwrap();
    }
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .current_dir(p.path())
        .args(["trace", "--json", "--out"])
        .arg(out.path())
        .args([
            "--",
            "sh",
            "-c",
            "cat sub/* > /dev/null && ls -lR > /dev/null",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(!doc["command"]["start_dir_copy"].is_null(), "{stderr}");
    assert_eq!(doc["block"]["write_requests"], 0, "{}", doc["block"]);
}

/// `--dir` through a link of the directory makes nothing where the link leads: the overlay,
/// whose upper directory holds no link, is used instead.
#[test]
fn a_dir_through_a_link_of_the_directory_makes_nothing_outside() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let p = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path().join("sub")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .current_dir(p.path())
        .args(["trace", "--json", "--dir", "sub/new", "--out"])
        .arg(out.path())
        .args(["--", "sh", "-c", "echo x > here.txt"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(
        doc["command"]["start_dir_not_copied"],
        "--dir sub/new leads through a symbolic link of the directory"
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing made where the link leads"
    );
}
