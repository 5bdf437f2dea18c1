//! A restart of `xftl`: the power is cut at a device command inside the commit, the device
//! recovers from its medium (X-FTL's recovery), and the restart of SQLite shared with `iftl`
//! follows (`txn_device.rs`).

use joj_device::Emmc;
use joj_workload::{JournalMode, SqliteSetup};

use super::options::RestartOptions;
use super::report::RestartRun;
use super::txn_device::{Counted, Recovery, restart_sqlite, run_up_to};
use crate::error::ExperimentError;
use crate::txn_device::{self, TxnDeviceOptions};

/// `xftl` on a fresh device of the profile.
pub(super) fn xftl_run(
    opts: &RestartOptions,
    setup: &SqliteSetup,
    crash_in: u64,
    budget: u64,
    cut_seed: u64,
) -> Result<RestartRun, ExperimentError> {
    let xo = TxnDeviceOptions::for_run(&opts.profile, None, opts.page_size, opts.seed);
    let v = txn_device::fresh_device::<joj_atomic::XDevice>(&xo)?;
    let result = (|| {
        let (conn, mut driver) = run_up_to(opts, (JournalMode::Xftl, setup), crash_in)?;
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
        let recovery = Recovery {
            entries_applied: report.xl2p_entries_applied,
            counted: Counted::Xl2pLoad {
                ns: report.xl2p_load_ns,
            },
            whole_ns: report.modeled_ns,
        };
        restart_sqlite(
            opts,
            (JournalMode::Xftl, setup),
            &v,
            (dev, recovery),
            crash_in,
        )
    })();
    let _ = v.detach();
    result
}
