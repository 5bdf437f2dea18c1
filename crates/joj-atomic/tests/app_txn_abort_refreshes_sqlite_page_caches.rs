//! After an application transaction aborts, every SQLite connection's next read shows the
//! pre-transaction rows — the enrolled connection that wrote them and one outside the
//! transaction alike — and after a commit a connection outside it shows the new rows. Includes
//! the case SQLite's own change-counter check would miss: an abort back to counter `N`, then
//! another transaction's commit to `N + 1`, while a connection still caches the aborted `N + 1`
//! (`docs/formats/apptxn.md` §3: the VFS reports a changed counter once).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::bank;
use rusqlite::Connection;

fn balance(c: &Connection, id: i64) -> i64 {
    c.query_row("SELECT balance FROM account WHERE id = ?1", [id], |r| {
        r.get(0)
    })
    .unwrap()
}

#[test]
fn connections_see_the_pre_transaction_rows_after_abort_and_the_new_ones_after_commit() {
    let vfs = joj_atomic::register("apptxn-caches").unwrap();
    vfs.attach(common::formatted(&common::profile(64))).unwrap();
    bank::setup(&vfs);
    let a = bank::open_off(vfs.name(), "a.db").unwrap();
    let other = bank::open(vfs.name(), "a.db").unwrap();
    assert_eq!((balance(&a, 1), balance(&other, 1)), (1000, 1000));

    // Abort: the writer's cache and the outsider's cache both show the old row.
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&a).unwrap();
    tx.execute(&a, "UPDATE account SET balance = 5 WHERE id = 1", [])
        .unwrap();
    assert_eq!(tx.sql(|| Ok(balance(&a, 1))).unwrap(), 5);
    tx.abort().unwrap();
    assert_eq!(balance(&a, 1), 1000, "the enrolled connection after abort");
    assert_eq!(
        balance(&other, 1),
        1000,
        "a connection outside it after abort"
    );

    // Commit: the outsider sees the new row.
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&a).unwrap();
    tx.execute(&a, "UPDATE account SET balance = 6 WHERE id = 1", [])
        .unwrap();
    tx.commit().unwrap();
    assert_eq!((balance(&a, 1), balance(&other, 1)), (6, 6));

    // The counter comes back: `a` writes 7 (counter N+1), abort (N); `c` commits 9 to
    // another row (N+1 again). `a` must not keep its cached page with 7.
    let c = bank::open_off(vfs.name(), "a.db").unwrap();
    assert_eq!(balance(&c, 2), 1000);
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&a).unwrap();
    tx.execute(&a, "UPDATE account SET balance = 7 WHERE id = 1", [])
        .unwrap();
    tx.abort().unwrap();
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&c).unwrap();
    tx.execute(&c, "UPDATE account SET balance = 9 WHERE id = 2", [])
        .unwrap();
    tx.commit().unwrap();
    assert_eq!(balance(&a, 1), 6, "a stale cache survived an abort");
    assert_eq!(balance(&a, 2), 9);
    assert_eq!((balance(&other, 1), balance(&other, 2)), (6, 9));
}

/// The same for the schema: `c1` creates a table inside a transaction that aborts (its cached
/// schema now has cookie `N + 1`), then `c2` creates another table in a transaction that commits
/// (cookie `N + 1` again). `c1` must drop the aborted table and see the committed one; with the
/// cookies equal SQLite does not re-read the schema by itself (found by a probe: `c1` read the
/// committed table's rows through the aborted table's name, and its next insert failed with
/// `database disk image is malformed`, 5 of 5 runs).
#[test]
fn a_schema_change_that_was_aborted_is_forgotten_when_the_schema_cookie_comes_back() {
    let vfs = joj_atomic::register("apptxn-schema").unwrap();
    vfs.attach(common::formatted(&common::profile(64))).unwrap();
    bank::setup(&vfs);
    let c1 = bank::open_off(vfs.name(), "a.db").unwrap();
    let c2 = bank::open_off(vfs.name(), "a.db").unwrap();
    assert_eq!((balance(&c1, 1), balance(&c2, 1)), (1000, 1000));

    let mut a = vfs.begin_app().unwrap();
    a.enroll(&c1).unwrap();
    a.execute(&c1, "CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT)", [])
        .unwrap();
    a.execute(&c1, "INSERT INTO t1 VALUES (1, 'aborted')", [])
        .unwrap();
    a.abort().unwrap();
    let mut b = vfs.begin_app().unwrap();
    b.enroll(&c2).unwrap();
    b.execute(&c2, "CREATE TABLE t2(z, w)", []).unwrap();
    for i in 0..200 {
        b.execute(&c2, "INSERT INTO t2 VALUES (?1, hex(randomblob(100)))", [i])
            .unwrap();
    }
    b.commit().unwrap();

    let t1 = c1.query_row("SELECT count(*) FROM t1", [], |r| r.get::<_, i64>(0));
    assert!(t1.is_err(), "c1 still has the aborted table: {t1:?}");
    let t2: i64 = c1
        .query_row("SELECT count(*) FROM t2", [], |r| r.get(0))
        .unwrap();
    assert_eq!(t2, 200, "c1 sees the committed table");
    // And writes through the schema it now has.
    let mut c = vfs.begin_app().unwrap();
    c.enroll(&c1).unwrap();
    c.execute(&c1, "INSERT INTO t2 VALUES (-1, 'c1')", [])
        .unwrap();
    c.commit().unwrap();
    let f = bank::open(vfs.name(), "a.db").unwrap();
    let n: i64 = f
        .query_row("SELECT count(*) FROM t2", [], |r| r.get(0))
        .unwrap();
    assert_eq!((bank::integrity(&f).as_str(), n), ("ok", 201));
}
