//! The WAL file waldio makes belongs to the database's owner, with the database's permissions,
//! as SQLite's unix VFS makes its `-wal`: root opening a user's database (one query, `joj
//! waldio convert`'s users) must not leave a root-owned log the owner can no longer open, and a
//! database shared by two users (0666) must not get a log only the first opener's umask
//! allows. Needs root (to be root, and to give the database away); fails without it, unless
//! `JOJ_SKIP_KERNEL_TESTS=1`.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_waldio::{WaldioOptions, open, wal_path};
use std::os::unix::fs::{MetadataExt, PermissionsExt};

const NOBODY: u32 = 65534;

/// A waldio database in `dir` with one row, given to `nobody`, and no log beside it yet.
fn users_database(dir: &std::path::Path) -> std::path::PathBuf {
    let db = dir.join("app.db");
    {
        let c = open(&db, &WaldioOptions::default()).unwrap();
        c.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY); INSERT INTO t VALUES(1);")
            .unwrap();
    }
    std::fs::remove_file(wal_path(&db)).unwrap();
    std::os::unix::fs::chown(&db, Some(NOBODY), Some(NOBODY)).unwrap();
    db
}

#[test]
fn root_opening_a_users_database_leaves_the_log_to_its_owner_with_its_mode() {
    if !joj_linux::testgate::root_test() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = users_database(dir.path());
    // Shared (0666); root's umask 022.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o666)).unwrap();
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
    let log = |what: &str| {
        let m = std::fs::metadata(wal_path(&db)).unwrap();
        assert_eq!(
            (m.uid(), m.gid(), m.mode() & 0o777),
            (NOBODY, NOBODY, 0o666),
            "{what}: the log's owner, group and mode"
        );
    };
    {
        let c = open(&db, &WaldioOptions::default()).unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
        log("made by root's read");
        c.execute("INSERT INTO t VALUES(2)", []).unwrap();
    }
    log("after root's commit");
    // A log root made before (root's own): root's next open gives it to the owner.
    std::os::unix::fs::chown(wal_path(&db), Some(0), Some(0)).unwrap();
    std::fs::set_permissions(wal_path(&db), std::fs::Permissions::from_mode(0o666)).unwrap();
    drop(open(&db, &WaldioOptions::default()).unwrap());
    log("an old root-owned log, after root opened the database again");
}

/// A hard link planted at the log's name (`O_NOFOLLOW` stops only symbolic links) to a file
/// root owns: root opening the user's database must not give that file to the user.
#[test]
fn a_hard_link_at_the_logs_name_is_never_given_away() {
    if !joj_linux::testgate::root_test() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = users_database(dir.path());
    let secret = dir.path().join("secret");
    std::fs::write(&secret, b"").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::hard_link(&secret, wal_path(&db)).unwrap();
    let _ = open(&db, &WaldioOptions::default());
    let m = std::fs::metadata(&secret).unwrap();
    assert_eq!(
        (m.uid(), m.mode() & 0o777),
        (0, 0o600),
        "the linked file was given away"
    );
}
