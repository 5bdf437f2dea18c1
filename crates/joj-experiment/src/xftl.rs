//! X-FTL runs: a database workload on the `xftl` VFS (crate `joj-atomic`) over an emulated
//! transactional eMMC in this process — no kernel filesystem, no block trace: the device counts
//! its own commands, and its clock is the modeled time.
//!
//! Phases as for the traced runs: *prepare* (format the file layer on a fresh, optionally aged
//! device; create and load the database) is not measured; the device's counters are reset;
//! the *measured window* is the `n` transactions; the database is then checked. The device
//! section of the result has the same fields as a replayed trace's, so rows compare directly.

use joj_atomic::{FlashFs, FsCounters, FsOptions, XDevice, XftlCounters, XftlVfs, new_device};
use joj_device::{Aging, BlockDevice, DeviceSummary, Profile};
use serde::{Deserialize, Serialize};

use joj_workload::{WorkloadError, lock};

use crate::error::ExperimentError;
use crate::stack::XFTL_VFS_NAME;

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

/// What an X-FTL run measured besides the device section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct XftlReport {
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

/// The registered runner VFS.
pub fn vfs() -> Result<XftlVfs, ExperimentError> {
    Ok(joj_atomic::register(XFTL_VFS_NAME)?)
}

/// A fresh (optionally aged) device with an empty file layer, attached to the runner's VFS.
pub fn fresh_device(opts: &XftlOptions) -> Result<XftlVfs, ExperimentError> {
    let v = vfs()?;
    v.attach(formatted_device(opts)?)?;
    Ok(v)
}

/// A fresh device of `opts.profile`, aged if `opts.aging_validity` says so (the cold region
/// above the file layer), with an empty file layer.
pub fn formatted_device(opts: &XftlOptions) -> Result<FlashFs<XDevice>, ExperimentError> {
    let mut dev = new_device(&opts.profile).map_err(dev_err("creating the device"))?;
    if let Some(validity) = opts.aging_validity {
        let page = u64::from(opts.profile.geometry.page_bytes);
        joj_device::age(
            &mut dev,
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
pub struct Window {
    vfs: XftlVfs,
    before: std::sync::Mutex<(FsCounters, XftlCounters)>,
    after: std::sync::Mutex<Option<(joj_device::Counters, FsCounters, XftlCounters)>>,
}

impl Window {
    pub fn new(vfs: XftlVfs) -> Window {
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
        let (c, fs, paths) = after;
        Ok((
            DeviceSummary::new(&profile.name, &c, Some(transactions), c.modeled_s),
            XftlReport {
                fs: fs.delta(&before.0),
                paths: paths.delta(&before.1),
                page_bytes: u64::from(profile.geometry.page_bytes),
            },
        ))
    }
}

impl joj_workload::Window for Window {
    fn begin(&self) -> Result<(), WorkloadError> {
        let fs = self
            .vfs
            .with_fs(|fs| {
                fs.device_mut().reset_counters();
                fs.counters()
            })
            .ok_or_else(|| ExperimentError::NoDeviceAttached.into_window())?;
        *lock(&self.before) = (fs, self.vfs.counters());
        Ok(())
    }

    fn end(&self) -> Result<(), WorkloadError> {
        let got = self
            .vfs
            .with_fs(|fs| (fs.device().counters(), fs.counters()))
            .ok_or_else(|| ExperimentError::NoDeviceAttached.into_window())?;
        *lock(&self.after) = Some((got.0, got.1, self.vfs.counters()));
        Ok(())
    }
}
