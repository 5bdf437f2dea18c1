//! `--journal xftl`: the workload runs on the emulated device through the `xftl` VFS; every
//! commit is one device transaction, no journal is written, and the run's `device` section is
//! the device's own. Without a device profile the run is refused with the fix.

use joj_experiment::{DevicePlan, RunOptions, Workload, run};
use joj_workload::paper::PaperWorkload;
use joj_workload::{DbWorkload, JournalMode};

#[test]
fn synthetic_commits_are_device_transactions_and_no_profile_is_a_clear_error() {
    let w = DbWorkload {
        journal: JournalMode::Xftl,
        transactions: 50,
        page_size: 8192,
        paper: Some(PaperWorkload::XftlSynthetic {
            rows: 2000,
            pages_per_txn: 5,
        }),
        ..DbWorkload::default()
    };
    let e = run(&Workload::Db(w.clone()), &RunOptions::default()).unwrap_err();
    assert!(
        matches!(
            e,
            joj_experiment::ExperimentError::Stack(joj_experiment::StackError::XftlNeedsDevice)
        ),
        "{e:?}"
    );

    let opts = RunOptions {
        device: Some(DevicePlan::new(
            joj_device::Profile::builtin("galaxy-s5")
                .unwrap()
                .with_blocks_per_plane(128),
        )),
        ..RunOptions::default()
    };
    let r = run(&Workload::Db(w), &opts).unwrap();
    let d = r.device.as_ref().expect("device section");
    let x = r.xftl.as_ref().expect("xftl section");
    assert_eq!(d.txn_commits, 50, "{d:?}");
    assert_eq!(x.paths.batch_commits, 50, "{x:?}");
    assert_eq!(x.fs.journal_page_writes, 0, "{x:?}");
    assert!(x.fs.db_page_writes >= 250, "{x:?}");
    assert!(
        d.modeled_s > 0.0 && d.host_write_bytes >= 250 * 8192,
        "{d:?}"
    );
}
