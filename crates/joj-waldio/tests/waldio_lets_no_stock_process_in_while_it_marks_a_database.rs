//! No SQLite without waldio can open a database in the instant between waldio's decision to
//! mark it and the mark: a stock process S that opened it there (paused for it by the tap, at
//! the point where waldio is about to write the mark) read the header unmarked, committed into
//! its `-wal` (acknowledged) and, after waldio had marked the database, committed again; then
//! neither SQLite could open the database, and S's commits were stranded in its `-wal` (the gap
//! the first check of 2026-11-28 left: it looked for S before marking, and S came after). waldio
//! now marks while the connection opening the WAL holds the database's EXCLUSIVE lock, which S
//! needs SHARED against: S waits, then finds the mark and is refused; nothing acknowledged is
//! lost.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use std::io::{BufRead, BufReader, Lines, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};

/// A stock SQLite process (the distribution's `python3`): connects to `db` (which reads
/// nothing), says `ready`, then runs each line of its standard input as SQL, answering `ok` or
/// the error. It waits at most one second for a lock (its busy timeout).
const STOCK: &str = "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=1)
print('ready', flush=True)
for line in sys.stdin:
    try:
        c.execute(line.strip()); print('ok', flush=True)
    except sqlite3.Error as e:
        print('error', e, flush=True)
";

struct Stock {
    child: Child,
    input: Option<ChildStdin>,
    answers: Lines<BufReader<ChildStdout>>,
    /// The rows it was told were committed.
    acked: Vec<String>,
}

impl Stock {
    fn insert(&mut self, v: &str) -> String {
        writeln!(self.input.as_mut().unwrap(), "INSERT INTO t VALUES('{v}')").unwrap();
        let answer = self.answers.next().unwrap().unwrap();
        if answer == "ok" {
            self.acked.push(v.to_string());
        }
        answer
    }

    /// End the process (its connection closes), and say what it was told was committed.
    fn close(&mut self) -> Vec<String> {
        drop(self.input.take());
        assert!(self.child.wait().unwrap().success());
        std::mem::take(&mut self.acked)
    }
}

/// The tap: when waldio is about to mark the database, the stock process opens it and commits.
struct OpenWhileMarking {
    stock: Arc<Mutex<Stock>>,
    said: Mutex<Vec<String>>,
}

impl joj_waldio::Tap for OpenWhileMarking {
    fn write(&self, _: &Path, _: u64, _: &[u8], _: bool) {}
    fn sync(&self, _: &Path) {}
    fn truncate(&self, _: &Path, _: u64) {}
    fn marking(&self, _db: &Path) {
        let answer = self.stock.lock().unwrap().insert("stock, while marking");
        self.said.lock().unwrap().push(answer);
    }
}

#[test]
fn a_stock_process_opening_in_the_instant_of_the_mark_loses_no_commit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES('before')")
            .unwrap();
    }
    // The reserve waldio needs; then WAL mode as stock SQLite sets it (not marked), closed.
    joj_waldio::convert(&db).unwrap();
    {
        let w = joj_waldio::open(&db, &joj_waldio::WaldioOptions::default()).unwrap();
        w.execute_batch("PRAGMA journal_mode=DELETE").unwrap();
        let c = rusqlite::Connection::open(&db).unwrap();
        let mode: String = c
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }
    assert_eq!(std::fs::read(&db).unwrap()[18..20], [2, 2]);

    let mut child = Command::new("/usr/bin/python3")
        .args(["-c", STOCK])
        .arg(&db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut answers = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(answers.next().unwrap().unwrap(), "ready");
    let input = child.stdin.take().unwrap();
    let stock = Arc::new(Mutex::new(Stock {
        child,
        input: Some(input),
        answers,
        acked: Vec::new(),
    }));

    let vfs = joj_waldio::register_over("waldio-marking", "unix").unwrap();
    let tap = Arc::new(OpenWhileMarking {
        stock: Arc::clone(&stock),
        said: Mutex::new(Vec::new()),
    });
    vfs.set_tap(Some(tap.clone()));
    let mut acked = vec!["before".to_string()];
    let w = joj_waldio::open_with(vfs, &db, &joj_waldio::WaldioOptions::default()).unwrap();
    vfs.set_tap(None);
    assert_eq!(tap.said.lock().unwrap().len(), 1, "the tap paused the mark");
    if w.execute("INSERT INTO t VALUES('waldio')", []).is_ok() {
        acked.push("waldio".into());
    }
    let again = stock.lock().unwrap().insert("stock, after the mark");
    let said = tap.said.lock().unwrap().clone();
    eprintln!("stock while marking: {said:?}; after: {again}");
    // The stock process closes first: while waldio has the database open, its close cannot
    // checkpoint (that needs EXCLUSIVE), so whatever it committed stays in its -wal.
    acked.append(&mut stock.lock().unwrap().close());
    drop(w);

    // Every acknowledged commit is in the database, which waldio opens.
    let c = joj_waldio::open(&db, &joj_waldio::WaldioOptions::default())
        .unwrap_or_else(|e| panic!("the database no longer opens ({e}); acknowledged: {acked:?}"));
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let rows: Vec<String> = c
        .prepare("SELECT v FROM t")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for a in &acked {
        assert!(rows.contains(a), "acknowledged {a:?} lost; rows {rows:?}");
    }
}
