//! What a run is made of, decided in one place: [`Stack::resolve`] turns a workload (and, for a
//! database workload, its journal mode) and the run's options into the VFS chain SQLite opens
//! its files through, the settings SQLite is given, the filesystem or device the files live
//! on, whether the kernel's block requests are captured, whether the host is paced by a device
//! model, and whether the captured trace is replayed through one. Every experiment — bench,
//! compare, restart, crash — and every consumer of a result (cross-checks, result naming) asks
//! the stack; none branches on the journal mode itself.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use joj_device::Profile;
use joj_linux::FsKind;
use joj_vfs::SyncCall;
use joj_workload::{DbWorkload, FileWorkload, JournalMode, SqliteSetup, Synchronous};

use crate::error::StackError;

/// The accounting VFS every kernel-side database run opens its files through.
pub const ACCOUNTING_VFS: &str = joj_vfs::VFS_NAME;
/// The waldio VFS joj registers over its accounting VFS for WALDIO runs.
pub const WALDIO_VFS_NAME: &str = "waldio-joj";
/// The xftl VFS joj registers for X-FTL runs.
pub const XFTL_VFS_NAME: &str = "xftl-run";
/// Most threads of an `xftl` or `iftl` run (each thread's database and journal take two of
/// the file layer's 16 slots).
pub const MAX_DEVICE_THREADS: u32 = 8;
/// The runner's `xftl` VFS on the i-FTL device (`--journal iftl`).
pub const IFTL_VFS_NAME: &str = "iftl-run";

/// Where the run's files live, as the user names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsChoice {
    /// A directory of the host filesystem (a fresh temporary directory when `None`).
    Host(Option<PathBuf>),
    /// A scratch filesystem on a loop device made for the run and removed after it.
    Scratch(FsKind),
}

impl FsChoice {
    /// `host` or a scratch kind (`None`: the host), with Mobibench's `-p` directory.
    pub fn new(scratch: Option<FsKind>, dir: Option<PathBuf>) -> Result<FsChoice, StackError> {
        match (scratch, dir) {
            (None, dir) => Ok(FsChoice::Host(dir)),
            (Some(kind), None) => Ok(FsChoice::Scratch(kind)),
            (Some(_), Some(_)) => Err(StackError::DirWithScratch),
        }
    }

    pub fn name(&self) -> String {
        match self {
            FsChoice::Host(_) => "host".to_string(),
            FsChoice::Scratch(kind) => kind.to_string(),
        }
    }

    fn is_scratch(&self) -> bool {
        matches!(self, FsChoice::Scratch(_))
    }
}

/// The workload to run.
#[derive(Debug, Clone)]
pub enum Workload {
    Db(DbWorkload),
    File(FileWorkload),
}

impl Workload {
    /// Transactions (or file operations) over all threads.
    pub fn transactions(&self) -> u64 {
        match self {
            Workload::Db(w) => w.transactions * u64::from(w.threads),
            Workload::File(w) => w.ops_per_thread() * u64::from(w.threads),
        }
    }

    pub fn seed(&self) -> u64 {
        match self {
            Workload::Db(w) => w.seed,
            Workload::File(w) => w.seed,
        }
    }
}

