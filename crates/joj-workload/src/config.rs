//! What a run does, as plain data with defaults from the papers' setup (one table, one
//! 100-byte statement per transaction, page size 4096, `synchronous=FULL`).

use crate::paper::PaperWorkload;
use joj_vfs::SyncCall;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// WALDIO: SQLite's WAL mode through the `waldio` VFS (crate `joj-waldio`), with a durability
/// option and, optionally, group synchronization (16 KiB frame buffer, 2 ms interval).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaldioMode {
    pub sync: joj_waldio::SyncOption,
    pub group: bool,
}

impl WaldioMode {
    pub fn options(self) -> joj_waldio::WaldioOptions {
        joj_waldio::WaldioOptions {
            sync: self.sync,
            group: self.group.then(joj_waldio::GroupSync::default),
            ..joj_waldio::WaldioOptions::default()
        }
    }
}

/// SQLite's journal modes (Mobibench `-j`: 0=DELETE 1=TRUNCATE 2=PERSIST 3=WAL 4=MEMORY 5=OFF),
/// and joj's WALDIO modes (`waldio`, `waldio-fua`, `waldio-normal`, each with `-gs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JournalMode {
    Delete,
    Truncate,
    Persist,
    Wal,
    Memory,
    Off,
    Waldio(WaldioMode),
    /// X-FTL: SQLite's rollback-journal mode on the `xftl` VFS over the emulated transactional
    /// eMMC (crate `joj-atomic`); commits are batch-atomic device transactions.
    Xftl,
}

impl JournalMode {
    pub const ALL: [JournalMode; 6] = [
        JournalMode::Off,
        JournalMode::Memory,
        JournalMode::Wal,
        JournalMode::Delete,
        JournalMode::Truncate,
        JournalMode::Persist,
    ];

    /// The six WALDIO rows of `joj compare`: each durability option without and with group sync.
    pub const WALDIO_ALL: [JournalMode; 6] = [
        JournalMode::Waldio(WaldioMode {
            sync: joj_waldio::SyncOption::Full,
            group: false,
        }),
        JournalMode::Waldio(WaldioMode {
            sync: joj_waldio::SyncOption::Full,
            group: true,
        }),
        JournalMode::Waldio(WaldioMode {
            sync: joj_waldio::SyncOption::Fua,
            group: false,
        }),
        JournalMode::Waldio(WaldioMode {
            sync: joj_waldio::SyncOption::Fua,
            group: true,
        }),
        JournalMode::Waldio(WaldioMode {
            sync: joj_waldio::SyncOption::Normal,
            group: false,
        }),
        JournalMode::Waldio(WaldioMode {
            sync: joj_waldio::SyncOption::Normal,
            group: true,
        }),
    ];

    /// SQLite's WAL mode underneath (stock WAL or WALDIO).
    pub fn is_wal(self) -> bool {
        matches!(self, JournalMode::Wal | JournalMode::Waldio(_))
    }

    pub fn pragma(self) -> &'static str {
        match self {
            JournalMode::Delete => "DELETE",
            JournalMode::Truncate => "TRUNCATE",
            JournalMode::Persist => "PERSIST",
            JournalMode::Wal => "WAL",
            JournalMode::Memory => "MEMORY",
            JournalMode::Off => "OFF",
            JournalMode::Waldio(_) => "WAL",
            JournalMode::Xftl => "DELETE",
        }
    }

    pub fn from_mobibench(n: u32) -> Result<Self, String> {
        Ok(match n {
            0 => JournalMode::Delete,
            1 => JournalMode::Truncate,
            2 => JournalMode::Persist,
            3 => JournalMode::Wal,
            4 => JournalMode::Memory,
            5 => JournalMode::Off,
            _ => {
                return Err(format!(
                    "-j {n}: Mobibench journal modes are 0..=5 (0=DELETE 1=TRUNCATE 2=PERSIST 3=WAL 4=MEMORY 5=OFF)"
                ));
            }
        })
    }
}

impl fmt::Display for JournalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JournalMode::Waldio(m) => {
                f.write_str("waldio")?;
                if m.sync != joj_waldio::SyncOption::Full {
                    write!(f, "-{}", m.sync)?;
                }
                if m.group {
                    f.write_str("-gs")?;
                }
                Ok(())
            }
            JournalMode::Xftl => f.write_str("xftl"),
            other => f.write_str(&other.pragma().to_ascii_lowercase()),
        }
    }
}

