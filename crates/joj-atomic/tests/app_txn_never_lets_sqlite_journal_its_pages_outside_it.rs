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
    let digest = |vfs: &joj_atomic::XftlVfs<joj_atomic::XDevice>| {
        let c = bank::open(vfs.name(), "a.db").unwrap();
        let ok: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        (bank::digest(&c).unwrap(), ok)
    };
    let before = digest(&vfs);

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
        digest(&vfs),
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
