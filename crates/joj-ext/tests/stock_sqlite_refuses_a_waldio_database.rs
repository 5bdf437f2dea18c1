//! The distribution's `sqlite3`, without the extension, opening a waldio database whose WAL
//! holds committed transactions: it must not show an older database, nor write over the WAL.
//! It fails (`file is not a database`), and nothing is lost when the database is reopened with
//! the extension. After `PRAGMA journal_mode=DELETE` through waldio it reads every row.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// A waldio database whose WAL holds `rows` committed rows the database file lacks: the
/// writer is killed, so nothing was checkpointed.
fn database_with_commits_in_its_wal(dir: &std::path::Path, rows: u64) -> std::path::PathBuf {
    let db = dir.join("app.db");
    let mut child = Command::new(common::python())
        .arg(common::script("writer.py"))
        .args([common::lib().as_os_str(), db.as_os_str()])
        .arg("waldio_sync=full")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    loop {
        let l = lines.next().expect("writer output").unwrap();
        if l == rows.to_string() {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    db
}

fn count_with_extension(db: &std::path::Path) -> serde_json::Value {
    let out = common::run_ok(
        Command::new(common::python())
            .arg(common::script("check.py"))
            .args([common::lib().as_os_str(), db.as_os_str()]),
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn stock_sqlite3_refuses_to_read_or_write_and_the_commits_survive() {
    let dir = tempfile::tempdir().unwrap();
    let db = database_with_commits_in_its_wal(dir.path(), 300);
    let wal_before = std::fs::read(joj_waldio::wal_path(&db)).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; the directory holds {:?}",
            joj_waldio::wal_path(&db).display(),
            std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect::<Vec<_>>()
        )
    });
    let name = db.to_str().unwrap();
    for sql in [
        "SELECT count(*) FROM t;",
        "INSERT INTO t VALUES(100000, 'stock');",
        "PRAGMA wal_checkpoint(TRUNCATE);",
        "PRAGMA journal_mode=DELETE;",
    ] {
        let (ok, stdout, stderr) = common::shell(dir.path(), &[name], sql);
        assert!(
            !ok && stderr.contains("file is not a database"),
            "stock sqlite3 must refuse `{sql}`; it said: ok={ok} stdout={stdout:?} \
             stderr={stderr:?}"
        );
        assert!(stdout.trim().is_empty(), "no old state shown: {stdout:?}");
    }
    assert_eq!(
        std::fs::read(joj_waldio::wal_path(&db)).unwrap(),
        wal_before,
        "stock SQLite did not touch the WAL"
    );
    let v = count_with_extension(&db);
    assert!(v["count"].as_u64().unwrap() >= 300, "{v}");
    assert_eq!(v["count"], v["max"]);
    assert_eq!(v["integrity"], "ok");
}

#[test]
fn after_leaving_wal_mode_through_waldio_stock_sqlite3_reads_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = database_with_commits_in_its_wal(dir.path(), 300);
    let lib = common::lib();
    let lib = lib.with_extension("");
    let script = format!(
        ".load {}\n.open file:{}?vfs=waldio\nPRAGMA journal_mode=DELETE;\nSELECT count(*) FROM t;\n",
        lib.display(),
        db.display()
    );
    let (ok, stdout, stderr) = common::shell(dir.path(), &[], &script);
    assert!(ok, "{stdout} {stderr}");
    let n: u64 = stdout.lines().last().unwrap().trim().parse().unwrap();
    assert!(n >= 300);
    let header = std::fs::read(&db).unwrap();
    assert_eq!((header[18], header[19]), (1, 1), "rollback mode, no mark");
    let (ok, stdout, stderr) = common::shell(
        dir.path(),
        &[db.to_str().unwrap()],
        "SELECT count(*), max(i) FROM t; PRAGMA integrity_check;",
    );
    assert!(ok, "{stderr}");
    assert_eq!(stdout, format!("{n}|{n}\nok\n"));
}

/// A stock connection (process S) and a waldio connection (process W) on one database at once
/// — a database with waldio's reserve in WAL mode, as after waldio's hand-back and a stock
/// program turning WAL on again. S commits one update, W three. Whatever each was told
/// succeeded is there afterwards. (waldio appended W's frames to a WAL the shared wal-index
/// said was under way, in its own file where no recovery looks: acknowledged, then lost.) The
/// control runs W through stock SQLite too. Now W is refused at its WAL's open while S has the
/// database open in WAL mode (robustness H36), so W commits nothing and says why.
#[test]
fn a_stock_and_a_waldio_connection_at_once_lose_no_acknowledged_commit() {
    for other in ["waldio", "unix"] {
        let dir = tempfile::tempdir().unwrap();
        let out = common::run_ok(
            Command::new(common::python())
                .arg(common::script("mixed.py"))
                .args([common::lib().as_os_str(), dir.path().as_os_str()])
                .arg(other),
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let acked = |k: &str| v[k].as_u64().unwrap();
        assert_eq!(
            v["t1"].as_u64(),
            Some(10 * acked("acked_stock")),
            "{other}: {v}"
        );
        assert_eq!(
            v["t2"].as_u64(),
            Some(10 * acked("acked_other")),
            "{other}: {v}"
        );
        assert_eq!(v["integrity"], "ok", "{other}: {v}");
        if other == "unix" {
            assert_eq!((acked("acked_stock"), acked("acked_other")), (1, 3), "{v}");
        } else if acked("acked_other") < 3 {
            // A refused commit (or, since 2026-11-28, the refused open of the WAL while the
            // stock process has it open) says why, with the fix.
            let why = v["last_error"].as_str().unwrap_or_default();
            assert!(
                why.contains("through another VFS")
                    || why.contains("without waldio has it open in WAL mode")
                    || why.contains("holds a stock SQLite WAL with frames"),
                "{v}"
            );
        }
    }
}

/// The same inside one process (Python's `sqlite3` with the extension loaded, a connection on
/// each VFS): waldio saw only other processes' locks, marked the database, and the stock
/// connection's two commits were acknowledged into its `-wal`, after which neither SQLite could
/// open the database (found 2026-11-28 (2); H53). The stock connection's SHARED lock, counted
/// by the unix VFS both connections share, now keeps waldio from marking: W is refused and
/// says why, S commits as it would alone.
#[test]
fn a_stock_and_a_waldio_connection_of_one_process_lose_no_acknowledged_commit() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::run_ok(
        Command::new(common::python())
            .arg(common::script("mixed_one_process.py"))
            .args([common::lib().as_os_str(), dir.path().as_os_str()]),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let acked = |k: &str| v[k].as_u64().unwrap();
    assert_eq!(v["integrity"], "ok", "the database opens: {v}");
    assert_eq!(v["t1"].as_u64(), Some(10 * acked("acked_stock")), "{v}");
    assert_eq!(v["t2"].as_u64(), Some(10 * acked("acked_other")), "{v}");
    assert_eq!(acked("acked_stock"), 2, "{v}");
    if acked("acked_other") < 3 {
        // Refused at the first read while S has the database open; once S has committed, its
        // `-wal` holds frames and W's later statements are refused for those.
        let why = v["last_error"].as_str().unwrap_or_default();
        assert!(
            why.contains("without waldio has it open in WAL mode")
                || why.contains("holds a stock SQLite WAL with frames"),
            "{v}"
        );
    }
}
