//! The i-FTL paper's withdraw/deposit as a measured workload (`joj apptxn`): every application
//! transaction (two databases updated, a ledger record appended) is one device commit on X-FTL's
//! eMMC and on the i-FTL device; afterwards the databases are intact, money is conserved and the
//! ledger holds one record per transaction; i-FTL programs no flash page for mapping and keeps
//! the file layer's metadata in NVM, X-FTL programs mapping pages. A mode without a
//! transactional device is refused with the fix.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_experiment::ExperimentError;
use joj_experiment::withdraw_deposit::{RECORD_BYTES, WithdrawDepositOptions, run};
use joj_workload::JournalMode;

fn opts(mode: JournalMode) -> WithdrawDepositOptions {
    WithdrawDepositOptions {
        profile: joj_device::Profile::builtin("openssd-iftl").unwrap(),
        mode,
        transactions: 150,
        page_size: 4096,
        seed: 5,
    }
}

#[test]
fn each_transfer_is_one_device_commit_on_both_devices() {
    // One test: the runner's VFS of each device type holds one device at a time.
    let i = run(&opts(JournalMode::Iftl)).unwrap();
    assert_eq!(i.device.txn_commits, 150, "{:?}", i.device);
    assert_eq!(i.ledger_bytes, 150 * RECORD_BYTES as u64);
    assert_eq!(i.xftl.mapping_programs_per_host_page, 0.0);
    let s = i.xftl.iftl.as_ref().unwrap();
    assert!(
        s.metadata_bytes_to_nvm > 0,
        "the ledger's size goes to NVM: {s:?}"
    );
    assert_eq!(s.mapping_flash_programs, 0);

    let x = run(&opts(JournalMode::Xftl)).unwrap();
    assert_eq!(x.device.txn_commits, 150, "{:?}", x.device);
    assert_eq!(x.ledger_bytes, 150 * RECORD_BYTES as u64);
    assert!(x.xftl.mapping_programs_per_host_page > 0.0);
    assert!(x.xftl.iftl.is_none());

    let e = run(&opts(JournalMode::Wal)).unwrap_err();
    assert!(
        matches!(e, ExperimentError::WithdrawDepositMode(JournalMode::Wal)),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("fix: --journal xftl or --journal iftl"),
        "{e}"
    );
}
