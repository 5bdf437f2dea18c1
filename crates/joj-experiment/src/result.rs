//! The run result: one JSON document per workload run (DESIGN.md, "Run result"). Tables,
//! plots and comparisons are made from these documents, never from scraped text.

use joj_trace::FileRole;
use joj_trace::totals::{BlockPerTxn, BlockTotals};
use joj_vfs::IoCounters;
use joj_workload::PaperOutcome;
use joj_workload::latency::LatencySummary;
use joj_workload::paper::PaperWorkload;
use serde::{Deserialize, Serialize};

/// Bytes written through the VFS (or the file workload, or a traced command's write calls),
/// by file role.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileBytes {
    #[serde(rename = "database_bytes", alias = "database")]
    pub database: u64,
    #[serde(rename = "wal_bytes", alias = "wal")]
    pub wal: u64,
    #[serde(rename = "rollback_journal_bytes", alias = "rollback_journal")]
    pub rollback_journal: u64,
    #[serde(rename = "other_bytes", alias = "other")]
    pub other: u64,
}

impl FileBytes {
    /// The count of files of `role`.
    pub fn of_role_mut(&mut self, role: joj_trace::FileRole) -> &mut u64 {
        match role {
            joj_trace::FileRole::Database => &mut self.database,
            joj_trace::FileRole::Wal => &mut self.wal,
            joj_trace::FileRole::RollbackJournal => &mut self.rollback_journal,
            joj_trace::FileRole::Other => &mut self.other,
        }
    }
}

impl From<&IoCounters> for FileBytes {
    fn from(c: &IoCounters) -> Self {
        FileBytes {
            database: c.database_bytes,
            wal: c.wal_bytes,
            rollback_journal: c.rollback_journal_bytes,
            other: c.other_bytes,
        }
    }
}

/// System calls issued in the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Syscalls {
    pub fsync: u64,
    pub fdatasync: u64,
    pub dir_syncs: u64,
    pub write_calls: u64,
    pub write_bytes: u64,
    /// Reads through the VFS; `None` where nothing measured them (a traced command).
    pub read_calls: Option<u64>,
    pub read_bytes: Option<u64>,
    pub truncates: u64,
    pub deletes: u64,
}

impl From<&IoCounters> for Syscalls {
    fn from(c: &IoCounters) -> Self {
        Syscalls {
            fsync: c.fsync,
            fdatasync: c.fdatasync,
            dir_syncs: c.dir_syncs,
            write_calls: c.write_calls,
            write_bytes: c.write_bytes,
            read_calls: Some(c.read_calls),
            read_bytes: Some(c.read_bytes),
            truncates: c.truncates,
            deletes: c.deletes,
        }
    }
}

/// What ran, on what: enough to rerun it and to know which SQLite and kernel produced it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunConfig {
    pub joj_version: String,
    pub sqlite_version: String,
    pub kernel: String,
    /// `host` or a scratch filesystem kind (`ext4`, `xfs`, ...).
    pub fs: String,
    pub mount_options: Option<String>,
    /// `db` or `file`.
    pub workload: String,
    pub op: String,
    pub journal_mode: Option<String>,
    pub synchronous: Option<String>,
    pub sync_call: Option<String>,
    pub page_size: Option<u32>,
    pub start: Option<String>,
    /// Worker threads of the workload; `None` for a traced command (its processes and
    /// threads are `command.tasks`).
    pub threads: Option<u32>,
    pub statements_per_txn: Option<u32>,
    pub tables: Option<u32>,
    pub attached_dbs: Option<u32>,
    pub record_bytes: u64,
    pub interval_ms: Option<u64>,
    pub keys: Option<String>,
    pub file_sync: Option<String>,
    pub file_size_bytes: Option<u64>,
    pub seed: u64,
    pub trace: bool,
    /// The CPUs were held out of idle states for the run (`--cpus-awake`); documents made
    /// before the option read as `false`.
    #[serde(default)]
    pub cpus_awake: bool,
    /// The X-FTL paper workload that ran (`op` then holds its name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper: Option<PaperWorkload>,
}

