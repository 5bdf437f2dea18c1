//! An application transaction that ends without a commit while an enrolled connection is still
//! inside an SQL transaction (`BEGIN` … with pages already changed, some spilled to the device,
//! others only in SQLite's page cache) leaves no trace of it: the application's later `COMMIT`
//! on that connection must not write the cached rest as plain writes outside any device
//! transaction. Every way such an end comes about: `abort`, a drop, a `commit` refused because
//! the statement is open, and a failing statement (`docs/formats/apptxn.md` §4).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::bank;
use joj_atomic::{AppTxn, AppTxnError, XDevice, XftlVfs};
use rusqlite::Connection;

#[derive(Debug, Clone, Copy)]
enum End {
    Abort,
    Drop,
    RefusedCommit,
    FailedStatement,
}

/// What a fresh connection reads of `a.db`: its accounts' digest and its integrity check.
type Seen = ((i64, i64), String);

fn seen(vfs: &XftlVfs<XDevice>) -> Seen {
    bank::seen(vfs, "a.db")
}

/// A fresh VFS `name` with the bank, what `a.db` shows then, and a connection enrolled in an
/// application transaction, inside `BEGIN` with an update larger than its cache: some pages
/// spilled to the device, the rest only in SQLite's cache.
fn inside_a_spilling_begin(name: &str) -> (XftlVfs<XDevice>, Seen, Connection, AppTxn<XDevice>) {
    let vfs = joj_atomic::register(name).unwrap();
    vfs.attach(common::formatted(&common::profile(64))).unwrap();
    bank::setup(&vfs);
    let before = seen(&vfs);
    assert_eq!(before.1, "ok");
    let a = bank::open_off(vfs.name(), "a.db").unwrap();
    a.execute_batch("PRAGMA cache_size=10").unwrap();
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&a).unwrap();
    tx.sql(|| {
        a.execute_batch(
            "BEGIN; UPDATE account SET balance = balance - 1, note = hex(randomblob(900));",
        )
    })
    .unwrap();
    assert!(!a.is_autocommit(), "the SQL transaction is open");
    (vfs, before, a, tx)
}

fn ended_inside_begin_leaves_no_trace(end: End) {
    let (vfs, before, a, mut tx) = inside_a_spilling_begin(&format!("apptxn-open-sql-{end:?}"));
    match end {
        End::Abort => tx.abort().unwrap(),
        End::Drop => drop(tx),
        End::RefusedCommit => {
            let e = tx.commit().unwrap_err();
            assert!(
                matches!(e, AppTxnError::OpenStatement { .. }),
                "a commit with the SQL transaction open: {e}"
            );
        }
        End::FailedStatement => {
            let e = tx
                .execute(&a, "INSERT INTO account VALUES (1, 0, 'dup')", [])
                .unwrap_err();
            assert!(matches!(e, AppTxnError::Sql { .. }), "{e}");
            assert!(tx.commit().is_err(), "the transaction was aborted");
        }
    }

    // The application, unaware, commits its SQL transaction. Whatever SQLite answers, the
    // aborted changes must not reach the database.
    let commit = a.execute_batch("COMMIT");
    if !a.is_autocommit() {
        a.execute_batch("ROLLBACK").unwrap();
    }
    assert_eq!(
        seen(&vfs),
        before,
        "{end:?}: the application's COMMIT after the end answered {commit:?}"
    );
    assert_eq!(
        bank::digest(&a).unwrap(),
        before.0,
        "{end:?}: the connection itself"
    );
    assert!(
        commit.is_err(),
        "{end:?}: a COMMIT of changes that were thrown away must fail"
    );

    // The connection is usable again: a new application transaction on it commits.
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&a).unwrap();
    tx.execute(&a, "UPDATE account SET balance = 7 WHERE id = 1", [])
        .unwrap();
    tx.commit().unwrap();
    let c = bank::open(vfs.name(), "a.db").unwrap();
    let b: i64 = c
        .query_row("SELECT balance FROM account WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!((b, bank::integrity(&c)), (7, "ok".to_string()), "{end:?}");
}

#[test]
fn an_abort_inside_begin_leaves_no_trace() {
    ended_inside_begin_leaves_no_trace(End::Abort);
}

#[test]
fn a_drop_inside_begin_leaves_no_trace() {
    ended_inside_begin_leaves_no_trace(End::Drop);
}

#[test]
fn a_commit_refused_inside_begin_leaves_no_trace() {
    ended_inside_begin_leaves_no_trace(End::RefusedCommit);
}

#[test]
fn a_failed_statement_inside_begin_leaves_no_trace() {
    ended_inside_begin_leaves_no_trace(End::FailedStatement);
}

/// The other way round: the SQL transaction ends without a commit inside a live application
/// transaction — the connection closed inside `BEGIN`, or the application's own `ROLLBACK` —
/// after SQLite had written some of its pages. With the journal off SQLite cannot undo them, so
/// a commit would make a torn database durable (found by a probe: the commit answered OK and a
/// fresh connection saw 12 of 300 rows, `Rowid out of order`, 5 of 5 runs). The application
/// transaction is aborted instead.
fn sql_transaction_ended_without_commit_inside(close: bool) {
    let (vfs, before, a, tx) = inside_a_spilling_begin(&format!("apptxn-sql-rollback-{close}"));
    if close {
        drop(a);
    } else {
        a.execute_batch("ROLLBACK").unwrap();
    }
    let e = tx.commit().unwrap_err();
    assert!(
        e.to_string().contains("without a commit"),
        "close {close}: the commit's refusal says why: {e}"
    );
    assert_eq!(seen(&vfs), before, "close {close}");
}

#[test]
fn a_connection_closed_inside_begin_aborts_its_application_transaction() {
    sql_transaction_ended_without_commit_inside(true);
}

#[test]
fn an_sql_rollback_after_written_pages_aborts_its_application_transaction() {
    sql_transaction_ended_without_commit_inside(false);
}
