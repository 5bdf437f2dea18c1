#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! A waldio writer is killed with 100 acknowledged commits in its log; a stock WAL header
//! without frames lies at `-wal`; a SQLite without waldio opens the database: before the mark
//! refuses it, it rebuilds the shared wal-index in `-shm` from its own empty `-wal` (0 frames),
//! and stays open, holding the `-shm` so that nobody clears it. waldio connections that came
//! next trusted that index: they read the database without its log (`no such table: t`), and
//! the last one to close marked the log absent — 100 of 100 commits lost (robustness H65). Now
//! every wal-index lock waldio's SQLite takes checks the index against the waldio WAL, and a
//! foreign one is rebuilt from it (docs/formats/waldio.md, "A wal-index a SQLite without waldio
//! built").
//!
//! The writer, the stock connection of another process and the other waldio readers are this
//! test binary run again with the ignored `*_child` tests.

use rusqlite::Connection;
use std::io::{BufRead, BufReader, Lines, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};

const ROWS: i64 = 100;

/// This test binary running one ignored child test with `db` in its environment.
fn child(name: &str, db: &Path) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut c = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            name,
            "--nocapture",
            "--test-threads=1",
        ])
        .env("WALDIO_STALE_DB", db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(c.stdout.take().unwrap()).lines();
    (c, lines)
}

/// The next line the child says that starts with `what` (libtest's own lines skipped).
fn said(lines: &mut Lines<BufReader<ChildStdout>>, what: &str) -> String {
    lines
        .map(Result::unwrap)
        .find_map(|l| l.find(what).map(|i| l[i..].to_owned()))
        .unwrap_or_else(|| panic!("the child ended without saying {what}"))
}

fn child_db() -> PathBuf {
    PathBuf::from(std::env::var("WALDIO_STALE_DB").expect("run by a parent test"))
}

#[test]
#[ignore = "the writer the tests start and kill"]
fn writer_child() {
    let c = joj_waldio::open(&child_db(), &joj_waldio::WaldioOptions::default()).unwrap();
    c.execute_batch("PRAGMA wal_autocheckpoint=0; CREATE TABLE t(id INTEGER PRIMARY KEY, v)")
        .unwrap();
    for i in 1..=ROWS {
        c.execute("INSERT INTO t VALUES(?1, 'x')", [i]).unwrap();
    }
    println!("writer-acked {ROWS}");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    unreachable!("killed before its input ends");
}

/// A SQLite without waldio (rusqlite's own, the `unix` VFS): opens the database, is refused,
/// stays open; on `poll` tries again, on `ckpt` runs `PRAGMA wal_checkpoint(TRUNCATE)`.
#[test]
#[ignore = "the stock connection the tests start"]
fn stock_child() {
    let c = Connection::open(child_db()).unwrap();
    let count = |c: &Connection| {
        c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
            .map_err(|e| e.to_string())
    };
    println!("stock-says {:?}", count(&c));
    for line in std::io::stdin().lines() {
        match line.unwrap().as_str() {
            "poll" => println!("stock-says {:?}", count(&c)),
            "ckpt" => {
                let r = c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                    r.get::<_, i64>(0)
                });
                println!("stock-says ckpt {:?}", r.map_err(|e| e.to_string()));
            }
            _ => break,
        }
    }
    drop(c);
    println!("stock-says closed");
}

/// Another waldio process: reads the rows of the log and adds one, then waits to close.
#[test]
#[ignore = "a waldio reader the tests start"]
fn waldio_reader_child() {
    let c = joj_waldio::open(&child_db(), &joj_waldio::WaldioOptions::default()).unwrap();
    let n = logged(&c);
    c.execute("INSERT INTO t(v) VALUES('reader')", []).unwrap();
    println!("reader-saw {n}");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
}

/// The rows the killed writer acknowledged that `c` sees (`-1`: no table at all).
fn logged(c: &Connection) -> i64 {
    c.query_row(
        &format!("SELECT count(*) FROM t WHERE id BETWEEN 1 AND {ROWS}"),
        [],
        |r| r.get(0),
    )
    .unwrap_or(-1)
}

