//! A run modeled on a device is paced at every sync call, not only between transactions, so
//! that what the kernel decides by the clock *inside* a commit happens as on the device and two
//! runs of one command give one trace. The case that showed it: TRUNCATE + `fsync` on ext4
//! syncs the rollback journal twice per commit (pages, then the header), then the database,
//! then the truncated journal. The second journal `fsync` commits a jbd2 transaction only if
//! the journal's mtime moved since the first, i.e. if a clock tick (4 ms) passed between them:
//! on an SD card (`sdcard-2013`, several ms per write) always, on the loop device in memory
//! only when this machine happened to be slow. Paced per transaction, 7.25–7.47 flushes per
//! commit came out of two runs of the same command (docs/results/measurement-stack.md, "Modeled
//! time"); paced at each sync call, every `fsync` commits and flushes twice: exactly 8.

mod common;

use joj_experiment::{DevicePlan, FsChoice, RunOptions, Workload};
use joj_linux::FsKind;
use joj_vfs::SyncCall;
use joj_workload::{DbWorkload, JournalMode};

const TXNS: u64 = 20;

#[test]
fn paced_runs_journal_every_sync_as_on_the_device() {
    if !common::kernel_ready(&[FsKind::Ext4]) {
        return;
    }
    let w = DbWorkload {
        journal: JournalMode::Truncate,
        sync_call: SyncCall::Fsync,
        transactions: TXNS,
        ..Default::default()
    };
    let out = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        fs: FsChoice::Scratch(FsKind::Ext4),
        out_dir: Some(out.path().to_path_buf()),
        image_size_bytes: 256 << 20,
        trace_buffer_kb: 8 * 1024,
        device: Some(DevicePlan::new(
            joj_device::Profile::load("sdcard-2013").unwrap(),
        )),
        // Not asked for: pacing is the default of a modeled run.
        ..RunOptions::default()
    };
    let r = joj_experiment::run(&Workload::Db(w), &opts).expect("paced run");
    common::assert_checks(&r);
    let m = r.modeled.as_ref().expect("a modeled section");
    assert!(m.paced, "{}", m.pacing);
    // Four a commit, and the directory's syncs.
    let fsyncs = r.syscalls.fsync;
    assert!(fsyncs >= 4 * TXNS, "{fsyncs} fsync for {TXNS} commits");
    let host = r.host.as_ref().expect("a host section");
    // A directory's sync is made inside the file's sync call (SQLite's unix VFS).
    let file_syncs = fsyncs - r.syscalls.dir_syncs;
    assert_eq!(
        host.sync_calls, file_syncs,
        "the window counts SQLite's sync calls"
    );
    let flushes = r.block.as_ref().unwrap().flushes;
    assert_eq!(
        flushes,
        2 * file_syncs,
        "every fsync of a file should commit a jbd2 transaction (flush, commit block, flush): \
         {fsyncs} fsync ({} of directories)",
        r.syscalls.dir_syncs
    );
    assert_eq!(
        common::leftovers(),
        (vec![], vec![], vec![]),
        "loop devices, mounts or tracefs instances left"
    );
}
