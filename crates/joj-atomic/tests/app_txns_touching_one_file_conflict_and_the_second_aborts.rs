//! Two application transactions that touch the same database or plain file: the first holds
//! it until it ends; the second gets `AppTxnError::Conflict { holder: first }` and is aborted
//! whole (its changes to other files too); a connection in no transaction gets `SQLITE_BUSY`
//! meanwhile. The first commits untouched, and the second, retried, commits after it.

mod common;

use common::bank::{self, Model};
use joj_atomic::AppTxnError;

#[test]
fn the_second_transaction_to_touch_a_held_file_is_aborted_and_the_first_commits() {
    let vfs = joj_atomic::register("apptxn-conflict").unwrap();
    vfs.attach(common::formatted(&common::profile(64))).unwrap();
    bank::setup(&vfs);
    let mut model = Model::new();
    let a1 = bank::open_off(vfs.name(), "a.db").unwrap();
    let b1 = bank::open_off(vfs.name(), "b.db").unwrap();
    let a2 = bank::open_off(vfs.name(), "a.db").unwrap();
    let b2 = bank::open_off(vfs.name(), "b.db").unwrap();
    let outsider = bank::open(vfs.name(), "a.db").unwrap();
    outsider.busy_timeout(std::time::Duration::ZERO).unwrap();
    vfs.create_file("other.log").unwrap();

    let (t1, t2) = (bank::transfer(11, 0), bank::transfer(11, 1));
    let mut first = vfs.begin_app().unwrap();
    first.enroll(&a1).unwrap();
    first.enroll(&b1).unwrap();
    bank::run(&mut first, &a1, &b1, 0, t1).unwrap();

    // Through SQL: the second one's statement on a.db (held by the first) loses, and its
    // append to another file before it is dropped.
    let mut second = vfs.begin_app().unwrap();
    second.enroll(&a2).unwrap();
    second.enroll(&b2).unwrap();
    second.append("other.log", b"lost").unwrap();
    let r = second.execute(&a2, "UPDATE account SET balance = 0 WHERE id = 1", []);
    match r {
        Err(AppTxnError::Conflict { holder, file, .. }) => {
            assert_eq!(holder, first.tid());
            assert!(file.ends_with("a.db"), "{file}");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert!(matches!(second.commit(), Err(AppTxnError::Ended { .. })));
    let other = vfs.with_fs(|fs| fs.size(fs.lookup("other.log").unwrap()));
    assert_eq!(other, Some(0), "the loser's append survived");

    // Through a plain file: the ledger is held by the first.
    let mut third = vfs.begin_app().unwrap();
    let r = third.append(bank::LEDGER, b"z");
    assert!(
        matches!(r, Err(AppTxnError::Conflict { holder, .. }) if holder == first.tid()),
        "{r:?}"
    );

    // A connection in no transaction waits (SQLITE_BUSY), it does not see the first's rows.
    let busy = outsider.query_row("SELECT count(*) FROM account", [], |r| r.get::<_, i64>(0));
    assert!(
        matches!(&busy, Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::DatabaseBusy),
        "{busy:?}"
    );

    first.commit().unwrap();
    model.apply(0, t1);
    assert_eq!(bank::observe(&vfs).unwrap(), model.state());

    // Retried now, the second one commits.
    let mut second = vfs.begin_app().unwrap();
    second.enroll(&a2).unwrap();
    second.enroll(&b2).unwrap();
    bank::run(&mut second, &a2, &b2, 1, t2).unwrap();
    second.commit().unwrap();
    model.apply(1, t2);
    assert_eq!(bank::observe(&vfs).unwrap(), model.state());
}
