//! The document of a traced command: its bench-shaped result, its `command` section, its
//! configuration and, with a device profile, its host and modeled time.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use joj_linux::FsKind;
use joj_linux::diskstats::DiskStats;
use joj_vfs::IoCounters;

use super::place::Place;
use crate::result::{BioIntent, RunConfig, RunResult};

/// How to run a command.
#[derive(Debug, Clone)]
pub struct CommandOptions {
    /// The program and its arguments.
    pub argv: Vec<OsString>,
    pub fs: FsKind,
    /// The directory the command sees as its own, every file of it visible, what it writes
    /// traced: copied onto the scratch filesystem when it is small enough
    /// ([`joj_linux::start_copy`]), else through an overlay whose upper layer is there; `None`:
    /// an empty directory of the scratch filesystem.
    pub start_dir: Option<PathBuf>,
    /// See `start_dir` through an overlay even when it could be copied.
    pub overlay: bool,
    /// A directory to run in, relative to the start directory (created), instead of it.
    pub dir: Option<PathBuf>,
    pub image_size_bytes: u64,
    pub trace_buffer_kb: u32,
    /// Where the trace file and plot go (none when `None`).
    pub out_dir: Option<PathBuf>,
    /// What to divide the totals by for `block_per_txn` (the command's own transactions);
    /// `None`: the commits counted in its databases, or 1 (the whole command) when none were.
    pub transactions: Option<u64>,
    /// The command's stdout goes to joj's stderr (joj's stdout then holds only joj's output).
    pub stdout_to_stderr: bool,
    /// Replay the command's trace through this device and model its time there, host included
    /// (`device` and `modeled` sections).
    pub device: Option<crate::stack::DevicePlan>,
}

/// What the traced window measured, besides its requests.
pub(super) struct Measured {
    /// The devices' counters over the window, and the empty preflush write bios the trace saw.
    pub(super) disk: Option<(DiskStats, u64)>,
    /// When the block tracer started (CLOCK_MONOTONIC ns).
    pub(super) window_start_ns: u64,
    pub(super) elapsed_s: f64,
    pub(super) intent: BioIntent,
    pub(super) supervised: joj_linux::Supervision,
    /// Whether the scratch filesystem was full when the command ended.
    pub(super) filesystem_full: bool,
    /// CPU time of the command's processes (reaped children, `RUSAGE_CHILDREN`).
    pub(super) cpu_ns: u64,
    /// CPU time of the filesystem's journal thread.
    pub(super) journal_ns: u64,
    /// Its run-queue delay.
    pub(super) journal_delay_ns: u64,
}

/// A traced command's host time and modeled time on `plan`'s device: the command's wall time
/// less the supervisor's holding it; its CPU time and the journal thread's against the rest
/// (waits); plus the device's time.
pub(super) fn model_command(
    result: &RunResult,
    m: &Measured,
    device: &joj_device::DeviceSummary,
    plan: &crate::stack::DevicePlan,
    txns: u64,
) -> (crate::host::HostMeasured, crate::host::Modeled) {
    let sync_calls = result.syscalls.fsync + result.syscalls.fdatasync;
    let usage = joj_workload::ThreadUsage {
        cpu_ns: m.cpu_ns,
        ..Default::default()
    };
    let counts = crate::host::WindowCounts {
        sync_calls,
        overhead_ns: m.supervised.handling_ns,
        journal_thread_cpu_ns: m.journal_ns,
        journal_thread_run_delay_ns: m.journal_delay_ns,
        ..Default::default()
    };
    let host = crate::host::HostMeasured::new(m.elapsed_s, &[usage], 1, &counts);
    let device_s = device
        .completion
        .as_ref()
        .map_or(device.modeled_s, |c| c.modeled_s);
    let modeled = crate::host::Modeled::compose(
        &plan.profile,
        &host,
        device_s,
        txns,
        &crate::host::Pacing::Not(
            "joj trace does not pace the command: what its kernel does by the clock follows \
             this machine's speed"
                .into(),
        ),
    );
    (host, modeled)
}

/// The bench-shaped document of a traced command, before its `command` section.
pub(super) fn document(
    opts: &CommandOptions,
    place: &Place,
    fs: &joj_linux::ScratchFs,
    (elapsed_s, intent): (f64, BioIntent),
    classified: &super::classify::Classified,
) -> RunResult {
    let mut result = RunResult::measured(
        command_config(opts, fs, place.mount_options.clone()),
        1,
        elapsed_s,
        vec![],
        &IoCounters::default(),
    );
    // What a command's document cannot measure is null, never 0: its latencies and reads
    // (no VFS of joj's in it), its threads (the tasks are in `command.tasks`).
    result.latency_us = None;
    result.syscalls.read_calls = None;
    result.syscalls.read_bytes = None;
    result.fs_journal_by_synced_file = Some(classified.fs_journal_by_synced_file);
    result.bio_intent = Some(intent);
    result.block = Some(classified.totals.clone());
    result.unplaced_data = classified.unplaced.clone();
    result
}

/// What ran, for file names: the program's file name and, when there is one, the first
/// argument that is no option, as a file name (`python3-app.py`, `sh-run.sh`, `joj`).
pub(super) fn command_label(argv: &[OsString]) -> String {
    let name = |a: &OsString| {
        Path::new(a)
            .file_name()
            .map(|n| clean_for_file_name(&n.to_string_lossy()))
            .filter(|n| !n.is_empty())
    };
    let program = argv
        .first()
        .and_then(name)
        .unwrap_or_else(|| "command".into());
    let what = argv
        .iter()
        .skip(1)
        .find(|a| !a.to_string_lossy().starts_with('-'))
        .and_then(name);
    match what {
        Some(w) => format!("{program}-{w}"),
        None => program,
    }
}

/// `text` with every character but ASCII letters, digits, `-`, `_`, `+` and `.` as `_`, at most 40
/// characters, never starting with a dot.
pub(crate) fn clean_for_file_name(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    clean.trim_start_matches('.').to_string()
}

pub(super) fn command_config(
    opts: &CommandOptions,
    fs: &joj_linux::ScratchFs,
    mount_options: Option<String>,
) -> RunConfig {
    RunConfig {
        workload: "command".into(),
        op: command_line(&opts.argv),
        trace: true,
        ..super::config::unspecified(fs.kind().to_string(), mount_options)
    }
}

/// The command line as a shell would take it back (arguments with spaces or quotes quoted).
pub fn command_line(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| {
            let s = a.to_string_lossy();
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                s.into_owned()
            } else {
                format!("'{}'", s.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
