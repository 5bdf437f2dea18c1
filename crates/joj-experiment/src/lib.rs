//! joj's experiments: what drives the workloads of `joj-workload` on a stack and measures them.
//!
//! - [`Stack`]: what a run is made of (VFS chain, SQLite's settings, filesystem or device,
//!   tracing, pacing, device replay), resolved in one place from the journal mode and the
//!   run's options.
//! - [`run()`]: one workload on its stack — on a real filesystem (a host directory, or a scratch
//!   filesystem on a loop device made for the run) with the kernel's block requests captured
//!   in exactly the measured window and classified, or on the emulated transactional eMMC —
//!   returning one [`RunResult`] document.
//! - [`txn_device`]: what X-FTL and i-FTL runs share, a database on an emulated transactional
//!   device; which of the two ([`TxnDeviceKind`]) the [`Stack`] decides.
//! - [`compare`]: one operation in several journal modes, one table.
//! - [`restart`]: restart time after a power cut, per mode (the X-FTL paper's Table 5).
//! - [`device_power_cuts`]: power cuts of the emulated device at random device commands across
//!   the paper's workloads on X-FTL.
//! - [`kernel_crash_states`]: crash states of the real kernel stack, from a recorded run's block
//!   writes and flushes, each recovered and checked.
//! - [`pace`], [`replay`]: the host held to a device model's time; a run's trace replayed
//!   through a device model.
//! - [`trace_replay`]: a trace file replayed through one device or a device per profile
//!   (`joj replay`), and its documents.
//!
//! It is not a CLI (that is `joj-cli`) and owns no on-disk format (traces belong to
//! `joj-trace`, device images to `joj-device`). Invariants: nothing is measured outside the
//! window; a scratch filesystem and tracefs instance made for a run are removed when the run
//! ends, whether it succeeded or not; joj never writes into a file it did not create.

pub mod backing;
pub mod calibrate;
pub mod compare;
pub mod compare_plot;
pub mod device_power_cuts;
pub mod error;
pub mod host;
pub mod kernel_crash_states;
pub mod pace;
pub mod replay;
pub mod restart;
pub mod result;
pub mod run;
pub mod speed;
pub mod stack;
pub mod trace_replay;
pub mod txn_device;
pub mod withdraw_deposit;

pub use error::{ExperimentError, HostDirProblem, StackError};
pub use host::{HostMeasured, Modeled, Pacing};
pub use pace::PaceReport;
pub use result::RunResult;
pub use run::{run, run_on};
pub use stack::{DevicePlan, FsChoice, PaceRequest, RunOptions, Stack, TxnDeviceKind, Workload};
