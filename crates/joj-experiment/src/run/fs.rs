//! A run on a kernel filesystem: prepare → measured window → classify → emit.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use joj_vfs::{AccountingVfs, IoCounters};
use joj_waldio::WaldioVfs;
use joj_workload::{PaperOutcome, db, file, sqlite};

use super::checks::{cross_checks, steady_wal};
use super::classify::classify_window;
use super::config::run_config;
use super::emit::write_trace_and_plot;
use super::extents::ExtentRecorder;
use super::place::Place;
use super::window::{Captured, MeasuredWindow, PaceSetup, Tracing};
use crate::error::ExperimentError;
use crate::replay::replay_records;
use crate::result::RunResult;
use crate::stack::{ACCOUNTING_VFS, Stack, VfsChain, Workload};

pub(super) fn run(
    stack: &Stack,
    workload: &Workload,
    progress: Option<Arc<AtomicU64>>,
) -> Result<RunResult, ExperimentError> {
    let place = Place::make(&stack.storage)?;
    let result = measure(&place, stack, workload, progress);
    place.remove_made();
    let closed = place.close();
    let result = result?;
    closed?;
    Ok(result)
}

/// The VFS chain of the stack, registered with SQLite.
struct Vfses {
    accounting: AccountingVfs,
    waldio: Option<WaldioVfs>,
}

fn register(stack: &Stack) -> Result<Vfses, ExperimentError> {
    let accounting = joj_vfs::register()?;
    if let Some(call) = stack.sync_call {
        accounting.set_sync_call(call);
    }
    // WALDIO runs SQLite through the waldio VFS stacked on the accounting `joj` VFS, so the
    // database and -shm are still counted and the WAL goes out as direct I/O.
    let waldio = match (&stack.vfs, &stack.sqlite) {
        (VfsChain::WaldioOverAccounting(options), Some(setup)) => {
            let v = joj_waldio::register_over(&setup.vfs, ACCOUNTING_VFS)?;
            v.set_defaults(*options);
            Some(v)
        }
        _ => None,
    };
    Ok(Vfses { accounting, waldio })
}

/// What the workload's window gave back.
struct Ran {
    latencies_ns: Vec<u64>,
    elapsed_s: f64,
    /// A file workload counts its own system calls (no VFS underneath).
    syscalls: Option<IoCounters>,
    paper: Option<PaperOutcome>,
    /// Each workload thread's context switches, CPU time and run-queue delay.
    threads: Vec<joj_workload::ThreadUsage>,
    /// Workload threads.
    n_threads: u32,
}

/// Create the workload's files, then run it inside the window.
fn prepare_and_run(
    place: &Place,
    stack: &Stack,
    workload: &Workload,
    window: &MeasuredWindow,
    progress: Option<Arc<AtomicU64>>,
) -> Result<Ran, ExperimentError> {
    match (workload, &stack.sqlite) {
        (Workload::Db(w), Some(setup)) => {
            db::prepare_made(&place.dir, w, setup, made(place).as_deref_mut())?;
            let out = db::run(&place.dir, w, setup, window, progress)?;
            sqlite::integrity_check(&out.databases, &setup.vfs)?;
            Ok(Ran {
                latencies_ns: out.latencies_ns,
                elapsed_s: out.elapsed.as_secs_f64(),
                syscalls: None,
                paper: out.paper,
                threads: out.threads,
                n_threads: w.threads,
            })
        }
        (Workload::File(w), _) => {
            file::prepare_made(&place.dir, w, made(place).as_deref_mut())?;
            let out = file::run(&place.dir, w, window, progress)?;
            Ok(Ran {
                latencies_ns: out.latencies_ns,
                elapsed_s: out.elapsed.as_secs_f64(),
                syscalls: Some(out.syscalls),
                paper: None,
                threads: out.threads,
                n_threads: w.threads,
            })
        }
        (Workload::Db(_), None) => unreachable!("Stack::resolve sets SQLite up for databases"),
    }
}

/// The record of what the run makes in a directory the user named, if the place is one.
fn made(place: &Place) -> Option<std::sync::MutexGuard<'_, joj_workload::made::Made>> {
    place
        .made
        .as_ref()
        .map(|m| m.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
}