impl FromStr for JournalMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "delete" => JournalMode::Delete,
            "truncate" => JournalMode::Truncate,
            "persist" => JournalMode::Persist,
            "wal" => JournalMode::Wal,
            "memory" => JournalMode::Memory,
            "off" => JournalMode::Off,
            "xftl" => JournalMode::Xftl,
            other if other.starts_with("waldio") => {
                let rest = &other["waldio".len()..];
                let (rest, group) = match rest.strip_suffix("-gs") {
                    Some(r) => (r, true),
                    None => (rest, false),
                };
                let sync = match rest {
                    "" | "-full" => joj_waldio::SyncOption::Full,
                    "-fua" | "-pdio" => joj_waldio::SyncOption::Fua,
                    "-normal" => joj_waldio::SyncOption::Normal,
                    _ => {
                        return Err(format!(
                            "unknown WALDIO mode '{other}': use waldio, waldio-fua or waldio-normal, each optionally with -gs (group sync)"
                        ));
                    }
                };
                JournalMode::Waldio(WaldioMode { sync, group })
            }
            other => {
                return Err(format!(
                    "unknown journal mode '{other}': use delete, truncate, persist, wal, memory, off, waldio[-fua|-normal][-gs], or xftl (with --device)"
                ));
            }
        })
    }
}

/// `PRAGMA synchronous` (Mobibench `-s`: 0=OFF 1=NORMAL 2=FULL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Synchronous {
    Off,
    Normal,
    Full,
}

impl Synchronous {
    pub fn pragma(self) -> &'static str {
        match self {
            Synchronous::Off => "OFF",
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        }
    }

    pub fn from_mobibench(n: u32) -> Result<Self, String> {
        Ok(match n {
            0 => Synchronous::Off,
            1 => Synchronous::Normal,
            2 => Synchronous::Full,
            _ => {
                return Err(format!(
                    "-s {n}: Mobibench synchronous modes are 0=OFF 1=NORMAL 2=FULL"
                ));
            }
        })
    }
}

impl fmt::Display for Synchronous {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pragma().to_ascii_lowercase())
    }
}

impl FromStr for Synchronous {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "off" | "0" => Synchronous::Off,
            "normal" | "1" => Synchronous::Normal,
            "full" | "2" => Synchronous::Full,
            other => {
                return Err(format!(
                    "unknown synchronous mode '{other}': use off, normal or full"
                ));
            }
        })
    }
}

/// The SQL statement a database workload repeats (Mobibench `-d`: 0=insert 1=update 2=delete).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DbOp {
    Insert,
    Update,
    Delete,
    Select,
}

impl DbOp {
    pub fn from_mobibench(n: u32) -> Result<Self, String> {
        Ok(match n {
            0 => DbOp::Insert,
            1 => DbOp::Update,
            2 => DbOp::Delete,
            3 => DbOp::Select,
            _ => {
                return Err(format!(
                    "-d {n}: Mobibench DB modes are 0=insert 1=update 2=delete (joj adds 3=select)"
                ));
            }
        })
    }
}

impl fmt::Display for DbOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DbOp::Insert => "insert",
            DbOp::Update => "update",
            DbOp::Delete => "delete",
            DbOp::Select => "select",
        })
    }
}

impl FromStr for DbOp {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "insert" => DbOp::Insert,
            "update" => DbOp::Update,
            "delete" => DbOp::Delete,
            "select" => DbOp::Select,
            other => {
                return Err(format!(
                    "unknown operation '{other}': use insert, update, delete or select (or a file workload with --file)"
                ));
            }
        })
    }
}

/// Order of the keys the statements touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum KeyOrder {
    #[default]
    Sequential,
    Random,
}

impl FromStr for KeyOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "seq" | "sequential" => Ok(KeyOrder::Sequential),
            "rand" | "random" => Ok(KeyOrder::Random),
            other => Err(format!(
                "unknown key order '{other}': use sequential or random"
            )),
        }
    }
}

/// Whether the run starts on a fresh database (the papers' setup: the WAL or journal file is
/// created and grows during the run) or in steady state (the WAL file already has its full
/// size: a warm-up of the same transactions is run and checkpointed before measuring).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum StartState {
    #[default]
    Fresh,
    Steady,
}

impl FromStr for StartState {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "fresh" => Ok(StartState::Fresh),
            "steady" => Ok(StartState::Steady),
            other => Err(format!(
                "unknown start state '{other}': use fresh or steady"
            )),
        }
    }
}

