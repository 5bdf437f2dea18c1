//! `waldio_journal=wal` switches a rollback-mode database to WAL mode at a connection's next
//! commit. A process killed inside the commit of a switch (`PRAGMA journal_mode=WAL`) leaves
//! the header saying WAL beside the hot journal that undoes it; a connection opened with the
//! option then rolls the journal back and still switches the database.
//!
//! Found by a probe of hot-journal rollbacks (2026-11-29, docs/robustness.md H151): the
//! connection's first read of the header, which SQLite makes without a lock when it opens the
//! file, saw the cut-off switch and turned the option off; after the rollback the connection
//! committed in rollback mode for its whole life (6 of 6 runs), with only the "not in WAL mode"
//! warning to say so. No commit was lost.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_waldio::WaldioOptions;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// Ends the process right after the database's page 1 is written with a header that says WAL
/// (before the journal that undoes it is deleted).
struct DieAfterTheSwitchesHeader;

impl joj_waldio::Tap for DieAfterTheSwitchesHeader {
    fn write(&self, path: &Path, off: u64, data: &[u8], _: bool) {
        let db_file = path.extension().is_some_and(|e| e == "db");
        if db_file && off == 0 && data.len() >= 100 && data[18] == 2 {
            // SAFETY: ends this test process at once, mid-commit.
            unsafe { libc::_exit(0) };
        }
    }
    fn sync(&self, _: &Path) {}
    fn truncate(&self, _: &Path, _: u64) {}
}

fn through_waldio(db: &Path, opts: &WaldioOptions) -> Connection {
    let vfs = joj_waldio::register().unwrap();
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_URI;
    Connection::open_with_flags_and_vfs(joj_waldio::uri(db, opts), flags, vfs.name()).unwrap()
}

/// Run by the test below as a process of its own: the switch, cut off by the process's end.
#[test]
fn a_switch_cut_off() {
    let Ok(db) = std::env::var("WALDIO_CUT_SWITCH_DB") else {
        return;
    };
    let c = through_waldio(Path::new(&db), &WaldioOptions::default());
    joj_waldio::register()
        .unwrap()
        .set_tap(Some(std::sync::Arc::new(DieAfterTheSwitchesHeader)));
    let _ = c.execute_batch("PRAGMA journal_mode=WAL");
    panic!("the switch's header was never written");
}

#[test]
fn a_connection_with_the_option_switches_a_database_whose_switch_a_crash_cut_off() {
    if std::env::var("WALDIO_CUT_SWITCH_DB").is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("app.db");
    {
        // Made through waldio in DELETE mode: it has the reserve.
        let c = through_waldio(&db, &WaldioOptions::default());
        c.execute_batch(
            "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES(1, 'a')",
        )
        .unwrap();
    }
    common::run_child_leaving_a_hot_journal("a_switch_cut_off", "WALDIO_CUT_SWITCH_DB", &db);
    assert_eq!(
        std::fs::read(&db).unwrap()[18],
        2,
        "the cut-off switch's header"
    );

    let opts = WaldioOptions {
        wal_mode: true,
        ..WaldioOptions::default()
    };
    let c = through_waldio(&db, &opts);
    c.execute("INSERT INTO t VALUES(2, 'b')", []).unwrap();
    c.execute("INSERT INTO t VALUES(3, 'c')", []).unwrap();
    let mode: String = c
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal", "the option's connection after the rollback");
    let n: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 3);
}

/// A connection with the option that opens a database already in WAL mode, whose page 1 is in
/// the WAL (another connection's commit put it there), never reads the header from the
/// database file under a lock: SQLite reads page 1 from the WAL. The application's own
/// `PRAGMA journal_mode=DELETE` on it must stay (stock SQLite then opens the file). Found by a
/// review of H151's fix (2026-11-29, `review/option_then_delete.py`): the header was turned
/// back into WAL, `PRAGMA journal_mode` answered `wal` and stock SQLite refused the file, as
/// before H35's fix.
#[test]
fn the_apps_switch_back_to_delete_stays_when_the_option_found_page_1_in_the_wal() {
    if std::env::var("WALDIO_CUT_SWITCH_DB").is_ok() {
        return;
    }
    for exclusive in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("app.db");
        let other = through_waldio(&db, &WaldioOptions::default());
        other
            .execute_batch(
                "PRAGMA journal_mode=WAL; CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);
                 INSERT INTO t VALUES(1, 'a')",
            )
            .unwrap();
        let opts = WaldioOptions {
            wal_mode: true,
            ..WaldioOptions::default()
        };
        let c = through_waldio(&db, &opts);
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
        if exclusive {
            c.execute_batch("PRAGMA locking_mode=EXCLUSIVE").unwrap();
        }
        drop(other);
        c.execute("INSERT INTO t VALUES(2, 'b')", []).unwrap();
        let mode: String = c
            .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
        c.execute("INSERT INTO t VALUES(3, 'c')", []).unwrap();
        let mode: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            mode, "delete",
            "exclusive={exclusive}: the app's switch was undone"
        );
        drop(c);
        let h = std::fs::read(&db).unwrap();
        assert_eq!((h[18], h[19]), (1, 1), "exclusive={exclusive}: header");
        let stock = Connection::open(&db).unwrap();
        let n: i64 = stock
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 3, "exclusive={exclusive}");
    }
}