/// How to run it, as the user asks.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub fs: FsChoice,
    /// Capture and classify the block requests of the scratch device(s).
    pub trace: bool,
    /// Where the trace file and plot go (no files when `None`).
    pub out_dir: Option<PathBuf>,
    /// Stem of the trace and plot file names (`None`: named after the stack and workload).
    pub label: Option<String>,
    /// Size of the scratch filesystem image.
    pub image_size_bytes: u64,
    /// Per-CPU tracefs ring buffer.
    pub trace_buffer_kb: u32,
    /// Incremented once per completed transaction (for a progress bar).
    pub progress: Option<Arc<AtomicU64>>,
    /// The emulated device and how the run uses it: `xftl` runs on it; every other mode's
    /// captured trace is replayed through it into the result's `device` section (`None`: no
    /// device, and none of its options).
    pub device: Option<DevicePlan>,
    /// Put the scratch filesystem's images in this directory (a disk, to measure it) instead of
    /// memory.
    pub image_dir: Option<PathBuf>,
    /// The loop devices reach their images with direct I/O (`losetup --direct-io=on`): the
    /// disk under `image_dir`, not the host's page cache, serves them.
    pub loop_direct_io: bool,
    /// Hold every CPU out of idle states for the run (`--cpus-awake`: a PM QoS CPU latency
    /// request of 0 µs, `joj_linux::cpu_latency`), so no completion waits for a CPU to wake.
    pub cpus_awake: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            fs: FsChoice::Host(None),
            trace: false,
            out_dir: None,
            label: None,
            image_size_bytes: 1 << 30,
            trace_buffer_kb: 64 * 1024,
            progress: None,
            device: None,
            image_dir: None,
            loop_direct_io: false,
            cpus_awake: false,
        }
    }
}

/// The VFS chain SQLite opens its files through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VfsChain {
    /// No SQLite: a file workload.
    None,
    /// joj's accounting VFS over the unix VFS (SQLite's own journal modes).
    Accounting,
    /// waldio over the accounting VFS: the WAL in direct I/O, the other files counted.
    WaldioOverAccounting(joj_waldio::WaldioOptions),
    /// The xftl VFS over the flash file layer of an emulated transactional device.
    TxnDevice(TxnDeviceKind),
}

/// The emulated transactional device a run on the device uses. [`Stack`] chooses it from the
/// journal mode ([`TxnDeviceKind::of`]); everything after asks the stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnDeviceKind {
    /// X-FTL's eMMC (`--journal xftl`).
    Xftl,
    /// The i-FTL device, mapping tables in NVM (`--journal iftl`).
    Iftl,
}

impl TxnDeviceKind {
    /// The transactional device `mode` runs on (`None`: a mode on a kernel filesystem).
    pub fn of(mode: JournalMode) -> Option<TxnDeviceKind> {
        match mode {
            JournalMode::Xftl => Some(TxnDeviceKind::Xftl),
            JournalMode::Iftl => Some(TxnDeviceKind::Iftl),
            _ => None,
        }
    }

    /// The runner's VFS over this device.
    pub fn vfs_name(self) -> &'static str {
        match self {
            TxnDeviceKind::Xftl => XFTL_VFS_NAME,
            TxnDeviceKind::Iftl => IFTL_VFS_NAME,
        }
    }
}

/// Where the files live.
#[derive(Debug, Clone)]
pub enum Storage {
    /// A host directory (a fresh temporary one when `None`).
    Host(Option<PathBuf>),
    /// A scratch filesystem on loop devices made for the run.
    Scratch {
        kind: FsKind,
        image_bytes: u64,
        /// Where its images go (`None`: in memory, under `/run/joj`).
        image_dir: Option<PathBuf>,
        /// Whether the loop devices reach their images with direct I/O.
        direct_io: bool,
    },
    /// The flash file layer on an emulated transactional eMMC in this process (boxed: a plan
    /// carries a whole profile).
    Device(Box<DevicePlan>),
}