/// A SQLite workload.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DbWorkload {
    pub op: DbOp,
    pub transactions: u64,
    pub statements_per_txn: u32,
    pub tables: u32,
    /// Databases attached to each connection besides `main`; statements are spread over all.
    pub attached_dbs: u32,
    /// Threads, each with its own connection and database file.
    pub threads: u32,
    pub interval_ms: u64,
    pub record_bytes: usize,
    pub page_size: u32,
    pub journal: JournalMode,
    pub synchronous: Synchronous,
    pub sync_call: SyncCall,
    pub keys: KeyOrder,
    /// Rows each table holds before the run, at least this many KiB of records (Mobibench
    /// fills tables for update and delete; `None` = 0 for insert, 40 KiB otherwise).
    pub prefill_kib: Option<u64>,
    /// Mobibench's exact schema (`id INTEGER PRIMARY KEY AUTOINCREMENT`), which also updates
    /// `sqlite_sequence` in every insert.
    pub autoincrement: bool,
    pub start: StartState,
    pub seed: u64,
    /// One of the X-FTL paper's workloads instead of `op`: each of the `transactions` is one
    /// of its transactions, on one connection (`threads` and `attached_dbs` must stay at 1
    /// and 0; `op`, `statements_per_txn`, `tables`, `record_bytes`, `keys`, `prefill_kib` and
    /// `autoincrement` do not apply).
    #[serde(default)]
    pub paper: Option<PaperWorkload>,
}

impl Default for DbWorkload {
    fn default() -> Self {
        DbWorkload {
            op: DbOp::Insert,
            transactions: 1000,
            statements_per_txn: 1,
            tables: 1,
            attached_dbs: 0,
            threads: 1,
            interval_ms: 0,
            record_bytes: 100,
            page_size: 4096,
            journal: JournalMode::Wal,
            synchronous: Synchronous::Full,
            sync_call: SyncCall::Fdatasync,
            keys: KeyOrder::Sequential,
            prefill_kib: None,
            autoincrement: false,
            start: StartState::Fresh,
            seed: 42,
            paper: None,
        }
    }
}

impl DbWorkload {
    /// Check the parameters before anything is created; the message names the fix.
    pub fn validate(&self) -> Result<(), String> {
        if self.transactions == 0 {
            return Err("-n must be at least 1 transaction".into());
        }
        if self.statements_per_txn == 0 || self.tables == 0 || self.threads == 0 {
            return Err(
                "statements per transaction, tables and threads must each be at least 1".into(),
            );
        }
        if !(512..=65536).contains(&self.page_size) || !self.page_size.is_power_of_two() {
            return Err(format!(
                "page size {} is not a power of two in 512..=65536 (SQLite's range)",
                self.page_size
            ));
        }
        if self.record_bytes == 0 || self.record_bytes > 1_000_000 {
            return Err(format!(
                "record size {} bytes must be in 1..=1000000",
                self.record_bytes
            ));
        }
        if self.attached_dbs > 9 {
            return Err(
                "at most 9 attached databases (SQLite's default SQLITE_MAX_ATTACHED is 10)".into(),
            );
        }
        if let Some(p) = &self.paper {
            p.validate()?;
            if self.threads != 1 {
                return Err(format!(
                    "{} threads: the paper workloads run on one connection, as the X-FTL paper did (SQLite locks the whole database file); use one thread",
                    self.threads
                ));
            }
            if self.attached_dbs != 0 {
                return Err(format!(
                    "{} attached databases: the paper workloads use one database file",
                    self.attached_dbs
                ));
            }
        }
        Ok(())
    }

    /// What the run does, for labels and tables: the paper workload's name or the operation.
    pub fn name(&self) -> String {
        match &self.paper {
            Some(p) => p.name().to_string(),
            None => self.op.to_string(),
        }
    }

    pub fn prefill_kib(&self) -> u64 {
        self.prefill_kib.unwrap_or(match self.op {
            DbOp::Insert => 0,
            _ => 40,
        })
    }
}

/// Access pattern of a file workload (Mobibench `-a`; joj adds 4=append).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileAccess {
    Write,
    RandWrite,
    Read,
    RandRead,
    Append,
}

impl FileAccess {
    pub fn from_mobibench(n: u32) -> Result<Self, String> {
        Ok(match n {
            0 => FileAccess::Write,
            1 => FileAccess::RandWrite,
            2 => FileAccess::Read,
            3 => FileAccess::RandRead,
            4 => FileAccess::Append,
            _ => {
                return Err(format!(
                    "-a {n}: access modes are 0=write 1=random write 2=read 3=random read 4=append"
                ));
            }
        })
    }

