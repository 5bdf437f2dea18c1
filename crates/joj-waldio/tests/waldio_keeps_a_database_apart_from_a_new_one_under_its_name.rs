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
//!
//! A probe of exclusive locking mode (2026-11-29, H146) found three more, where waldio bound a
//! WAL to the file of the thread's last lock: a WAL is now the log of the file at its name, and
//! a connection whose own file is no longer there is refused its use.
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

/// Renames `db` and its side files to `to` and its side files.
fn rename_all(db: &Path, to: &Path) {
    for suffix in ["", "-wal", "-shm", "-waldio", "-journal"] {
        let (mut a, mut b) = (db.as_os_str().to_owned(), to.as_os_str().to_owned());
        a.push(suffix);
        b.push(suffix);
        let _ = std::fs::rename(a, b);
    }
}

/// `db` opened through waldio as an application opens it: no statement run, in the journal
/// mode the file says.
fn raw(db: &Path) -> Connection {
    let vfs = joj_waldio::register().unwrap();
    Connection::open_with_flags_and_vfs(db, rusqlite::OpenFlags::default(), vfs.name()).unwrap()
}

fn is_io_error<T: std::fmt::Debug>(r: &rusqlite::Result<T>) -> bool {
    let code = r.as_ref().err().and_then(|e| e.sqlite_error_code());
    code == Some(rusqlite::ErrorCode::SystemIoFailure)
}

/// A connection opened, then another database put at its name (`rename` over it, a common way
/// to ship new data) before its first statement. Stock reads the file it opened but opens the
/// WAL by name — the other database's — and at close leaves its frames there (it does not
/// checkpoint a database that has moved: pager.c, `databaseIsUnmoved`), so the next open of the
/// name replays them onto the database now there: its table showed the old connection's rows.
/// waldio refuses the statement (`SQLITE_IOERR_FSTAT`) and the database at the name is left
/// whole. (The first version of H132's fix refused it with `SQLITE_CANTOPEN`; the second let
/// it through as stock does.)
#[test]
fn a_connection_whose_name_was_replaced_before_its_first_statement_leaves_the_new_database_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let shipped = dir.path().join("shipped.db");
    let opts = WaldioOptions::default();
    for (path, table) in [(&db, "o"), (&shipped, "t")] {
        open(path, &opts)
            .unwrap()
            .execute_batch(&format!(
                "PRAGMA journal_mode=WAL; CREATE TABLE {table}(v); INSERT INTO {table} VALUES (1);"
            ))
            .unwrap();
    }
    let vfs = joj_waldio::register().unwrap();
    let a = Connection::open_with_flags_and_vfs(&db, rusqlite::OpenFlags::default(), vfs.name())
        .unwrap();
    std::fs::rename(&shipped, &db).unwrap();
    let got = a.execute("INSERT INTO o VALUES (2)", []);
    assert!(is_io_error(&got), "{got:?}");
    drop(a);
    let now = open(&db, &opts).unwrap();
    let rows: Vec<i64> = now
        .prepare("SELECT v FROM t ORDER BY rowid")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!((rows, integrity(&now)), (vec![1], "ok".into()));
}

/// A connection in exclusive locking mode switches its database to WAL mode (its WAL opens at
/// its next statement, with no lock call before: it holds EXCLUSIVE already); its database is
/// renamed away and a new WAL database made under the name; the old connection commits.
/// Stock writes a new log header into the new database's WAL, which the new database's
/// unchanged index ignores: whole, 201 rows. waldio found the old connection's WAL by the
/// thread's last lock — the new connection's — and wrote into the new database's log, whose
/// index check then took the old connection's frames as the new database's: `database disk
/// image is malformed`, also after reopening (found by a probe, 2026-11-29: H146). The old
/// connection's statement is refused now; the new database keeps every row.
#[test]
fn an_exclusive_connection_whose_name_was_replaced_leaves_the_new_database_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (db, away) = (dir.path().join("x.db"), dir.path().join("y.db"));
    let opts = WaldioOptions::default();
    let old = raw(&db);
    old.execute_batch(
        "PRAGMA locking_mode=EXCLUSIVE; CREATE TABLE o(v); INSERT INTO o VALUES (1); \
         PRAGMA journal_mode=WAL;",
    )
    .unwrap();
    rename_all(&db, &away);
    open(&db, &opts)
        .unwrap()
        .execute_batch(
            "PRAGMA journal_mode=WAL; CREATE TABLE t(v); \
             WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i<200) \
             INSERT INTO t SELECT 'new-'||i FROM r; CREATE INDEX ti ON t(v);",
        )
        .unwrap();
    let new = open(&db, &opts).unwrap();
    assert_eq!(count(&new, "t").unwrap(), 200);
    let got = old.execute("INSERT INTO o VALUES (2)", []);
    assert!(is_io_error(&got), "{got:?}");
    new.execute("INSERT INTO t VALUES ('new-201')", []).unwrap();
    assert_eq!(
        (count(&new, "t").unwrap(), integrity(&new)),
        (201, "ok".into())
    );
    drop((old, new));
    let again = open(&db, &opts).unwrap();
    assert_eq!(
        (count(&again, "t").unwrap(), integrity(&again)),
        (201, "ok".into())
    );
    let moved = open(&away, &opts).unwrap();
    assert_eq!(
        (count(&moved, "o").unwrap(), integrity(&moved)),
        (1, "ok".into())
    );
}

