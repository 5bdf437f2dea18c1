//! `joj trace -- sh -c 'cd /elsewhere && echo hi > outside.txt'` writes outside the scratch
//! filesystem, where nothing is traced, and nothing used to say so. Opens that may write are
//! now followed to their return: the document lists the file by path and joj warns on stderr;
//! files on the scratch filesystem, `/dev/null` and pipes are not listed.

mod common;

#[test]
fn joj_trace_reports_writes_outside_the_scratch_filesystem() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let script = format!(
        "echo in > inside.txt && (cd '{}' && echo hi > outside.txt) && echo x > /dev/null && echo y | cat > piped.txt",
        elsewhere.display()
    );
    let run = common::joj_command()
        .args(["trace", "--json", "--image-mib", "64", "--out"])
        .arg(dir.path().join("out"))
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let outside = elsewhere.join("outside.txt");
    let outside = outside.to_str().unwrap();
    assert_eq!(
        doc["command"]["outside_writes"],
        serde_json::json!([outside]),
        "{}",
        doc["command"]
    );
    assert_eq!(doc["command"]["outside_writes_total"], 1);
    assert!(
        stderr.contains("opened 1 file(s) outside the scratch filesystem for writing")
            && stderr.contains(outside),
        "{stderr}"
    );
}