/// One cross-check between two independent counts (e.g. VFS bytes vs block-layer bytes).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

/// The run result document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub config: RunConfig,
    /// Transactions (database workloads) or I/O operations (file workloads) over all threads.
    pub transactions: u64,
    pub elapsed_s: f64,
    /// Transactions (or operations) per second.
    pub ops_per_sec: f64,
    /// Per-transaction latency; `None` where it was not measured (a traced command).
    pub latency_us: Option<LatencySummary>,
    pub syscalls: Syscalls,
    pub files: FileBytes,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockTotals>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_per_txn: Option<BlockPerTxn>,
    /// FUA and preflush bios the filesystem submitted (the loop device has no FUA, so the
    /// block layer turns them into flushes before they are issued; see docs/measurement.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bio_intent: Option<BioIntent>,
    /// FS journal bytes written while SQLite synced each kind of file (the WAL and rollback
    /// journal parts are the journaling of journal, WALDIO Table 1's "JOJ" column).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fs_journal_by_synced_file: Option<FileBytes>,
    /// File data whose place on the device could not be known at some extent snapshot (not yet
    /// allocated, inline, encoded, outside btrfs's chunk map); a request to blocks that no
    /// snapshot places was classified as metadata.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unplaced_data: Vec<UnplacedData>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plot_file: Option<String>,
    pub checks: Vec<Check>,
    /// The run's trace replayed through an emulated device (`joj bench --device`), with
    /// `modeled_ops_per_sec` in transactions per modeled second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<joj_device::DeviceSummary>,
    /// With `--journal-device`: each device's own section (`device` is then the run as the
    /// host sees it, over both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<Vec<DeviceSection>>,
    /// What the waldio VFS did in the window (WALDIO modes only): direct log writes, syncs,
    /// group writes, preallocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waldio: Option<joj_waldio::WaldioCounters>,
    /// What an X-FTL paper workload did in the window, and the database it left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper: Option<PaperOutcome>,
    /// The `xftl` mode's file layer and commit paths in the window (its `device` section is
    /// the device itself, not a replayed trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xftl: Option<crate::txn_device::TxnDeviceReport>,
    /// What pacing did (`joj bench --pace`): the host ran at the modeled device's speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<crate::pace::PaceReport>,
    /// A command joj ran and traced (`joj trace -- COMMAND`): how it ended, its files, what
    /// supervising it cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandReport>,
    /// The workload's threads, in order: context switches, CPU time and run-queue delay over
    /// each thread's transactions or operations (`/proc/thread-self`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<joj_workload::ThreadUsage>,
    /// What the host spent in the window, measured in the run itself (`crate::host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::host::HostMeasured>,
    /// Images on a disk (`--image-dir`): the disk's write requests in the window next to the
    /// loop devices' — its own writes are the image files' metadata, a cost no block device has
    /// (docs/measurement.md, "Known limits"), and any other writer's of that disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing: Option<crate::backing::BackingDisk>,
    /// Images on a disk whose counters could not be read at one end of the window: why, in
    /// place of `backing` (not counted is not zero).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_error: Option<String>,
    /// With a device: the modeled time — the profile's host for the measured host time, plus
    /// the device model's — and whether the kernel was paced while the trace was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modeled: Option<crate::host::Modeled>,
}

impl RunResult {
    /// A result with the figures every run has — what ran, its transactions over `elapsed_s`,
    /// their latencies and the system calls counted — and no section of a trace, device,
    /// paper workload or pacing yet.
    pub fn measured(
        config: RunConfig,
        transactions: u64,
        elapsed_s: f64,
        latencies_ns: Vec<u64>,
        counters: &IoCounters,
    ) -> RunResult {
        assert!(
            elapsed_s.is_finite() && elapsed_s >= 0.0,
            "a run's elapsed time is a finite, non-negative number of seconds: {elapsed_s}"
        );
        // (Bytes by role need not add up to `write_bytes` here: a window may begin or end while
        // another thread is between the two counts.)
        let files = FileBytes::from(counters);
        RunResult {
            config,
            transactions,
            elapsed_s,
            ops_per_sec: transactions as f64 / elapsed_s.max(1e-9),
            latency_us: Some(LatencySummary::from_ns(latencies_ns)),
            syscalls: Syscalls::from(counters),
            files,
            block: None,
            block_per_txn: None,
            bio_intent: None,
            fs_journal_by_synced_file: None,
            unplaced_data: vec![],
            trace_file: None,
            plot_file: None,
            checks: vec![],
            device: None,
            devices: None,
            waldio: None,
            paper: None,
            xftl: None,
            pace: None,
            command: None,
            threads: vec![],
            host: None,
            backing: None,
            backing_error: None,
            modeled: None,
        }
    }
}