/// The killed writer's database: 100 acknowledged commits in `x.db-waldio`, none in `x.db`,
/// the writer's `-shm` left behind, and a stock WAL header without frames at `x.db-wal`.
fn killed_writer(dir: &Path) -> PathBuf {
    let db = dir.join("x.db");
    let (mut w, mut lines) = child("writer_child", &db);
    assert_eq!(
        said(&mut lines, "writer-acked"),
        format!("writer-acked {ROWS}")
    );
    w.kill().unwrap();
    w.wait().unwrap();
    let mut stock_header = 0x377f_0682u32.to_be_bytes().to_vec();
    stock_header.extend_from_slice(&3_007_000u32.to_be_bytes());
    stock_header.resize(32, 0);
    std::fs::write(dir.join("x.db-wal"), stock_header).unwrap();
    db
}

/// After every other connection closed: a last waldio connection (whose close checkpoints the
/// log) sees `rows` rows, all of the writer's among them, and the database is intact.
fn all_there(db: &Path, rows: i64) {
    let c = joj_waldio::open(db, &joj_waldio::WaldioOptions::default()).unwrap();
    assert_eq!(logged(&c), ROWS, "the killed writer's commits");
    let n: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, rows);
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

#[test]
fn a_stock_connection_left_open_in_another_process_rebuilt_the_index_in_vain() {
    let dir = tempfile::tempdir().unwrap();
    let db = killed_writer(dir.path());
    let (mut stock, mut lines) = child("stock_child", &db);
    assert!(said(&mut lines, "stock-says").contains("not a database"));

    let vfs = joj_waldio::register().unwrap();
    let before = vfs.counters().foreign_wal_indexes;
    let w = joj_waldio::open(&db, &joj_waldio::WaldioOptions::default()).unwrap();
    assert_eq!(logged(&w), ROWS, "waldio read the stock connection's index");
    assert!(vfs.counters().foreign_wal_indexes > before);
    w.execute("INSERT INTO t VALUES(1000, 'waldio')", [])
        .unwrap();

    // The other way round: the stock connection, still open, now finds waldio's index. It is
    // refused all the same, and its checkpoint copies nothing.
    let mut input = stock.stdin.take().unwrap();
    for command in ["poll", "ckpt", "poll"] {
        writeln!(input, "{command}").unwrap();
        let answer = said(&mut lines, "stock-says");
        assert!(answer.contains("Err("), "{command}: {answer}");
    }
    assert_eq!(logged(&w), ROWS);
    drop(input);
    assert_eq!(said(&mut lines, "stock-says closed"), "stock-says closed");
    assert!(stock.wait().unwrap().success());
    // The waldio connection is the last one: its close checkpoints and ends the log.
    drop(w);
    all_there(&db, ROWS + 1);
}

#[test]
fn a_stock_connection_of_this_process_after_the_shm_was_removed() {
    let dir = tempfile::tempdir().unwrap();
    let db = killed_writer(dir.path());
    std::fs::remove_file(dir.path().join("x.db-shm")).unwrap();
    let stock = Connection::open(&db).unwrap();
    let refused = stock.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0));
    assert!(refused.unwrap_err().to_string().contains("not a database"));

    let w = joj_waldio::open(&db, &joj_waldio::WaldioOptions::default()).unwrap();
    assert_eq!(logged(&w), ROWS, "waldio read the stock connection's index");
    drop(stock);
    drop(w);
    all_there(&db, ROWS);
}

#[test]
fn waldio_processes_reading_at_once_beside_the_stock_connection() {
    let dir = tempfile::tempdir().unwrap();
    let db = killed_writer(dir.path());
    let (mut stock, mut stock_lines) = child("stock_child", &db);
    assert!(said(&mut stock_lines, "stock-says").contains("not a database"));
    let mut readers: Vec<_> = (0..3).map(|_| child("waldio_reader_child", &db)).collect();
    for (_, lines) in readers.iter_mut() {
        assert_eq!(said(lines, "reader-saw"), format!("reader-saw {ROWS}"));
    }
    drop(stock.stdin.take());
    assert!(stock.wait().unwrap().success());
    for (mut r, _) in readers {
        drop(r.stdin.take());
        assert!(r.wait().unwrap().success());
    }
    all_there(&db, ROWS + 3);
}

