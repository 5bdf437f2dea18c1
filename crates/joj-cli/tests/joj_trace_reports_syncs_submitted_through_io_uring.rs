//! `joj trace -- PROGRAM` where the program fsyncs and fdatasyncs a file through io_uring
//! (`tests/fixtures/uring_fsync.c`, built here with `cc`): those syncs are no system calls the
//! supervisor stops at, and the report used to say `fsync 0` with no warning. Now the document
//! carries the ring's use and the syncs read from its submission queue, per file, and joj warns
//! on stderr that they are not in the fsync counts.

mod common;

use std::process::Command;

#[test]
fn joj_trace_reports_syncs_submitted_through_io_uring() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("uring_fsync");
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/uring_fsync.c");
    let built = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&program)
        .arg(source)
        .output()
        .expect("a C compiler (cc) to build the io_uring fixture; fix: apt-get install gcc");
    assert!(built.status.success(), "{built:?}");

    let run = common::joj_command()
        .args(["trace", "--json", "--image-mib", "64", "--out"])
        .arg(dir.path().join("out"))
        .arg("--")
        .arg(&program)
        .arg("data")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let c = &doc["command"];
    let u = &c["io_uring"];
    assert_eq!(u["rings"], 1, "{c}");
    assert_eq!(u["enters"], 2, "{c}");
    assert_eq!(u["syncs"], 2, "{c}");
    assert_eq!(u["unreadable_enters"], 0, "{c}");
    let data = c["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "data")
        .unwrap_or_else(|| panic!("no row for data: {c}"));
    assert_eq!(data["io_uring_syncs"], 2, "{data}");
    // Not counted as seen syncs: joj cannot time them.
    assert_eq!(data["fsync"], 0, "{data}");
    assert!(
        stderr.contains("joj: warning: the command used io_uring")
            && stderr.contains("not in the fsync/fdatasync counts")
            && stderr.contains("by file: data 2"),
        "{stderr}"
    );
}
