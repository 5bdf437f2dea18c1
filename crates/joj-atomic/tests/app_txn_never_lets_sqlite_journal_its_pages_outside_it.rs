//! On SQLite's batch-atomic path (a journal mode other than `OFF`) SQLite writes a rollback
//! journal when its cache spills. Inside an application transaction that journal would hold
//! pages as the transaction saw them — an earlier statement's change included — written outside
//! the device transaction; after a power cut the device drops the transaction while the hot
//! journal "restores" the earlier statement's change. The VFS refuses that journal: the spilling
//! statement fails, the transaction aborts, and a power cut leaves the database as before it
//! (`docs/formats/apptxn.md` §4, "No rollback journal for a held database").
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::bank;

#[test]
fn a_spill_inside_an_application_transaction_is_refused_and_a_cut_leaves_the_database_as_before() {
    let vfs = joj_atomic::register("apptxn-no-journal").unwrap();
    let p = common::profile(64);
    vfs.attach(common::formatted(&p)).unwrap();
    bank::setup(&vfs);
    let before = bank::seen(&vfs, "a.db");

    // The batch-atomic path: journal_mode=DELETE on a VFS that offers batch-atomic writes.
    let a = bank::open(vfs.name(), "a.db").unwrap();
    a.execute_batch("PRAGMA cache_size=10").unwrap();
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&a).unwrap();
    tx.execute(&a, "UPDATE account SET balance = 5 WHERE id = 1", [])
        .unwrap();
    // Larger than the cache: SQLite spills, and to spill it needs its journal on the device.
    let spilled = tx.sql(|| {
        a.execute_batch(
            "BEGIN; UPDATE account SET balance = balance - 1, note = hex(randomblob(900));",
        )
    });
    let journals = vfs
        .with_fs(|fs| {
            fs.list()
                .into_iter()
                .filter(|f| f.ends_with("-journal"))
                .count()
        })
        .unwrap();

    // The power goes now: whatever is on the device stays, nothing more is written.
    vfs.with_fs(|fs| fs.device_mut().cut_power_after(Some(0)));
    drop(tx);
    drop(a);
    let fs = vfs.detach().unwrap();
    vfs.attach(common::cut_and_remount(fs, 0, 1, &p).unwrap())
        .unwrap();
    assert_eq!(
        bank::seen(&vfs, "a.db"),
        before,
        "after the cut (the spilling statement answered {spilled:?}; {journals} journal(s) were \
         on the device)"
    );
    let e = spilled.unwrap_err().to_string();
    assert!(
        e.contains("journal_mode=OFF"),
        "the refusal says what to do: {e}"
    );
    assert_eq!(journals, 0, "no journal reached the device");
}

/// A journal left behind by ordinary commits (`TRUNCATE` leaves it empty, `PERSIST` with a
/// zeroed header) is not hot: SQLite only looks at it, read-only, and goes on. The refusal is for
/// writing a journal, not for that look (found by a probe: every application transaction on such
/// a database failed with `JournalRefused`, even with the journal off).
#[test]
fn a_leftover_journal_that_is_not_hot_does_not_stop_application_transactions() {
    for mode in ["TRUNCATE", "PERSIST"] {
        let vfs = joj_atomic::register(&format!("apptxn-leftover-{mode}")).unwrap();
        vfs.attach(common::formatted(&common::profile(64))).unwrap();
        bank::setup(&vfs);
        {
            let o = bank::open(vfs.name(), "a.db").unwrap();
            o.execute_batch(&format!(
                "PRAGMA journal_mode={mode}; PRAGMA cache_size=5;
                 UPDATE account SET balance = 5, note = hex(randomblob(200));"
            ))
            .unwrap();
        }
        let left = vfs.with_fs(|fs| fs.list().iter().any(|f| f.ends_with("a.db-journal")));
        assert_eq!(left, Some(true), "{mode}: the journal is left behind");
        let a = bank::open_off(vfs.name(), "a.db").unwrap();
        for balance in [6, 7] {
            let mut tx = vfs.begin_app().unwrap();
            tx.enroll(&a).unwrap();
            tx.execute(
                &a,
                "UPDATE account SET balance = ?1 WHERE id = 1",
                [balance],
            )
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
            tx.commit().unwrap();
        }
        let b: i64 = bank::open(vfs.name(), "a.db")
            .unwrap()
            .query_row("SELECT balance FROM account WHERE id = 1", [], |r| r.get(0))
            .unwrap();
        assert_eq!(b, 7, "{mode}");
    }
}
