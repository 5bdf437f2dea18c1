//! A restart of `iftl`: the transaction drawn for the cut runs to its end on the device's
//! clock, the power is cut at a NAND or NVM event inside it drawn from the seed (what was in
//! flight torn), the device recovers — the paper's Algorithm 1 over the logFTL, counted as
//! i-FTL's counterpart of X-FTL's commit-table load, then the read of `dataFTL` that rebuilds
//! the block table, reported with the whole recovery and not counted, as X-FTL's own mapping
//! recovery is not — then the restart of SQLite shared with `xftl`.

use std::path::PathBuf;

use joj_device::{DataMode, IftlDevice};
use joj_workload::paper::Driver;
use joj_workload::{JournalMode, SqliteSetup, db};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::check::workload;
use super::options::RestartOptions;
use super::report::{NotCounted, RestartRun};
use super::xftl::{DIR, restart_sqlite};
use crate::error::ExperimentError;
use crate::xftl::{self, IDevice, XftlOptions};

/// `iftl` on a fresh i-FTL device of the profile.
pub(super) fn iftl_run(
    opts: &RestartOptions,
    setup: &SqliteSetup,
    crash_in: u64,
    cut_seed: u64,
) -> Result<RestartRun, ExperimentError> {
    let w = workload(opts, JournalMode::Iftl);
    let xo = XftlOptions::for_run(&opts.profile, None, opts.page_size, opts.seed);
    let v = xftl::fresh_device::<IDevice>(&xo)?;
    let result =
        (|| {
            let dir = PathBuf::from(DIR);
            db::prepare(&dir, &w, setup)?;
            let conn = db::connect(&dir, &w, 0, setup)?;
            let mut driver = Driver::new(&opts.workload, opts.seed)?;
            for _ in 1..crash_in {
                driver.transaction(&conn)?;
            }
            let now = || {
                v.with_fs(|fs| fs.device().now_ns())
                    .ok_or(ExperimentError::NoDeviceAttached)
            };
            let began = now()?;
            driver.transaction(&conn)?;
            drop(conn);
            let dev = v.detach()?.into_device();
            let mut events = dev.ftl().medium().event_times_ns(began);
            events.extend(dev.ftl().nvm().event_times_ns(began));
            events.retain(|&t| t >= began);
            if events.is_empty() {
                return Err(ExperimentError::NoPowerCut {
                    txn: crash_in,
                    why: "the transaction made no device command to cut at".into(),
                });
            }
            let mut rng = ChaCha8Rng::seed_from_u64(cut_seed);
            let at = events[rng.random_range(0..events.len())] + rng.random_range(0..2u64);
            let profile = opts.profile.clone().with_data_mode(DataMode::Full);
            let (dev, report) = IftlDevice::recover(dev.power_cut(at, cut_seed), &profile)
                .map_err(|source| ExperimentError::Device {
                    what: "device recovery",
                    source,
                })?;
            dev.ftl().check_invariants();
            let after = restart_sqlite(opts, (JournalMode::Iftl, setup), &v, dev, crash_in)?;
            let algorithm1_ms = report.algorithm1_ns as f64 / 1e6;
            Ok(RestartRun {
                xl2p_entries_applied: report.entries_restored,
                restart_ms: after.first_access_ms + algorithm1_ms,
                logftl_recovery_ms: Some(algorithm1_ms),
                not_counted_ms: NotCounted {
                    device_recovery_ms: Some(report.modeled_ns as f64 / 1e6),
                    file_layer_mount_ms: Some(after.mount_ms),
                    ..NotCounted::default()
                },
                ..after.run
            })
        })();
    let _ = v.detach();
    result
}
