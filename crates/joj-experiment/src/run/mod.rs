//! The runner: put a workload on the stack [`Stack::resolve`] chose, bracket the measured
//! window with counters and block tracing, classify what the kernel issued, and return one
//! [`RunResult`].
//!
//! A run on a kernel filesystem ([`fs`]) goes *prepare* (make the filesystem, register the
//! VFS chain, create and fill the databases — unmeasured) → *measured window* ([`window`]:
//! `syncfs`, counters, extent snapshots, block tracer, the transactions, and the same in
//! reverse) → *classify* ([`classify`]: each request to the FS journal, a file's data or
//! metadata; cross-checks between the VFS's and the block layer's counts) → *emit* (the trace
//! file and plot, the device replay). A run on the emulated device ([`device`]) has no kernel
//! part: the device counts its own commands. The scratch filesystem is removed at the end,
//! also after an error.

mod checks;
mod classify;
mod command;
mod command_doc;
mod config;
mod device;
mod emit;
mod extents;
mod fs;
mod per_database;
mod place;
mod syscalls;
mod window;

pub use crate::result::{DatabaseReport, PerCommit};
pub use command::{CommandOptions, check_command, run_command};
pub use command_doc::command_line;
pub use config::kernel_release;
pub use per_database::databases;
pub use syscalls::{SyscallReplayOptions, SyscallReplayReport, replay_syscalls};

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use crate::error::ExperimentError;
use crate::result::RunResult;
use crate::stack::{RunOptions, Stack, Storage, VfsChain, Workload};

/// Run `workload` as `opts` say and return its result document.
pub fn run(workload: &Workload, opts: &RunOptions) -> Result<RunResult, ExperimentError> {
    match workload {
        Workload::Db(w) => w.validate(),
        Workload::File(w) => w.validate(),
    }?;
    let stack = Stack::resolve(workload, opts)?;
    run_on(&stack, workload, opts.progress.clone())
}

/// Run `workload` on an already resolved `stack`; `progress` counts finished transactions.
pub fn run_on(
    stack: &Stack,
    workload: &Workload,
    progress: Option<Arc<AtomicU64>>,
) -> Result<RunResult, ExperimentError> {
    // Held from before the filesystem is made to after the result is built: the whole run.
    let _awake = stack
        .cpus_awake
        .then(joj_linux::cpu_latency::CpusAwake::hold)
        .transpose()?;
    match (&stack.storage, workload, &stack.sqlite, &stack.vfs) {
        (Storage::Device(plan), Workload::Db(w), Some(setup), &VfsChain::TxnDevice(kind)) => {
            device::DeviceRun {
                kind,
                stack,
                plan,
                w,
                setup,
                progress,
            }
            .run()
        }
        (Storage::Device(_), ..) => {
            unreachable!(
                "Stack::resolve puts only database workloads on the device, through its VFS"
            )
        }
        (Storage::Host(_) | Storage::Scratch { .. }, ..) => fs::run(stack, workload, progress),
    }
}