    pub fn is_write(self) -> bool {
        matches!(
            self,
            FileAccess::Write | FileAccess::RandWrite | FileAccess::Append
        )
    }
}

impl FromStr for FileAccess {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "write" | "seqwrite" => FileAccess::Write,
            "randwrite" | "random-write" => FileAccess::RandWrite,
            "read" | "seqread" => FileAccess::Read,
            "randread" | "random-read" => FileAccess::RandRead,
            "append" => FileAccess::Append,
            other => {
                return Err(format!(
                    "unknown file access '{other}': use write, randwrite, read, randread or append"
                ));
            }
        })
    }
}

impl fmt::Display for FileAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileAccess::Write => "write",
            FileAccess::RandWrite => "randwrite",
            FileAccess::Read => "read",
            FileAccess::RandRead => "randread",
            FileAccess::Append => "append",
        })
    }
}

/// How each file I/O is made durable (Mobibench `-y`: 0=normal 1=O_SYNC 2=fsync 3=O_DIRECT
/// 4=O_DIRECT+sync 8=fdatasync; the mmap modes 5–7 are not offered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileSync {
    Buffered,
    OSync,
    Fsync,
    Fdatasync,
    ODirect,
    ODirectDsync,
}

impl FileSync {
    pub fn from_mobibench(n: u32) -> Result<Self, String> {
        Ok(match n {
            0 => FileSync::Buffered,
            1 => FileSync::OSync,
            2 => FileSync::Fsync,
            3 => FileSync::ODirect,
            4 => FileSync::ODirectDsync,
            8 => FileSync::Fdatasync,
            5..=7 => {
                return Err(format!(
                    "-y {n}: Mobibench's mmap modes are not supported by joj; use 0=normal 1=O_SYNC 2=fsync 3=O_DIRECT 4=O_DIRECT+O_DSYNC 8=fdatasync"
                ));
            }
            _ => {
                return Err(format!(
                    "-y {n}: sync modes are 0=normal 1=O_SYNC 2=fsync 3=O_DIRECT 4=O_DIRECT+O_DSYNC 8=fdatasync"
                ));
            }
        })
    }

    pub fn is_direct(self) -> bool {
        matches!(self, FileSync::ODirect | FileSync::ODirectDsync)
    }
}

impl FromStr for FileSync {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "buffered" | "normal" | "none" => FileSync::Buffered,
            "osync" | "o_sync" => FileSync::OSync,
            "fsync" => FileSync::Fsync,
            "fdatasync" => FileSync::Fdatasync,
            "direct" | "odirect" | "o_direct" => FileSync::ODirect,
            "direct-dsync" | "odirect-dsync" | "o_direct+o_dsync" => FileSync::ODirectDsync,
            other => {
                return Err(format!(
                    "unknown file sync '{other}': use buffered, osync, fsync, fdatasync, direct or direct-dsync"
                ));
            }
        })
    }
}

impl fmt::Display for FileSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileSync::Buffered => "buffered",
            FileSync::OSync => "osync",
            FileSync::Fsync => "fsync",
            FileSync::Fdatasync => "fdatasync",
            FileSync::ODirect => "direct",
            FileSync::ODirectDsync => "direct-dsync",
        })
    }
}

/// A file workload (Mobibench's file mode).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileWorkload {
    pub access: FileAccess,
    pub sync: FileSync,
    pub file_size_bytes: u64,
    pub record_bytes: u64,
    pub threads: u32,
    pub seed: u64,
}

impl Default for FileWorkload {
    fn default() -> Self {
        FileWorkload {
            access: FileAccess::Write,
            sync: FileSync::Buffered,
            file_size_bytes: 1024 * 1024,
            record_bytes: 4096,
            threads: 1,
            seed: 42,
        }
    }
}

impl FileWorkload {
    pub fn validate(&self) -> Result<(), String> {
        if self.record_bytes == 0 || self.file_size_bytes < self.record_bytes {
            return Err(format!(
                "file size {} B must be at least one record of {} B",
                self.file_size_bytes, self.record_bytes
            ));
        }
        if self.sync.is_direct() && !self.record_bytes.is_multiple_of(512) {
            return Err(format!(
                "O_DIRECT needs records that are a multiple of the device's logical block (512 B or 4 KiB); {} B is not",
                self.record_bytes
            ));
        }
        if self.threads == 0 {
            return Err("threads must be at least 1".into());
        }
        Ok(())
    }

    pub fn ops_per_thread(&self) -> u64 {
        self.file_size_bytes / self.record_bytes
    }
}
