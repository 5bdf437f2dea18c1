//! An error a VFS method returns reaches SQLite's caller as its extended result code, and its
//! message becomes the VFS's last error; an error without a message is passed on silently and
//! leaves the last error alone.

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
fn errors_reach_the_caller_with_their_message() {
    let name = common::unique_name("errors");
    let reg = joj_vfs::register_vfs(&name, |_| CountingVfs::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let c = Connection::open_with_flags_and_vfs(&db, OpenFlags::default(), name.as_str()).unwrap();
    c.execute_batch("PRAGMA journal_mode=DELETE; CREATE TABLE t(v)")
        .unwrap();
    assert!(reg.errors().last().is_none());

    reg.vfs().inject(
        "write",
        "-journal",
        Fault::Fail {
            code: ResultCode::IOERR_WRITE,
            message: Some("the test medium refused a journal write".into()),
        },
    );
    let e = c.execute("INSERT INTO t VALUES(1)", []).unwrap_err();
    assert_eq!(
        extended_code(&e),
        Some(ResultCode::IOERR_WRITE.raw()),
        "{e:?}"
    );
    let last = reg.errors().last().expect("a last error");
    assert_eq!(last.code(), ResultCode::IOERR_WRITE);
    assert_eq!(last.message(), "the test medium refused a journal write");
    assert_eq!(joj_vfs::last_error_of(&name), Some(last.clone()));

    // A bare code: the caller gets it, the last error stays the one with something to say.
    reg.vfs().clear_faults();
    reg.vfs().inject(
        "sync",
        "-journal",
        Fault::Fail {
            code: ResultCode::IOERR_FSYNC,
            message: None,
        },
    );
    let e = c.execute("INSERT INTO t VALUES(2)", []).unwrap_err();
    assert_eq!(
        extended_code(&e),
        Some(ResultCode::IOERR_FSYNC.raw()),
        "{e:?}"
    );
    assert_eq!(reg.errors().last(), Some(last));

    // A VFS-level refusal with its reason.
    reg.vfs().clear_faults();
    reg.vfs().inject(
        "open",
        "refused.db",
        Fault::Fail {
            code: ResultCode::CANTOPEN,
            message: Some("refused.db is not for this test".into()),
        },
    );
    let refused = dir.path().join("refused.db");
    let e = Connection::open_with_flags_and_vfs(&refused, OpenFlags::default(), name.as_str())
        .and_then(|c| c.execute_batch("CREATE TABLE x(y)"))
        .unwrap_err();
    assert_eq!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::CannotOpen),
        "{e:?}"
    );
    let last = reg.errors().last().unwrap();
    assert_eq!(
        (last.code(), last.message()),
        (ResultCode::CANTOPEN, "refused.db is not for this test")
    );

    reg.vfs().clear_faults();
    c.execute("INSERT INTO t VALUES(3)", []).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1, "only the insert after the faults committed");
}