/// An emulated device of a profile and the options that only go with a device: how it is aged,
/// how the host completes its commands, the external journal's own device, the optimized
/// journal, and whether the host is held to its speed.
#[derive(Debug, Clone)]
pub struct DevicePlan {
    /// The device's profile (`--device`).
    pub profile: Profile,
    /// Age the device before the run: GC victims hold about this share of valid pages, in
    /// percent, 1 to 99 (`--gc-validity`; `None`: a fresh device).
    pub aging_validity: Option<u32>,
    /// Host completion model applied to the replay (`--completion`; `None`: device time only).
    pub completion: Option<joj_device::HostCompletion>,
    /// Replay the external journal device of an `ext4-extjournal` run through this profile,
    /// each device through its own (`--journal-device`, `joj_device::replay_devices`; `None`:
    /// every device is a partition of `profile`).
    pub journal_device: Option<Profile>,
    /// Replay with the eMMC paper's optimized journal in a region of this many MiB
    /// (`--emmc-journal`, `joj_device::replay_ejournal`; `None`: the trace as captured).
    pub emmc_journal_mib: Option<u64>,
    /// Whether the host runs at the device's speed (`--pace`, `--no-pace`).
    pub pacing: PaceRequest,
}

impl DevicePlan {
    /// A fresh device of `profile`, with none of the options and the default pacing.
    pub fn new(profile: Profile) -> DevicePlan {
        DevicePlan {
            profile,
            aging_validity: None,
            completion: None,
            journal_device: None,
            emmc_journal_mib: None,
            pacing: PaceRequest::Default,
        }
    }
}

/// Whether the host is held to the device's speed, as the user asks: after each sync call and
/// transaction the run waits for a model of the device fed live from the kernel
/// (`crate::pace`). What was done, and why, is [`crate::host::Pacing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PaceRequest {
    /// Paced where it can be: a database workload on a scratch filesystem, one device, the
    /// trace as the kernel issued it.
    #[default]
    Default,
    /// Paced (`--pace`): the options that cannot be paced are an error.
    Paced,
    /// Not paced (`--no-pace`): faster, but the modeled figures then depend on this machine's
    /// speed wherever the kernel journals by the clock; the result says so.
    Unpaced,
}

/// Capturing the kernel's block requests in the measured window.
#[derive(Debug, Clone)]
pub struct Capture {
    pub buffer_kb: u32,
    /// Where the trace file and plot go (none when `None`).
    pub out_dir: Option<PathBuf>,
}

/// What a run is made of.
#[derive(Debug, Clone)]
pub struct Stack {
    /// The database workload's journal mode (`None` for a file workload).
    pub mode: Option<JournalMode>,
    pub vfs: VfsChain,
    /// What SQLite is told (`None` for a file workload).
    pub sqlite: Option<SqliteSetup>,
    /// The call the accounting VFS issues when SQLite syncs.
    pub sync_call: Option<SyncCall>,
    pub storage: Storage,
    pub capture: Option<Capture>,
    /// Hold the host to this device's time (`--pace`, or by default).
    pub pace: Option<DevicePlan>,
    /// Whether a replayed run is paced, and why (`None`: nothing is modeled).
    pub pacing: Option<crate::host::Pacing>,
    /// Replay the captured trace through this device after the run.
    pub replay: Option<DevicePlan>,
    /// Stem of the trace and plot file names.
    pub label: String,
    /// Hold the CPUs awake while it runs ([`RunOptions::cpus_awake`]).
    pub cpus_awake: bool,
}

impl Stack {
    /// The stack `workload` runs on with `opts`; every rule about which options go together
    /// is here.
    pub fn resolve(workload: &Workload, opts: &RunOptions) -> Result<Stack, StackError> {
        check_options(workload, opts)?;
        let device = opts.device.clone();
        let stack = match workload {
            Workload::File(_) => Stack {
                mode: None,
                vfs: VfsChain::None,
                sqlite: None,
                sync_call: None,
                storage: storage_of(opts),
                capture: capture_of(opts, device.is_some()),
                pace: None,
                pacing: device
                    .as_ref()
                    .map(|_| crate::host::Pacing::Not("file workloads are not paced".into())),
                replay: device,
                label: String::new(),
                cpus_awake: false,
            },
            Workload::Db(w) => db_stack(w, opts, device)?,
        };
        Ok(Stack {
            label: opts
                .label
                .clone()
                .unwrap_or_else(|| stack.default_label("bench", &opts.fs, workload)),
            cpus_awake: opts.cpus_awake,
            ..stack
        })
    }

