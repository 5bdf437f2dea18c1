//! `--pace`: a traced run on ext4 waits, after each transaction, for a device model fed live
//! from the kernel. The run then takes the modeled time, the pacer's model agrees with the
//! replay of the captured trace, and the kernel sees time pass as on the device: with `fsync`
//! on a WAL that has its size, every commit finds a new mtime to journal (unpaced, on a fast
//! loop device, most commits fall in the clock tick of the one before and journal nothing; that
//! comparison depends on the machine's speed and is in docs/results/measurement-stack.md, not
//! here). Nothing is left behind.

mod common;

use joj_experiment::{
    DevicePlan, ExperimentError, FsChoice, PaceRequest, RunOptions, StackError, Workload,
};
use joj_linux::FsKind;
use joj_vfs::SyncCall;
use joj_workload::paper::PaperWorkload;
use joj_workload::{DbWorkload, JournalMode, StartState};

const TXNS: u64 = 60;

#[test]
fn paced_run_waits_for_the_device() {
    if !common::kernel_ready(&[FsKind::Ext4]) {
        return;
    }
    let profile = joj_device::Profile::load("openssd").unwrap();
    let w = DbWorkload {
        paper: Some(PaperWorkload::XftlSynthetic {
            rows: 5000,
            pages_per_txn: 5,
        }),
        journal: JournalMode::Wal,
        sync_call: SyncCall::Fsync,
        transactions: TXNS,
        page_size: 8192,
        start: StartState::Steady,
        ..Default::default()
    };
    let out = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        fs: FsChoice::Scratch(FsKind::Ext4),
        trace: true,
        out_dir: Some(out.path().to_path_buf()),
        image_size_bytes: 256 << 20,
        trace_buffer_kb: 8 * 1024,
        device: Some(DevicePlan {
            pacing: PaceRequest::Paced,
            ..DevicePlan::new(profile.clone())
        }),
        ..RunOptions::default()
    };
    let unpaced = RunOptions {
        device: Some(DevicePlan {
            pacing: PaceRequest::Unpaced,
            ..DevicePlan::new(profile)
        }),
        ..opts.clone()
    };
    let r = joj_experiment::run(&Workload::Db(w.clone()), &opts).expect("paced run");
    common::assert_checks(&r);
    let pace = r.pace.clone().expect("a paced run has a pace section");
    let device = r
        .device
        .as_ref()
        .expect("the run replayed its trace through the device");
    assert!(pace.requests > 0);
    assert!(
        r.elapsed_s >= 0.95 * pace.modeled_s,
        "the run took {} s, the model {} s: it did not wait",
        r.elapsed_s,
        pace.modeled_s
    );
    let gap = (device.modeled_s - pace.modeled_s).abs();
    assert!(
        gap <= 0.02 * device.modeled_s,
        "pacer {} s, replay {} s",
        pace.modeled_s,
        device.modeled_s
    );
    // A WAL commit with `fsync` that finds a new mtime commits a jbd2 transaction: descriptor,
    // inode table block and commit block, 12 KiB at least. (The WAL overwrites its blocks,
    // so nothing else needs journaling.)
    let paced = r.block.as_ref().unwrap().fs_journal_bytes;
    assert!(
        paced >= TXNS * 12 * 1024 * 9 / 10,
        "{paced} bytes of FS journal for {TXNS} paced fsync commits"
    );
    let u = joj_experiment::run(&Workload::Db(w), &unpaced).expect("unpaced run");
    assert!(u.pace.is_none());
    // How much less an unpaced run journals depends on how fast this machine is at the moment
    // (on a loaded machine the loop device is as slow as the model): shown in docs/results/, not
    // asserted here.
    assert_eq!(
        common::leftovers(),
        (vec![], vec![], vec![]),
        "loop devices, mounts or tracefs instances left"
    );
}

/// Pacing without a device cannot be asked for: it is part of the device's plan (the CLI
/// refuses `--pace` without `--device`).
#[test]
fn pace_without_a_trace_is_a_clear_error() {
    let w = Workload::Db(DbWorkload {
        transactions: 1,
        ..Default::default()
    });
    let untraced = RunOptions {
        device: Some(DevicePlan {
            pacing: PaceRequest::Paced,
            ..DevicePlan::new(joj_device::Profile::load("galaxy-s5").unwrap())
        }),
        ..RunOptions::default()
    };
    let e = joj_experiment::run(&w, &untraced).unwrap_err();
    assert!(
        matches!(e, ExperimentError::Stack(StackError::PaceNeedsScratch)),
        "{e:?}"
    );
}
