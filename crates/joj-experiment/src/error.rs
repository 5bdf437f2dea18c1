//! What can go wrong in an experiment: options no stack can run ([`StackError`], caught before
//! anything is made), and failures of the run or of a layer below ([`ExperimentError`]). Each
//! message names the cause and, where there is one, the fix.

use std::path::PathBuf;

use joj_workload::{JournalMode, WorkloadError};

/// A combination of options no stack runs; found before any filesystem, device or file is
/// made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StackError {
    #[error(
        "--trace needs a scratch filesystem (e.g. --fs ext4): joj traces only loop devices it made for the run"
    )]
    TraceNeedsScratch,
    #[error(
        "--device replays the run's block trace, which needs a scratch filesystem: add --fs ext4 (or ext4-writeback, xfs, btrfs, ...)"
    )]
    DeviceNeedsScratch,
    #[error(
        "--journal xftl and --journal iftl run SQLite on an emulated transactional device: add --device <profile> (galaxy-s5, emmc5, openssd, openssd-iftl or a profile JSON file)"
    )]
    XftlNeedsDevice,
    #[error(
        "xftl and iftl run one connection per thread, each on its own database: at most 8 \
         threads, no --attached"
    )]
    XftlOneConnection,
    #[error(
        "--completion applies to a replayed block trace; --journal xftl runs on the device model \
         directly and has none: drop --completion"
    )]
    CompletionXftl,
    #[error(
        "--pace feeds the device model from a live block trace: run it on a scratch filesystem (--fs ext4, ...)"
    )]
    PaceNeedsScratch,
    #[error("--pace paces SQLite transactions; the file workloads are not paced")]
    PaceFileWorkload,
    #[error(
        "--journal-device needs a filesystem with an external journal device: use --fs \
         ext4-extjournal"
    )]
    JournalDeviceNeedsExtJournal,
    #[error(
        "--journal-device replays two devices that overlap; --pace and --completion time one \
         device back to back; fix: drop one of them"
    )]
    JournalDeviceOneDeviceOption,
    #[error(
        "--emmc-journal replays the run's trace through --device with the optimized journal: it \
         cannot be combined with --pace (which paces the kernel by the unchanged trace) or \
         --journal-device (one device only); fix: drop the other option"
    )]
    EmmcJournalOptions,
    #[error(
        "--emmc-journal rewrites the filesystem journal of a replayed block trace; --journal xftl \
         runs on the device model directly, with no filesystem journal to rewrite; fix: drop \
         --emmc-journal, or name joj compare's --modes without xftl"
    )]
    EmmcJournalXftl,
    /// Refused before the run: the replay after it could only fail.
    #[error(
        "--journal-region-mib {region_mib}: the optimized journal's region goes above the \
         filesystem's blocks on --device, whose whole capacity is {} MiB ({capacity_bytes} \
         bytes); fix: a region well below {} MiB (the paper used 32–512), or a larger profile",
        .capacity_bytes >> 20, .capacity_bytes >> 20
    )]
    EmmcJournalRegionLargerThanDevice {
        region_mib: u64,
        capacity_bytes: u64,
    },
    /// Refused before the run: the replay after it could only fail.
    #[error(
        "--emmc-journal replays the trace of one device, and --fs ext4-extjournal traces two \
         (the filesystem's and its journal's); fix: --fs ext4 (its journal inside), or drop \
         --emmc-journal"
    )]
    EmmcJournalOneDevice,
    #[error(
        "--gc-validity {0}: the share of valid pages in GC victims must be in 1..=99 percent; \
         fix: --gc-validity between 1 and 99, or leave it out (no ageing)"
    )]
    AgingPercent(u32),
    #[error("-p/--dir names a host directory; it cannot be combined with a scratch --fs")]
    DirWithScratch,
    #[error(
        "joj compare traces every row, which needs a scratch filesystem: use --fs ext4 (or another scratch kind)"
    )]
    CompareNeedsScratch,
    #[error("joj compare needs at least one mode (--modes)")]
    NoModes,
    #[error("joj speed gives every ratio against stock WAL: include wal in --modes")]
    SpeedNeedsWal,
    /// `joj speed --modes …,xftl`: speed has no device to run them on.
    #[error(
        "joj speed times modes on --fs, a real filesystem, and {0} runs SQLite on an emulated \
         transactional device, which speed does not model (it has no --device); fix: drop {0} \
         from --modes, and time it with `joj bench -j {0} --device <profile>` or `joj compare \
         --device <profile>`"
    )]
    SpeedOnDevice(JournalMode),
    #[error(
        "joj restart measures delete, truncate, persist, wal, xftl and iftl; {0} has no log to recover from or is not crash-safe"
    )]
    NotRestartable(JournalMode),
    #[error(
        "joj restart measures the synthetic workload (--workload xftl-synthetic), the paper's Table 5 setup"
    )]
    RestartWorkload,
    #[error("{what} must be at least 1; fix: give 1 or more")]
    Zero { what: &'static str },
}

