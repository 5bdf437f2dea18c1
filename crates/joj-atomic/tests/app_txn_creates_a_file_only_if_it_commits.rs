//! A plain file created inside an application transaction exists only if the transaction
//! commits: after an abort, or a power loss before the commit, there is no such file (and its
//! slot is free again); after the commit it is there with what the transaction wrote, also
//! after a power loss. Nobody outside the transaction can use it before the commit.

mod common;

use joj_atomic::{AppTxnError, FlashFs, FsError};
use joj_device::Emmc;

#[test]
fn a_file_created_in_a_transaction_exists_only_after_its_commit() {
    let vfs = joj_atomic::register("apptxn-create").unwrap();
    let p = common::profile(64);
    vfs.attach(common::formatted(&p)).unwrap();
    let exists = |name: &str| vfs.with_fs(|fs| fs.lookup(name).is_some()).unwrap();
    let slots_used = || vfs.with_fs(|fs| fs.list().len()).unwrap();

    // Abort: no file, the slot free again.
    let mut tx = vfs.begin_app().unwrap();
    tx.create_file("new.log").unwrap();
    tx.append("new.log", b"first").unwrap();
    assert!(exists("new.log"));
    // Another transaction cannot touch it meanwhile.
    let mut other = vfs.begin_app().unwrap();
    assert!(matches!(
        other.append("new.log", b"x"),
        Err(AppTxnError::Conflict { .. })
    ));
    tx.abort().unwrap();
    assert!(!exists("new.log"));
    assert_eq!(slots_used(), 0);

    // Power loss before the commit: no file after recovery.
    let mut tx = vfs.begin_app().unwrap();
    tx.create_file("new.log").unwrap();
    tx.append("new.log", b"second").unwrap();
    std::mem::forget(tx);
    let cut = vfs.detach().unwrap().into_device().power_loss(0, 1);
    let (dev, _) = Emmc::recover(cut, &p).unwrap();
    vfs.attach(FlashFs::mount(dev).unwrap()).unwrap();
    assert!(!exists("new.log"));

    // Commit: the file and its bytes, also after a power loss.
    let mut tx = vfs.begin_app().unwrap();
    tx.create_file("new.log").unwrap();
    tx.append("new.log", b"third").unwrap();
    tx.commit().unwrap();
    let cut = vfs.detach().unwrap().into_device().power_loss(0, 2);
    let (dev, _) = Emmc::recover(cut, &p).unwrap();
    dev.ftl().check_invariants();
    vfs.attach(FlashFs::mount(dev).unwrap()).unwrap();
    let bytes = vfs
        .with_fs(|fs| {
            let id = fs.lookup("new.log").unwrap();
            let mut b = vec![0u8; fs.size(id) as usize];
            fs.read(id, 0, &mut b).unwrap();
            b
        })
        .unwrap();
    assert_eq!(bytes, b"third");

    // A name that exists is refused, and the transaction aborted.
    let mut tx = vfs.begin_app().unwrap();
    let r = tx.create_file("new.log");
    assert!(
        matches!(
            r,
            Err(AppTxnError::FileLayer {
                source: FsError::Exists(_),
                ..
            })
        ),
        "{r:?}"
    );
}
