//! An application transaction that writes more pages than the device can hold for open
//! transactions (X-FTL's X-L2P table, made small here) ends with
//! `AppTxnError::Outgrown { limit: DeviceLimit::TxnTable { .. } }`, aborted: neither database
//! nor the ledger changes, the device stays consistent, and a normal transaction runs after
//! it. Both through SQL (a large insert) and through a plain file (a large append).

mod common;

use common::bank::{self, Model};
use joj_atomic::{AppTxnError, DeviceLimit};

const CAPACITY: u32 = 64;

fn assert_outgrown(r: Result<(), AppTxnError>, what: &str) {
    match r {
        Err(AppTxnError::Outgrown {
            limit: DeviceLimit::TxnTable { capacity },
            ..
        }) => assert_eq!(capacity, CAPACITY),
        other => panic!("{what}: expected Outgrown, got {other:?}"),
    }
}

#[test]
fn a_transaction_beyond_the_devices_table_is_refused_aborted_and_leaves_no_trace() {
    let vfs = joj_atomic::register("apptxn-outgrown").unwrap();
    let mut p = common::profile(64);
    p.ftl.xl2p_entries = CAPACITY;
    vfs.attach(common::formatted(&p)).unwrap();
    bank::setup(&vfs);
    let mut model = Model::new();
    let a = bank::open_off(vfs.name(), "a.db").unwrap();
    let b = bank::open_off(vfs.name(), "b.db").unwrap();

    // Through SQL: a transfer, then an insert of ~90 pages of 8 KiB.
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&a).unwrap();
    tx.enroll(&b).unwrap();
    bank::run(&mut tx, &a, &b, 0, bank::transfer(5, 0)).unwrap();
    let r = tx.execute(
        &b,
        "INSERT INTO account VALUES (100000, 0, hex(randomblob(360000)))",
        [],
    );
    assert_outgrown(r.map(|_| ()), "large insert");
    // The transaction is over: further calls say so.
    assert!(matches!(
        tx.append(bank::LEDGER, b"x"),
        Err(AppTxnError::Ended { .. })
    ));
    drop(tx);
    assert_eq!(bank::observe(&vfs).unwrap(), model.state());

    // Through a plain file: 1 MiB appended to the ledger.
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&a).unwrap();
    tx.enroll(&b).unwrap();
    bank::run(&mut tx, &a, &b, 0, bank::transfer(5, 0)).unwrap();
    assert_outgrown(
        tx.append(bank::LEDGER, &vec![b'y'; 1 << 20]).map(|_| ()),
        "large append",
    );
    drop(tx);
    assert_eq!(bank::observe(&vfs).unwrap(), model.state());
    vfs.with_fs(|fs| fs.device().ftl().check_invariants());

    // A transaction of normal size runs after them.
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&a).unwrap();
    tx.enroll(&b).unwrap();
    bank::run(&mut tx, &a, &b, 0, bank::transfer(5, 0)).unwrap();
    tx.commit().unwrap();
    model.apply(0, bank::transfer(5, 0));
    assert_eq!(bank::observe(&vfs).unwrap(), model.state());
}