/// Errors of an experiment.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExperimentError {
    #[error(transparent)]
    Stack(#[from] StackError),
    /// `joj device calibrate` cannot measure what it was given.
    #[error("calibrate: {reason}")]
    Calibrate { reason: String },
    #[error(transparent)]
    Workload(WorkloadError),
    #[error(transparent)]
    Linux(#[from] joj_linux::Error),
    #[error(transparent)]
    CpusAwake(#[from] joj_linux::cpu_latency::CpuLatencyError),
    #[error(transparent)]
    Vfs(#[from] joj_vfs::VfsError),
    #[error("registering the waldio VFS: {0}")]
    Waldio(#[from] joj_waldio::WaldioError),
    #[error("the xftl VFS: {0}")]
    Atomic(#[from] joj_atomic::AtomicError),
    #[error("{what}: {source}")]
    FlashFs {
        what: &'static str,
        #[source]
        source: joj_atomic::FsError,
    },
    #[error("{what}: {source}")]
    Device {
        what: &'static str,
        #[source]
        source: joj_device::DeviceError,
    },
    #[error("the device image: {0}")]
    Image(#[from] joj_device::ImageError),
    #[error("replaying the run through the device model: {0}")]
    Replay(#[from] joj_device::ReplayError),
    #[error("replaying the run with the optimized journal: {0}")]
    Ejournal(#[from] joj_device::EjournalError),
    #[error(transparent)]
    Trace(#[from] joj_trace::error::TraceError),
    #[error("I/O error while {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    CleanupHandler(#[from] joj_linux::HandlerError),
    #[error("{dir} {problem}", dir = .dir.display())]
    HostDir {
        dir: PathBuf,
        problem: HostDirProblem,
    },
    #[error(
        "the file layer is full while {what}: it takes a sixth of the {device_mib} MiB device, {file_mib} MiB per file, too little for this workload; give the device more blocks (--blocks-per-plane) or make the workload smaller"
    )]
    FileLayerFull {
        what: String,
        device_mib: u64,
        file_mib: u64,
    },
    #[error("the power cut never came: transaction {txn} {why}")]
    NoPowerCut { txn: u64, why: String },
    #[error("no device is attached to the xftl VFS (the window began without one)")]
    NoDeviceAttached,
    #[error(transparent)]
    Supervise(#[from] joj_linux::SuperviseError),
    #[error(transparent)]
    Syscalls(#[from] joj_workload::syscalls::SyscallsError),
    #[error(
        "--dir {dir}: {why}; fix: give a relative path without `..` (e.g. `--dir data`); joj \
         creates it inside the scratch filesystem it makes for the command", dir = .dir.display()
    )]
    CommandDir { dir: PathBuf, why: &'static str },
    #[error(
        "joj trace gives the command the directory it was started from, {dir}, through an \
         overlay (what the command writes lands on the scratch filesystem); an overlay does not \
         show what is mounted below its directory ({mounts}), so the command would miss it; fix: start \
         joj trace from a directory with no mount below it (your project's directory), or pass \
         --empty to run the command in an empty directory of the scratch filesystem",
        dir = .dir.display(),
        mounts = .mounts.iter().map(|m| m.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    StartDirHasMounts { dir: PathBuf, mounts: Vec<PathBuf> },
    #[error("joj crash --fs: {0}")]
    CrashStates(String),
    #[error(transparent)]
    CrashFs(#[from] crate::kernel_crash_states::error::CrashFsError),
    #[error("withdraw/deposit: {0}")]
    AppTxn(#[from] joj_atomic::AppTxnError),
    #[error("withdraw/deposit: {what}: {source}")]
    WithdrawDepositSql {
        what: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "withdraw/deposit: after the run the balances sum to {total} (expected {expected}) and \
         the ledger holds {ledger_bytes} bytes (expected {expected_ledger_bytes})"
    )]
    WithdrawDepositLost {
        total: i64,
        expected: i64,
        ledger_bytes: u64,
        expected_ledger_bytes: u64,
    },
    #[error("withdraw/deposit: PRAGMA integrity_check says: {0}")]
    WithdrawDepositCorrupt(String),
    #[error(
        "withdraw/deposit runs application transactions on a transactional device, and {0} is \
         not one; fix: --journal xftl or --journal iftl"
    )]
    WithdrawDepositMode(JournalMode),
    #[error("the measured window never ended")]
    WindowNeverEnded,
    #[error("the scratch filesystem is still in use when it must be closed")]
    ScratchStillShared,
}

impl From<WorkloadError> for ExperimentError {
    /// A window error comes back as the experiment error it was raised as.
    fn from(e: WorkloadError) -> Self {
        match e {
            WorkloadError::Window(inner) => match inner.downcast::<ExperimentError>() {
                Ok(own) => *own,
                Err(other) => ExperimentError::Workload(WorkloadError::Window(other)),
            },
            other => ExperimentError::Workload(other),
        }
    }
}

impl From<joj_workload::ConfigError> for ExperimentError {
    fn from(e: joj_workload::ConfigError) -> Self {
        ExperimentError::Workload(e.into())
    }
}

impl ExperimentError {
    /// Wrap this error for a workload's [`joj_workload::Window`] (it comes back unchanged
    /// through `From<WorkloadError>`).
    pub fn into_window(self) -> WorkloadError {
        WorkloadError::Window(Box::new(self))
    }

    /// The workload error inside, when this is one.
    pub fn workload(&self) -> Option<&WorkloadError> {
        match self {
            ExperimentError::Workload(w) => Some(w),
            _ => None,
        }
    }
}

/// Why a host directory (`-p/--dir`) cannot hold a run's files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostDirProblem {
    #[error(
        "is missing and could not be made ({0}); fix: create it (mkdir -p) or give an existing \
         directory"
    )]
    CannotCreate(std::io::Error),
    #[error("is not a directory; fix: give a directory for the run's files")]
    NotDirectory,
    #[error("is on a read-only filesystem; fix: give a directory on a writable filesystem")]
    ReadOnly,
    #[error("cannot be written to ({0}); fix: give a directory you may write in")]
    NotWritable(std::io::Error),
}
