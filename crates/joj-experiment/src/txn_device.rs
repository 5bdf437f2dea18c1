//! A transactional device run, what X-FTL and i-FTL runs share: a database workload on the
//! `xftl` VFS (crate `joj-atomic`) over an emulated transactional device in this process —
//! X-FTL's eMMC (`--journal xftl`) or the i-FTL device (`--journal iftl`, mapping tables in
//! NVM) — no kernel filesystem, no block trace: the device counts its own commands, and its
//! clock is the modeled time.
//!
//! Which of the two devices a run uses is decided once, by [`crate::Stack`]
//! ([`TxnDeviceKind`]); code generic over the device ([`RunDevice`]) is handed the type by
//! [`TxnDeviceKind::run`].
//!
//! Phases as for the traced runs: *prepare* (format the file layer on a fresh, optionally aged
//! device; create and load the database) is not measured; the device's counters are reset;
//! the *measured window* is the `n` transactions; the database is then checked. The device
//! section of the result has the same fields as a replayed trace's, so rows compare directly.

use joj_atomic::{FlashFs, FsCounters, FsOptions, XDevice, XftlCounters, XftlVfs, new_device};
use joj_device::{
    Aging, DeviceError, DeviceSummary, IftlDevice, IftlStats, NandMedium, Profile,
    TransactionalDevice,
};
use serde::{Deserialize, Serialize};

use joj_workload::{WorkloadError, lock};

use crate::error::ExperimentError;
use crate::stack::{IFTL_VFS_NAME, TxnDeviceKind, XFTL_VFS_NAME};

/// A transactional device a run measures: made fresh from a profile (page data kept: SQLite
/// reads it back), aged, its counters restarted at the window.
pub trait RunDevice: TransactionalDevice + Send + Sized + 'static {
    /// The runner VFS's name for this device type (SQLite's registry holds one device type per
    /// name).
    const VFS_NAME: &'static str;
    fn fresh(profile: &Profile) -> Result<Self, DeviceError>;
    fn age(&mut self, aging: &Aging, seed: u64) -> Result<(), DeviceError>;
    fn reset_counters(&mut self);
    /// The i-FTL's own counters since the reset (none for X-FTL).
    fn iftl_stats(&self) -> Option<IftlStats>;
}

impl RunDevice for XDevice {
    const VFS_NAME: &'static str = XFTL_VFS_NAME;

    fn fresh(profile: &Profile) -> Result<Self, DeviceError> {
        new_device(profile)
    }

    fn age(&mut self, aging: &Aging, seed: u64) -> Result<(), DeviceError> {
        joj_device::age(self, aging, seed).map(|_| ())
    }

    fn reset_counters(&mut self) {
        XDevice::reset_counters(self)
    }

    fn iftl_stats(&self) -> Option<IftlStats> {
        None
    }
}

/// The i-FTL device a run uses.
pub type IDevice = IftlDevice<NandMedium>;

impl RunDevice for IDevice {
    const VFS_NAME: &'static str = IFTL_VFS_NAME;

    fn fresh(profile: &Profile) -> Result<Self, DeviceError> {
        IftlDevice::new(&profile.clone().with_data_mode(joj_device::DataMode::Full))
    }

    fn age(&mut self, aging: &Aging, seed: u64) -> Result<(), DeviceError> {
        joj_device::age(self, aging, seed).map(|_| ())
    }

    fn reset_counters(&mut self) {
        IftlDevice::reset_counters(self)
    }

    fn iftl_stats(&self) -> Option<IftlStats> {
        Some(self.stats_since_reset())
    }
}

/// Work to do on a transactional device of a type [`TxnDeviceKind::run`] picks.
pub trait OnTxnDevice {
    type Output;
    fn on<D: RunDevice>(self) -> Self::Output;
}

impl TxnDeviceKind {
    /// Do `work` on this kind's device type: X-FTL's eMMC or the i-FTL device.
    pub fn run<W: OnTxnDevice>(self, work: W) -> W::Output {
        match self {
            TxnDeviceKind::Xftl => work.on::<XDevice>(),
            TxnDeviceKind::Iftl => work.on::<IDevice>(),
        }
    }
}

/// Where a transactional device run happens.
#[derive(Debug, Clone)]
pub struct TxnDeviceOptions {
    pub profile: Profile,
    /// Age the device so GC victims hold about this share of valid pages (30/50/70 in the
    /// paper); `None`: a fresh device.
    pub aging_validity: Option<u32>,
    pub fs: FsOptions,
    pub page_size: u32,
    pub seed: u64,
}

impl TxnDeviceOptions {
    /// A run's options: the file layer takes 1 GiB at the device's start, as the ext4 image of
    /// the other modes (half a smaller device, so aging still has a cold region).
    pub fn for_run(
        profile: &Profile,
        aging_validity: Option<u32>,
        page_size: u32,
        seed: u64,
    ) -> TxnDeviceOptions {
        TxnDeviceOptions {
            profile: profile.clone(),
            aging_validity,
            fs: FsOptions {
                fs_bytes: (1u64 << 30).min(profile.capacity_bytes() / 2),
                ..FsOptions::default()
            },
            page_size,
            seed,
        }
    }
}

