//! A recording of file-system calls replayed as a traced run (`joj syscalls replay`): on a
//! scratch filesystem made for it, the calls before the recording's window are played
//! unmeasured, then the window's calls are played inside exactly the traced window of
//! `joj trace -- COMMAND` ([`super::command`]), the player telling the same watcher what the
//! supervisor would (before an unlink, rename or truncate; after a write, with the bytes the
//! kernel returned; after a sync), so the document and its per-file rows are a command's. A
//! recording with a `joj bench` window ends its window as bench does (no `syncfs` before the
//! tracer stops); one without marks is measured whole, with the final `syncfs`.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use joj_linux::{Change, FsKind, Observer, SyncKind, TouchedFile};
use joj_workload::lock;
use joj_workload::syscalls::{Phase, PlayObserver, PlayReport, Player, Recording, Synced, Timing};

use super::command::{CommandOptions, Watcher, WindowSpec, traced_in};
use super::place::Place;
use crate::error::ExperimentError;
use crate::result::RunResult;
use crate::stack::Storage;

/// How to replay.
#[derive(Debug, Clone)]
pub struct SyscallReplayOptions {
    pub fs: FsKind,
    pub image_size_bytes: u64,
    pub trace_buffer_kb: u32,
    pub out_dir: Option<PathBuf>,
    pub timing: Timing,
    /// Overrides the recording's own `transactions`.
    pub transactions: Option<u64>,
    /// The recording's name, for the document and output files.
    pub name: String,
    /// Counts replayed calls (both phases).
    pub progress: Option<Arc<AtomicU64>>,
    /// Also replay the classified trace through this device model (aging seed 0).
    pub device: Option<crate::stack::DevicePlan>,
}

/// What the replay did, besides its document.
#[derive(Debug, Clone, Copy, Default)]
pub struct SyscallReplayReport {
    /// Calls played before the window, unmeasured.
    pub before_window: PlayReport,
    pub window: PlayReport,
}

/// The watcher behind the player's observer (the supervisor's events, from inside).
struct Watching<'a>(Mutex<&'a mut Watcher>);

fn touched(path: &Path, file: &File) -> Option<TouchedFile> {
    Some(TouchedFile {
        path: path.to_path_buf(),
        file: file.try_clone().ok()?,
    })
}

impl PlayObserver for Watching<'_> {
    fn before_change(&self, change: joj_workload::syscalls::Change, path: &Path, file: &File) {
        let change = match change {
            joj_workload::syscalls::Change::Remove => Change::Remove,
            joj_workload::syscalls::Change::Truncate => Change::Truncate,
        };
        if let Some(t) = touched(path, file) {
            lock(&self.0).before_change(change, &t);
        }
    }

    fn wrote(&self, path: &Path, bytes: u64, offset: Option<u64>) {
        lock(&self.0).wrote(path, bytes, offset);
    }

    fn synced(&self, kind: Synced, file: Option<(&Path, &File)>, start_ns: u64, end_ns: u64) {
        let kind = match kind {
            Synced::Fsync => SyncKind::Fsync,
            Synced::Fdatasync => SyncKind::Fdatasync,
            Synced::SyncWrite => SyncKind::SyncWrite,
            Synced::WholeFs => SyncKind::WholeFs,
            Synced::Directory { datasync } => SyncKind::Directory { datasync },
        };
        let t = file.and_then(|(p, f)| touched(p, f));
        lock(&self.0).synced(kind, t.as_ref(), start_ns, end_ns);
    }
}

/// Replay `rec` on a fresh scratch filesystem, traced; the document and what was played.
pub fn replay_syscalls(
    rec: &Recording,
    opts: &SyscallReplayOptions,
) -> Result<(RunResult, SyscallReplayReport), ExperimentError> {
    // Before anything is made: the replay holds as many descriptors open as the recording did.
    joj_workload::syscalls::allow_open_descriptors(rec.peak_open_descriptors())?;
    let place = Place::make(&Storage::Scratch {
        kind: opts.fs,
        image_bytes: opts.image_size_bytes,
        image_dir: None,
        direct_io: false,
    })?;
    let result = replay_in(&place, rec, opts);
    let closed = place.close();
    let result = result?;
    closed?;
    Ok(result)
}

fn replay_in(
    place: &Place,
    rec: &Recording,
    opts: &SyscallReplayOptions,
) -> Result<(RunResult, SyscallReplayReport), ExperimentError> {
    let cwd = place.dir.clone();
    let player = Player::new(&cwd);
    let (before, window) = rec.phases();
    let progress = opts.progress.as_deref();
    let mut report = SyscallReplayReport {
        before_window: player.play(
            before,
            &Phase {
                timing: opts.timing,
                observer: None,
                progress,
            },
        )?,
        ..Default::default()
    };
    let timing = match opts.timing {
        Timing::Recorded => "recorded",
        Timing::Fast => "fast",
    };
    let argv: Vec<OsString> = ["joj", "syscalls", "replay", &opts.name, "--timing", timing]
        .iter()
        .map(OsString::from)
        .collect();
    let copts = CommandOptions {
        argv,
        fs: opts.fs,
        start_dir: None,
        overlay: false,
        dir: None,
        image_size_bytes: opts.image_size_bytes,
        trace_buffer_kb: opts.trace_buffer_kb,
        out_dir: opts.out_dir.clone(),
        transactions: Some(opts.transactions.unwrap_or(rec.header.transactions).max(1)),
        stdout_to_stderr: false,
        device: None,
    };
    let spec = WindowSpec {
        end_syncfs: !rec.has_window(),
        label: format!("{}-replay-{}", opts.fs, file_label(&opts.name)),
        workload: "syscalls-replay",
        device: opts.device.as_ref(),
    };
    let mut played = PlayReport::default();
    let scope = joj_linux::TracedDir::same(&cwd);
    let result = traced_in(
        place,
        &copts,
        &cwd,
        &scope,
        &spec,
        &mut |watcher: &mut Watcher| {
            let watching = Watching(Mutex::new(watcher));
            played = player.play(
                window,
                &Phase {
                    timing: opts.timing,
                    observer: Some(&watching),
                    progress,
                },
            )?;
            Ok(joj_linux::Supervision {
                exit: Some(joj_linux::ChildExit::Code(0)),
                tasks: played.threads,
                ..Default::default()
            })
        },
    )?;
    report.window = played;
    Ok((result, report))
}

/// A recording's file name as a part of output names (`ext4-replay-bench-wal`).
fn file_label(name: &str) -> String {
    let stem = Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = stem.strip_suffix(".jsonl").unwrap_or(&stem);
    // At most [`LABEL_CHARS`]: the output's names carry it, and a recording's own name may be
    // as long as a file name can be (a 240-byte name made the trace's name too long, after
    // the replay had run: docs/robustness.md H133).
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(LABEL_CHARS)
        .collect()
}

/// The longest recording name an output's file name carries, as `joj trace` caps a command's.
const LABEL_CHARS: usize = 40;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_recording_name_is_cut_to_a_label_that_fits_a_file_name() {
        let name = format!("/tmp/{}.jsonl", "r".repeat(240));
        assert_eq!(file_label(&name), "r".repeat(LABEL_CHARS));
        assert_eq!(file_label("docs/recordings/a b.jsonl"), "a_b");
    }
}
