//! A scratch filesystem on a recording disk: the log holds every write and flush its loop
//! device received (replaying it rebuilds the image exactly, and its bytes and flushes agree
//! with tracefs's record of the same window), and the disk leaves nothing behind — after
//! `close`, after SIGTERM with the cleanup handler, and after `kill -9` once swept.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use joj_linux::record::{BlockLog, LogOp, Mark, SparseImage};
use joj_linux::scratch::RUN_DIR;
use joj_linux::{
    BlockTracer, DEFAULT_BUFFER_KB, FsKind, RecordOptions, RecordingDisk, ScratchFs, ScratchOptions,
};
use joj_trace::Op;

const MIB: u64 = 1 << 20;

fn options_on(disk: &RecordingDisk, kind: FsKind, size_bytes: u64) -> ScratchOptions {
    ScratchOptions {
        size_bytes: kind.min_size_bytes().max(size_bytes),
        image_dir: Some(disk.dir().into()),
        ..Default::default()
    }
}

/// The image after every write of `log`, in order.
fn replay(log: &BlockLog) -> SparseImage {
    let mut image = log.base.clone();
    for op in &log.ops {
        if let LogOp::Write { offset_bytes, data } = op {
            image.write(*offset_bytes, data);
        }
    }
    image
}

/// Every byte of `image` equals the file at `path`, read through the FUSE mount.
fn assert_same_bytes(image: &SparseImage, path: &Path) {
    let file = std::fs::File::open(path).unwrap();
    assert_eq!(file.metadata().unwrap().len(), image.size_bytes);
    let (mut want, mut got) = (vec![0u8; 4 * MIB as usize], vec![0u8; 4 * MIB as usize]);
    let mut at = 0;
    while at < image.size_bytes {
        let n = (image.size_bytes - at).min(want.len() as u64) as usize;
        image.read(at, &mut want[..n]);
        file.read_exact_at(&mut got[..n], at).unwrap();
        assert!(
            want[..n] == got[..n],
            "replayed image differs in [{at}, +{n})"
        );
        at += n as u64;
    }
}

/// Unmounts the scratch filesystem by hand (its later close finds it unmounted), so that
/// nothing writes to the device any more.
fn unmount(fs: &ScratchFs) {
    rustix::mount::unmount(fs.mount_path(), rustix::mount::UnmountFlags::empty()).unwrap();
}

/// Makes `kind` on a recording disk, logs (and traces) a 1 MiB write + fsync, a mark and the
/// unmount, then checks the log against the image and the trace.
fn log_agrees_with_image_and_trace(kind: FsKind, options: RecordOptions) {
    if !common::machine_ready(&[kind]) {
        return;
    }
    let disk = RecordingDisk::create_with(Path::new(RUN_DIR), &options).unwrap();
    let fs = ScratchFs::create(kind, options_on(&disk, kind, 64 * MIB)).unwrap();
    fs.sync().unwrap();
    let image = fs.main_device().image.clone();
    assert!(image.starts_with(disk.dir()));

    let tracer = BlockTracer::start(&fs.dev_ids(), DEFAULT_BUFFER_KB).unwrap();
    disk.start_log(&image).unwrap();
    let path = fs.mount_path().join("f");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(&vec![0x5a; MIB as usize]).unwrap();
    f.sync_all().unwrap();
    drop(f);
    disk.mark(Mark::Acknowledged(1));
    unmount(&fs);
    let log = disk.take_log().unwrap();
    let trace = tracer.stop().unwrap();

    // Writes, flushes, and the mark after the fsync's flush.
    let writes = log
        .ops
        .iter()
        .filter(|o| matches!(o, LogOp::Write { .. }))
        .count();
    let flushes: Vec<usize> = (0..log.ops.len())
        .filter(|&i| log.ops[i] == LogOp::Flush)
        .collect();
    let mark = log
        .ops
        .iter()
        .position(|o| *o == LogOp::Mark(Mark::Acknowledged(1)))
        .unwrap();
    assert!(writes > 0, "{kind}: no write logged");
    assert!(
        flushes.first().is_some_and(|&f| f < mark),
        "{kind}: no flush before the mark"
    );
    // The unmount flushes too.
    assert!(flushes.last().is_some_and(|&f| f > mark), "{kind}");
    let write_bytes: u64 = log
        .ops
        .iter()
        .map(|o| match o {
            LogOp::Write { data, .. } => data.len() as u64,
            _ => 0,
        })
        .sum();
    assert!(write_bytes >= MIB, "{kind}: {write_bytes} bytes logged");

    // Base + writes = the image now, both as the daemon holds it and as read through FUSE.
    let replayed = replay(&log);
    assert_eq!(replayed, disk.content(&image).unwrap(), "{kind}");
    assert_same_bytes(&replayed, &image);

    // The same window as tracefs saw it: the requests issued to the loop device.
    let traced_write_bytes: u64 = trace
        .requests
        .iter()
        .filter(|r| r.op == Op::Write)
        .map(|r| r.sectors * 512)
        .sum();
    // The loop device declares a volatile cache but no FUA: the block layer's flush machinery
    // turns every REQ_PREFLUSH and REQ_FUA into separate REQ_OP_FLUSH requests before
    // issuing, so at `block_rq_issue` a flush is its own request (rwbs `FN`), and each reaches
    // the daemon as one fsync.
    let traced_flushes = trace
        .requests
        .iter()
        .filter(|r| r.op == Op::Flush || r.preflush)
        .count();
    let traced_writes = trace.requests.iter().filter(|r| r.op == Op::Write).count();
    eprintln!(
        "{kind} direct_io={}: log {writes} writes / {write_bytes} B / {} flushes; trace \
         {traced_writes} writes / {traced_write_bytes} B / {traced_flushes} flushes",
        options.direct_io,
        flushes.len()
    );
    assert_eq!(write_bytes, traced_write_bytes, "{kind}: write bytes");
    assert_eq!(flushes.len(), traced_flushes, "{kind}: flushes");

    fs.close().unwrap();
    disk.close().unwrap();
}

