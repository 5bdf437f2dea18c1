//! What `joj crash --fs` refuses, and why: a log that does not match the flags it is checked
//! with, a log or crash image that is not what joj's workload makes, outputs that cannot be
//! written. Each message names the fix.

use std::path::PathBuf;

use joj_linux::FsKind;
use joj_trace::OutputError;

/// A refusal of `joj crash --fs` (wrapped in [`crate::error::ExperimentError::CrashFs`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CrashFsError {
    /// A crash image led SQLite (or the reader of the files) out of its filesystem, or holds
    /// a link or special file where joj's workload keeps its files.
    #[error(
        "joj crash --fs: crash state {state} ({description}): in the image, {what}. joj reads a \
         crash image only inside its own \
         filesystem, and no run of joj's workload leaves this in one: the log was edited or is \
         not one joj recorded, so joj stops rather than check it (nothing outside the image was \
         opened); fix: check where the log came from, and check only logs saved by `joj crash \
         --save-dir` or `--save-log`"
    )]
    ForeignImage {
        state: usize,
        description: String,
        what: String,
    },
    /// A flag says one thing, the log's labels another.
    #[error(
        "--from-log {}: {flag} {given}, but the log says it was recorded with {key}={logged}; \
         checking it as {given} would judge it against the wrong promise; fix: drop {flag} (it \
         defaults to what the log says){}",
        .log.display(),
        if .logged == "none" { String::new() } else { format!(", or check it as recorded: {flag} {logged}") }
    )]
    LogMismatch {
        log: PathBuf,
        flag: &'static str,
        key: &'static str,
        given: String,
        logged: String,
    },
    /// A log without labels checked without the flag that would say what it is.
    #[error(
        "--from-log {}: the log does not say which {what} recorded it (a version-1 log, or one \
         without labels); fix: give {flag} as in the command that saved it (its -violations.json \
         holds that command under `replay`)",
        .log.display()
    )]
    LogUnlabelled {
        log: PathBuf,
        what: &'static str,
        flag: &'static str,
    },
    /// A label whose value this joj does not know.
    #[error(
        "--from-log {}: the log says {key}={value}, which this joj does not know; fix: check it \
         with the joj that recorded it",
        .log.display()
    )]
    LogLabelUnknown {
        log: PathBuf,
        key: &'static str,
        value: String,
    },
    /// The base image's superblock is of another filesystem than `--fs`.
    #[error(
        "--from-log {}: the log's image is {found}, not {} as --fs {given} says: every state \
         would be judged unmountable; fix: check it as what it is, --fs {found}{}",
        .log.display(),
        .given.fs_type(),
        if *.found == "ext4" { " (or the ext4 mode it was recorded in: ext4-writeback, \
         ext4-datajournal, ext4-nojournal)" } else { "" }
    )]
    ImageFsMismatch {
        log: PathBuf,
        given: FsKind,
        found: &'static str,
    },
    /// No ext4, xfs or btrfs superblock where each keeps its own.
    #[error(
        "--from-log {}: the log's image holds no ext4, xfs or btrfs superblock; fix: pass a log \
         `joj crash --fs` saved",
        .log.display()
    )]
    ImageNoFs { log: PathBuf },
    /// The filesystem's own checker, run read-only on the log's image before the kernel mounts
    /// any state of it, found it damaged.
    #[error(
        "--from-log {}: {tool}, run read-only on the log's image before the kernel mounts any \
         state of it, says the image is damaged ({detail}); a damaged filesystem image is given \
         to the kernel's parser only when it comes from joj's own recorded run; fix: check \
         where the log came from; a log joj saved passes this check",
        .log.display()
    )]
    ImageFailsFsck {
        log: PathBuf,
        tool: &'static str,
        detail: String,
    },
    /// `--from-log` of something other than a regular file.
    #[error(
        "--from-log {}: a {found}, not a regular file; fix: pass a log file `joj crash --fs` \
         saved",
        .log.display()
    )]
    LogNotRegular { log: PathBuf, found: &'static str },
    /// A log larger than joj reads into memory.
    #[error(
        "--from-log {}: {bytes} bytes, more than the {max} bytes joj reads (a log is held in \
         memory whole; those of joj's documented runs are a few MiB); fix: pass a log of a \
         shorter run",
        .log.display()
    )]
    LogTooLarge { log: PathBuf, bytes: u64, max: u64 },
    /// A log whose device is larger than joj materializes crash images of.
    #[error(
        "--from-log {}: its device is {bytes} bytes, more than the {max} bytes joj makes crash \
         images of (joj records on 64–300 MiB images); fix: pass a log `joj crash --fs` saved",
        .log.display()
    )]
    DeviceTooLarge { log: PathBuf, bytes: u64, max: u64 },
    /// `--save-log` without a folder to save into.
    #[error("--save-log saves the run's log into --save-dir; fix: add --save-dir DIR")]
    SaveLogNeedsDir,
    /// `--save-log` of a log that is already a file.
    #[error(
        "--save-log saves a recorded run's log, and this run checks the saved log {}; fix: drop \
         --save-log",
        .log.display()
    )]
    SaveLogFromLog { log: PathBuf },
    /// The `--save-dir` folder cannot be written (found before the run, or when saving).
    #[error("--save-dir: {0}")]
    SaveDir(OutputError),
}
