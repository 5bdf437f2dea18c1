//! A restart of `xftl`: the power is cut at a device command inside the commit, the device
//! recovers from its medium, the file layer mounts, and SQLite's first statement is timed by
//! the device.

use std::path::PathBuf;

use joj_device::{BlockDevice, Emmc};
use joj_workload::paper::Driver;
use joj_workload::{JournalMode, SqliteSetup, db};

use super::check::{first_access, recovered, workload};
use super::options::RestartOptions;
use super::report::{NotCounted, RestartRun};
use crate::error::ExperimentError;
use crate::xftl::{self, XftlOptions};

/// `xftl` on a fresh device of the profile.
pub(super) fn xftl_run(
    opts: &RestartOptions,
    setup: &SqliteSetup,
    crash_in: u64,
    budget: u64,
    cut_seed: u64,
) -> Result<RestartRun, ExperimentError> {
    let w = workload(opts, JournalMode::Xftl);
    let xo = XftlOptions::for_run(&opts.profile, None, opts.page_size, opts.seed);
    let v = xftl::fresh_device::<joj_atomic::XDevice>(&xo)?;
    let result = (|| {
        let dir = PathBuf::from("/joj-xftl");
        db::prepare(&dir, &w, setup)?;
        let conn = db::connect(&dir, &w, 0, setup)?;
        let mut driver = Driver::new(&opts.workload, opts.seed)?;
        for _ in 1..crash_in {
            driver.transaction(&conn)?;
        }
        v.with_fs(|fs| fs.device_mut().cut_power_after(Some(budget)));
        if driver.transaction(&conn).is_ok() {
            return Err(ExperimentError::NoPowerCut {
                txn: crash_in,
                why: format!("finished within {budget} device commands"),
            });
        }
        drop(conn);
        let fs = v.detach()?;
        // Power goes as the command after the budget is issued; what was in flight is torn.
        let cut = fs.into_device().power_loss(0, cut_seed);
        let (dev, report) =
            Emmc::recover(cut, &opts.profile).map_err(|source| ExperimentError::Device {
                what: "device recovery",
                source,
            })?;
        dev.ftl().check_invariants();
        let before_mount = dev.now_ns();
        let fs = joj_atomic::FlashFs::mount(dev).map_err(|source| ExperimentError::FlashFs {
            what: "mounting the file layer",
            source,
        })?;
        let mount_ns = fs.device().now_ns() - before_mount;
        v.attach(fs)?;
        v.with_fs(|fs| fs.device_mut().reset_counters());
        let conn = db::connect(&dir, &w, 0, setup)?;
        first_access(&conn)?;
        let c = v
            .with_fs(|fs| fs.device().counters())
            .ok_or(ExperimentError::NoDeviceAttached)?;
        let acknowledged = crash_in - 1;
        let db_path = db::database_paths(&dir, &w, 0).remove(0);
        let recovered = recovered(opts, &conn, &db_path, acknowledged)?;
        drop(conn);
        let first_ms = c.modeled_s * 1e3;
        let xl2p_ms = report.xl2p_load_ns as f64 / 1e6;
        Ok(RestartRun {
            crash_in_txn: crash_in,
            acknowledged,
            recovered,
            log_bytes: 0,
            wal_frames: None,
            xl2p_entries_applied: report.xl2p_entries_applied,
            restart_ms: first_ms + xl2p_ms,
            first_access_ms: first_ms,
            checkpoint_ms: None,
            xl2p_load_ms: Some(xl2p_ms),
            reads: c.host_read_requests,
            writes: c.host_write_requests,
            flushes: c.flushes,
            not_counted_ms: NotCounted {
                device_recovery_ms: Some(report.modeled_ns as f64 / 1e6),
                file_layer_mount_ms: Some(mount_ns as f64 / 1e6),
                ..NotCounted::default()
            },
        })
    })();
    let _ = v.detach();
    result
}
