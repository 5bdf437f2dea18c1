//! A VFS that answers a short read with `ReadOutcome::from_filled` gives SQLite zeros past what
//! it filled, whatever it left in the buffer (the shim passes the outcome on as
//! `SQLITE_IOERR_SHORT_READ`; it does not fill the buffer itself): SQLite reads a
//! new database's 100-byte header from an empty file and takes its page size and reserved bytes
//! from it, so a VFS that left a header-like pattern in the buffer would give the new database
//! that page size and reserve.

mod common;

use common::MemVfs;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

#[test]
fn short_reads_are_zero_filled() {
    let name = common::unique_name("short");
    let mut scribble = vec![0xAAu8; 100];
    scribble[..16].copy_from_slice(b"SQLite format 3\0");
    scribble[16..18].copy_from_slice(&8192u16.to_be_bytes());
    scribble[20] = 40;
    let reg = joj_vfs::register_vfs(&name, |_| MemVfs::scribbling(scribble)).unwrap();
    let path = "/mem/short.db";
    {
        let c =
            Connection::open_with_flags_and_vfs(path, OpenFlags::default(), name.as_str()).unwrap();
        c.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES('x')")
            .unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
    }
    let bytes = reg
        .vfs()
        .contents(Path::new(path))
        .expect("the database file");
    assert_eq!(&bytes[..16], b"SQLite format 3\0");
    assert_eq!(
        u16::from_be_bytes([bytes[16], bytes[17]]),
        4096,
        "page size"
    );
    assert_eq!(bytes[20], 0, "reserved bytes per page");
    assert_eq!(bytes.len(), 2 * 4096);
}
