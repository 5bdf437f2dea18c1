//! The `xftl` VFS tells the device which thread each command comes from
//! (`BlockDevice::set_issuer`), so that a device with a command queue can have several SQLite
//! threads' commands in flight together (`docs/device-model.md`, "Command queue"). Two threads
//! insert into their own databases; a device wrapper records, for every command, the issuer it
//! was told and the thread that issued it: each thread is one issuer, the two are different.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use joj_atomic::{FlashFs, FsOptions, XDevice, new_device};
use joj_device::{
    BlockDevice, Counters, DeviceError, DeviceGeometry, Tid, TransactionalDevice, WriteFlags,
};

type Seen = Arc<Mutex<BTreeMap<String, BTreeSet<u32>>>>;

/// The eMMC, recording the issuer of every command by the thread that issued it.
struct Recorder {
    dev: XDevice,
    issuer: u32,
    seen: Seen,
}

impl Recorder {
    fn note(&self) {
        let thread: ThreadId = std::thread::current().id();
        self.seen
            .lock()
            .unwrap()
            .entry(format!("{thread:?}"))
            .or_default()
            .insert(self.issuer);
    }
}

impl BlockDevice for Recorder {
    fn geometry(&self) -> DeviceGeometry {
        self.dev.geometry()
    }
    fn read(&mut self, offset_bytes: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.note();
        self.dev.read(offset_bytes, buf)
    }
    fn write(&mut self, offset: u64, data: &[u8], flags: WriteFlags) -> Result<(), DeviceError> {
        self.note();
        self.dev.write(offset, data, flags)
    }
    fn flush(&mut self) -> Result<(), DeviceError> {
        self.note();
        self.dev.flush()
    }
    fn discard(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), DeviceError> {
        self.note();
        self.dev.discard(offset_bytes, len_bytes)
    }
    fn counters(&self) -> Counters {
        self.dev.counters()
    }
    fn set_issuer(&mut self, issuer: u32) {
        self.issuer = issuer;
        self.dev.set_issuer(issuer);
    }
}

impl TransactionalDevice for Recorder {
    fn begin_txn(&mut self) -> Result<Tid, DeviceError> {
        self.note();
        self.dev.begin_txn()
    }
    fn write_txn(&mut self, tid: Tid, offset_bytes: u64, data: &[u8]) -> Result<(), DeviceError> {
        self.note();
        self.dev.write_txn(tid, offset_bytes, data)
    }
    fn read_txn(&mut self, tid: Tid, offset_bytes: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.note();
        self.dev.read_txn(tid, offset_bytes, buf)
    }
    fn commit_txn(&mut self, tid: Tid) -> Result<(), DeviceError> {
        self.note();
        self.dev.commit_txn(tid)
    }
    fn abort_txn(&mut self, tid: Tid) -> Result<(), DeviceError> {
        self.note();
        self.dev.abort_txn(tid)
    }
}

#[test]
fn each_thread_is_one_issuer_and_two_threads_are_two() {
    let seen: Seen = Arc::default();
    let dev = Recorder {
        dev: new_device(&common::profile(256)).unwrap(),
        issuer: 0,
        seen: seen.clone(),
    };
    let fs = FlashFs::format(
        dev,
        FsOptions {
            fs_bytes: 64 << 20,
            slots: 8,
        },
    )
    .unwrap();
    let vfs = joj_atomic::register_with::<Recorder>("xftl-issuers").unwrap();
    vfs.attach(fs).unwrap();
    seen.lock().unwrap().clear();
    let workers: Vec<_> = (0..2)
        .map(|k| {
            std::thread::spawn(move || {
                let c = common::bank::open(vfs.name(), &format!("t{k}.db")).unwrap();
                c.execute_batch(
                    "PRAGMA page_size=8192; PRAGMA journal_mode=DELETE; CREATE TABLE t(x);",
                )
                .unwrap();
                for i in 0..20 {
                    c.execute("INSERT INTO t VALUES (?1)", [i]).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "two threads issued commands: {seen:?}");
    for (thread, issuers) in &seen {
        assert_eq!(
            issuers.len(),
            1,
            "thread {thread} is one issuer: {issuers:?}"
        );
        assert!(
            !issuers.contains(&0),
            "thread {thread} was named: {issuers:?}"
        );
    }
    let all: BTreeSet<u32> = seen.values().flatten().copied().collect();
    assert_eq!(all.len(), 2, "the two threads are two issuers: {seen:?}");
    let _ = vfs.detach();
}