#[test]
fn ext4_log_replays_to_the_image_and_agrees_with_the_trace() {
    log_agrees_with_image_and_trace(FsKind::Ext4, RecordOptions::default());
}

#[test]
fn ext4_log_without_fuse_direct_io_agrees_too() {
    log_agrees_with_image_and_trace(FsKind::Ext4, RecordOptions { direct_io: false });
}

#[test]
fn xfs_log_replays_to_the_image_and_agrees_with_the_trace() {
    log_agrees_with_image_and_trace(FsKind::Xfs, RecordOptions::default());
}

/// Writes before `start_log` only change the store; a second log refuses to start; a path off
/// the disk is refused.
#[test]
fn only_the_logged_window_of_the_logged_image_is_logged() {
    if !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let disk = RecordingDisk::create(Path::new(RUN_DIR)).unwrap();
    assert!(disk.take_log().is_err());
    let other = disk.dir().join("other.dat");
    std::fs::write(&other, b"before").unwrap();
    let fs = ScratchFs::create(FsKind::Ext4, options_on(&disk, FsKind::Ext4, 64 * MIB)).unwrap();
    fs.sync().unwrap();
    let image = fs.main_device().image.clone();
    let base = disk.content(&image).unwrap();
    assert!(!base.blocks.is_empty(), "mkfs wrote nothing to the store");
    assert!(disk.start_log(Path::new("/tmp/x.img")).is_err());
    disk.start_log(&image).unwrap();
    assert!(disk.start_log(&image).is_err());
    std::fs::write(&other, vec![1u8; 8192]).unwrap();
    let log = disk.take_log().unwrap();
    assert_eq!(log.base, base);
    assert!(log.ops.is_empty(), "{:?}", log.ops.len());
    assert_eq!(std::fs::read(&other).unwrap(), vec![1u8; 8192]);
    std::fs::remove_file(&other).unwrap();
    fs.close().unwrap();
    disk.close().unwrap();
}

/// Prints how long mkfs + mount + a 10 MB write + fsync take on a recording disk, and what it
/// holds in memory (a figure, not an assertion).
#[test]
fn ext4_on_a_recording_disk_costs_what_it_writes() {
    if !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let disk = RecordingDisk::create(Path::new(RUN_DIR)).unwrap();
    let started = Instant::now();
    let fs = ScratchFs::create(FsKind::Ext4, options_on(&disk, FsKind::Ext4, 64 * MIB)).unwrap();
    let made = started.elapsed();
    let image = fs.main_device().image.clone();
    fs.sync().unwrap();
    disk.start_log(&image).unwrap();
    let started = Instant::now();
    let mut f = std::fs::File::create(fs.mount_path().join("f")).unwrap();
    f.write_all(&vec![0xa5; 10_000_000]).unwrap();
    f.sync_all().unwrap();
    let written = started.elapsed();
    drop(f);
    let held = disk.held_bytes();
    let log = disk.take_log().unwrap();
    eprintln!(
        "recording disk: mkfs.ext4 64 MiB + mount {made:?}; 10 MB write + fsync {written:?} \
         ({:.0} MB/s); holds {} MiB of file blocks and {} MiB of log ({} ops)",
        10.0 / written.as_secs_f64(),
        held.file_bytes >> 20,
        held.log_bytes >> 20,
        log.ops.len()
    );
    assert!(held.file_bytes < 32 * MIB, "the image is not held sparse");
    fs.close().unwrap();
    disk.close().unwrap();
}

