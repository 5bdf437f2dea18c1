//! A connection keeps its database open while the database's files are deleted, and a new
//! database is made under the same name in the same process (an application that resets its
//! store, a test fixture made again). The two are two files, as stock SQLite keeps them: the
//! old connection's commits reach its own log, never the new database's.
//!
//! Found by a probe of waldio (2026-11-28; docs/robustness.md H132): waldio found a database's
//! WAL by the database's *name*, and the new database's WAL had taken the name's entry. The old
//! connection's commit ended a write transaction on the new database's log and dropped the
//! frames the new connection's open transaction had spilled into it: the new database was
//! corrupted (`btreeInitPage() returns error code 11` on some 100 pages, still after reopening).
//! Across processes, a database renamed away and a new one made under its name lost another
//! process's 300 acknowledged commits the same way (`/tmp/probe-vfs/rename_replace.py` of that
//! machine); both now match stock SQLite.
//!
//! A review of that fix (2026-11-28) found three more cases of the same kind, each now as stock
//! SQLite has it: a WAL opened after the database left its name (refused, as stock refuses it);
//! the old connection leaving WAL mode, which deletes "its" WAL by name (the new database's log
//! is left alone); and one database file open by two names (a hard link: the second refused).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_waldio::{WaldioOptions, open};
use rusqlite::Connection;
use std::path::Path;

fn count(c: &Connection, table: &str) -> rusqlite::Result<i64> {
    c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
}

fn integrity(c: &Connection) -> String {
    c.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

fn remove_all(db: &Path) {
    for suffix in ["", "-wal", "-shm", "-waldio", "-journal"] {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

/// `db` in WAL mode with one row in table `o`, through the connection returned first; then its
/// files deleted and a new WAL database made under its name with table `t`, through the
/// connection returned second, which has run `then` after it.
fn old_and_new(db: &Path, then: &str) -> (Connection, Connection) {
    let opts = WaldioOptions::default();
    let old = open(db, &opts).unwrap();
    old.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE o(v); INSERT INTO o VALUES (1);")
        .unwrap();
    remove_all(db);
    let new = open(db, &opts).unwrap();
    new.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(id INTEGER PRIMARY KEY, v);")
        .unwrap();
    new.execute_batch(then).unwrap();
    (old, new)
}

#[test]
fn a_commit_through_a_deleted_database_leaves_the_new_one_under_its_name_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let opts = WaldioOptions::default();
    let (old, new) = old_and_new(&db, "PRAGMA cache_size=10; BEGIN;");
    // Enough rows that the small cache spills frames into the new database's log before its
    // commit.
    for _ in 0..2000 {
        new.execute("INSERT INTO t(v) VALUES (randomblob(500))", [])
            .unwrap();
    }
    // The old connection commits into its own (deleted) database meanwhile.
    old.execute("INSERT INTO o VALUES (2)", []).unwrap();
    new.execute_batch("COMMIT").unwrap();
    let check = |c: &rusqlite::Connection| {
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        let ok: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        (n, ok)
    };
    assert_eq!(check(&new), (2000, "ok".to_string()));
    let old_rows: i64 = old
        .query_row("SELECT count(*) FROM o", [], |r| r.get(0))
        .unwrap();
    assert_eq!(old_rows, 2, "the old connection sees its own commits");
    drop(old);
    drop(new);
    let again = open(&db, &opts).unwrap();
    assert_eq!(check(&again), (2000, "ok".to_string()));
}

/// The old connection leaves WAL mode after a new database took its name: SQLite checkpoints
/// its log and deletes the WAL *by name*, which is now the new database's. Stock unlinks the
/// name and the new database keeps its log through its open descriptors; waldio wrote the
/// header block that forgets a log into the new database's WAL: its next commit failed
/// ("no WAL header written yet"), and after reopening its 200 committed rows were gone.
#[test]
fn an_old_connection_leaving_wal_mode_leaves_the_new_databases_log_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let opts = WaldioOptions::default();
    let (old, new) = old_and_new(&db, "PRAGMA wal_autocheckpoint=0;");
    for _ in 0..200 {
        new.execute("INSERT INTO t(v) VALUES (randomblob(300))", [])
            .unwrap();
    }
    // Stock answers this with an error too (the deleted database is read-only now); what
    // matters is what it does to the new database.
    let _ = old.query_row("PRAGMA journal_mode=DELETE", [], |r| r.get::<_, String>(0));
    new.execute("INSERT INTO t(v) VALUES (1)", []).unwrap();
    drop(old);
    drop(new);
    let again = open(&db, &opts).unwrap();
    assert_eq!(count(&again, "t").unwrap(), 201);
    assert_eq!(integrity(&again), "ok");
}

/// A connection opened, then its database renamed away before its first statement: the WAL
/// SQLite opens at that statement is named after a database no longer there. Stock refuses it
/// (`SQLITE_IOERR_FSTAT`: it takes the WAL's mode from the database); waldio opened it bound to
/// nothing, so that no end of a write transaction dropped a rolled-back transaction's frames,
/// and another process's commits to the renamed database were corrupted.
#[test]
fn a_wal_named_after_a_database_no_longer_there_is_refused_as_stock_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let opts = WaldioOptions::default();
    let c = open(&db, &opts).unwrap();
    c.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(v); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(c);
    let vfs = joj_waldio::register().unwrap();
    let a = Connection::open_with_flags_and_vfs(&db, rusqlite::OpenFlags::default(), vfs.name())
        .unwrap();
    for suffix in ["", "-waldio", "-shm"] {
        let (from, to) = (format!("x.db{suffix}"), format!("y.db{suffix}"));
        let _ = std::fs::rename(dir.path().join(from), dir.path().join(to));
    }
    let got = count(&a, "t");
    let code = got.as_ref().err().and_then(|e| e.sqlite_error_code());
    assert_eq!(code, Some(rusqlite::ErrorCode::SystemIoFailure), "{got:?}");
    drop(a);
    let y = open(&dir.path().join("y.db"), &opts).unwrap();
    assert_eq!((count(&y, "t").unwrap(), integrity(&y)), (1, "ok".into()));
}

