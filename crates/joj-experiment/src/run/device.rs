//! A run on a transactional device (`xftl` or `iftl`, as the stack chose): the workload's
//! database on the `xftl` VFS over a fresh (optionally aged) emulated device; the window resets the device's counters and reads them back, so the
//! `device` section is the device's own.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use joj_vfs::IoCounters;
use joj_workload::{DbWorkload, SqliteSetup, db, sqlite};

use super::config::run_config;
use crate::error::ExperimentError;
use crate::result::RunResult;
use crate::stack::{DevicePlan, Stack, TxnDeviceKind, Workload};
use crate::txn_device::{self, OnTxnDevice, RunDevice, TxnDeviceOptions};

/// The database's directory on the device (names there only need to be absolute).
const DIR: &str = "/joj-xftl";

/// One run on the device of `kind`.
pub(super) struct DeviceRun<'a> {
    pub kind: TxnDeviceKind,
    pub stack: &'a Stack,
    pub plan: &'a DevicePlan,
    pub w: &'a DbWorkload,
    pub setup: &'a SqliteSetup,
    pub progress: Option<Arc<AtomicU64>>,
}

impl DeviceRun<'_> {
    pub(super) fn run(self) -> Result<RunResult, ExperimentError> {
        self.kind.run(self)
    }
}

impl OnTxnDevice for DeviceRun<'_> {
    type Output = Result<RunResult, ExperimentError>;

    fn on<D: RunDevice>(self) -> Self::Output {
        let DeviceRun {
            stack,
            plan,
            w,
            setup,
            progress,
            ..
        } = self;
        run_on::<D>(stack, plan, w, setup, progress)
    }
}

fn run_on<D: RunDevice>(
    stack: &Stack,
    plan: &DevicePlan,
    w: &DbWorkload,
    setup: &SqliteSetup,
    progress: Option<Arc<AtomicU64>>,
) -> Result<RunResult, ExperimentError> {
    let xo = TxnDeviceOptions::for_run(&plan.profile, plan.aging_validity, w.page_size, w.seed);
    let v = txn_device::fresh_device::<D>(&xo)?;
    let result = (|| {
        let dir = PathBuf::from(DIR);
        db::prepare(&dir, w, setup)?;
        // Several threads of the Mobibench loop take their turns in device time.
        let window = if w.threads > 1 && w.paper.is_none() {
            txn_device::Window::in_device_time_order(v, w.threads as usize, w.transactions)
        } else {
            txn_device::Window::new(v)
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
    report: txn_device::TxnDeviceReport,
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
