//! What can go wrong in a workload: bad configuration, caught before anything is created
//! ([`ConfigError`]), and failures while it runs ([`WorkloadError`]). Each message names the
//! cause and, where there is one, the fix.

use std::path::PathBuf;

/// A workload's parameters that cannot run, found before any file is created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("-n must be at least 1 transaction; fix: give 1 or more")]
    ZeroTransactions,
    #[error("{what} must be at least 1; fix: give 1 or more")]
    Zero { what: &'static str },
    /// A size-like number beyond what joj runs ([`crate::config::bounds`]).
    #[error("{what} {given} is more than joj runs ({why}); fix: give at most {max}")]
    TooMany {
        what: &'static str,
        given: u64,
        max: u64,
        why: &'static str,
    },
    #[error(
        "page size {0} is not a power of two in 512..=65536 (SQLite's range; it ignores any \
         other); fix: give one of 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536 (--page-size)"
    )]
    PageSize(u32),
    #[error(
        "record size {0} bytes must be in 1..=1000000; fix: --record-bytes between 1 and 1000000 \
         (Mobibench's default is 100)"
    )]
    RecordBytes(usize),
    #[error(
        "{0} attached databases: at most 9 (SQLite's default SQLITE_MAX_ATTACHED is 10, main \
         included); fix: --attached 9 or fewer (-D 10 or fewer)"
    )]
    TooManyAttached(u32),
    #[error(
        "{threads} threads: the paper workloads run on one connection, as the X-FTL paper did (SQLite locks the whole database file); use one thread"
    )]
    PaperThreads { threads: u32 },
    #[error("{attached} attached databases: the paper workloads use one database file")]
    PaperAttached { attached: u32 },
    #[error(
        "--pages-per-txn {given}: the synthetic workload updates 1..={max} rows per transaction (the \
         paper: 1..=20); fix: --pages-per-txn between 1 and {max}"
    )]
    PagesPerTxn { given: u32, max: u32 },
    #[error(
        "{rows} rows: the synthetic table needs at least --pages-per-txn ({pages_per_txn}) rows and at most {max}"
    )]
    SyntheticRows {
        rows: u64,
        pages_per_txn: u32,
        max: u64,
    },
    #[error(
        "--warehouses {given}: TPC-C needs 1..={max} warehouses; fix: --warehouses between 1 and {max}"
    )]
    Warehouses { given: u32, max: u32 },
    #[error(
        "--rl-divisor {given}: the RL Benchmark's counts can be divided by 1..={max}; fix: \
         --rl-divisor between 1 (the paper's counts) and {max}"
    )]
    RlDivisor { given: u32, max: u32 },
    #[error(
        "{flag} counts SQLite transactions, and this is a file workload, sized by its file and \
         record as Mobibench's (--file-kib / -f, --record-kib / -r); fix: drop {flag}, or give \
         the file size with --file-kib"
    )]
    CountOfAFileWorkload { flag: &'static str },
    #[error(
        "file size {file_bytes} B must be at least one record of {record_bytes} B; fix: a larger \
         --file-kib (-f), or a smaller --record-kib (-r)"
    )]
    FileSmallerThanRecord { file_bytes: u64, record_bytes: u64 },
    #[error(
        "O_DIRECT needs records that are a multiple of the device's logical block (512 B or 4 KiB); {record_bytes} B is not"
    )]
    DirectRecord { record_bytes: u64 },
    /// A name that is not one of the choices (`--op`, `--journal`, `--workload`, ...).
    #[error("unknown {what} '{given}': use {choices}")]
    Unknown {
        what: &'static str,
        given: String,
        choices: &'static str,
    },
    /// A Mobibench numeric flag out of its range.
    #[error("-{flag} {given}: {choices}")]
    MobibenchCode {
        flag: char,
        given: u32,
        choices: &'static str,
    },
    #[error(
        "{0} already exists: joj creates its own databases and never writes into one it did \
         not make; fix: point --dir at an empty directory, or move the file away"
    )]
    DatabaseExists(PathBuf),
    /// A file at a name SQLite or waldio keeps a database's journal in, before the database is
    /// made: SQLite would take it for that database's journal and roll it back, replay, reset
    /// or delete it.
    #[error(
        "{path} already exists where joj's database {} keeps its {role}: SQLite would take it \
         for that, and roll it back, replay or delete it; fix: point --dir at an empty \
         directory, or move the file away",
        .database.display()
    )]
    CompanionExists {
        path: PathBuf,
        database: PathBuf,
        role: &'static str,
    },
    #[error(
        "{0} already exists: joj creates its own files and never writes into one it did not \
         make; fix: point --dir at an empty directory, or move the file away"
    )]
    FileExists(PathBuf),
}

/// Errors of a workload run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadError {
    /// Printed as the configuration error itself, which names the parameter (a prefix with
    /// the same text as its source would print it twice in a chain of causes).
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("SQLite failed while {what}: {source}")]
    Sqlite {
        what: String,
        #[source]
        source: rusqlite::Error,
    },
    /// `/proc/thread-self` did not read as this kernel's format (joj needs Linux).
    #[error(
        "cannot count the thread's context switches: {what}; fix: run on Linux with /proc mounted"
    )]
    ThreadUsage { what: String },
    #[error("I/O error while {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the filesystem is full while {what}; fix: give the scratch filesystem more room \
         (--image-mib), free space in the host directory, or make the workload smaller; \
         nothing already committed was lost"
    )]
    DiskFull { what: String },
    #[error(
        "the file workload writes {} MiB in {dir}, which has {} MiB free; fix: a smaller file \
         (-f / --file-kib), fewer threads, or free space there",
        .needed_bytes.div_ceil(1 << 20), .free_bytes >> 20, dir = .dir.display()
    )]
    NoRoom {
        dir: PathBuf,
        needed_bytes: u64,
        free_bytes: u64,
    },
    #[error("SQLite refused journal_mode={asked} on {schema} (it answered {answered})")]
    JournalModeRefused {
        schema: String,
        asked: &'static str,
        answered: String,
    },
    #[error("PRAGMA integrity_check on {path} answered: {answer}")]
    Integrity { path: PathBuf, answer: String },
    /// The database disagrees with what the workload knows it must hold (a value read back,
    /// a consistency condition, a predicted digest): the storage below lost or changed data.
    #[error("{what}: expected {expected}, found {found}")]
    Mismatch {
        what: String,
        expected: String,
        found: String,
    },
    #[error("cannot allocate an aligned {bytes}-byte I/O buffer")]
    BufferAlloc { bytes: usize },
    #[error(
        "the filesystem holding {0} refuses O_DIRECT (tmpfs does); run on a block filesystem, e.g. --fs ext4"
    )]
    DirectIoRefused(PathBuf),
    #[error("a paper workload driver is not reusable after a failed transaction")]
    DriverFailed,
    #[error("a workload thread panicked")]
    ThreadPanicked,
    /// The measured window (tracing, counters, pacing) failed; the boxed error is the
    /// window's own (an experiment gets its error type back by downcasting).
    #[error(transparent)]
    Window(Box<dyn std::error::Error + Send + Sync + 'static>),
}