/// File data the classifier could not place on the device at some extent snapshot. It can
/// attribute no request there; a request to blocks that no snapshot of any file places counts
/// as filesystem metadata. One entry per file and reason, the largest range seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnplacedData {
    pub path: String,
    pub role: FileRole,
    /// Why the range has no device location.
    pub reason: String,
    /// Snapshots of the file that had such a range.
    pub snapshots: u64,
    /// The largest unplaced byte count in one snapshot.
    pub max_bytes: u64,
}

/// Flags of the bios as the filesystem submitted them (block_bio_queue).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BioIntent {
    pub fua_writes: u64,
    pub preflush_writes: u64,
    pub write_bios: u64,
}

/// One file the command touched.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileReport {
    /// Path relative to the directory the command ran in.
    pub path: String,
    /// `database`, `wal`, `rollback_journal`, `shm` or `other`.
    pub kind: String,
    /// File data written to the device (block layer), in bytes.
    pub data_bytes: u64,
    /// Of that, written by one-time set-up work (an overlay copy-up of the file, waldio
    /// preallocating it): not a commit's.
    #[serde(default)]
    pub setup_data_bytes: u64,
    /// FS journal bytes written while a sync call on this file was under way.
    pub fs_journal_bytes_in_syncs: u64,
    /// Filesystem metadata written while a sync call on this file was under way (btrfs's
    /// fsync log tree is metadata; absent in documents made before 2026-11-27).
    #[serde(default)]
    pub metadata_bytes_in_syncs: u64,
    pub fsync: u64,
    pub fdatasync: u64,
    pub sync_file_range: u64,
    /// Writes on O_DSYNC / O_SYNC descriptors or with RWF_DSYNC / RWF_SYNC.
    pub sync_writes: u64,
    /// write, pwrite64, writev, pwritev, pwritev2 calls on it, and sendfile64,
    /// copy_file_range and splice calls with it for output, and the bytes they wrote.
    #[serde(default)]
    pub write_calls: u64,
    #[serde(default)]
    pub write_bytes: u64,
    /// For a WAL: writes of its 32-byte header (each time SQLite starts or restarts it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub wal_header_writes: u64,
    /// unlink calls on it, renames from it and renames over it.
    pub removals: u64,
    /// truncate / ftruncate calls on it.
    pub truncates: u64,
    /// Whether it is gone at the end (deleted, or replaced by a rename).
    pub deleted: bool,
    /// Syncs submitted through io_uring and read from its submission queue (fsync,
    /// fdatasync, sync_file_range, synchronous writes): not in the counts above, and their
    /// FS journal not in `fs_journal_bytes_in_syncs` (joj cannot time them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub io_uring_syncs: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a traced command did through io_uring, which joj sees only in part: a sync submitted
/// on a ring is no system call the supervisor stops at.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoUringReport {
    /// Rings set up (`io_uring_setup`).
    pub rings: u64,
    /// `io_uring_enter` calls, and how many of them carried submissions joj could not read
    /// (a kernel-polled ring, a ring in the command's own memory, a process with two rings on
    /// one inode).
    pub enters: u64,
    pub unreadable_enters: u64,
    /// Submissions handed to the kernel by those calls.
    pub submissions: u64,
    /// Syncs read from the rings (per file in `files[].io_uring_syncs`), and those whose file
    /// is unknown (a registered file, or not a regular file).
    pub syncs: u64,
    pub syncs_of_unknown_files: u64,
    /// Opens submitted on a ring: where they wrote, if anywhere, is not seen.
    pub opens: u64,
}

