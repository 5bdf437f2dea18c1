//! The crash test's rig: its own `xftl` VFS, SQLite set up as the stack says for X-FTL, the
//! prepared database kept as a device image, and booting that image for each trial.

use std::path::Path;

use joj_atomic::{FlashFs, XftlVfs};
use joj_device::{Emmc, PowerCut, image};
use joj_workload::{DbWorkload, JournalMode, SqliteSetup, WorkloadError, db};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::Connection;

use super::options::CrashOptions;
use crate::error::ExperimentError;
use crate::stack::{RunOptions, Stack, Workload};
use crate::txn_device::{self, TxnDeviceOptions};

/// Each crash test registers its own VFS (`xftl-crash-N`), so several can run in one process
/// (SQLite keeps registered VFSes for the process's life: a few hundred bytes each).
static NEXT_VFS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Where the database lives on the device.
const DIR: &str = "/joj-crash";

/// A registered VFS and the workload it runs.
pub(super) struct Rig {
    pub(super) vfs: XftlVfs,
    setup: SqliteSetup,
    workload: DbWorkload,
}

impl Rig {
    /// A new VFS (`xftl-crash-N`), SQLite set up as the stack sets X-FTL up.
    pub(super) fn new(opts: &CrashOptions) -> Result<Rig, ExperimentError> {
        let n = NEXT_VFS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let vfs = joj_atomic::register(&format!("xftl-crash-{n}"))?;
        let workload = DbWorkload {
            journal: JournalMode::Xftl,
            transactions: opts.transactions,
            page_size: opts.page_size,
            seed: opts.seed,
            paper: Some(opts.workload),
            ..DbWorkload::default()
        };
        let run = RunOptions {
            device: Some(crate::stack::DevicePlan::new(opts.profile.clone())),
            ..RunOptions::default()
        };
        let stack = Stack::resolve(&Workload::Db(workload.clone()), &run)?;
        let setup = SqliteSetup {
            vfs: vfs.name().to_string(),
            ..stack
                .sqlite
                .clone()
                .ok_or(crate::error::StackError::XftlNeedsDevice)?
        };
        Ok(Rig {
            vfs,
            setup,
            workload,
        })
    }

    /// The database's connection, with the run's pragmas.
    pub(super) fn connect(&self) -> Result<Connection, WorkloadError> {
        db::connect(Path::new(DIR), &self.workload, 0, &self.setup)
    }

    /// The prepared database as a device image, cleanly shut down.
    pub(super) fn base_image(&self, opts: &CrashOptions) -> Result<Vec<u8>, ExperimentError> {
        let mut xo = TxnDeviceOptions::for_run(
            &opts.profile,
            opts.aging_validity,
            opts.page_size,
            opts.seed,
        );
        // The paper's workloads need a database of tens of MiB, a journal and a temporary file or
        // two: six file slots in at most a sixth of the device leave aging a cold region large
        // enough for any validity, even on a device cut down with `with_blocks_per_plane`.
        xo.fs.slots = 6;
        xo.fs.fs_bytes = xo
            .fs
            .fs_bytes
            .min(opts.profile.capacity_bytes() / 6)
            .min(384 << 20);
        self.vfs
            .attach(txn_device::formatted_device::<joj_atomic::XDevice>(&xo)?)?;
        let prepared = db::prepare(Path::new(DIR), &self.workload, &self.setup);
        let fs = self.vfs.detach()?;
        if let Err(WorkloadError::DiskFull { what }) = prepared {
            return Err(ExperimentError::FileLayerFull {
                what,
                device_mib: opts.profile.capacity_bytes() >> 20,
                file_mib: (xo.fs.fs_bytes / u64::from(xo.fs.slots)) >> 20,
            });
        }
        prepared?;
        let medium = fs
            .into_device()
            .close()
            .map_err(|source| ExperimentError::Device {
                what: "shutting the device down",
                source,
            })?;
        Ok(image::encode(&medium))
    }

    /// The device of `base`, powered on, with `canary` set, mounted under `vfs`.
    pub(super) fn boot(&self, base: &[u8], opts: &CrashOptions) -> Result<(), ExperimentError> {
        let medium = image::decode(base, &opts.profile)?;
        let (mut dev, _) =
            Emmc::recover(PowerCut { medium, at_ns: 0 }, &opts.profile).map_err(|source| {
                ExperimentError::Device {
                    what: "powering the image on",
                    source,
                }
            })?;
        dev.set_canary_commit_before_durable(opts.canary);
        let fs = FlashFs::mount(dev).map_err(|source| ExperimentError::FlashFs {
            what: "mounting the image",
            source,
        })?;
        self.vfs.attach(fs)?;
        Ok(())
    }
}

/// Which transactions' batch commits are made to fail: drawn once from the seed, the same in
/// every trial and in the counting run, so the command count holds for every trial.
pub(super) fn failing_batches(opts: &CrashOptions) -> Vec<bool> {
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed ^ 0xfa11_ba7c);
    (0..opts.transactions)
        .map(|_| opts.fail_batch_one_in > 0 && rng.random_range(0..opts.fail_batch_one_in) == 0)
        .collect()
}
