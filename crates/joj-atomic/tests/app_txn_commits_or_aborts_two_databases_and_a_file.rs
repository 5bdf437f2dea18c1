//! The paper's withdraw/deposit as one application transaction across two databases and a
//! plain file, SQLite's journal off: a commit shows all three changes, an abort none of them
//! (also after the device is powered off and on again).

mod common;

use common::bank::{self, Model};
use joj_atomic::FlashFs;
use joj_device::Emmc;

#[test]
fn a_commit_shows_all_three_changes_and_an_abort_none() {
    let vfs = joj_atomic::register("apptxn-commit-abort").unwrap();
    let p = common::profile(64);
    vfs.attach(common::formatted(&p)).unwrap();
    bank::setup(&vfs);
    let mut model = Model::new();
    assert_eq!(bank::observe(&vfs).unwrap(), model.state());

    let a = bank::open_off(vfs.name(), "a.db").unwrap();
    let b = bank::open_off(vfs.name(), "b.db").unwrap();
    for i in 0..10u64 {
        let t = bank::transfer(7, i);
        let mut tx = vfs.begin_app().unwrap();
        tx.enroll(&a).unwrap();
        tx.enroll(&b).unwrap();
        bank::run(&mut tx, &a, &b, i, t).unwrap();
        if i % 3 == 2 {
            tx.abort().unwrap();
        } else {
            tx.commit().unwrap();
            model.apply(i, t);
        }
        assert_eq!(
            bank::observe(&vfs).unwrap(),
            model.state(),
            "after transfer {i}"
        );
    }
    // No journal of SQLite's was ever made: the device transaction is the only log.
    let files = vfs.with_fs(|fs| fs.list()).unwrap();
    assert!(
        files.iter().all(|f| !f.ends_with("-journal")),
        "files: {files:?}"
    );
    // A transaction left open when the power goes is gone after recovery.
    let mut tx = vfs.begin_app().unwrap();
    tx.enroll(&a).unwrap();
    tx.enroll(&b).unwrap();
    bank::run(&mut tx, &a, &b, 10, bank::transfer(7, 10)).unwrap();
    std::mem::forget(tx);
    drop((a, b));
    let fs = vfs.detach().unwrap();
    let cut = fs.into_device().power_loss(0, 1);
    let (dev, _) = Emmc::recover(cut, &p).unwrap();
    dev.ftl().check_invariants();
    vfs.attach(FlashFs::mount(dev).unwrap()).unwrap();
    assert_eq!(bank::observe(&vfs).unwrap(), model.state());
}
