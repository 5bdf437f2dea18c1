//! X-FTL runs: a database workload on the `xftl` VFS (crate `joj-atomic`) over an emulated
//! transactional eMMC in this process — no kernel filesystem, no block trace: the device counts
//! its own commands, and its clock is the modeled time.
//!
//! Phases as for the traced runs: *prepare* (format the file layer on a fresh, optionally aged
//! device; create and load the database) is not measured; the device's counters are reset;
//! the *measured window* is the `n` transactions; the database is then checked. The device
//! section of the result has the same fields as a replayed trace's, so rows compare directly.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use joj_atomic::{FlashFs, FsCounters, FsOptions, XftlCounters, XftlVfs, new_device};
use joj_device::{Aging, BlockDevice, DeviceSummary, Emmc, PowerCut, Profile, RecoveryReport};
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

/// The run's output.
pub struct XftlOutput {
    pub latencies_ns: Vec<u64>,
    pub elapsed: Duration,
    pub device: DeviceSummary,
    pub report: XftlReport,
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
    let fs = FlashFs::format(dev, opts.fs)
        .map_err(|e| WorkloadError::Config(format!("formatting the file layer: {e}")))?;
    v.attach(fs)
        .map_err(|e| WorkloadError::Config(e.to_string()))?;
    Ok(v)
}

/// Prepare with `prepare`, then run `n` transactions with `txn` (given the transaction index),
/// measuring the device over exactly those; then `PRAGMA integrity_check`.
pub fn run(
    opts: &XftlOptions,
    db_name: &str,
    prepare: impl FnOnce(&Connection) -> Result<(), WorkloadError>,
    n: u64,
    mut txn: impl FnMut(&Connection, u64) -> Result<(), WorkloadError>,
    progress: Option<Arc<AtomicU64>>,
) -> Result<XftlOutput, WorkloadError> {
    let v = fresh_device(opts)?;
    let result = (|| {
        let conn = open(db_name, opts.page_size)?;
        prepare(&conn)?;
        let fs_before = v.with_fs(|fs| {
            fs.device_mut().reset_counters();
            fs.counters()
        });
        let paths_before = v.counters();
        let mut lat = Vec::with_capacity(n as usize);
        let t0 = Instant::now();
        for i in 0..n {
            let t = Instant::now();
            txn(&conn, i)?;
            lat.push(t.elapsed().as_nanos() as u64);
            if let Some(p) = &progress {
                p.fetch_add(1, Ordering::Relaxed);
            }
        }
        let elapsed = t0.elapsed();
        let (counters, fs_after) = v
            .with_fs(|fs| (fs.device().counters(), fs.counters()))
            .expect("attached above");
        let paths = v.counters();
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(sql_err("integrity_check"))?;
        if ok != "ok" {
            return Err(WorkloadError::Config(format!(
                "integrity_check after the xftl run: {ok}"
            )));
        }
        let before = fs_before.unwrap_or_default();
        Ok(XftlOutput {
            latencies_ns: lat,
            elapsed,
            device: DeviceSummary::new(&opts.profile.name, &counters, Some(n), counters.modeled_s),
            report: XftlReport {
                fs: fs_after.delta(&before),
                paths: paths.delta(&paths_before),
                page_bytes: u64::from(opts.profile.geometry.page_bytes),
            },
        })
    })();
    let _ = v.detach();
    result
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

/// Restart after a power cut, modeled: the device's recovery, then SQLite's first query
/// (which rolls back a hot journal if one is left).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestartReport {
    /// Device power-on: checkpoint load, OOB scan, commit table (the FTL's part).
    pub device_recovery_ms: f64,
    /// Device time of SQLite's reopen and first query (the database's own recovery).
    pub sqlite_restart_ms: f64,
    pub recovery: RecoveryReport,
}

/// Cut power during transaction `cut_at` of a run like [`run`]'s (after `commands_into_txn`
/// device commands of it), recover, and time the restart.
pub fn restart_after_cut(
    opts: &XftlOptions,
    db_name: &str,
    prepare: impl FnOnce(&Connection) -> Result<(), WorkloadError>,
    cut_at: u64,
    commands_into_txn: u64,
    mut txn: impl FnMut(&Connection, u64) -> Result<(), WorkloadError>,
) -> Result<RestartReport, WorkloadError> {
    let v = fresh_device(opts)?;
    let r = (|| {
        {
            let conn = open(db_name, opts.page_size)?;
            prepare(&conn)?;
            for i in 0..cut_at {
                txn(&conn, i)?;
            }
            v.with_fs(|fs| fs.device_mut().cut_power_after(Some(commands_into_txn)));
            // The transaction the power cut interrupts fails: that is the point.
            let _ = txn(&conn, cut_at);
        }
        let fs = v
            .detach()
            .map_err(|e| WorkloadError::Config(e.to_string()))?;
        let cut: PowerCut<_> = fs.into_device().power_loss(0, opts.seed);
        let (dev, recovery) =
            Emmc::recover(cut, &opts.profile).map_err(dev_err("device recovery"))?;
        let fs = FlashFs::mount(dev)
            .map_err(|e| WorkloadError::Config(format!("mount after the cut: {e}")))?;
        v.attach(fs)
            .map_err(|e| WorkloadError::Config(e.to_string()))?;
        let t0 = v.with_fs(|fs| fs.device().now_ns()).unwrap_or(0);
        let conn = open(db_name, opts.page_size)?;
        let _: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .map_err(sql_err("first query after the cut"))?;
        let t1 = v.with_fs(|fs| fs.device().now_ns()).unwrap_or(0);
        Ok(RestartReport {
            device_recovery_ms: recovery.modeled_ns as f64 / 1e6,
            sqlite_restart_ms: (t1 - t0) as f64 / 1e6,
            recovery,
        })
    })();
    let _ = v.detach();
    r
}