/// What a transactional device run (X-FTL or i-FTL) measured besides the device section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TxnDeviceReport {
    /// Flash pages programmed to persist mapping (X-FTL: map pages and commit tables; i-FTL:
    /// none, its tables are in NVM) per host page written, in the window.
    #[serde(default)]
    pub mapping_programs_per_host_page: f64,
    /// The i-FTL's own counters in the window (data to flash, metadata to NVM, lazy GC).
    #[serde(default)]
    pub iftl: Option<IftlStats>,
    /// Pages written by the file layer in the window: database, rollback journal (fallback
    /// path), inode pages (the filesystem's metadata).
    pub fs: FsCounters,
    /// How often SQLite took each commit path in the window.
    pub paths: XftlCounters,
    pub page_bytes: u64,
}

fn dev_err(what: &'static str) -> impl FnOnce(joj_device::DeviceError) -> ExperimentError {
    move |source| ExperimentError::Device { what, source }
}

/// The registered runner VFS for devices of type `D`.
pub fn vfs<D: RunDevice>() -> Result<XftlVfs<D>, ExperimentError> {
    Ok(joj_atomic::register_with::<D>(D::VFS_NAME)?)
}

/// A fresh (optionally aged) device with an empty file layer, attached to the runner's VFS.
pub fn fresh_device<D: RunDevice>(opts: &TxnDeviceOptions) -> Result<XftlVfs<D>, ExperimentError> {
    let v = vfs::<D>()?;
    v.attach(formatted_device::<D>(opts)?)?;
    Ok(v)
}

/// A fresh device of `opts.profile`, aged if `opts.aging_validity` says so (the cold region
/// above the file layer), with an empty file layer.
pub fn formatted_device<D: RunDevice>(
    opts: &TxnDeviceOptions,
) -> Result<FlashFs<D>, ExperimentError> {
    let mut dev = D::fresh(&opts.profile).map_err(dev_err("creating the device"))?;
    if let Some(validity) = opts.aging_validity {
        let page = u64::from(opts.profile.geometry.page_bytes);
        dev.age(
            &Aging {
                validity_percent: validity,
                from_lpn: opts.fs.fs_bytes.div_ceil(page),
                keep_free: 2,
            },
            opts.seed,
        )
        .map_err(dev_err("aging the device"))?;
    }
    FlashFs::format(dev, opts.fs).map_err(|source| ExperimentError::FlashFs {
        what: "formatting the file layer",
        source,
    })
}

/// The measured window of a transactional device run through the runner
/// (`joj_workload::db::run`): device counters are reset at `begin` and read at `end`; with
/// several threads, each thread's next transaction waits for its turn in device time
/// ([`DeviceTimeOrder`]).
pub struct Window<D: RunDevice = XDevice> {
    vfs: XftlVfs<D>,
    before: std::sync::Mutex<(FsCounters, XftlCounters)>,
    after: std::sync::Mutex<Option<Measured>>,
    order: Option<DeviceTimeOrder>,
}

/// Several threads driving one emulated device in this process, kept in the order of the
/// device's time (`docs/device-model.md`, "Command queue", issuers): SQLite runs here far faster
/// than the modeled device, so left alone one thread would run many transactions ahead in
/// device time before another got the CPU, and its commands would reach the device's queue
/// in bursts, never in flight beside another thread's. Between transactions a thread waits
/// until no other thread still working is earlier in device time (ties: the lower issuer
/// number). A thread takes part from the end of its first measured transaction; none passes
/// before all have; one that has run its `per_thread` transactions leaves.
#[derive(Debug)]
pub struct DeviceTimeOrder {
    threads: usize,
    per_thread: u64,
    /// Per issuer: when its next command arrives, transactions done.
    state: std::sync::Mutex<std::collections::BTreeMap<u32, (u64, u64)>>,
    turn: std::sync::Condvar,
}

/// Whether issuer `me`, whose next command arrives at `ready_ns`, may start its next
/// transaction: every thread has joined `table` (issuer → next arrival, transactions done),
/// and no thread still working (fewer than `per_thread` done) is earlier in device time
/// (ties: the lower issuer). The policy of [`DeviceTimeOrder`], pure.
pub fn its_turn(
    me: u32,
    ready_ns: u64,
    table: &std::collections::BTreeMap<u32, (u64, u64)>,
    threads: usize,
    per_thread: u64,
) -> bool {
    table.len() >= threads
        && table
            .iter()
            .filter(|(_, (_, done))| *done < per_thread)
            .all(|(&id, &(ready, _))| (ready_ns, me) <= (ready, id))
}

impl DeviceTimeOrder {
    /// A thread that stopped early (an error) never comes back: after this long without any
    /// thread passing, the others stop waiting for it.
    const GIVE_UP: std::time::Duration = std::time::Duration::from_secs(30);