/// The new database's connection is the one in exclusive locking mode: it switches to WAL mode
/// and opens its WAL with no lock call before, after the old connection (its database renamed
/// away) made the thread's last lock call on the name. waldio bound the new WAL to the old
/// connection's file, and the old connection's release of EXCLUSIVE dropped the new database's
/// spilled frames mid-transaction: its commit was acknowledged, then `malformed`. The WAL is
/// bound to the file at the name now: 2,001 rows, as stock.
#[test]
fn a_wal_opened_in_exclusive_mode_after_another_connections_lock_is_the_databases_own() {
    let dir = tempfile::tempdir().unwrap();
    let (db, away) = (dir.path().join("x.db"), dir.path().join("y.db"));
    let opts = WaldioOptions::default();
    let old = raw(&db);
    old.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA locking_mode=EXCLUSIVE; \
         CREATE TABLE o(v); INSERT INTO o VALUES (1);",
    )
    .unwrap();
    rename_all(&db, &away);
    let new = raw(&db);
    new.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES ('new-1');")
        .unwrap();
    let _: String = new
        .query_row("PRAGMA locking_mode=EXCLUSIVE", [], |r| r.get(0))
        .unwrap();
    let _: String = new
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    // Fails in both VFSs (the database moved), after a lock call on the name.
    let _ = old.query_row("PRAGMA journal_mode=DELETE", [], |r| r.get::<_, String>(0));
    new.execute_batch(
        "PRAGMA cache_size=10; BEGIN; \
         WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i<2000) \
         INSERT INTO t SELECT 'new-big-'||i||hex(randomblob(50)) FROM r;",
    )
    .unwrap();
    drop(old);
    new.execute_batch("COMMIT").unwrap();
    assert_eq!(
        (count(&new, "t").unwrap(), integrity(&new)),
        (2001, "ok".into())
    );
    drop(new);
    let again = open(&db, &opts).unwrap();
    assert_eq!(
        (count(&again, "t").unwrap(), integrity(&again)),
        (2001, "ok".into())
    );
}

/// The other way round: the connection of the database at the name opens its WAL in exclusive
/// locking mode (no lock call before) while a connection whose database was deleted holds a
/// read cursor, the thread's last lock on the name. Stock commits; so does waldio (a first
/// version of H146's fix took the reader for the opener and refused the commit: found by a
/// review, `/tmp/rev-h146/min/f1_innocent_new_refused.py` of that machine).
#[test]
fn the_database_at_the_name_opens_its_wal_while_an_old_connection_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let old = raw(&db);
    old.execute_batch("CREATE TABLE o(v); INSERT INTO o VALUES (1), (2);")
        .unwrap();
    std::fs::remove_file(&db).unwrap();
    let new = raw(&db);
    new.execute_batch(
        "CREATE TABLE t(v); INSERT INTO t VALUES ('a'); PRAGMA locking_mode=EXCLUSIVE;",
    )
    .unwrap();
    let _: String = new
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    let mut reading = old.prepare("SELECT v FROM o").unwrap();
    let mut rows = reading.query([]).unwrap();
    assert!(rows.next().unwrap().is_some());
    new.execute("INSERT INTO t VALUES ('b')", []).unwrap();
    drop(rows);
    drop(reading);
    assert_eq!(
        (count(&new, "t").unwrap(), integrity(&new)),
        (2, "ok".into())
    );
    drop((old, new));
    let again = open(&db, &WaldioOptions::default()).unwrap();
    assert_eq!(
        (count(&again, "t").unwrap(), integrity(&again)),
        (2, "ok".into())
    );
}
