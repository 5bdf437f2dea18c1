#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! The system's Python and SQLite (3.40) with the extension: a waldio writer killed with 300
//! acknowledged commits (or a few more) in its log, a stock WAL header without frames at `-wal`, and a stock
//! connection that opens the database — refused, but only after it rebuilt the shared wal-index
//! from its own empty `-wal` — and stays open. The waldio connection that came next read the
//! database without its log (`no such table: t`), and its close, the last, marked the log
//! absent: every commit lost (robustness H65). Now waldio checks the wal-index against its log
//! at every wal-index lock and has SQLite rebuild a foreign one (docs/formats/waldio.md, "A
//! wal-index a SQLite without waldio built").

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const ROWS: u64 = 300;

fn killed_writer(dir: &std::path::Path) -> std::path::PathBuf {
    let db = dir.join("app.db");
    let mut child = Command::new(common::python())
        .arg(common::script("writer.py"))
        .args([common::lib().as_os_str(), db.as_os_str()])
        .arg("waldio_sync=full")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while lines.next().expect("writer output").unwrap() != ROWS.to_string() {}
    child.kill().unwrap();
    child.wait().unwrap();
    db
}

fn python_json(script: &str, args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let out = common::run_ok(
        Command::new(common::python())
            .arg(common::script(script))
            .arg(common::lib())
            .args(args),
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_stock_connection_that_rebuilt_the_wal_index_loses_no_waldio_commit() {
    for variant in ["same", "noshm", "other"] {
        let dir = tempfile::tempdir().unwrap();
        let db = killed_writer(dir.path());
        let saw = python_json("stale_index.py", &[db.as_os_str(), variant.as_ref()]);
        let stock = saw["stock"].as_str().unwrap_or_default();
        assert!(stock.contains("not a database"), "{variant}: {saw}");
        // The writer may commit a few more rows before the kill lands.
        let seen = saw["waldio"].as_u64().unwrap_or(0);
        assert!(seen >= ROWS, "{variant}: {saw}");
        let end = python_json("check.py", &[db.as_os_str()]);
        assert_eq!(end["count"], seen + 1, "{variant}: {end}");
        assert_eq!(end["integrity"], "ok", "{variant}: {end}");
    }
}