/// In another process (no POSIX lock of this process is touched): tear the wal-index header
/// (copy 0 differs from copy 1, as a waldio writer killed between its two copies leaves it),
/// put a stock WAL header without frames at `-wal`, and open the database with stock SQLite,
/// which rebuilds the index from that `-wal` (0 frames, salts 0) before it is refused.
fn stock_rebuilds_the_index(db: &Path) -> String {
    let script = r#"
import sqlite3, sys
db = sys.argv[1]
open(db + "-wal", "wb").write(bytes.fromhex("377f0682002de218") + bytes(24))
with open(db + "-shm", "r+b") as f:
    f.seek(8); b = bytearray(f.read(4)); b[0] ^= 1; f.seek(8); f.write(bytes(b))
c = sqlite3.connect(db)
try:
    print(c.execute("SELECT count(*) FROM t").fetchone())
except Exception as e:
    print("stock:", e)
with open(db + "-shm", "rb") as f:
    h = f.read(48)
print("index mxFrame", int.from_bytes(h[16:20], "little"), "salts", h[32:40].hex())
"#;
    let out = Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A new log's first transaction, spilled in parts (`cache_size=2`), is 200 inserts; a second
/// connection reads while that writer's header and frames are in the log and no commit frame
/// yet (when `read_mid_transaction`). The writer commits and closes; a stock SQLite of another
/// process rebuilds the index to 0 frames under salts 0. Returns what the reading connection
/// sees then, and what a last connection sees after it closed.
fn spilled_first_transaction(read_mid_transaction: bool) -> (i64, i64) {
    const INSERTS: i64 = 200;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let opts = joj_waldio::WaldioOptions::default();
    let count = |c: &Connection| -> i64 {
        c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    };
    {
        let c = joj_waldio::open(&db, &opts).unwrap();
        c.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
            .unwrap();
    } // the last close: checkpointed, the log absent
    let w = joj_waldio::open(&db, &opts).unwrap();
    let c = joj_waldio::open(&db, &opts).unwrap();
    w.execute_batch("PRAGMA wal_autocheckpoint=0; PRAGMA cache_size=2")
        .unwrap();
    assert_eq!(count(&c), 0);
    w.execute_batch("BEGIN").unwrap();
    for i in 1..=INSERTS {
        w.execute("INSERT INTO t VALUES(?1, randomblob(3000))", [i])
            .unwrap();
    }
    if read_mid_transaction {
        assert_eq!(count(&c), 0);
    }
    w.execute_batch("COMMIT").unwrap(); // acknowledged
    assert_eq!(count(&c), INSERTS);
    drop(w);
    let said = stock_rebuilds_the_index(&db);
    assert!(said.contains("index mxFrame 0"), "{said}");
    let seen = count(&c);
    drop(c); // the last connection: its close checkpoints what the index names
    let last = joj_waldio::open(&db, &opts).unwrap();
    (seen, count(&last))
}

/// A check made while another connection's transaction was under way found the log without a
/// commit, and remembered that pair of salts as "no commit". The writer then committed under
/// that very header, and when a stock SQLite later rebuilt the index to the remembered pair, the
/// reading connection accepted it without looking at the log: it read 0 rows, and as the last
/// connection it checkpointed nothing and dropped all 200 acknowledged inserts. The pair is
/// remembered only when judged under the write lock (a review found it, 2026-11-28).
#[test]
fn a_check_during_another_connections_first_transaction_is_not_trusted_later() {
    assert_eq!(spilled_first_transaction(false), (200, 200), "control");
    assert_eq!(spilled_first_transaction(true), (200, 200));
}
