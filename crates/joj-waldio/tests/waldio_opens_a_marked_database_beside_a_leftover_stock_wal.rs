//! A waldio database with an empty `-wal` a stock SQLite left beside it (the database was
//! stock's once) opens through waldio while another waldio process has it open. Until
//! 2026-11-28 (2) the guard against a stock process in WAL mode refused it (`a SQLite without
//! waldio has it open in WAL mode`): it saw a `-wal` and another process's lock, and could not
//! tell that process was waldio's. A marked database needs no such check: every mark is written
//! while its writer holds the database's EXCLUSIVE lock, so no SQLite without waldio can have
//! read it unmarked and still have it open.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// The other waldio process: opens the database, reads, says `open`, and keeps it open until
/// its standard input closes.
#[test]
fn waldio_holder_child() {
    let Ok(db) = std::env::var("WALDIO_LEFTOVER_DB") else {
        return;
    };
    let c = joj_waldio::open(db.as_ref(), &joj_waldio::WaldioOptions::default()).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    println!("open {n}");
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    c.execute("INSERT INTO t VALUES('holder')", []).unwrap();
    println!("done");
}

#[test]
fn an_empty_stock_wal_left_beside_a_marked_database_is_no_false_alarm() {
    if std::env::var("WALDIO_LEFTOVER_DB").is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    {
        let c = joj_waldio::open(&db, &joj_waldio::WaldioOptions::default()).unwrap();
        c.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES('before')")
            .unwrap();
    }
    assert_eq!(std::fs::read(&db).unwrap()[19], joj_waldio::db_mark::MARK);
    // What a stock SQLite that had the database before leaves after a crash: an empty -wal.
    std::fs::write(dir.path().join("x.db-wal"), b"").unwrap();

    let mut holder = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "waldio_holder_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("WALDIO_LEFTOVER_DB", &db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = BufReader::new(holder.stdout.take().unwrap()).lines();
    // (libtest prints the test's name on the same line first.)
    let first = said.find(|l| l.as_ref().is_ok_and(|l| l.contains("open ")));
    assert!(first.unwrap().unwrap().ends_with("open 1"));

    let c = joj_waldio::open(&db, &joj_waldio::WaldioOptions::default())
        .unwrap_or_else(|e| panic!("refused beside a leftover -wal: {e}"));
    c.execute("INSERT INTO t VALUES('second')", []).unwrap();
    drop(holder.stdin.take());
    assert!(said.any(|l| l.is_ok_and(|l| l == "done")));
    assert!(holder.wait().unwrap().success());
    let rows: Vec<String> = c
        .prepare("SELECT v FROM t ORDER BY rowid")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows, ["before", "second", "holder"]);
}
