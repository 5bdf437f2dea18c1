//! What the restarts of `xftl` and `iftl` share once their device has recovered (each cuts
//! and recovers its own way: `xftl.rs`, `iftl.rs`): the file layer mounts, SQLite's first
//! statement is timed by the device, and the database is checked. Also the run up to the
//! transaction the cut interrupts.

use std::path::PathBuf;

use joj_atomic::XftlVfs;
use joj_workload::paper::Driver;
use joj_workload::{JournalMode, SqliteSetup, db};

use super::check::{first_access, recovered, workload};
use super::options::RestartOptions;
use super::report::{NotCounted, RestartRun};
use crate::error::ExperimentError;
use crate::txn_device::RunDevice;

/// Where the device runs keep their database (a path inside the flash file layer).
pub(super) const DIR: &str = "/joj-xftl";

/// What a device's recovery did and cost.
pub(super) struct Recovery {
    /// X-FTL: commit-table entries applied; i-FTL: `dataFTL` entries restored.
    pub entries_applied: u64,
    /// The transactional part, counted.
    pub counted: Counted,
    /// The whole recovery, reported and not counted.
    pub whole_ns: u64,
}

/// The transactional part of a device's recovery, the part a restart counts.
pub(super) enum Counted {
    /// X-FTL: loading the commit table (the X-L2P entries).
    Xl2pLoad { ns: u64 },
    /// i-FTL: the paper's Algorithm 1 over the logFTL.
    LogFtlRecovery { ns: u64 },
}

impl Counted {
    fn ms(&self) -> f64 {
        match *self {
            Counted::Xl2pLoad { ns } | Counted::LogFtlRecovery { ns } => ns as f64 / 1e6,
        }
    }
}

/// Mount the file layer on the recovered device, open the database, time its first statement
/// on the device and check what it holds: transaction `crash_in` was the one cut.
pub(super) fn restart_sqlite<D: RunDevice>(
    opts: &RestartOptions,
    (mode, setup): (JournalMode, &SqliteSetup),
    v: &XftlVfs<D>,
    (dev, recovery): (D, Recovery),
    crash_in: u64,
) -> Result<RestartRun, ExperimentError> {
    let w = workload(opts, mode);
    let dir = PathBuf::from(DIR);
    let mount_from = dev.counters().modeled_s;
    let fs = joj_atomic::FlashFs::mount(dev).map_err(|source| ExperimentError::FlashFs {
        what: "mounting the file layer",
        source,
    })?;
    let mount_ms = (fs.device().counters().modeled_s - mount_from) * 1e3;
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
    let first_access_ms = c.modeled_s * 1e3;
    let counted_ms = recovery.counted.ms();
    let (xl2p_load_ms, logftl_recovery_ms) = match recovery.counted {
        Counted::Xl2pLoad { .. } => (Some(counted_ms), None),
        Counted::LogFtlRecovery { .. } => (None, Some(counted_ms)),
    };
    Ok(RestartRun {
        crash_in_txn: crash_in,
        acknowledged,
        recovered,
        log_bytes: 0,
        wal_frames: None,
        xl2p_entries_applied: recovery.entries_applied,
        restart_ms: first_access_ms + counted_ms,
        first_access_ms,
        checkpoint_ms: None,
        xl2p_load_ms,
        logftl_recovery_ms,
        reads: c.host_read_requests,
        writes: c.host_write_requests,
        flushes: c.flushes,
        not_counted_ms: NotCounted {
            device_recovery_ms: Some(recovery.whole_ns as f64 / 1e6),
            file_layer_mount_ms: Some(mount_ms),
            ..NotCounted::default()
        },
    })
}

/// Make the database on the attached device and run the workload's first `crash_in - 1`
/// transactions: the connection and the driver, at the transaction the cut will interrupt.
pub(super) fn run_up_to(
    opts: &RestartOptions,
    (mode, setup): (JournalMode, &SqliteSetup),
    crash_in: u64,
) -> Result<(rusqlite::Connection, Driver), ExperimentError> {
    let w = workload(opts, mode);
    let dir = PathBuf::from(DIR);
    db::prepare(&dir, &w, setup)?;
    let conn = db::connect(&dir, &w, 0, setup)?;
    let mut driver = Driver::new(&opts.workload, opts.seed)?;
    for _ in 1..crash_in {
        driver.transaction(&conn)?;
    }
    Ok((conn, driver))
}
