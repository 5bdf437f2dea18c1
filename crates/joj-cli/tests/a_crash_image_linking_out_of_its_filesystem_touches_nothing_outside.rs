//! A saved log is an attacker-chosen filesystem image. One whose `joj` directory (or whose
//! database file) is a symbolic link to a host directory must not lead joj — root — out of the
//! image: the host's database and its WAL stay byte for byte as they were, and joj refuses the
//! image with an error naming the link and the fix, leaving nothing behind.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::symlink;
use std::path::Path;

use joj_linux::FsKind;

/// Every file of `dir` with its length and a hash of its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, (usize, u64)> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let bytes = std::fs::read(e.path()).unwrap();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut h);
            (
                e.file_name().to_string_lossy().into_owned(),
                (bytes.len(), h.finish()),
            )
        })
        .collect()
}

/// A host directory holding `crash.db` in WAL mode with committed frames still in
/// `crash.db-wal` (what a checkpoint would move into the database and then unlink).
fn host_canary(dir: &Path) {
    let work = tempfile::tempdir().unwrap();
    let db = work.path().join("crash.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    conn.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB NOT NULL);
         CREATE TABLE meta(n INTEGER NOT NULL);
         INSERT INTO meta VALUES(0);
         INSERT INTO t VALUES(1, randomblob(300));",
    )
    .unwrap();
    // A copy taken while the connection is open keeps the frames in the WAL.
    for name in ["crash.db", "crash.db-wal"] {
        std::fs::copy(work.path().join(name), dir.join(name)).unwrap();
    }
    drop(conn);
}

/// `joj crash fs --fs ext4 --journal MODE --from-log L --states 10` of an image made from
/// `staging`: refused, with the message containing each of `said`; the host directory
/// untouched; nothing left by the run.
fn refused_touching_nothing(staging: &Path, host: &Path, mode: &str, said: &[&str]) {
    let before = snapshot(host);
    assert_eq!(before.len(), 2);
    let dir = tempfile::tempdir().unwrap();
    let log = common::crafted_ext4_log(staging, dir.path());
    let (out, left) = common::joj_leaving(&[
        "crash",
        "fs",
        "--fs",
        "ext4",
        "--journal",
        mode,
        "--from-log",
        log.to_str().unwrap(),
        "--states",
        "10",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        snapshot(host),
        before,
        "-j {mode}: the host directory changed; joj said: {stderr}"
    );
    assert!(!out.status.success(), "-j {mode}: accepted: {stderr}");
    for s in said.iter().chain(&["fix:"]) {
        assert!(stderr.contains(s), "-j {mode}: no `{s}` in: {stderr}");
    }
    assert!(left.nothing(), "-j {mode}: the run left {left:?}");
}

#[test]
fn a_joj_directory_linking_to_the_host_is_refused() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let host = tempfile::tempdir().unwrap();
    host_canary(host.path());
    let staging = tempfile::tempdir().unwrap();
    symlink(host.path(), staging.path().join("joj")).unwrap();
    for mode in ["wal", "waldio", "delete"] {
        refused_touching_nothing(
            staging.path(),
            host.path(),
            mode,
            &["joj", "symbolic link", &host.path().display().to_string()],
        );
    }
}

#[test]
fn a_database_file_linking_to_the_host_is_refused() {
    if !joj_linux::testgate::kernel_test(&[FsKind::Ext4]) {
        return;
    }
    let host = tempfile::tempdir().unwrap();
    host_canary(host.path());
    let staging = tempfile::tempdir().unwrap();
    let joj = staging.path().join("joj");
    std::fs::create_dir(&joj).unwrap();
    for name in ["crash.db", "crash.db-wal"] {
        symlink(host.path().join(name), joj.join(name)).unwrap();
    }
    for mode in ["wal", "waldio"] {
        refused_touching_nothing(
            staging.path(),
            host.path(),
            mode,
            &["joj/crash.db", "symbolic link"],
        );
    }
}