    /// `host`, the scratch kind, or `xftl` (the result's `fs`).
    pub fn fs_name(&self) -> String {
        match &self.storage {
            Storage::Host(_) => "host".into(),
            Storage::Scratch { kind, .. } => kind.to_string(),
            Storage::Device(_) => self
                .mode
                .filter(|m| m.on_device())
                .map_or("xftl".into(), |m| m.to_string()),
        }
    }

    /// `<command>-<fs>-<mode>-<workload>` for a database workload, `<command>-<fs>-<access>-
    /// <sync>` for a file workload; `fs` as the user chose it.
    pub fn default_label(&self, command: &str, fs: &FsChoice, workload: &Workload) -> String {
        let fs = fs.name();
        match (workload, self.mode) {
            (Workload::Db(d), Some(mode)) => format!("{command}-{fs}-{mode}-{}", d.name()),
            (Workload::Db(d), None) => format!("{command}-{fs}-{}", d.name()),
            (Workload::File(f), _) => format!("{command}-{fs}-{}-{}", f.access, f.sync),
        }
    }

    /// The run writes through SQLite's WAL (stock or WALDIO).
    pub fn is_wal(&self) -> bool {
        self.sqlite.as_ref().is_some_and(|s| s.journal.is_wal())
    }
}

/// `journal_device` goes with a replay of an `ext4-extjournal` run, unpaced and without a
/// completion model (both time one device).
fn check_journal_device(fs: &FsChoice, plan: &DevicePlan) -> Result<(), StackError> {
    if !matches!(fs, FsChoice::Scratch(joj_linux::FsKind::Ext4ExtJournal)) {
        return Err(StackError::JournalDeviceNeedsExtJournal);
    }
    if plan.pacing == PaceRequest::Paced || plan.completion.is_some() {
        return Err(StackError::JournalDeviceOneDeviceOption);
    }
    Ok(())
}

/// The optimized journal's replay after the run would fail whatever the run does: refused
/// before it. The region goes above the trace's highest byte, so one larger than the device
/// never fits (whether a smaller one fits depends on where the filesystem wrote, known after
/// the run); and the replay takes one device, where `ext4-extjournal` traces two.
fn check_emmc_journal(fs: &FsChoice, plan: &DevicePlan) -> Result<(), StackError> {
    if let Some(region_mib) = plan.emmc_journal_mib {
        let capacity_bytes = plan.profile.capacity_bytes();
        if joj_device::ejournal::check_region_fits(region_mib, capacity_bytes).is_err() {
            return Err(StackError::EmmcJournalRegionLargerThanDevice {
                region_mib,
                capacity_bytes,
            });
        }
    }
    if matches!(fs, FsChoice::Scratch(kind) if kind.needs_journal_device()) {
        return Err(StackError::EmmcJournalOneDevice);
    }
    Ok(())
}

/// The device's options that cannot go together, or not with the workload or the filesystem.
fn check_device(workload: &Workload, fs: &FsChoice, plan: &DevicePlan) -> Result<(), StackError> {
    if let Some(v) = plan.aging_validity.filter(|v| !(1..=99).contains(v)) {
        return Err(StackError::AgingPercent(v));
    }
    let xftl = matches!(workload, Workload::Db(w) if w.journal.on_device());
    let paced = plan.pacing == PaceRequest::Paced;
    if plan.emmc_journal_mib.is_some() {
        if paced || plan.journal_device.is_some() {
            return Err(StackError::EmmcJournalOptions);
        }
        if xftl {
            return Err(StackError::EmmcJournalXftl);
        }
        check_emmc_journal(fs, plan)?;
    }
    if plan.journal_device.is_some() {
        check_journal_device(fs, plan)?;
    }
    if plan.completion.is_some() && xftl {
        return Err(StackError::CompletionXftl);
    }
    if paced {
        if matches!(workload, Workload::File(_)) {
            return Err(StackError::PaceFileWorkload);
        }
        if !xftl && !fs.is_scratch() {
            return Err(StackError::PaceNeedsScratch);
        }
    }
    Ok(())
}

