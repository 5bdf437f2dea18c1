//! A traced `fsync` of a freshly appended file shows the filesystem's journal commit: write
//! requests inside the journal extents found after mkfs, and cache flushes.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_linux::{BlockTracer, FsKind, ScratchFs};
use joj_trace::Op;

fn traced_append_fsync(kind: FsKind) -> (ScratchFs, joj_linux::CapturedTrace) {
    let fs = ScratchFs::create(kind, common::small_options(kind)).unwrap();
    // Settle what mount itself wrote, so the trace holds the append and its commit.
    fs.sync().unwrap();
    let tracer = BlockTracer::start(&fs.dev_ids(), 4096).unwrap();
    let instance = tracer.instance_path().to_path_buf();
    assert!(instance.is_dir());
    common::append_and_fsync(&fs.mount_path().join("appended"), 10_000);
    let trace = tracer.stop().unwrap();
    assert!(!instance.exists(), "stop removes the tracefs instance");
    (fs, trace)
}

#[test]
fn ext4_fsync_writes_the_journal_and_flushes() {
    if !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let (fs, trace) = traced_append_fsync(FsKind::Ext4);
    let layout = fs.journal_layout().clone();
    let ours = fs.dev_ids();
    assert!(
        trace.requests.iter().all(|r| ours.contains(&r.dev)),
        "filter lets only our device through"
    );

    let journal_writes: Vec<_> = trace
        .requests
        .iter()
        .filter(|r| r.op == Op::Write && layout.overlaps(&r.dev, r.sector, r.sectors))
        .collect();
    assert!(
        !journal_writes.is_empty(),
        "no journal write in {:#?}",
        trace.requests
    );
    assert!(
        journal_writes.iter().all(|r| layout
            .extents
            .iter()
            .any(|e| e.contains(&r.dev, r.sector, r.sectors))),
        "journal writes lie entirely inside the journal"
    );
    // The data itself goes outside the journal in data=ordered mode.
    assert!(
        trace
            .requests
            .iter()
            .any(|r| r.op == Op::Write && !layout.overlaps(&r.dev, r.sector, r.sectors))
    );
    assert!(
        trace.requests.iter().any(|r| r.is_flush()),
        "the commit flushes the cache"
    );
    // jbd2 marks its commit block FUA; the loop device has no FUA, so only the bio shows it.
    assert!(
        trace
            .bios
            .iter()
            .any(|b| b.fua && layout.overlaps(&b.dev, b.sector, b.sectors)),
        "no FUA commit bio in {:#?}",
        trace.bios
    );
    assert!(journal_writes.iter().any(|r| r.comm.starts_with("jbd2/")));
    fs.close().unwrap();
}

#[test]
fn ext4_external_journal_commit_goes_to_the_journal_device() {
    if !common::machine_ready(&[FsKind::Ext4ExtJournal]) {
        return;
    }
    let (fs, trace) = traced_append_fsync(FsKind::Ext4ExtJournal);
    let jdev = fs.journal_device().unwrap().dev.to_string();
    assert!(
        trace
            .requests
            .iter()
            .any(|r| r.op == Op::Write && r.dev == jdev)
    );
    assert!(
        trace
            .requests
            .iter()
            .any(|r| r.op == Op::Write && r.dev != jdev),
        "data goes to the main device"
    );
    fs.close().unwrap();
}

#[test]
fn xfs_fsync_writes_the_log() {
    if !common::machine_ready(&[FsKind::Xfs]) {
        return;
    }
    let (fs, trace) = traced_append_fsync(FsKind::Xfs);
    let layout = fs.journal_layout().clone();
    assert!(
        trace
            .requests
            .iter()
            .any(|r| r.op == Op::Write && layout.overlaps(&r.dev, r.sector, r.sectors)),
        "no log write in {:#?} (log at {:?})",
        trace.requests,
        layout
    );
    fs.close().unwrap();
}