/// The starting directory's copy on the scratch filesystem.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct StartDirCopy {
    /// Files, directories and links below it.
    pub entries: u64,
    /// Bytes of its regular files.
    pub bytes: u64,
}

/// A traced command: how it ended and what supervising it cost.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommandReport {
    pub argv: Vec<String>,
    /// The directory it ran in, as it named it.
    pub cwd: String,
    /// The directory it was started from and saw as its own, copied onto the scratch
    /// filesystem (`start_dir_copy`) or through an overlay whose upper layer is there; `None`
    /// when it ran in an empty directory of the scratch filesystem (`--empty`).
    #[serde(default)]
    pub start_dir: Option<String>,
    /// What of `start_dir` was copied before the run (the command saw the copy, bind mounted
    /// where the directory is); `None`: it saw it through an overlay.
    #[serde(default)]
    pub start_dir_copy: Option<StartDirCopy>,
    /// Why `start_dir` was seen through an overlay rather than copied (`--overlay`, or what
    /// made it unfit for a copy).
    #[serde(default)]
    pub start_dir_not_copied: Option<String>,
    /// Its exit status, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Processes and threads traced.
    pub tasks: u64,
    /// Times a task waited for joj (opens, unlinks, renames, truncates, io_uring calls), and
    /// the time joj took to let it go (the supervisor's overhead on the command).
    pub stops: u64,
    pub stopped_s: f64,
    /// System call events read from the kernel's tracepoints (no stop).
    #[serde(default)]
    pub syscall_events: u64,
    /// Times joj woke to read those events while the command ran, and once at its end: each a
    /// wake-up of a thread of joj on the command's CPUs. `None` for a replay (no events are
    /// read) and in documents from before it was counted.
    #[serde(default)]
    pub event_reads: Option<u64>,
    /// Opens seen by joj's BPF observer, each without a stop; `None` when
    /// every open stopped (the observer could not start, a replay, documents from before it).
    #[serde(default)]
    pub opens_by_bpf: Option<u64>,
    /// Lookups of where the opens seen by BPF led (a path walk in the command's root, for an
    /// open that may write or one inside the traced directory): one per task and name per read
    /// of the events; `None` as for `opens_by_bpf` (and in documents from before 2026-11-30).
    #[serde(default)]
    pub open_lookups: Option<u64>,
    /// Opens that returned a descriptor joj could not name (a record lost, a relative path
    /// with nothing to resolve it against): a sync on it is resolved as for an inherited one.
    #[serde(default)]
    pub opens_unseen: u64,
    /// Unlinks seen without a stop (on ext4) whose path joj could not name: on no file.
    #[serde(default)]
    pub unlinks_unseen: u64,
    /// `ftruncate`s seen without a stop (on ext4) on a descriptor joj could not name: on no
    /// file, nor are the blocks they freed.
    #[serde(default)]
    pub truncates_unseen: u64,
    /// What joj's BPF observer could not see (records its ring had no room for — opens,
    /// unlinks, extents ext4 freed —, tasks its maps had no room for, freed extents dropped
    /// at joj's bounds); not 0: the figures may miss what was lost.
    #[serde(default)]
    pub bpf_records_lost: u64,
    /// Sync calls on descriptors joj did not see opened and could not resolve (not in any
    /// file's counts).
    #[serde(default)]
    pub unresolved_syncs: u64,
    /// `syncfs` / `sync` calls.
    pub whole_fs_syncs: u64,
    /// `fsync` / `fdatasync` of directories.
    pub dir_syncs: u64,
    pub files: Vec<FileReport>,
    /// Regular files outside the scratch filesystem the command opened for writing (their
    /// writes are not in the trace), by path, at most [`OUTSIDE_PATHS_KEPT`] of them;
    /// `outside_writes_total` counts them all.
    #[serde(default)]
    pub outside_writes: Vec<String>,
    #[serde(default)]
    pub outside_writes_total: u64,
    /// io_uring use, when the command set up or entered a ring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_uring: Option<IoUringReport>,
    /// Whether the scratch filesystem was full when the command ended: not even
    /// [`FULL_BELOW_BYTES`] more could be allocated on it.
    #[serde(default)]
    pub filesystem_full: bool,
    /// One-time set-up work seen in the window and what the device did meanwhile: reported
    /// apart from the per-commit figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<SetupReport>,
    /// Each SQLite database's commits and their cost.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub databases: Vec<DatabaseReport>,
    /// The last lines the command wrote to its standard error (at most 20; joj passes all of
    /// it on as it comes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr_tail: Vec<String>,
}