/// The FUSE mount at `dir` (exactly), from this process's mountinfo.
fn mounted(dir: &Path) -> bool {
    common::mounts_under(dir).iter().any(|m| m == dir)
}

#[test]
fn close_leaves_no_mount_loop_device_or_directory() {
    if !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let disk = RecordingDisk::create(Path::new(RUN_DIR)).unwrap();
    let dir = disk.dir().to_path_buf();
    assert!(mounted(&dir));
    let fs = ScratchFs::create(FsKind::Ext4, options_on(&disk, FsKind::Ext4, 64 * MIB)).unwrap();
    let scratch = fs.dir().to_path_buf();
    assert_eq!(common::loops_backed_under(&dir).len(), 1);
    fs.close().unwrap();
    disk.close().unwrap();
    assert!(common::loops_backed_under(&dir).is_empty());
    assert!(common::mounts_under(&dir).is_empty());
    assert!(common::mounts_under(&scratch).is_empty());
    assert!(!dir.exists() && !scratch.exists());

    // Dropped, not closed, in the right order.
    let disk = RecordingDisk::create(Path::new(RUN_DIR)).unwrap();
    let dir = disk.dir().to_path_buf();
    let fs = ScratchFs::create(FsKind::Ext4, options_on(&disk, FsKind::Ext4, 64 * MIB)).unwrap();
    drop(fs);
    drop(disk);
    assert!(common::loops_backed_under(&dir).is_empty());
    assert!(common::mounts_under(&dir).is_empty());
    assert!(!dir.exists());
}

const CHILD_ENV: &str = "JOJ_LINUX_RECORDING_CHILD";

/// The child: a recording disk with ext4 on it (and the cleanup handler when asked), paths on
/// stdout, then wait to be killed — in mode `busy` while overwriting a file with fsync (for
/// reproducing by hand the stuck `kill -9` described in `record::disk`).
#[test]
fn child_waits_to_be_killed() {
    let Some(mode) = std::env::var_os(CHILD_ENV) else {
        return; // Only meaningful when started by the tests below.
    };
    if mode == "handler" {
        joj_linux::install_cleanup_handler().unwrap();
    }
    let disk = RecordingDisk::create(Path::new(RUN_DIR)).unwrap();
    let fs = ScratchFs::create(FsKind::Ext4, options_on(&disk, FsKind::Ext4, 64 * MIB)).unwrap();
    common::append_and_fsync(&fs.mount_path().join("f"), 100_000);
    println!("READY {} {}", disk.dir().display(), fs.dir().display());
    let started = Instant::now();
    while mode == "busy" && started.elapsed() < Duration::from_secs(60) {
        let mut f = std::fs::File::create(fs.mount_path().join("g")).unwrap();
        f.write_all(&[7u8; 100_000]).unwrap();
        f.sync_all().unwrap();
    }
    std::thread::sleep(Duration::from_secs(60));
    panic!("nothing killed the child");
}

/// Starts the child in `mode`; returns it with the recording disk's and the scratch
/// filesystem's directories.
fn start_child(mode: &str) -> (std::process::Child, PathBuf, PathBuf) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_waits_to_be_killed",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, mode)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(rest) = line.split_once("READY ").map(|(_, r)| r) {
            let (disk, scratch) = rest.split_once(' ').unwrap();
            return (child, disk.into(), scratch.into());
        }
    }
    let status = child.wait();
    panic!("the child never got ready ({status:?})");
}