/// One database file by two names in one process (a hard link): each name has a WAL of its
/// own, and the process's one state of the database would serve both. Stock refuses the
/// second name's connection (its wal-index is the file's, its WAL the name's); waldio
/// acknowledged both names' commits and left a database that was no longer one ("file is not
/// a database" by either name). The second name is refused; the first keeps every commit.
#[test]
fn a_second_name_of_an_open_database_is_refused_and_the_first_keeps_its_commits() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.db");
    let b = dir.path().join("b.db");
    let opts = WaldioOptions::default();
    let first = open(&a, &opts).unwrap();
    first
        .execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(v);")
        .unwrap();
    std::fs::hard_link(&a, &b).unwrap();
    let vfs = joj_waldio::register().unwrap();
    let second =
        Connection::open_with_flags_and_vfs(&b, rusqlite::OpenFlags::default(), vfs.name());
    for i in 0..100 {
        first.execute("INSERT INTO t VALUES (?1)", [i]).unwrap();
        if let Ok(s) = &second {
            assert!(
                s.execute("INSERT INTO t VALUES (-1)", []).is_err(),
                "commit {i}"
            );
        }
    }
    let why = joj_waldio::last_error_on_this_thread().unwrap_or_default();
    assert!(
        why.contains("open in this process under another name"),
        "{why}"
    );
    drop(second);
    drop(first);
    let again = open(&a, &opts).unwrap();
    assert_eq!(
        (count(&again, "t").unwrap(), integrity(&again)),
        (100, "ok".into())
    );
}

