//! An `xftl` run: the workload's database on the `xftl` VFS over a fresh (optionally aged)
//! emulated device; the window resets the device's counters and reads them back, so the
//! `device` section is the device's own.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use joj_vfs::IoCounters;
use joj_workload::{DbWorkload, SqliteSetup, db, sqlite};

use super::config::run_config;
use crate::error::ExperimentError;
use crate::result::RunResult;
use crate::stack::{DevicePlan, Stack, Workload};
use crate::xftl::{self, IDevice, RunDevice, XftlOptions};
use joj_atomic::XDevice;
use joj_workload::JournalMode;

/// The database's directory on the device (names there only need to be absolute).
const DIR: &str = "/joj-xftl";

pub(super) fn run(
    stack: &Stack,
    plan: &DevicePlan,
    w: &DbWorkload,
    setup: &SqliteSetup,
    progress: Option<Arc<AtomicU64>>,
) -> Result<RunResult, ExperimentError> {
    match w.journal {
        JournalMode::Iftl => run_on::<IDevice>(stack, plan, w, setup, progress),
        _ => run_on::<XDevice>(stack, plan, w, setup, progress),
    }
}

fn run_on<D: RunDevice>(
    stack: &Stack,
    plan: &DevicePlan,
    w: &DbWorkload,
    setup: &SqliteSetup,
    progress: Option<Arc<AtomicU64>>,
) -> Result<RunResult, ExperimentError> {
    let xo = XftlOptions::for_run(&plan.profile, plan.aging_validity, w.page_size, w.seed);
    let v = xftl::fresh_device::<D>(&xo)?;
    let result = (|| {
        let dir = PathBuf::from(DIR);
        db::prepare(&dir, w, setup)?;
        // Several threads of the Mobibench loop take their turns in device time.
        let window = if w.threads > 1 && w.paper.is_none() {
            xftl::Window::in_device_time_order(v, w.threads as usize, w.transactions)
        } else {
            xftl::Window::new(v)
        };
        let out = db::run(&dir, w, setup, &window, progress)?;
        sqlite::integrity_check(&out.databases, &setup.vfs)?;
        let all = Workload::Db(w.clone()).transactions();
        let (device, report) = window.take(&xo.profile, all)?;
        Ok(result_of(stack, w, out, device, report))
    })();
    let _ = v.detach();
    result
}

fn result_of(
    stack: &Stack,
    w: &DbWorkload,
    out: joj_workload::DbRunOutput,
    device: joj_device::DeviceSummary,
    report: xftl::XftlReport,
) -> RunResult {
    // One connection per thread, each on its own database; nothing kernel-side runs, so no
    // system call is counted and there is no clock to pace.
    RunResult {
        device: Some(device),
        paper: out.paper,
        xftl: Some(report),
        ..RunResult::measured(
            run_config(stack, &Workload::Db(w.clone()), None),
            Workload::Db(w.clone()).transactions(),
            out.elapsed.as_secs_f64(),
            out.latencies_ns,
            &IoCounters::default(),
        )
    }
}