/// Options that cannot go together, whatever the mode.
fn check_options(workload: &Workload, opts: &RunOptions) -> Result<(), StackError> {
    if let Some(plan) = &opts.device {
        check_device(workload, &opts.fs, plan)?;
    }
    if matches!(workload, Workload::Db(w) if w.journal.on_device()) {
        return Ok(());
    }
    if opts.trace && !opts.fs.is_scratch() {
        return Err(StackError::TraceNeedsScratch);
    }
    if opts.device.is_some() && !opts.fs.is_scratch() {
        return Err(StackError::DeviceNeedsScratch);
    }
    Ok(())
}

fn storage_of(opts: &RunOptions) -> Storage {
    match &opts.fs {
        FsChoice::Host(dir) => Storage::Host(dir.clone()),
        FsChoice::Scratch(kind) => Storage::Scratch {
            kind: *kind,
            image_bytes: opts.image_size_bytes,
            image_dir: opts.image_dir.clone(),
            direct_io: opts.loop_direct_io,
        },
    }
}

/// Tracing is on when asked for, and whenever a device replays or paces the run (both are fed
/// by the trace).
fn capture_of(opts: &RunOptions, device: bool) -> Option<Capture> {
    (opts.trace || device).then(|| Capture {
        buffer_kb: opts.trace_buffer_kb,
        out_dir: opts.out_dir.clone(),
    })
}

fn db_stack(
    w: &DbWorkload,
    opts: &RunOptions,
    device: Option<DevicePlan>,
) -> Result<Stack, StackError> {
    let mode = w.journal;
    let (vfs, vfs_name, synchronous) = match mode {
        JournalMode::Waldio(m) => {
            let o = m.options();
            // WALDIO's durability option decides when SQLite itself syncs
            // (docs/formats/waldio.md).
            let level = match o.sqlite_synchronous() {
                "FULL" => Synchronous::Full,
                _ => Synchronous::Normal,
            };
            (VfsChain::WaldioOverAccounting(o), WALDIO_VFS_NAME, level)
        }
        _ => match TxnDeviceKind::of(mode) {
            Some(kind) => (VfsChain::TxnDevice(kind), kind.vfs_name(), w.synchronous),
            None => (VfsChain::Accounting, ACCOUNTING_VFS, w.synchronous),
        },
    };
    let sqlite = Some(SqliteSetup::new(
        vfs_name,
        mode.sqlite_journal(),
        synchronous,
    ));
    if matches!(vfs, VfsChain::TxnDevice(_)) {
        let Some(plan) = device else {
            return Err(StackError::XftlNeedsDevice);
        };
        // Each thread its own database: a database file and its (rare) journal per thread
        // fit the file layer's 16 slots.
        if w.threads > MAX_DEVICE_THREADS || w.attached_dbs != 0 {
            return Err(StackError::XftlOneConnection);
        }
        // Nothing kernel-side runs under xftl: the device counts its own commands, and its
        // clock is the modeled time, so there is no trace to capture, replay or pace by.
        return Ok(Stack {
            mode: Some(mode),
            vfs,
            sqlite,
            sync_call: None,
            storage: Storage::Device(Box::new(plan)),
            capture: None,
            pace: None,
            pacing: None,
            replay: None,
            label: String::new(),
            cpus_awake: false,
        });
    }
    let pacing = device.as_ref().map(pacing_of);
    Ok(Stack {
        mode: Some(mode),
        vfs,
        sqlite,
        sync_call: Some(w.sync_call),
        storage: storage_of(opts),
        capture: capture_of(opts, device.is_some()),
        pace: device
            .clone()
            .filter(|_| pacing.as_ref().is_some_and(|p| p.paced())),
        pacing,
        replay: device,
        label: String::new(),
        cpus_awake: false,
    })
}

