//! joj's Linux measurement layer: the real-kernel half of a joj run. It makes scratch
//! filesystems (ext4 in its journaling modes, xfs, btrfs) on loop devices created for the run,
//! finds where each filesystem keeps its journal, captures every block request of those devices
//! through a private tracefs instance, and maps a file's bytes to device sectors with FIEMAP.
//!
//! It is not a workload runner and does not classify requests: it hands `joj-trace` records
//! (class `Unknown`) plus the layout facts a classifier needs.
//!
//! It also serves a *recording disk* ([`record`]): a FUSE filesystem whose files back a scratch
//! filesystem's loop devices and which logs every write and flush that device receives.
//!
//! It also resolves paths inside images joj did not make itself beneath their mount point only
//! ([`beneath`]), and mounts such images without symbolic links, device nodes, set-user-id bits
//! or executables ([`fs::ImageOrigin::Foreign`]).
//!
//! It also makes the host temporary directory of a `--fs host` run ([`RunTempDir`]), so that
//! one cleanup registry and one signal handler cover everything a run makes.
//!
//! It also writes a disk-backed image whole after mkfs ([`written`], `--loop-direct-io`), so
//! that a first write to it costs the disk's filesystem no extent of its own.
//!
//! It also holds the CPUs out of idle states for a run ([`cpu_latency`], `--cpus-awake`): a PM
//! QoS request that lives as long as one open descriptor, so the kernel releases it when joj
//! exits in any way, and the cleanup registry has nothing to do for it.
//!
//! It also waits for the kernel's coarse clock, the one file timestamps come from, to tick
//! ([`clock`]): a calibration's flush after a write that moved a file's timestamps.
//!
//! Invariants:
//! - It only ever unmounts, detaches or removes what this process created and recorded in its
//!   cleanup registry ([`cleanup`]), or what the sweep ([`leftovers`]) finds named as joj
//!   names things ([`names`]) with the pid of a process that is no longer alive; it never
//!   changes global tracing settings, only `instances/joj-<pid>-<n>` directories.
//! - Every resource is released on `close`, on drop (also while unwinding from a panic) and,
//!   once [`install_cleanup_handler`] ran, on SIGINT / SIGTERM. A death that runs no cleanup
//!   (SIGKILL, an abort) leaves them to the next run's sweep or `joj cleanup`.
//! - Sectors are 512-byte units on the named device; devices are named `"major:minor"`.
//! - Everything here but the temporary directory needs root; [`prereq`] says what is missing
//!   and how to get it.

pub mod beneath;
pub mod block_stream;
pub mod cleanup;
pub mod clock;
mod cmd;
pub mod cpu_latency;
pub mod dev;
pub mod diskstats;
pub mod fiemap;
pub mod fs;
pub mod fs_btrfs;
pub mod leftovers;
pub mod loopdev;
pub mod memory;
pub mod mounts;
pub mod names;
pub mod prereq;
mod raw_cpus;
pub mod raw_event;
pub mod record;
pub mod scratch;
pub mod start_copy;
pub mod supervise;
pub mod syscall_line;
pub mod syscall_pids;
pub mod syscall_trace;
pub mod tempdir;
pub mod testgate;
mod tools;
pub mod tracefs;
pub mod traceline;
pub mod written;

pub use beneath::{Beneath, BeneathError, Entry as BeneathEntry, Mounts};
pub use block_stream::BlockStream;
pub use cleanup::{CleanupProblem, HandlerError, cleanup_all, install_cleanup_handler};
pub use cmd::CommandError;
pub use dev::{BadDevNum, DevExtent, DevNum};
pub use fiemap::{Extent, FiemapError, Unplaceable, fiemap, fiemap_path};
pub use fs::{FOREIGN_MOUNT_FLAGS, FsError, FsKind, ImageOrigin, JournalLayout};
pub use leftovers::{LeftoverError, Scope, Sweep};
pub use loopdev::{LoopDevice, LoopError, LoopOptions};
pub use prereq::PrereqError;
pub use record::{RecordError, RecordOptions, RecordingDisk};
pub use scratch::{
    DeviceRole, FileExtents, ScratchDevice, ScratchError, ScratchFs, ScratchOptions,
};
pub use supervise::{
    Change, ChildExit, CommandSpec, FreedBlocks, IoUring, NO_BPF, Observer, Overlay,
    SuperviseError, Supervision, SyncKind, TouchedFile, TracedDir, supervise,
};
pub use tempdir::{RunTempDir, TempDirError};
pub use tools::ToolMissing;
pub use tracefs::{BlockTracer, CapturedTrace, DEFAULT_BUFFER_KB, TraceError, now_mono_ns};
pub use traceline::{BioRecord, TraceLine, TraceLineError};

/// Any error of this crate, for callers that do not care which layer failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(transparent)]
    Prereq(#[from] PrereqError),
    #[error(transparent)]
    Loop(#[from] LoopError),
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(transparent)]
    Scratch(#[from] ScratchError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Fiemap(#[from] FiemapError),
    #[error(transparent)]
    TempDir(#[from] TempDirError),
    #[error(transparent)]
    Record(#[from] RecordError),
}
