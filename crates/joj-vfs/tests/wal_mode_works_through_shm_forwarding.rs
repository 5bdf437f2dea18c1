//! WAL mode through a forwarding VFS: the shared-memory index lives in the base (`unix`) file and
//! reaches SQLite through the seam's shm methods, so readers keep their snapshot while a writer
//! commits, and a checkpoint brings everything into the database.

mod common;

use common::CountingVfs;
use rusqlite::{Connection, OpenFlags};

#[test]
fn wal_mode_works_through_shm_forwarding() {
    let name = common::unique_name("wal");
    let reg = joj_vfs::register_vfs(&name, |_| CountingVfs::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wal.db");
    let open =
        || Connection::open_with_flags_and_vfs(&db, OpenFlags::default(), name.as_str()).unwrap();
    let count = |c: &Connection| -> i64 {
        c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    };

    let writer = open();
    let mode: String = writer
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    writer
        .execute_batch(
            "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES(1, 'a');",
        )
        .unwrap();

    let reader = open();
    reader.execute_batch("BEGIN").unwrap();
    assert_eq!(count(&reader), 1);
    for k in 2..=50 {
        writer
            .execute("INSERT INTO t VALUES(?1, 'b')", [k])
            .unwrap();
    }
    assert_eq!(count(&reader), 1, "the reader keeps its snapshot");
    reader.execute_batch("COMMIT").unwrap();
    assert_eq!(
        count(&reader),
        50,
        "a new read transaction sees every commit"
    );

    let (busy, _, _): (i64, i64, i64) = writer
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!(busy, 0);
    drop(reader);
    drop(writer);

    let again = open();
    assert_eq!(count(&again), 50);
    let ok: String = again
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let v = reg.vfs();
    assert!(
        v.count("shm_map") > 0 && v.count("shm_lock") > 0,
        "{:?}",
        v.calls()
    );
}
