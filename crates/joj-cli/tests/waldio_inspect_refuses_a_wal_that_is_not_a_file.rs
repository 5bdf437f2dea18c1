//! `joj waldio inspect DB` reads the WAL's size and first block only: a FIFO at the WAL's name
//! used to block it for ever (the whole WAL was read), a device would have filled memory. It is
//! refused unread, named, with the fix — within a deadline.

mod common;

use common::joj_bounded;

#[test]
fn waldio_inspect_refuses_a_wal_that_is_not_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("plain.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch("CREATE TABLE t(a); INSERT INTO t VALUES(1);")
        .unwrap();
    drop(c);
    let db = db.to_str().unwrap();
    let run = joj_bounded(&["waldio", "convert", db]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let wal = format!("{db}-waldio");
    let _ = std::fs::remove_file(&wal);
    let made = std::process::Command::new("mkfifo")
        .arg(&wal)
        .status()
        .unwrap();
    assert!(made.success());
    let run = joj_bounded(&["waldio", "inspect", db]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr
            .contains(&format!("{wal} is a FIFO (named pipe), not a regular file"))
            && run.stderr.contains("fix:"),
        "{}",
        run.stderr
    );
}
