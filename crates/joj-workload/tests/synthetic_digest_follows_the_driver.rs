//! The synthetic workload's driver predicts the database after every commit: its `expected()`
//! equals what `check` finds after each of n transactions, and equals the reference computed
//! in memory; a changed supply cost is caught both by the driver's read-back and by the digest.

mod paper_common;

use joj_workload::WorkloadError;
use joj_workload::paper::{self, Driver};
use paper_common::{SYNTHETIC, open};

#[test]
fn synthetic_digest_follows_the_driver() {
    let dir = tempfile::tempdir().unwrap();
    let conn = open(dir.path(), "s.db", "wal");
    paper::prepare(&conn, &SYNTHETIC, 3).unwrap();
    let mut driver = Driver::new(&SYNTHETIC, 3).unwrap();
    let reference = paper::reference_summaries(&SYNTHETIC, 3, 30).unwrap();
    assert_eq!(reference.len(), 31);
    assert_eq!(driver.expected(), Some(reference[0]));
    assert_eq!(paper::check(&conn, &SYNTHETIC).unwrap(), reference[0]);
    for i in 1..=30 {
        driver.transaction(&conn).unwrap();
        let found = paper::check(&conn, &SYNTHETIC).unwrap();
        assert_eq!(Some(found), driver.expected(), "after {i} transactions");
        assert_eq!(found, reference[i], "after {i} transactions");
        assert_ne!(
            reference[i],
            reference[i - 1],
            "transaction {i} changed costs"
        );
    }

    // The storage "loses" an update: the digest no longer matches the prediction, and the
    // driver, reading every row it updates, stops at the first stale value.
    let predicted = driver.expected().unwrap();
    conn.execute_batch("UPDATE partsupp SET ps_supplycost = ps_supplycost + 1")
        .unwrap();
    assert_ne!(paper::check(&conn, &SYNTHETIC).unwrap(), predicted);
    match driver.transaction(&conn) {
        Err(WorkloadError::Mismatch { what, .. }) => assert!(what.contains("ps_supplycost")),
        other => panic!("a stale supply cost must be a mismatch: {other:?}"),
    }
    assert!(
        conn.is_autocommit(),
        "the failed transaction was rolled back"
    );
    assert!(
        driver.transaction(&conn).is_err(),
        "a driver refuses to continue after an error"
    );
}