fn measure(
    place: &Place,
    stack: &Stack,
    workload: &Workload,
    progress: Option<Arc<AtomicU64>>,
) -> Result<RunResult, ExperimentError> {
    let vfs = register(stack)?;
    let tracing = stack.capture.as_ref().map(|c| Tracing {
        devs: place.devs(),
        buffer_kb: c.buffer_kb,
        recorder: Arc::new(ExtentRecorder::default()),
    });
    let pace = match &stack.pace {
        Some(plan) => Some(PaceSetup {
            devs: place.dev_sizes()?,
            profile: plan.profile.clone(),
            aging: plan.aging_validity,
            // The seed the replay ages with (`crate::replay`: the workload's).
            seed: workload.seed(),
        }),
        None => None,
    };
    let watch_wal = stack.is_wal()
        && matches!(workload, Workload::Db(w) if w.start == joj_workload::StartState::Steady);
    let threads = match workload {
        Workload::Db(w) => w.threads,
        Workload::File(w) => w.threads,
    };
    let window = MeasuredWindow::new(
        &place.dir,
        vfs.accounting,
        vfs.waldio,
        tracing,
        pace,
        watch_wal,
        threads,
    )
    .with_backing(
        place
            .scratch
            .as_ref()
            .and_then(|fs| crate::backing::BackingWatch::new(fs.devices())),
    );
    let ran = prepare_and_run(place, stack, workload, &window, progress)?;
    let captured = window.take()?;
    let mut result = base_result(place, stack, workload, ran, &captured);
    if let Some((start, end)) = &captured.steady_wal {
        result.checks.push(steady_wal(start, end));
    }
    if let (Some(fs), Some(recorder)) = (&place.scratch, window.recorder()) {
        let classified = classify_window(fs, recorder, captured.requests)?;
        let transactions = result.transactions;
        assert!(
            classified.totals.is_consistent(),
            "the window's written bytes are all classified and data bytes all given a role: {:?}",
            classified.totals
        );
        result.fs_journal_by_synced_file = Some(classified.fs_journal_by_synced_file);
        result.block_per_txn = Some(classified.totals.per_txn(transactions));
        result.bio_intent = Some(captured.intent);
        result.checks.extend(cross_checks(
            stack,
            workload,
            &captured.counters,
            captured.waldio.as_ref(),
            &classified.totals,
        ));
        result.block = Some(classified.totals);
        result.unplaced_data = classified.unplaced;
        if let Some(out) = stack.capture.as_ref().and_then(|c| c.out_dir.as_ref()) {
            write_trace_and_plot(out, &stack.label, &mut result, fs, &classified.records)?;
        }
        if let Some(plan) = &stack.replay {
            let records = &classified.records;
            let (device, devices) = replay_records(
                records,
                transactions,
                workload.seed(),
                plan,
                &journal_devs(fs),
            )?;
            result.modeled = modeled(stack, &plan.profile, &result, &device);
            result.device = Some(device);
            result.devices = devices;
        }
    }
    Ok(result)
}

/// The run's modeled time on `profile`: its measured host time on the profile's host, plus the
/// device's time (with the completion model's wakeups when one was applied).
fn modeled(
    stack: &Stack,
    profile: &joj_device::Profile,
    result: &RunResult,
    device: &joj_device::DeviceSummary,
) -> Option<crate::host::Modeled> {
    let host = result.host.as_ref()?;
    let pacing = stack.pacing.as_ref()?;
    let device_s = device
        .completion
        .as_ref()
        .map_or(device.modeled_s, |c| c.modeled_s);
    Some(crate::host::Modeled::compose(
        profile,
        host,
        device_s,
        result.transactions,
        pacing,
    ))
}

/// The result's figures that need no trace.
fn base_result(
    place: &Place,
    stack: &Stack,
    workload: &Workload,
    ran: Ran,
    captured: &Captured,
) -> RunResult {
    let counters = ran.syscalls.unwrap_or(captured.counters);
    let host = crate::host::HostMeasured::new(
        ran.elapsed_s,
        &ran.threads,
        ran.n_threads,
        &captured.counts,
    );
    RunResult {
        waldio: captured.waldio,
        paper: ran.paper,
        pace: captured.pace.clone(),
        host: Some(host),
        backing: captured
            .backing
            .as_ref()
            .and_then(|b| b.as_ref().ok())
            .map(|b| b.report(workload.transactions())),
        backing_error: captured
            .backing
            .as_ref()
            .and_then(|b| b.as_ref().err())
            .map(ToString::to_string),
        threads: ran.threads,
        ..RunResult::measured(
            run_config(stack, workload, place.mount_options.clone()),
            workload.transactions(),
            ran.elapsed_s,
            ran.latencies_ns,
            &counters,
        )
    }
}

/// The external journal devices of `fs` (`major:minor`, as trace records name them).
pub(super) fn journal_devs(fs: &joj_linux::ScratchFs) -> Vec<String> {
    fs.devices()
        .iter()
        .filter(|d| d.role == joj_linux::DeviceRole::Journal)
        .map(|d| d.dev.to_string())
        .collect()
}
