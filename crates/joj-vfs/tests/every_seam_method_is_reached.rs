//! Real SQLite reaches every method of the seam: a forwarding VFS over `unix` that counts its
//! calls sees open, delete, access, full_pathname, read, write, truncate, sync, file_size,
//! lock, unlock, check_reserved_lock, file_control, sector_size, device_characteristics, the
//! shared-memory methods, fetch / unfetch, close and on_connect, from ordinary SQL.

mod common;

use common::CountingVfs;
use rusqlite::{Connection, OpenFlags};

const METHODS: [&str; 22] = [
    "open",
    "delete",
    "access",
    "full_pathname",
    "on_connect",
    "read",
    "write",
    "truncate",
    "sync",
    "file_size",
    "lock",
    "unlock",
    "check_reserved_lock",
    "file_control",
    "sector_size",
    "device_characteristics",
    "shm_map",
    "shm_lock",
    "shm_barrier",
    "shm_unmap",
    "fetch",
    "unfetch",
];

#[test]
fn every_seam_method_is_reached() {
    let name = common::unique_name("reach");
    let reg = joj_vfs::register_vfs(&name, |_| CountingVfs::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("reach.db");
    let open =
        || Connection::open_with_flags_and_vfs(&db, OpenFlags::default(), name.as_str()).unwrap();
    {
        // Rollback journals: created, written, synced, deleted (DELETE), truncated (TRUNCATE),
        // kept (PERSIST).
        let c = open();
        c.execute_batch(
            "PRAGMA journal_mode=DELETE;
             CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);
             INSERT INTO t VALUES(1, zeroblob(5000));
             PRAGMA journal_mode=TRUNCATE;
             INSERT INTO t VALUES(2, zeroblob(5000));
             PRAGMA journal_mode=PERSIST;
             INSERT INTO t VALUES(3, zeroblob(5000));",
        )
        .unwrap();
        // A pragma SQLite does not know goes to the VFS as a typed file control.
        let echo: String = c
            .query_row("PRAGMA counting_echo=hi", [], |r| r.get(0))
            .unwrap();
        assert_eq!(echo, "echo hi");
    }
    {
        // The persisted journal makes the next reader check for a hot one (check_reserved_lock).
        let c = open();
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 3);
        // Memory-mapped reads (fetch / unfetch), then WAL mode (shared memory).
        c.execute_batch("PRAGMA mmap_size=1048576").unwrap();
        let bytes: i64 = c
            .query_row("SELECT sum(length(v)) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(bytes, 15000);
        c.execute_batch(
            "PRAGMA mmap_size=0; PRAGMA journal_mode=WAL; INSERT INTO t VALUES(4, zeroblob(100));",
        )
        .unwrap();
    }
    {
        // Without powersafe overwrite (the unix VFS's `psow=0`) SQLite asks for the sector size.
        let uri = format!("file:{}?psow=0", dir.path().join("psow.db").display());
        let c =
            Connection::open_with_flags_and_vfs(uri, OpenFlags::default(), name.as_str()).unwrap();
        c.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES(1);")
            .unwrap();
    }
    let calls = reg.vfs().calls();
    let missing: Vec<&str> = METHODS
        .iter()
        .copied()
        .filter(|m| calls.get(m).copied().unwrap_or(0) == 0)
        .collect();
    assert!(
        missing.is_empty(),
        "never reached: {missing:?}; calls: {calls:?}"
    );
    assert_eq!(
        calls.get("open"),
        calls.get("close"),
        "every open file closed: {calls:?}"
    );
}
