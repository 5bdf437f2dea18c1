//! A panic in a VFS method never unwinds into SQLite: the call fails with the method's I/O error,
//! the panic's message becomes the last error, and the file it happened in refuses further calls
//! until it is closed. A panic in a VFS-level call fails that call only.

mod common;

use common::{CountingVfs, Fault};
use joj_vfs::ResultCode;
use rusqlite::{Connection, OpenFlags};

fn extended_code(e: &rusqlite::Error) -> Option<i32> {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => Some(f.extended_code),
        _ => None,
    }
}

#[test]
fn a_panic_becomes_an_error() {
    let name = common::unique_name("panic");
    let reg = joj_vfs::register_vfs(&name, |_| CountingVfs::default()).unwrap();
    let vfs = reg.vfs();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let open =
        || Connection::open_with_flags_and_vfs(&db, OpenFlags::default(), name.as_str()).unwrap();
    let c = open();
    c.execute_batch("PRAGMA journal_mode=DELETE; CREATE TABLE t(v); INSERT INTO t VALUES(1)")
        .unwrap();

    // A journal write panics: the statement fails with SQLITE_IOERR_WRITE.
    vfs.inject(
        "write",
        "-journal",
        Fault::Panic("test panic in write".into()),
    );
    let e = c.execute("INSERT INTO t VALUES(2)", []).unwrap_err();
    assert_eq!(
        extended_code(&e),
        Some(ResultCode::IOERR_WRITE.raw()),
        "{e:?}"
    );
    let last = reg.errors().last().unwrap();
    assert_eq!(last.code(), ResultCode::IOERR_WRITE);
    assert!(
        last.message()
            .contains("write panicked: test panic in write"),
        "{}",
        last.message()
    );
    // That journal handle is gone with its transaction; the next one works.
    vfs.clear_faults();
    c.execute("INSERT INTO t VALUES(3)", []).unwrap();

    // A read of the database panics: that file refuses every later call, even without the
    // fault, until the connection closes it.
    c.execute_batch("PRAGMA cache_size=0").unwrap();
    drop(c);
    let c = open();
    vfs.inject("read", "p.db", Fault::Panic("test panic in read".into()));
    assert!(
        c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
            .is_err()
    );
    vfs.clear_faults();
    let reads = vfs.count("read");
    assert!(
        c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
            .is_err()
    );
    assert_eq!(
        vfs.count("read"),
        reads,
        "the poisoned file reached the VFS again"
    );
    drop(c);
    let n: i64 = open()
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2, "rows 1 and 3");

    // A VFS-level panic (open) fails the open with SQLITE_CANTOPEN.
    vfs.inject("open", "boom.db", Fault::Panic("test panic in open".into()));
    let e = Connection::open_with_flags_and_vfs(
        dir.path().join("boom.db"),
        OpenFlags::default(),
        name.as_str(),
    )
    .and_then(|c| c.execute_batch("CREATE TABLE x(y)"))
    .unwrap_err();
    assert_eq!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::CannotOpen),
        "{e:?}"
    );
    assert!(
        reg.errors()
            .last()
            .unwrap()
            .message()
            .contains("open panicked: test panic in open")
    );
}