/// The other way round: only the database file is replaced (another database moved over its
/// name), the WAL at the name is still the old connection's own, and the old connection leaves
/// WAL mode. Its log must be forgotten as always: left there, the next open of the name
/// replayed it onto the database that took the name, whose own table was gone (found by a
/// review of H137's first version).
#[test]
fn a_connection_leaving_wal_mode_forgets_its_own_log_when_only_its_file_was_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let opts = WaldioOptions::default();
    let a = open(&db, &opts).unwrap();
    a.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; CREATE TABLE t(id INTEGER PRIMARY KEY, v);",
    )
    .unwrap();
    for _ in 0..50 {
        a.execute("INSERT INTO t(v) VALUES (randomblob(500))", [])
            .unwrap();
    }
    let other = dir.path().join("new.db");
    let m = open(&other, &opts).unwrap();
    m.execute_batch("CREATE TABLE fresh(k, v);").unwrap();
    for i in 0..30 {
        m.execute("INSERT INTO fresh VALUES (?1, randomblob(400))", [i])
            .unwrap();
    }
    drop(m);
    std::fs::rename(&other, &db).unwrap();
    let _ = a.query_row("PRAGMA journal_mode=DELETE", [], |r| r.get::<_, String>(0));
    drop(a);
    let again = open(&db, &opts).unwrap();
    assert_eq!(
        count(&again, "fresh").unwrap(),
        30,
        "the database now at the name"
    );
    assert!(
        count(&again, "t").is_err(),
        "the old database's table is not replayed onto it"
    );
    assert_eq!(integrity(&again), "ok");
}

/// What [`replaced_before_the_first_statement`] sees: the old connection's rows of `o` and its
/// integrity check, then the rows of `t` in the database at the name after it closed.
type Seen = ((i64, String), Vec<i64>);

/// `x.db` (table `o`) opened through `vfs`, then another database (table `t`, one row) renamed
/// over its name before the connection's first statement; the connection inserts into `o` and
/// closes, and the database at the name is read.
fn replaced_before_the_first_statement(vfs: &str) -> Seen {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let shipped = dir.path().join("shipped.db");
    let flags = rusqlite::OpenFlags::default();
    let open = |path: &Path| Connection::open_with_flags_and_vfs(path, flags, vfs).unwrap();
    for (path, table) in [(&db, "o"), (&shipped, "t")] {
        open(path)
            .execute_batch(&format!(
                "PRAGMA journal_mode=WAL; CREATE TABLE {table}(v); INSERT INTO {table} VALUES (1);"
            ))
            .unwrap();
    }
    let a = open(&db);
    std::fs::rename(&shipped, &db).unwrap();
    a.execute("INSERT INTO o VALUES (2)", []).unwrap();
    let old = (count(&a, "o").unwrap(), integrity(&a));
    drop(a);
    let now = open(&db);
    let mut rows = now.prepare("SELECT v FROM t ORDER BY rowid").unwrap();
    let t = rows.query_map([], |r| r.get(0)).unwrap();
    (old, t.map(Result::unwrap).collect())
}

/// A connection opened, then another database put at its name (`rename` over it, a common way
/// to ship new data) before its first statement. Stock reads and writes the file it opened (its
/// WAL's open finds a file at the name, which is all it asks); the first version of H132's fix
/// refused that open (`unable to open database file`). At close stock does not checkpoint a
/// database that has moved (pager.c, `databaseIsUnmoved`) and leaves its WAL at the name, where
/// the next open replays it onto the database now there: its `t` shows the old connection's
/// rows of `o`. waldio does as stock does, both ways.
#[test]
fn a_connection_whose_name_was_replaced_before_its_first_statement_does_as_stock() {
    let vfs = joj_waldio::register().unwrap();
    let stock = replaced_before_the_first_statement("unix");
    assert_eq!(stock.0, (2, "ok".to_string()), "stock uses its own file");
    assert_eq!(replaced_before_the_first_statement(vfs.name()), stock);
}
