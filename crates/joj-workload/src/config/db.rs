//! A SQLite workload as plain data, with Mobibench's defaults (one table, one 100-byte
//! statement per transaction, page size 4096, `synchronous=FULL`).

use super::bounds;
use super::mode::{JournalMode, Synchronous};
use crate::error::ConfigError;
use crate::paper::PaperWorkload;
use joj_vfs::SyncCall;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

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
    /// The names `FromStr` reads and `Display` writes.
    pub const NAMES: [&'static str; 4] = ["insert", "update", "delete", "select"];

    pub fn from_mobibench(n: u32) -> Result<Self, ConfigError> {
        Ok(match n {
            0 => DbOp::Insert,
            1 => DbOp::Update,
            2 => DbOp::Delete,
            3 => DbOp::Select,
            _ => {
                return Err(ConfigError::MobibenchCode {
                    flag: 'd',
                    given: n,
                    choices: "Mobibench DB modes are 0=insert 1=update 2=delete (joj adds 3=select)",
                });
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
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "insert" => DbOp::Insert,
            "update" => DbOp::Update,
            "delete" => DbOp::Delete,
            "select" => DbOp::Select,
            _ => {
                return Err(ConfigError::Unknown {
                    what: "operation",
                    given: s.to_string(),
                    choices: "insert, update, delete or select (or a file operation: write, randwrite, append, read, randread)",
                });
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

impl KeyOrder {
    /// The names `FromStr` reads (also `seq` and `rand`).
    pub const NAMES: [&'static str; 2] = ["sequential", "random"];
}

impl FromStr for KeyOrder {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s.to_ascii_lowercase().as_str() {
            "seq" | "sequential" => Ok(KeyOrder::Sequential),
            "rand" | "random" => Ok(KeyOrder::Random),
            _ => Err(ConfigError::Unknown {
                what: "key order",
                given: s.to_string(),
                choices: "sequential or random",
            }),
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

impl StartState {
    /// The names `FromStr` reads.
    pub const NAMES: [&'static str; 2] = ["fresh", "steady"];
}

impl FromStr for StartState {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s.to_ascii_lowercase().as_str() {
            "fresh" => Ok(StartState::Fresh),
            "steady" => Ok(StartState::Steady),
            _ => Err(ConfigError::Unknown {
                what: "start state",
                given: s.to_string(),
                choices: "fresh or steady",
            }),
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

/// A SQLite page size: a power of two from 512 to 65536 (`PRAGMA page_size` ignores any
/// other, silently).
pub fn check_page_size(page_size: u32) -> Result<(), ConfigError> {
    if (512..=65536).contains(&page_size) && page_size.is_power_of_two() {
        Ok(())
    } else {
        Err(ConfigError::PageSize(page_size))
    }
}

impl DbWorkload {
    /// Check the parameters before anything is created; the error names the fix.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.transactions == 0 {
            return Err(ConfigError::ZeroTransactions);
        }
        for (n, what) in [
            (self.statements_per_txn, "statements per transaction"),
            (self.tables, "tables"),
            (self.threads, "threads"),
        ] {
            if n == 0 {
                return Err(ConfigError::Zero { what });
            }
        }
        check_page_size(self.page_size)?;
        if self.record_bytes == 0 || self.record_bytes > 1_000_000 {
            return Err(ConfigError::RecordBytes(self.record_bytes));
        }
        if self.attached_dbs > 9 {
            return Err(ConfigError::TooManyAttached(self.attached_dbs));
        }
        self.check_bounds()?;
        if let Some(p) = &self.paper {
            p.validate()?;
            if self.threads != 1 {
                return Err(ConfigError::PaperThreads {
                    threads: self.threads,
                });
            }
            if self.attached_dbs != 0 {
                return Err(ConfigError::PaperAttached {
                    attached: self.attached_dbs,
                });
            }
        }
        Ok(())
    }

    /// Every size-like number against its bound in [`bounds`], before any of them sizes
    /// anything.
    fn check_bounds(&self) -> Result<(), ConfigError> {
        use bounds::*;
        at_most(
            "transactions per thread",
            self.transactions,
            MAX_TRANSACTIONS,
            "a latency sample is kept per transaction, and 10^8 commits take over a day",
        )?;
        at_most(
            "threads",
            self.threads.into(),
            MAX_THREADS.into(),
            "each thread has its own connection and database files",
        )?;
        at_most(
            "databases (threads × (1 + attached))",
            u64::from(self.threads) * (1 + u64::from(self.attached_dbs)),
            MAX_DATABASES,
            "each keeps up to three files open; more would exhaust the descriptor limit",
        )?;
        at_most(
            "tables",
            self.tables.into(),
            MAX_TABLES.into(),
            "each table gets its own prepared statements",
        )?;
        at_most(
            "statements per table and transaction",
            self.statements_per_txn.into(),
            MAX_STATEMENTS.into(),
            "one transaction would hold millions of rows",
        )?;
        at_most(
            "milliseconds between transactions",
            self.interval_ms,
            MAX_INTERVAL_MS,
            "one hour",
        )?;
        at_most(
            "KiB of prefill per table",
            self.prefill_kib.unwrap_or(0),
            MAX_PREFILL_KIB,
            "16 GiB",
        )
    }

    /// What the run does, for labels and tables: the paper workload's name or the operation.
    pub fn name(&self) -> String {
        match &self.paper {
            Some(p) => p.name().to_string(),
            None => self.op.to_string(),
        }
    }

    /// Transactions a steady-state run makes before its window (0 for a fresh start): the
    /// measured ones and a quarter more (at least 8), so that the WAL the warm-up leaves is
    /// larger than the window's transactions need, whatever their keys.
    pub fn warm_up_transactions(&self) -> u64 {
        match self.start {
            StartState::Fresh => 0,
            StartState::Steady => self.transactions + (self.transactions / 4).max(8),
        }
    }

    pub fn prefill_kib(&self) -> u64 {
        self.prefill_kib.unwrap_or(match self.op {
            DbOp::Insert => 0,
            _ => 40,
        })
    }
}
