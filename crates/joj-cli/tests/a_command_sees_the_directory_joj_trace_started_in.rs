//! `joj trace -- python3 app.py` works on a project as it is: the command runs in the directory
//! joj trace was started from, with every file in it (a relative script path, an existing
//! database in a subdirectory), while what it writes lands on the traced filesystem — the
//! project's own files are left as they were. A directory with a mount below it (which an
//! overlay would hide) is refused before anything is made, naming `--empty`.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::process::Command;

const APP: &str = "import sqlite3
db = sqlite3.connect('data/old.db', isolation_level=None)
db.execute('INSERT INTO t VALUES(2)')
print('rows', db.execute('SELECT count(*) FROM t').fetchone()[0])
";

fn rows_in(db: &std::path::Path) -> String {
    let out = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM t').fetchone()[0])",
        ])
        .arg(db)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_relative_script_and_an_existing_database_are_seen_and_left_unchanged() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("data")).unwrap();
    std::fs::write(project.path().join("app.py"), APP).unwrap();
    let db = project.path().join("data/old.db");
    let made = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute('CREATE TABLE t(x)'); d.execute('INSERT INTO t VALUES(1)'); d.commit()",
        ])
        .arg(&db)
        .status()
        .unwrap();
    assert!(made.success());
    let before = std::fs::read(&db).unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .current_dir(project.path())
        .args(["trace", "--json", "--out"])
        .arg(out.path())
        .args(["--", "/usr/bin/python3", "app.py"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("rows 2"),
        "the command saw the existing row: {stderr}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let row = common::traced_file(&doc, "data/old.db");
    assert_eq!(row["kind"], "database");
    assert!(row["fdatasync"].as_u64().unwrap() >= 1, "{row}");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the project's database is left as it was"
    );
    assert_eq!(rows_in(&db), "1");
}

#[test]
fn a_directory_with_a_mount_below_it_is_refused_naming_empty() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let below = project.path().join("cache");
    std::fs::create_dir(&below).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "tmpfs"])
        .arg(&below)
        .status()
        .unwrap();
    assert!(mounted.success());
    let run = common::joj_command()
        .current_dir(project.path())
        .args(["trace", "--", "true"])
        .output()
        .unwrap();
    let _ = Command::new("umount").arg(&below).status();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&below.display().to_string()) && stderr.contains("--empty"),
        "{stderr}"
    );
}
