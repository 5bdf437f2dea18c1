//! X-FTL and i-FTL runs: a database workload on the `xftl` VFS (crate `joj-atomic`) over an
//! emulated transactional device in this process — X-FTL's eMMC (`--journal xftl`) or the
//! i-FTL device (`--journal iftl`, mapping tables in NVM) — no kernel filesystem, no block
//! trace: the device counts its own commands, and its clock is the modeled time.
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
use crate::stack::{IFTL_VFS_NAME, XFTL_VFS_NAME};

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

/// Where an X-FTL run happens.
#[derive(Debug, Clone)]
pub struct XftlOptions {
    pub profile: Profile,
    /// Age the device so GC victims hold about this share of valid pages (30/50/70 in the
    /// paper); `None`: a fresh device.
    pub aging_validity: Option<u32>,
    pub fs: FsOptions,
    pub page_size: u32,
    pub seed: u64,
}

impl XftlOptions {
    /// A run's options: the file layer takes 1 GiB at the device's start, as the ext4 image of
    /// the other modes (half a smaller device, so aging still has a cold region).
    pub fn for_run(
        profile: &Profile,
        aging_validity: Option<u32>,
        page_size: u32,
        seed: u64,
    ) -> XftlOptions {
        XftlOptions {
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

/// What an X-FTL or i-FTL run measured besides the device section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct XftlReport {
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
pub fn fresh_device<D: RunDevice>(opts: &XftlOptions) -> Result<XftlVfs<D>, ExperimentError> {
    let v = vfs::<D>()?;
    v.attach(formatted_device::<D>(opts)?)?;
    Ok(v)
}

/// A fresh device of `opts.profile`, aged if `opts.aging_validity` says so (the cold region
/// above the file layer), with an empty file layer.
pub fn formatted_device<D: RunDevice>(opts: &XftlOptions) -> Result<FlashFs<D>, ExperimentError> {
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

/// The measured window of an `xftl` run through the runner (`joj_workload::db::run`): device counters are
/// reset at `begin` and read at `end`.
pub struct Window<D: RunDevice = XDevice> {
    vfs: XftlVfs<D>,
    before: std::sync::Mutex<(FsCounters, XftlCounters)>,
    after: std::sync::Mutex<Option<Measured>>,
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
        }
    }

    /// The device section and the report of the window.
    pub fn take(
        &self,
        profile: &Profile,
        transactions: u64,
    ) -> Result<(DeviceSummary, XftlReport), ExperimentError> {
        let after = lock(&self.after)
            .take()
            .ok_or(ExperimentError::WindowNeverEnded)?;
        let before = *lock(&self.before);
        let (c, iftl, fs, paths) = after;
        let host_pages = c.host_write_bytes / u64::from(profile.geometry.page_bytes).max(1);
        Ok((
            DeviceSummary::new(&profile.name, &c, Some(transactions), c.modeled_s),
            XftlReport {
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
}
