//! A device error at any command of an application transaction (a write, a read or the
//! commit) aborts the whole transaction and returns `AppTxnError::Device`; neither database
//! nor the ledger keeps any trace of it, and the next transaction runs normally.

mod common;

use common::bank::{self, Model};
use joj_atomic::{AppTxnError, FlashFs, FsOptions, new_device};
use joj_device::{
    BlockDevice, Counters, DeviceError, DeviceGeometry, Tid, TransactionalDevice, WriteFlags,
};

/// The emulated eMMC, refusing the `fail_at`-th transactional command from when it was armed.
struct Faulty {
    inner: joj_atomic::XDevice,
    fail_at: Option<u64>,
    seen: u64,
    /// Which commands were refused, by kind.
    refused: Vec<&'static str>,
}

impl Faulty {
    fn arm(&mut self, n: u64) {
        self.fail_at = Some(n);
        self.seen = 0;
    }

    fn step(&mut self, kind: &'static str) -> Result<(), DeviceError> {
        let n = self.seen;
        self.seen += 1;
        if self.fail_at == Some(n) {
            self.fail_at = None;
            self.refused.push(kind);
            return Err(DeviceError::Remote(format!("injected fault at {kind}")));
        }
        Ok(())
    }
}

impl BlockDevice for Faulty {
    fn geometry(&self) -> DeviceGeometry {
        self.inner.geometry()
    }
    fn read(&mut self, offset_bytes: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.inner.read(offset_bytes, buf)
    }
    fn write(&mut self, offset: u64, data: &[u8], flags: WriteFlags) -> Result<(), DeviceError> {
        self.inner.write(offset, data, flags)
    }
    fn flush(&mut self) -> Result<(), DeviceError> {
        self.inner.flush()
    }
    fn discard(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), DeviceError> {
        self.inner.discard(offset_bytes, len_bytes)
    }
    fn counters(&self) -> Counters {
        self.inner.counters()
    }
}

impl TransactionalDevice for Faulty {
    fn begin_txn(&mut self) -> Result<Tid, DeviceError> {
        self.step("begin")?;
        self.inner.begin_txn()
    }
    fn write_txn(&mut self, tid: Tid, offset: u64, data: &[u8]) -> Result<(), DeviceError> {
        self.step("write")?;
        self.inner.write_txn(tid, offset, data)
    }
    fn read_txn(&mut self, tid: Tid, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.step("read")?;
        self.inner.read_txn(tid, offset, buf)
    }
    fn commit_txn(&mut self, tid: Tid) -> Result<(), DeviceError> {
        self.step("commit")?;
        self.inner.commit_txn(tid)
    }
    fn abort_txn(&mut self, tid: Tid) -> Result<(), DeviceError> {
        self.inner.abort_txn(tid)
    }
}

#[test]
fn an_error_at_any_device_command_aborts_the_transfer_without_a_trace() {
    let vfs = joj_atomic::register_with::<Faulty>("apptxn-faulty").unwrap();
    let p = common::profile(64);
    let dev = Faulty {
        inner: new_device(&p).unwrap(),
        fail_at: None,
        seen: 0,
        refused: Vec::new(),
    };
    let opts = FsOptions {
        fs_bytes: 64 << 20,
        slots: 8,
    };
    vfs.attach(FlashFs::format(dev, opts).unwrap()).unwrap();
    bank::setup(&vfs);
    let mut model = Model::new();
    let (mut failed, mut i) = (0, 0u64);
    for k in 0..40u64 {
        // Remount now and then so that pages are read from the device, not the host cache.
        if k % 4 == 0 {
            let fs = vfs.detach().unwrap();
            vfs.attach(FlashFs::mount(fs.into_device()).unwrap())
                .unwrap();
        }
        let a = bank::open_off(vfs.name(), "a.db").unwrap();
        let b = bank::open_off(vfs.name(), "b.db").unwrap();
        let t = bank::transfer(3, i);
        vfs.with_fs(|fs| fs.device_mut().arm(k % 10));
        let r = (|| {
            let mut tx = vfs.begin_app()?;
            tx.enroll(&a)?;
            tx.enroll(&b)?;
            bank::run(&mut tx, &a, &b, i, t)?;
            tx.commit()
        })();
        vfs.with_fs(|fs| fs.device_mut().fail_at = None);
        match r {
            Ok(()) => {
                model.apply(i, t);
                i += 1;
            }
            Err(AppTxnError::Device { source, .. }) => {
                assert!(matches!(source, DeviceError::Remote(_)), "{source}");
                failed += 1;
            }
            Err(AppTxnError::Begin { .. }) => failed += 1,
            Err(e) => panic!("fault at command {}: unexpected error {e}", k % 10),
        }
        drop((a, b));
        assert_eq!(
            bank::observe(&vfs).unwrap(),
            model.state(),
            "after fault at command {} of transfer {i}",
            k % 10
        );
    }
    let refused = vfs.with_fs(|fs| fs.device().refused.clone()).unwrap();
    eprintln!("{failed} transfers failed, {i} committed; refused: {refused:?}");
    for kind in ["begin", "write", "read", "commit"] {
        assert!(refused.contains(&kind), "no fault at a {kind}: {refused:?}");
    }
    assert!(i > 5, "too few transfers committed: {i}");
}
