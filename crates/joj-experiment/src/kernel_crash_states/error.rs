//! What `joj crash --fs` refuses, and why: a log that does not match the flags it is checked
//! with, a log or crash image that is not what joj's workload makes, outputs that cannot be
//! written. Each message names the fix.

use std::path::PathBuf;

use joj_linux::FsKind;
use joj_trace::OutputError;

use super::jbd2::JournalShapeError;

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
        /// Quoted and cut ([`joj_trace::input::quoted`]).
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
    /// A log of more epochs than joj plans crash states of ([`super::states::MAX_EPOCHS`]).
    #[error(
        "the log splits into {epochs} epochs (one per flush, and the tail), more than the {max} \
         joj plans crash states of: each is held in memory with its states, and a run of the \
         most transactions joj records (-n 100000) flushes a few hundred thousand times; fix: \
         check a log of a shorter run (fewer transactions, -n), or check where the log came \
         from: joj's runs do not flush without end"
    )]
    TooManyEpochs { epochs: usize, max: usize },
    /// A log that begins more transactions than a run records ([`super::MAX_TRANSACTIONS`]).
    #[error(
        "the log begins {begun} transactions, more than the {max} a run of joj records (-n); \
         the state after each is held in memory to judge the crash states of the PostMark-like \
         workload; fix: check where the log came from: joj's runs begin at most -n transactions"
    )]
    TooManyTransactions { begun: u64, max: u64 },
    /// `--shard` not of the form `K/N` with 1 ≤ K ≤ N.
    #[error(
        "--shard {given}: expected K/N, the K-th of N shares, with 1 ≤ K ≤ N ≤ {max}; fix: give \
         each of N runs its own K, e.g. --shard 1/3, --shard 2/3 and --shard 3/3, then `joj \
         crash merge` their parts"
    )]
    ShardSpec { given: String, max: u32 },
    /// `--shard` of a run that would record its own log: the shares must read one log.
    #[error(
        "--shard {shard} checks a share of one saved log's states, and every share must read the \
         same log (two recorded runs never log the same bytes); fix: record once with `joj crash \
         --fs … --record-only --save-dir DIR`, then give every shard `--from-log \
         DIR/crash-….blocklog`"
    )]
    ShardNeedsLog { shard: String },
    /// `--shard` with `--save-dir`: a part is not a run's evidence.
    #[error(
        "--shard writes a part for `joj crash merge`, which lists the violating states with how \
         to rebuild each from the log already saved; fix: drop --save-dir (check a violating \
         state again with --from-log)"
    )]
    ShardSavesNothing,
    /// `--record-only` with something it cannot do.
    #[error("--record-only records a run and saves its log, checking no state; fix: {fix}")]
    RecordOnly { fix: &'static str },
    /// A file given to `joj crash merge` that is not a part it can read.
    #[error(
        "joj crash merge {}: {why}; fix: pass the files `joj crash --fs … --shard K/N --json \
         --save PART` wrote",
        .part.display()
    )]
    PartUnreadable { part: PathBuf, why: String },
    /// Two parts of different runs.
    #[error(
        "joj crash merge: {} and {} are parts of different runs (their {field} differs); fix: \
         merge the N parts of one run: the same --from-log, flags, --states and --seed, each \
         with its own --shard K/N",
        .first.display(),
        .other.display()
    )]
    PartsDiffer {
        first: PathBuf,
        other: PathBuf,
        field: &'static str,
    },
    /// The same share twice.
    #[error(
        "joj crash merge: {} and {} are both shard {k} of {n}; fix: pass each share once",
        .first.display(),
        .second.display()
    )]
    PartTwice {
        k: u32,
        n: u32,
        first: PathBuf,
        second: PathBuf,
    },
    /// Shares missing (the message lists the first [`MISSING_LISTED`] and counts the rest).
    #[error(
        "joj crash merge: shard{} {} of {n} missing; fix: run `joj crash --fs … --from-log LOG \
         --shard K/{n} --json --save PART` for each missing K and pass all {n} parts",
        if .missing.len() == 1 { "" } else { "s" },
        listed(.missing)
    )]
    PartsMissing { n: u32, missing: Vec<u32> },
    /// A part that does not hold what its shard must.
    #[error(
        "joj crash merge {}: {why}: it is not a part `joj crash --shard` wrote, or was edited; \
         fix: make it again with `joj crash --fs … --from-log LOG --shard K/N --json --save PART`",
        .part.display()
    )]
    PartInvalid { part: PathBuf, why: String },
    /// A part whose numbers go beyond what any run writes ([`super::part_bounds::check`]).
    #[error(
        "joj crash merge {}: {fault}: it is not a part `joj crash --shard` wrote, or was edited; \
         fix: make it again with `joj crash --fs … --from-log LOG --shard K/N --json --save PART`",
        .part.display()
    )]
    PartOutOfBounds { part: PathBuf, fault: PartFault },
    /// The journal the mount cost is modeled on is not one a run locates.
    #[error(
        "the ext4 journal the mount cost is modeled on: {0}; fix: check the log or part it \
         came from"
    )]
    MountJournal(JournalShapeError),
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

/// How a part goes beyond what any run writes ([`super::part_bounds::check`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartFault {
    #[error(
        "it says it is shard {k} of {n}, and a run has shards 1 ≤ K ≤ N ≤ {max}, as --shard takes"
    )]
    Shard { k: u32, n: u32, max: u32 },
    #[error("journal: {0}")]
    Journal(JournalShapeError),
    #[error("images[{image}] has a journal replay, and the part has no journal to replay it from")]
    ReplayWithoutJournal { image: usize },
    #[error("images[{image}].outcome.replay.{field} is {value}, more than {max}: {why}")]
    ReplayCount {
        image: usize,
        field: &'static str,
        value: u64,
        max: u64,
        why: &'static str,
    },
    #[error("images[{image}] lists {listed} home blocks, and its replay says it writes {written}")]
    HomeBlocks {
        image: usize,
        listed: usize,
        written: u64,
    },
    /// The part's `run` holds what no run's report does ([`super::part_run::check`]).
    #[error("run.{field} is {value}, and a run's is {want}")]
    Run {
        field: String,
        value: String,
        want: String,
    },
}

/// Most missing shards a message lists: a few lines, however many are missing.
pub const MISSING_LISTED: usize = 20;

/// `missing`, the first [`MISSING_LISTED`] of them by number and the rest counted.
fn listed(missing: &[u32]) -> String {
    let shown: Vec<String> = missing
        .iter()
        .take(MISSING_LISTED)
        .map(|k| k.to_string())
        .collect();
    match missing.len().saturating_sub(MISSING_LISTED) {
        0 => shown.join(", "),
        more => format!("{}, and {more} more", shown.join(", ")),
    }
}