    pub fn new(threads: usize, per_thread: u64) -> DeviceTimeOrder {
        DeviceTimeOrder {
            threads,
            per_thread,
            state: Default::default(),
            turn: std::sync::Condvar::new(),
        }
    }

    /// Issuer `me`, whose next command arrives at `ready_ns`, finished a transaction: return
    /// when it is its turn to start the next one.
    pub fn passed(&self, me: u32, ready_ns: u64) {
        let mut s = lock(&self.state);
        let e = s.entry(me).or_insert((0, 0));
        e.0 = ready_ns;
        e.1 += 1;
        let leaving = e.1 >= self.per_thread;
        self.turn.notify_all();
        if leaving {
            return;
        }
        loop {
            if its_turn(me, ready_ns, &s, self.threads, self.per_thread) {
                return;
            }
            let (g, waited) = self
                .turn
                .wait_timeout(s, Self::GIVE_UP)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            s = g;
            if waited.timed_out() {
                return;
            }
        }
    }
}

/// What the window's end read: the device's counters, the i-FTL's, the file layer's and the
/// commit paths'.
type Measured = (
    joj_device::Counters,
    Option<IftlStats>,
    FsCounters,
    XftlCounters,
);

impl<D: RunDevice> Window<D> {
    pub fn new(vfs: XftlVfs<D>) -> Window<D> {
        Window {
            vfs,
            before: Default::default(),
            after: Default::default(),
            order: None,
        }
    }

    /// A window whose `threads` threads, `per_thread` transactions each, start their
    /// transactions in device-time order ([`DeviceTimeOrder`]).
    pub fn in_device_time_order(vfs: XftlVfs<D>, threads: usize, per_thread: u64) -> Window<D> {
        Window {
            order: Some(DeviceTimeOrder::new(threads, per_thread)),
            ..Window::new(vfs)
        }
    }

    /// The device section and the report of the window.
    pub fn take(
        &self,
        profile: &Profile,
        transactions: u64,
    ) -> Result<(DeviceSummary, TxnDeviceReport), ExperimentError> {
        let after = lock(&self.after)
            .take()
            .ok_or(ExperimentError::WindowNeverEnded)?;
        let before = *lock(&self.before);
        let (c, iftl, fs, paths) = after;
        let host_pages = c.host_write_bytes / u64::from(profile.geometry.page_bytes).max(1);
        Ok((
            DeviceSummary::new(
                &joj_device::ProfileRef::from(profile),
                &c,
                Some(transactions),
                c.modeled_s,
            ),
            TxnDeviceReport {
                mapping_programs_per_host_page: (c.map_page_programs + c.commit_table_programs)
                    as f64
                    / host_pages.max(1) as f64,
                iftl,
                fs: fs.delta(&before.0),
                paths: paths.delta(&before.1),
                page_bytes: u64::from(profile.geometry.page_bytes),
            },
        ))
    }
}

impl<D: RunDevice> joj_workload::Window for Window<D> {
    fn begin(&self) -> Result<(), WorkloadError> {
        let fs = self
            .vfs
            .with_fs(|fs| {
                RunDevice::reset_counters(fs.device_mut());
                fs.counters()
            })
            .ok_or_else(|| ExperimentError::NoDeviceAttached.into_window())?;
        *lock(&self.before) = (fs, self.vfs.counters());
        Ok(())
    }

    fn end(&self) -> Result<(), WorkloadError> {
        let got = self
            .vfs
            .with_fs(|fs| {
                (
                    fs.device().counters(),
                    fs.device().iftl_stats(),
                    fs.counters(),
                )
            })
            .ok_or_else(|| ExperimentError::NoDeviceAttached.into_window())?;
        *lock(&self.after) = Some((got.0, got.1, got.2, self.vfs.counters()));
        Ok(())
    }

    fn after_transaction(&self) -> Result<(), WorkloadError> {
        if let Some(order) = &self.order {
            let me = joj_atomic::thread_issuer();
            let ready = self
                .vfs
                .with_fs(|fs| fs.device().issuer_ready_ns(me))
                .flatten()
                .unwrap_or(0);
            order.passed(me, ready);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::its_turn;
    use std::collections::BTreeMap;

    #[test]
    fn the_thread_earliest_in_device_time_goes_first_once_all_have_joined() {
        let mut t = BTreeMap::new();
        t.insert(1, (500, 3));
        assert!(!its_turn(1, 500, &t, 2, 10), "thread 2 has not joined yet");
        t.insert(2, (300, 3));
        assert!(!its_turn(1, 500, &t, 2, 10), "thread 2 is earlier");
        assert!(its_turn(2, 300, &t, 2, 10));
        t.insert(2, (500, 4));
        assert!(
            its_turn(1, 500, &t, 2, 10),
            "a tie goes to the lower issuer"
        );
        assert!(!its_turn(2, 500, &t, 2, 10));
        t.insert(1, (900, 10));
        assert!(
            its_turn(2, 500, &t, 2, 10),
            "a thread that ran all its transactions holds nobody back"
        );
    }
}