/// Whether a database run with a device is paced: by default yes, so that what the kernel does
/// by the clock happens as on the modeled device and the modeled figures do not follow this
/// machine's speed; not where the pacer cannot follow the replay.
fn pacing_of(plan: &DevicePlan) -> crate::host::Pacing {
    use crate::host::Pacing;
    match plan.pacing {
        PaceRequest::Paced => return Pacing::Asked,
        PaceRequest::Unpaced => {
            return Pacing::Not(
                "--no-pace: the kernel ran at this machine's speed, so clock-driven journaling \
                 follows it"
                    .into(),
            );
        }
        PaceRequest::Default => {}
    }
    if plan.journal_device.is_some() {
        return Pacing::Not(
            "two devices (--journal-device): the pacer models one device; clock-driven \
             journaling follows this machine's speed"
                .into(),
        );
    }
    if plan.emmc_journal_mib.is_some() {
        return Pacing::Not(
            "--emmc-journal replays a trace the kernel did not issue; clock-driven journaling \
             follows this machine's speed"
                .into(),
        );
    }
    Pacing::Default
}

#[cfg(test)]
mod tests {
    use super::*;
    use joj_workload::{SqliteJournal, Synchronous};

    fn db(journal: JournalMode) -> Workload {
        Workload::Db(DbWorkload {
            journal,
            ..DbWorkload::default()
        })
    }

    fn profile() -> Profile {
        Profile::builtin("galaxy-s5").expect("a built-in profile")
    }

    /// A fresh galaxy-s5, with `f` applied to its plan.
    fn device(f: impl FnOnce(&mut DevicePlan)) -> Option<DevicePlan> {
        let mut plan = DevicePlan::new(profile());
        f(&mut plan);
        Some(plan)
    }

    fn ext4() -> RunOptions {
        RunOptions {
            fs: FsChoice::Scratch(FsKind::Ext4),
            ..RunOptions::default()
        }
    }

    #[test]
    fn a_journal_device_goes_with_a_device_replay_of_an_external_journal() {
        let w = db(JournalMode::Truncate);
        let ext = RunOptions {
            fs: FsChoice::Scratch(FsKind::Ext4ExtJournal),
            device: device(|d| d.journal_device = Some(profile())),
            ..RunOptions::default()
        };
        let plan = Stack::resolve(&w, &ext).unwrap().replay.unwrap();
        assert!(plan.journal_device.is_some());
        let on_ext4 = RunOptions {
            fs: FsChoice::Scratch(FsKind::Ext4),
            ..ext.clone()
        };
        assert!(matches!(
            Stack::resolve(&w, &on_ext4),
            Err(StackError::JournalDeviceNeedsExtJournal)
        ));
        let paced = RunOptions {
            device: device(|d| {
                d.journal_device = Some(profile());
                d.pacing = PaceRequest::Paced;
            }),
            ..ext
        };
        assert!(matches!(
            Stack::resolve(&w, &paced),
            Err(StackError::JournalDeviceOneDeviceOption)
        ));
    }

