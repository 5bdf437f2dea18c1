//! A restart of `iftl`: the transaction drawn for the cut runs to its end on the device's
//! clock, and the power is cut at a NAND or NVM event inside it, before its commit returned,
//! drawn from the seed (what was in flight torn). The device recovers: the paper's Algorithm 1
//! over the logFTL, counted as i-FTL's counterpart of X-FTL's commit-table load, then the read
//! of `dataFTL` that rebuilds the block table, reported with the whole recovery and not
//! counted, as X-FTL's own mapping recovery is not. Then the restart of SQLite shared with
//! `xftl` (`txn_device.rs`).

use joj_device::{DataMode, IftlDevice};
use joj_workload::{JournalMode, SqliteSetup};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::options::RestartOptions;
use super::report::RestartRun;
use super::txn_device::{Counted, Recovery, restart_sqlite, run_up_to};
use crate::error::ExperimentError;
use crate::txn_device::{self, IDevice, TxnDeviceOptions};

/// `iftl` on a fresh i-FTL device of the profile.
pub(super) fn iftl_run(
    opts: &RestartOptions,
    setup: &SqliteSetup,
    crash_in: u64,
    cut_seed: u64,
) -> Result<RestartRun, ExperimentError> {
    let xo = TxnDeviceOptions::for_run(&opts.profile, None, opts.page_size, opts.seed);
    let v = txn_device::fresh_device::<IDevice>(&xo)?;
    let result =
        (|| {
            let (conn, mut driver) = run_up_to(opts, (JournalMode::Iftl, setup), crash_in)?;
            let now = || {
                v.with_fs(|fs| fs.device().now_ns())
                    .ok_or(ExperimentError::NoDeviceAttached)
            };
            // Every command of the transaction stays undoable: the cut is chosen after it ran.
            v.with_fs(|fs| fs.device_mut().keep_cut_history());
            let began = now()?;
            driver.transaction(&conn)?;
            let returned = now()?;
            drop(conn);
            let dev = v.detach()?.into_device();
            let mut events = dev.ftl().medium().event_times_ns(began);
            events.extend(dev.ftl().nvm().event_times_ns(began));
            // Before the commit returned: the transaction is not acknowledged at the cut.
            events.retain(|&t| began <= t && t < returned);
            if events.is_empty() {
                return Err(ExperimentError::NoPowerCut {
                    txn: crash_in,
                    why: "the transaction made no device command to cut at".into(),
                });
            }
            let mut rng = ChaCha8Rng::seed_from_u64(cut_seed);
            let at = (events[rng.random_range(0..events.len())] + rng.random_range(0..2u64))
                .min(returned - 1);
            let profile = opts.profile.clone().with_data_mode(DataMode::Full);
            let (dev, report) = IftlDevice::recover(dev.power_cut(at, cut_seed), &profile)
                .map_err(|source| ExperimentError::Device {
                    what: "device recovery",
                    source,
                })?;
            dev.ftl().check_invariants();
            let recovery = Recovery {
                entries_applied: report.entries_restored,
                counted: Counted::LogFtlRecovery {
                    ns: report.algorithm1_ns,
                },
                whole_ns: report.modeled_ns,
            };
            restart_sqlite(
                opts,
                (JournalMode::Iftl, setup),
                &v,
                (dev, recovery),
                crash_in,
            )
        })();
    let _ = v.detach();
    result
}
