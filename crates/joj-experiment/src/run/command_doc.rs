//! The document of a traced command: its bench-shaped result, its `command` section, its
//! configuration and, with a device profile, its host and modeled time.

use std::ffi::OsString;
use std::path::Path;

use joj_vfs::IoCounters;

use super::command::{CommandOptions, Measured, Watcher};
use super::place::Place;
use crate::result::{BioIntent, CommandReport, FileReport, RunConfig, RunResult};

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

/// The `command` section: how the command ended, what supervising it cost, its files.
pub(super) fn command_report(
    opts: &CommandOptions,
    cwd: &Path,
    watcher: &Watcher,
    files: Vec<FileReport>,
    m: &Measured,
) -> CommandReport {
    let exit = m
        .supervised
        .exit
        .unwrap_or(joj_linux::ChildExit::Signal(libc::SIGKILL));
    CommandReport {
        argv: opts
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        cwd: cwd.to_string_lossy().into_owned(),
        start_dir: opts
            .start_dir
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned()),
        exit_code: match exit {
            joj_linux::ChildExit::Code(c) => Some(c),
            joj_linux::ChildExit::Signal(_) => None,
        },
        signal: match exit {
            joj_linux::ChildExit::Signal(s) => Some(s),
            joj_linux::ChildExit::Code(_) => None,
        },
        tasks: m.supervised.tasks,
        stops: m.supervised.stops,
        stopped_s: m.supervised.handling_ns as f64 / 1e9,
        syscall_events: m.supervised.events,
        unresolved_syncs: watcher.unresolved_syncs,
        whole_fs_syncs: watcher.whole_fs_syncs,
        dir_syncs: watcher.dir_fsyncs + watcher.dir_fdatasyncs,
        files,
        outside_writes: watcher
            .outside
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        outside_writes_total: watcher.outside_total,
        io_uring: watcher.io_uring.clone(),
        filesystem_full: m.filesystem_full,
        setup: None,
        databases: Vec::new(),
        stderr_tail: Vec::new(),
    }
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
