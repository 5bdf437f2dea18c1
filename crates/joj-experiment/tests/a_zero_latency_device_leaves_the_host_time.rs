//! Modeled time includes the host: on a device that takes no time (`zero-latency`), a run's
//! modeled time is its host time — SQLite, the system calls and the kernel's path, measured in
//! the run — and not (next to) nothing, as a model of the device alone would give. The host
//! time is the run's wall time less what is not the host's (pacing's sleeps, joj's measuring,
//! run-queue waits), so it is positive and at most the wall time.

mod common;

use joj_experiment::{DevicePlan, FsChoice, RunOptions, Workload};
use joj_linux::FsKind;
use joj_workload::{DbWorkload, JournalMode};

#[test]
fn a_zero_latency_device_leaves_the_host_time() {
    if !common::kernel_ready(&[FsKind::Ext4]) {
        return;
    }
    let w = DbWorkload {
        journal: JournalMode::Delete,
        transactions: 50,
        ..Default::default()
    };
    let out = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        fs: FsChoice::Scratch(FsKind::Ext4),
        out_dir: Some(out.path().to_path_buf()),
        image_size_bytes: 256 << 20,
        trace_buffer_kb: 8 * 1024,
        device: Some(DevicePlan::new(
            joj_device::Profile::load("zero-latency").unwrap(),
        )),
        ..RunOptions::default()
    };
    let r = joj_experiment::run(&Workload::Db(w), &opts).expect("run");
    let device = r.device.as_ref().expect("a device section");
    let host = r.host.as_ref().expect("a host section");
    let m = r.modeled.as_ref().expect("a modeled section");
    assert!(
        device.modeled_s < 1e-3,
        "the zero-latency device took {} s",
        device.modeled_s
    );
    assert!(host.host_s > 0.0 && host.host_s <= r.elapsed_s, "{host:?}");
    assert!(
        (m.time.host_s - host.host_s).abs() < 1e-9,
        "no host section in the profile: this machine's host time, unscaled ({m:?})"
    );
    assert!(
        (m.time.modeled_s - (host.host_s + device.modeled_s)).abs() < 1e-9,
        "{m:?}"
    );
    assert!(m.time.host_share > 0.99, "{m:?}");
    // DELETE + FULL: the journal, the database and the directory are synced each commit.
    assert!(host.sync_calls >= 2 * 50, "{host:?}");
}