/// One-time set-up work in a traced command's window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetupReport {
    /// What was set up, in time order.
    pub work: Vec<SetupWork>,
    /// The block requests issued while it ran (every request of the device meanwhile, the
    /// command's other threads' included).
    pub block: BlockTotals,
}

/// One piece of set-up work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetupWork {
    /// `overlay copy-up` (a file the command first wrote copied up from its directory), or
    /// what a joj VFS marked (`waldio-preallocation`).
    pub what: String,
    /// The file, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// When it ran, seconds from the window's start, and for how long.
    pub start_s: f64,
    pub duration_s: f64,
}

/// How many paths written outside the scratch filesystem a report lists.
pub const OUTSIDE_PATHS_KEPT: usize = 100;
/// A scratch filesystem on which this much more cannot be allocated when the command ends was
/// full (1 MiB: what a failing write of a program typically asked for is in that range).
pub const FULL_BELOW_BYTES: u64 = 1 << 20;

impl CommandReport {
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// One device of a run replayed with a profile per device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceSection {
    /// `major:minor` in the trace.
    pub dev: String,
    /// `main` or `journal`.
    pub role: String,
    pub device: joj_device::DeviceSummary,
}

/// One database's commits and what they cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatabaseReport {
    /// The database file, as in `files[].path`.
    pub path: String,
    /// The journal mode most of its commits ran in, as its files show: `wal`, `waldio`,
    /// `delete`, `truncate`, `persist`, or `rollback` (a rollback journal whose end was not seen).
    pub journal_mode: String,
    /// Its commits in other modes, in words (`1 commit(s) in delete (PRAGMA journal_mode=WAL
    /// itself commits once through a rollback journal)`); absent when all ran in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_modes: Option<String>,
    /// Commits, when they could be counted.
    pub commits: Option<u64>,
    /// How they were counted, or why they could not be.
    pub commits_counted_by: String,
    /// Its files, with the data each had written (set-up work excluded).
    pub files: Vec<String>,
    /// Data written to its files, set-up work excluded.
    pub data_bytes: u64,
    /// Of that, to its log (WAL or rollback journal).
    pub log_data_bytes: u64,
    /// FS journal written while its files were being synced.
    pub fs_journal_bytes_in_syncs: u64,
    /// Filesystem metadata written while its files were being synced (btrfs's fsync log).
    #[serde(default)]
    pub metadata_bytes_in_syncs: u64,
    /// Of that, while its log was being synced: the journaling of journal.
    pub joj_bytes: u64,
    /// fsync, fdatasync, sync_file_range and synchronous writes on its files, and the syncs of
    /// its directory.
    pub syncs: u64,
    pub per_commit: Option<PerCommit>,
}

impl DatabaseReport {
    /// Its mode, with the commits in other modes said after it: `wal` or `wal, and 1 commit(s)
    /// in delete (…)`.
    pub fn mode_said(&self) -> String {
        match &self.other_modes {
            Some(o) => format!("{}, and {o}", self.journal_mode),
            None => self.journal_mode.clone(),
        }
    }
}

/// [`DatabaseReport`]'s figures divided by its commits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PerCommit {
    pub data_bytes: f64,
    pub log_data_bytes: f64,
    pub fs_journal_bytes_in_syncs: f64,
    #[serde(default)]
    pub metadata_bytes_in_syncs: f64,
    pub joj_bytes: f64,
    pub syncs: f64,
}
