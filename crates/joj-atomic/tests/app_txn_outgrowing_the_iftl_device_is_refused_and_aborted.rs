//! On the i-FTL device, an application transaction that outgrows the `logFTL` in NVM (one entry
//! per page an open transaction overwrote, made small here) ends with `AppTxnError::Outgrown`,
//! aborted, and leaves no trace: the device's invariants hold, the files are as before and a
//! normal transaction commits. (The device's other refusals — reserved log blocks full, no
//! metadata slot, no transaction slot — reach the application by the same mapping,
//! `DeviceLimit::of`; each is provoked at the device level in joj-device's
//! `iftl_full_tables_are_errors_and_the_txn_stays_abortable`.)
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::bank::{self, Model};
use joj_atomic::{AppTxnError, DeviceLimit, FlashFs, FsOptions, XftlVfs};
use joj_device::{BlockDevice, IftlDevice, NandMedium, Profile, WriteFlags};

type Dev = IftlDevice<NandMedium>;

/// galaxy-s5's NAND, small: 16 pages per block, 64 blocks per plane, 15 % spare.
fn profile(log_entries: u32) -> Profile {
    let mut p = common::profile(64);
    p.geometry.pages_per_block = 16;
    p.ftl.over_provisioning_percent = 15.0;
    p.iftl = Some(joj_device::IftlConfig {
        log_entries,
        ..Default::default()
    });
    p.with_data_mode(joj_device::DataMode::Full)
}

/// A device with every logical page written once, then the file layer (4 MiB) with the bank's
/// databases and ledger.
fn mounted(p: &Profile, name: &str) -> XftlVfs<Dev> {
    let mut dev = IftlDevice::new(p).unwrap();
    let page = u64::from(dev.page_bytes());
    let filler = vec![0x5au8; page as usize];
    for lpn in 0..dev.logical_pages() {
        BlockDevice::write(&mut dev, lpn * page, &filler, WriteFlags::NONE).unwrap();
    }
    let fs = FlashFs::format(
        dev,
        FsOptions {
            fs_bytes: 4 << 20,
            slots: 8,
        },
    )
    .unwrap();
    let vfs = joj_atomic::register_with::<Dev>(name).unwrap();
    vfs.attach(fs).unwrap();
    bank::setup(&vfs);
    vfs
}

fn assert_outgrown(r: Result<(), AppTxnError>, want: DeviceLimit, what: &str) {
    match r {
        Err(AppTxnError::Outgrown { limit, .. }) => assert_eq!(limit, want, "{what}"),
        other => panic!("{what}: expected Outgrown({want}), got {other:?}"),
    }
}

/// The transfer after a refusal commits and shows.
fn a_transfer_commits(vfs: &XftlVfs<Dev>, model: &mut Model) {
    let a = bank::open_off(vfs.name(), "a.db").unwrap();
    let b = bank::open_off(vfs.name(), "b.db").unwrap();
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&a).unwrap();
    tx.enroll(&b).unwrap();
    bank::run(&mut tx, &a, &b, 0, bank::transfer(5, 0)).unwrap();
    tx.commit().unwrap();
    model.apply(0, bank::transfer(5, 0));
    assert_eq!(bank::observe(vfs).unwrap(), model.state());
}

#[test]
fn a_transaction_beyond_the_logftl_is_refused_aborted_and_leaves_no_trace() {
    const ENTRIES: u32 = 32;
    let vfs = mounted(&profile(ENTRIES), "apptxn-iftl-logftl-full");
    let model = &mut Model::new();
    let a = bank::open_off(vfs.name(), "a.db").unwrap();
    let b = bank::open_off(vfs.name(), "b.db").unwrap();
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&a).unwrap();
    tx.enroll(&b).unwrap();
    bank::run(&mut tx, &a, &b, 0, bank::transfer(5, 0)).unwrap();
    // About 45 pages of 8 KiB: more pages overwritten than the logFTL has entries.
    let r = tx.execute(
        &b,
        "INSERT INTO account VALUES (100000, 0, hex(randomblob(180000)))",
        [],
    );
    assert_outgrown(
        r.map(|_| ()),
        DeviceLimit::LogFtlFull { capacity: ENTRIES },
        "large insert",
    );
    // The refusal itself aborted: no device transaction is open, and the API's is over.
    let open = vfs.with_fs(|fs| fs.device().ftl().open_transactions());
    assert_eq!(
        open,
        Some(0),
        "the refused transaction is still open on the device"
    );
    assert!(matches!(tx.abort(), Err(AppTxnError::Ended { .. })));
    assert_eq!(bank::observe(&vfs).unwrap(), model.state());
    vfs.with_fs(|fs| fs.device().ftl().check_invariants());
    a_transfer_commits(&vfs, model);
}
