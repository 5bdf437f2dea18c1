//! The basic round trip: rows written through waldio read back, after reopening too, and the
//! WAL file is laid out as waldio's format says (header block magic, page-aligned frames).

use joj_waldio::{WaldioOptions, open, wal_path};

#[test]
fn rows_survive_reopen_and_the_wal_is_page_aligned() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    {
        let c = open(&db, &WaldioOptions::default()).unwrap();
        c.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)")
            .unwrap();
        for i in 0..200 {
            c.execute("INSERT INTO t VALUES(?1, ?2)", (i, "x".repeat(100)))
                .unwrap();
        }
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 200);
        let wal = std::fs::read(wal_path(&db)).unwrap();
        assert_eq!(&wal[..8], b"jojWALDI");
        assert_eq!(wal.len() % 4096, 0, "whole blocks only");
        assert!(wal.len() >= 1025 * 4096, "preallocated: {}", wal.len());
        // Keep the connection open while reading the physical file, then close.
    }
    let wal = std::fs::read(wal_path(&db)).unwrap();
    assert_eq!(&wal[..8], b"jojWALDI", "the WAL is kept after close");
    let c = open(&db, &WaldioOptions::default()).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 200);
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let header = std::fs::read(&db).unwrap();
    assert!(header[20] >= 24, "reserve {}", header[20]);
}