    #[test]
    fn the_optimized_journal_goes_with_a_device_replay_of_one_device() {
        let w = db(JournalMode::Wal);
        let ok = RunOptions {
            device: device(|d| d.emmc_journal_mib = Some(64)),
            ..ext4()
        };
        let plan = Stack::resolve(&w, &ok).unwrap().replay.unwrap();
        assert_eq!(plan.emmc_journal_mib, Some(64));
        for bad in [
            RunOptions {
                device: device(|d| {
                    d.emmc_journal_mib = Some(64);
                    d.pacing = PaceRequest::Paced;
                }),
                ..ok.clone()
            },
            RunOptions {
                fs: FsChoice::Scratch(FsKind::Ext4ExtJournal),
                device: device(|d| {
                    d.emmc_journal_mib = Some(64);
                    d.journal_device = Some(profile());
                }),
                ..ok.clone()
            },
        ] {
            assert!(matches!(
                Stack::resolve(&w, &bad),
                Err(StackError::EmmcJournalOptions)
            ));
        }
        // X-FTL runs on the device with no filesystem journal: refused, not silently ignored.
        assert!(matches!(
            Stack::resolve(&db(JournalMode::Xftl), &ok),
            Err(StackError::EmmcJournalXftl)
        ));
        // Replays that could only fail after the run are refused before it.
        let capacity_bytes = profile().capacity_bytes();
        let region_mib = (capacity_bytes >> 20) + 1;
        let too_large = RunOptions {
            device: device(|d| d.emmc_journal_mib = Some(region_mib)),
            ..ext4()
        };
        assert_eq!(
            Stack::resolve(&w, &too_large).unwrap_err(),
            StackError::EmmcJournalRegionLargerThanDevice {
                region_mib,
                capacity_bytes
            }
        );
        let two_devices = RunOptions {
            fs: FsChoice::Scratch(FsKind::Ext4ExtJournal),
            ..ok
        };
        assert_eq!(
            Stack::resolve(&w, &two_devices).unwrap_err(),
            StackError::EmmcJournalOneDevice
        );
    }

    #[test]
    fn each_mode_runs_on_its_own_stack() {
        let wal = Stack::resolve(&db(JournalMode::Wal), &ext4()).unwrap();
        assert_eq!(wal.vfs, VfsChain::Accounting);
        assert_eq!(wal.sqlite.as_ref().unwrap().vfs, ACCOUNTING_VFS);
        assert!(wal.capture.is_none() && wal.replay.is_none());

        let normal = JournalMode::waldio(joj_waldio::SyncOption::Normal, false);
        let w = Stack::resolve(&db(normal), &ext4()).unwrap();
        assert!(matches!(w.vfs, VfsChain::WaldioOverAccounting(_)));
        let s = w.sqlite.unwrap();
        assert_eq!(
            (s.journal, s.synchronous),
            (SqliteJournal::Wal, Synchronous::Normal)
        );
        assert_eq!(s.vfs, WALDIO_VFS_NAME);

        let on_device = RunOptions {
            device: device(|_| {}),
            ..RunOptions::default()
        };
        let x = Stack::resolve(&db(JournalMode::Xftl), &on_device).unwrap();
        assert!(matches!(x.storage, Storage::Device(_)));
        assert_eq!(x.vfs, VfsChain::TxnDevice(TxnDeviceKind::Xftl));
        assert_eq!(x.sqlite.as_ref().unwrap().journal, SqliteJournal::Delete);
        assert!(x.capture.is_none() && x.replay.is_none() && x.pace.is_none());
        assert_eq!(x.fs_name(), "xftl");

        let i = Stack::resolve(&db(JournalMode::Iftl), &on_device).unwrap();
        assert!(matches!(i.storage, Storage::Device(_)));
        assert_eq!(i.vfs, VfsChain::TxnDevice(TxnDeviceKind::Iftl));
        assert_eq!(i.sqlite.as_ref().unwrap().vfs, IFTL_VFS_NAME);
        assert_eq!(i.fs_name(), "iftl");
        let aged = RunOptions {
            device: device(|d| d.aging_validity = Some(50)),
            ..on_device
        };
        let i = Stack::resolve(&db(JournalMode::Iftl), &aged).unwrap();
        assert!(matches!(i.storage, Storage::Device(_)));
    }

