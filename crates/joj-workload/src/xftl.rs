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
use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};

use crate::WorkloadError;

/// Name of the VFS the runner registers.
pub const XFTL_VFS_NAME: &str = "xftl-run";

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

fn sql_err(what: &'static str) -> impl FnOnce(rusqlite::Error) -> WorkloadError {
    move |e| WorkloadError::Config(format!("{what} on xftl: {e}"))
}

fn dev_err(what: &'static str) -> impl FnOnce(joj_device::DeviceError) -> WorkloadError {
    move |e| WorkloadError::Config(format!("{what}: {e}"))
}

/// The registered runner VFS.
pub fn vfs() -> Result<XftlVfs, WorkloadError> {
    joj_atomic::register(XFTL_VFS_NAME)
        .map_err(|e| WorkloadError::Config(format!("registering the xftl VFS: {e}")))
}

/// Open `name` on the runner's VFS with the pragmas every mode uses.
pub fn open(name: &str, page_size: u32) -> Result<Connection, WorkloadError> {
    let c = Connection::open_with_flags_and_vfs(
        name,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        XFTL_VFS_NAME,
    )
    .map_err(sql_err("open"))?;
    c.execute_batch(&format!(
        "PRAGMA page_size={page_size}; PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;"
    ))
    .map_err(sql_err("pragmas"))?;
    Ok(c)
}

/// A fresh (optionally aged) device with an empty file layer, attached to the runner's VFS.
pub fn fresh_device(opts: &XftlOptions) -> Result<XftlVfs, WorkloadError> {
    let v = vfs()?;
    v.attach(formatted_device(opts)?)
        .map_err(|e| WorkloadError::Config(e.to_string()))?;
    Ok(v)
}

/// A fresh device of `opts.profile`, aged if `opts.aging_validity` says so (the cold region
/// above the file layer), with an empty file layer.
pub fn formatted_device(opts: &XftlOptions) -> Result<FlashFs<XDevice>, WorkloadError> {
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
    FlashFs::format(dev, opts.fs)
        .map_err(|e| WorkloadError::Config(format!("formatting the file layer: {e}")))
}

/// The measured window of an `xftl` run through the runner (`db::run`): device counters are
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
    ) -> Result<(DeviceSummary, XftlReport), WorkloadError> {
        let after = crate::run::lock(&self.after)
            .take()
            .ok_or_else(|| WorkloadError::Config("the xftl window never ended".into()))?;
        let before = *crate::run::lock(&self.before);
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

impl crate::db::Window for Window {
    fn begin(&self) -> Result<(), WorkloadError> {
        let fs = self
            .vfs
            .with_fs(|fs| {
                fs.device_mut().reset_counters();
                fs.counters()
            })
            .ok_or_else(|| WorkloadError::Config("no device attached".into()))?;
        *crate::run::lock(&self.before) = (fs, self.vfs.counters());
        Ok(())
    }

    fn end(&self) -> Result<(), WorkloadError> {
        let got = self
            .vfs
            .with_fs(|fs| (fs.device().counters(), fs.counters()))
            .ok_or_else(|| WorkloadError::Config("no device attached".into()))?;
        *crate::run::lock(&self.after) = Some((got.0, got.1, self.vfs.counters()));
        Ok(())
    }
}