fn assert_all_gone(disk: &Path, scratch: &Path) {
    assert!(
        common::loops_backed_under(disk).is_empty(),
        "loop device left"
    );
    assert!(common::mounts_under(disk).is_empty(), "FUSE mount left");
    assert!(common::mounts_under(scratch).is_empty(), "ext4 mount left");
    assert!(!disk.exists(), "{} left", disk.display());
    assert!(!scratch.exists(), "{} left", scratch.display());
}

#[test]
fn sigterm_releases_the_scratch_fs_before_the_recording_disk() {
    if std::env::var_os(CHILD_ENV).is_some() || !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let (mut child, disk, scratch) = start_child("handler");
    assert!(mounted(&disk));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 15), "{status:?}");
    assert_all_gone(&disk, &scratch);
}

#[test]
fn after_kill_9_the_sweep_removes_the_recording_disk() {
    if std::env::var_os(CHILD_ENV).is_some() || !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let (mut child, disk, scratch) = start_child("plain");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        mounted(&disk),
        "the dead child's FUSE mount should still be there"
    );
    let sweep = joj_linux::leftovers::sweep();
    assert!(sweep.problems.is_empty(), "{:?}", sweep.problems);
    let removed: Vec<String> = sweep
        .removed
        .iter()
        .map(|l| l.resource.to_string())
        .collect();
    assert!(
        removed.iter().any(|r| r.contains("recording disk mount")),
        "{removed:?}"
    );
    assert_all_gone(&disk, &scratch);
}

/// The minor device number of the FUSE mount at `dir` (the name of its fusectl connection).
fn fuse_minor(dir: &Path) -> u32 {
    use std::os::unix::fs::MetadataExt;
    rustix::fs::minor(std::fs::metadata(dir).unwrap().dev())
}

/// A sweep decides from mountinfo that a disk's owner is dying, and aborts it a moment later by
/// its device number; meanwhile that disk may have gone and its number been given to another
/// joj's disk (the kernel hands out the lowest free number). The abort must not reach the disk
/// that took the number: that joj would lose its recording ("Software caused connection
/// abort" when it closes it).
#[test]
fn an_abort_decided_on_a_disk_that_went_never_reaches_the_disk_that_took_its_number() {
    let a = RecordingDisk::create(Path::new(RUN_DIR)).unwrap();
    let stale = joj_linux::leftovers::DyingDisk {
        pid: std::process::id(),
        minor: fuse_minor(a.dir()),
        mount: a.dir().to_str().unwrap().to_string(),
    };
    a.close().unwrap();
    let mut tries = 0;
    let b = loop {
        let b = RecordingDisk::create(Path::new(RUN_DIR)).unwrap();
        if fuse_minor(b.dir()) == stale.minor {
            break b;
        }
        b.close().unwrap();
        tries += 1;
        assert!(
            tries < 20,
            "no new disk got the number {} back in 20 tries: another mount holds it",
            stale.minor
        );
    };
    std::fs::write(b.dir().join("before"), b"x").unwrap();
    let aborted = joj_linux::leftovers::abort_recording_disk(&stale).unwrap();
    assert!(
        !aborted,
        "the stale abort reached the disk now at that number"
    );
    std::fs::write(b.dir().join("after"), b"y").unwrap();
    b.close().unwrap();
}

/// `kill -9` while the child syncs over and over on its recording disk: a thread stuck in
/// `fsync` keeps the killed process dying (see `leftovers::dying`). The sweep aborts that disk
/// (and says so), the process goes, and the rest is removed.
#[test]
fn a_joj_killed_in_fsync_is_aborted_by_the_sweep_and_its_disk_removed() {
    if std::env::var_os(CHILD_ENV).is_some() || !common::machine_ready(&[FsKind::Ext4]) {
        return;
    }
    let (mut child, disk, scratch) = start_child("busy");
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let stuck = std::fs::read_to_string(format!("/proc/{}/status", child.id())).is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Threads:") && !l.ends_with("\t1"))
    });
    let sweep = joj_linux::leftovers::sweep();
    eprintln!(
        "the killed child was stuck: {stuck}; the sweep: {:?}",
        sweep.lines()
    );
    assert!(sweep.problems.is_empty(), "{:?}", sweep.problems);
    child.wait().unwrap();
    if stuck {
        assert!(
            sweep.aborted.iter().any(|d| d.pid == child.id()),
            "a stuck child's disk must be aborted: {:?}",
            sweep.aborted
        );
        assert!(sweep.lines()[0].starts_with("aborted the recording disk of dying joj"));
    }
    assert_all_gone(&disk, &scratch);
}