    #[test]
    fn a_device_turns_tracing_and_the_replay_on() {
        let opts = RunOptions {
            device: device(|d| d.aging_validity = Some(50)),
            ..ext4()
        };
        let s = Stack::resolve(&db(JournalMode::Delete), &opts).unwrap();
        assert!(s.capture.is_some());
        assert_eq!(s.replay.unwrap().aging_validity, Some(50));
        // A modeled SQLite run is paced unless told not to be.
        assert!(s.pace.is_some());
        assert_eq!(s.pacing, Some(crate::host::Pacing::Default));
        let unpaced = RunOptions {
            device: device(|d| d.pacing = PaceRequest::Unpaced),
            ..opts.clone()
        };
        let u = Stack::resolve(&db(JournalMode::Delete), &unpaced).unwrap();
        assert!(u.pace.is_none());
        assert!(matches!(u.pacing, Some(crate::host::Pacing::Not(_))));
        let paced = RunOptions {
            device: device(|d| d.pacing = PaceRequest::Paced),
            ..opts
        };
        assert!(
            Stack::resolve(&db(JournalMode::Wal), &paced)
                .unwrap()
                .pace
                .is_some()
        );
        // Two devices, or a transformed trace: not paced, and said why.
        let two = RunOptions {
            fs: FsChoice::Scratch(FsKind::Ext4ExtJournal),
            device: device(|d| d.journal_device = Some(profile())),
            ..RunOptions::default()
        };
        let t = Stack::resolve(&db(JournalMode::Truncate), &two).unwrap();
        assert!(t.pace.is_none() && matches!(t.pacing, Some(crate::host::Pacing::Not(_))));
    }

    #[test]
    fn options_that_do_not_go_together_are_refused() {
        let host = RunOptions::default();
        let poll = joj_device::HostCompletion {
            completion: joj_device::Completion::Poll,
            wakeup_ns: 0,
        };
        let cases = [
            (
                db(JournalMode::Xftl),
                host.clone(),
                StackError::XftlNeedsDevice,
            ),
            (
                db(JournalMode::Wal),
                RunOptions {
                    trace: true,
                    ..host.clone()
                },
                StackError::TraceNeedsScratch,
            ),
            (
                db(JournalMode::Wal),
                RunOptions {
                    device: device(|_| {}),
                    ..host.clone()
                },
                StackError::DeviceNeedsScratch,
            ),
            (
                db(JournalMode::Wal),
                RunOptions {
                    device: device(|d| d.pacing = PaceRequest::Paced),
                    ..host.clone()
                },
                StackError::PaceNeedsScratch,
            ),
            (
                db(JournalMode::Xftl),
                RunOptions {
                    device: device(|d| d.completion = Some(poll)),
                    ..host.clone()
                },
                StackError::CompletionXftl,
            ),
            (
                db(JournalMode::Wal),
                RunOptions {
                    device: device(|d| d.aging_validity = Some(100)),
                    ..ext4()
                },
                StackError::AgingPercent(100),
            ),
            (
                Workload::Db(DbWorkload {
                    journal: JournalMode::Xftl,
                    threads: MAX_DEVICE_THREADS + 1,
                    ..DbWorkload::default()
                }),
                RunOptions {
                    device: device(|_| {}),
                    ..host.clone()
                },
                StackError::XftlOneConnection,
            ),
            (
                Workload::File(FileWorkload::default()),
                RunOptions {
                    device: device(|d| d.pacing = PaceRequest::Paced),
                    ..ext4()
                },
                StackError::PaceFileWorkload,
            ),
        ];
        for (w, opts, expected) in cases {
            assert_eq!(Stack::resolve(&w, &opts).unwrap_err(), expected);
        }
        assert_eq!(
            FsChoice::new(Some(FsKind::Xfs), Some(PathBuf::from("/tmp"))),
            Err(StackError::DirWithScratch)
        );
    }

    #[test]
    fn results_are_named_after_the_stack_and_the_workload() {
        let s = Stack::resolve(&db(JournalMode::Wal), &ext4()).unwrap();
        assert_eq!(s.label, "bench-ext4-wal-insert");
    }
}
