//! A VFS error with a message is also sent to `sqlite3_log`, with the VFS's name in front, so an
//! application's SQLite log shows why an I/O error happened.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::{CountingVfs, Fault};
use joj_vfs::ResultCode;
use libsqlite3_sys as ffi;
use rusqlite::{Connection, OpenFlags};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Mutex;

static LOG: Mutex<Vec<(c_int, String)>> = Mutex::new(Vec::new());

unsafe extern "C" fn log_to_vec(_arg: *mut c_void, code: c_int, msg: *const c_char) {
    // SAFETY: SQLite passes a NUL-terminated message valid for the call.
    let m = unsafe { CStr::from_ptr(msg) }
        .to_string_lossy()
        .into_owned();
    LOG.lock().unwrap().push((code, m));
}

#[test]
fn errors_go_to_sqlite_log() {
    // SAFETY: configuring SQLite's log before anything in this process initialises SQLite (this
    // test binary has only this test); the callback matches SQLITE_CONFIG_LOG's signature.
    let rc = unsafe {
        ffi::sqlite3_config(
            ffi::SQLITE_CONFIG_LOG,
            log_to_vec as unsafe extern "C" fn(*mut c_void, c_int, *const c_char),
            std::ptr::null_mut::<c_void>(),
        )
    };
    assert_eq!(rc, ffi::SQLITE_OK);
    let name = common::unique_name("log");
    let reg = joj_vfs::register_vfs(&name, |_| CountingVfs::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let c = Connection::open_with_flags_and_vfs(
        dir.path().join("l.db"),
        OpenFlags::default(),
        name.as_str(),
    )
    .unwrap();
    c.execute_batch("PRAGMA journal_mode=DELETE; CREATE TABLE t(v)")
        .unwrap();
    reg.vfs().inject(
        "write",
        "-journal",
        Fault::Fail {
            code: ResultCode::IOERR_WRITE,
            message: Some("no room on the test medium".into()),
        },
    );
    assert!(c.execute("INSERT INTO t VALUES(1)", []).is_err());
    let want = (
        ResultCode::IOERR_WRITE.raw(),
        format!("{name}: no room on the test medium"),
    );
    let log = LOG.lock().unwrap().clone();
    assert!(log.contains(&want), "{want:?} not in {log:?}");
}
