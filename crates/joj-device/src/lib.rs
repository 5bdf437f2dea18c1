//! joj's device layer: an emulated eMMC that every design in joj runs on and that block traces
//! replay through.
//!
//! The stack, bottom up: a `Medium` (emulated NAND: timed program/read/erase of pages with an
//! OOB area, enforcing erase-before-write and in-order programming, tearing what is under way
//! on power loss) → the page-mapping `Ftl` (over-provisioning, write frontiers, GC with pure
//! victim policies, TRIM, checkpoints + OOB scan recovery) → `Emmc` (host command timing,
//! volatile write-back cache, flush, FUA / reliable write, packed commands, discard), which
//! implements the `BlockDevice` contract. `replay` and `workload` drive it; `selfcheck` prints a
//! profile's headline figures; `image` saves a device to a file and opens it again. `xftl` is
//! X-FTL (SIGMOD '13): transactions on `Ftl` and `Emmc` (the X-L2P table, commit table and
//! recovery, `TransactionalDevice`; `docs/formats/xftl.md`). `iftl` is the i-FTL alternative:
//! mapping tables in byte-addressable NVM (`nvm`), lazy GC and data tags
//! (`docs/formats/iftl.md`); `iftl_device` puts host command timing on it. Both transactional
//! FTLs keep their blocks in one `block_table::BlockTable`. `ejournal` is the eMMC paper's
//! optimized journal (its rules: `ejournal::rules`) as a replay mode.
//! Design, figures and limits: `docs/device-model.md`.
//!
//! It is a model, not a driver: time is simulated (nanoseconds, never the wall clock), every
//! random choice comes from one seed, and a run is reproduced exactly by its seed.
//!
//! Invariants kept: a flushed or FUA-written page reads back exactly after a power loss at any
//! instant; any other page reads some version written since its last durable one; GC never
//! loses a valid page (see `ftl` for the argument).

pub mod addr;
pub mod aging;
pub mod block;
mod block_table;
mod cache;
pub mod completion;
pub mod config;
pub mod counters;
pub mod ejournal;
pub mod ejournal_replay;
pub mod emmc;
pub mod error;
pub mod ftl;
pub mod gc;
pub mod host;
pub mod iftl;
pub mod iftl_device;
pub mod image;
pub mod medium;
pub mod memory_budget;
pub mod nand;
pub mod nvm;
pub mod profile_source;
pub mod profile_text;
pub mod queue;
pub mod replay;
pub mod replay_devices;
pub mod requests;
pub mod rng;
pub mod selfcheck;
pub mod trace_file;
pub mod workload;
pub mod xftl;

pub use addr::{BlockId, Lpn, Oob, Ppn};
pub use aging::{Ageable, Aging, AgingReport, age};
pub use block::{
    BlockDevice, DeviceGeometry, PackedWrite, TransactionalDevice, WriteFlags, WriteKind,
};
pub use completion::{Completion, CompletionReport, HostCompletion};
pub use config::{
    CacheConfig, DataMode, FtlConfig, GcPolicy, Geometry, IftlConfig, NvmTiming, Profile,
    ReliableWriteAtomicity, Timing,
};
pub use counters::{Counters, LatencySummary};
pub use ejournal::{EjournalError, EjournalStats};
pub use ejournal_replay::replay_ejournal;
pub use emmc::{Emmc, MAX_CLOCK_NS, PowerCut};
pub use error::{
    DeviceError, FtlError, ImageError, MediumError, NvmError, ProfileError, ReplayError,
};
pub use ftl::{Ftl, RecoveryReport};
pub use host::{Composed, HostConfig, HostHere};
pub use iftl::{IFtl, IftlCanary, IftlRecoveryReport, IftlStats};
pub use iftl_device::{IftlDevice, IftlHostCounters, IftlPowerCut};
pub use medium::{CommitEntry, Medium};
pub use nand::NandMedium;
pub use nvm::{Nvm, NvmStats};
pub use profile_source::{ProfileRef, ProfileSource};
pub use replay::{
    AgingSpec, DeviceSummary, OpsBasis, ReplayOptions, ReplayReport, Replayer, replay,
    replay_requests, replay_with,
};
pub use replay_devices::{
    DeviceProfile, DevicesReport, check_assignment, replay_devices, resolve_device,
};
pub use requests::{Requests, Scan, Selection};
pub use selfcheck::{SelfCheckReport, self_check};
pub use trace_file::{LoadedTrace, MAX_HELD_RECORDS, TraceFile, load_trace};
pub use workload::{
    DeviceRunReport, IoKind, Pattern, Phase, SyncKind, WallTime, WorkloadReport, WorkloadSpec,
    run_workload, run_workload_observed,
};
pub use xftl::{TXN_BIT, Tid};
