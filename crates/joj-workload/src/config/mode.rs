//! The journal modes a database workload can ask for, and SQLite's own settings of its log.
//!
//! [`JournalMode`] is what a user picks (Mobibench's `-j`, a row of `joj compare`): SQLite's six
//! modes, joj's WALDIO modes and X-FTL. What each one runs on — the VFS chain, the filesystem or
//! device, the pragmas SQLite is given — is decided in one place, an experiment's stack; here
//! are only the facts of each mode: its name, and which of SQLite's journal modes it is.

use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// SQLite's journal modes, as `PRAGMA journal_mode` takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SqliteJournal {
    Delete,
    Truncate,
    Persist,
    Wal,
    Memory,
    Off,
}

impl SqliteJournal {
    pub fn pragma(self) -> &'static str {
        match self {
            SqliteJournal::Delete => "DELETE",
            SqliteJournal::Truncate => "TRUNCATE",
            SqliteJournal::Persist => "PERSIST",
            SqliteJournal::Wal => "WAL",
            SqliteJournal::Memory => "MEMORY",
            SqliteJournal::Off => "OFF",
        }
    }

    pub fn is_wal(self) -> bool {
        self == SqliteJournal::Wal
    }

    /// A rollback journal in a file (DELETE, TRUNCATE, PERSIST).
    pub fn is_rollback_file(self) -> bool {
        matches!(
            self,
            SqliteJournal::Delete | SqliteJournal::Truncate | SqliteJournal::Persist
        )
    }
}

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

/// The journal modes joj runs (Mobibench `-j`: 0=DELETE 1=TRUNCATE 2=PERSIST 3=WAL 4=MEMORY
/// 5=OFF), joj's WALDIO modes (`waldio`, `waldio-fua`, `waldio-normal`, each with `-gs`) and
/// X-FTL.
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
    /// i-FTL: as `Xftl`, on the i-FTL device (mapping tables in NVM, lazy GC,
    /// `docs/formats/iftl.md`).
    Iftl,
}

const JOURNAL_CHOICES: &str = "delete, truncate, persist, wal, memory, off, waldio[-fua|-normal][-gs], xftl or iftl (xftl and iftl with --device)";

impl JournalMode {
    /// Every mode's name (what `Display` writes and `FromStr` reads).
    pub const NAMES: [&'static str; 14] = [
        "delete",
        "truncate",
        "persist",
        "wal",
        "memory",
        "off",
        "waldio",
        "waldio-gs",
        "waldio-fua",
        "waldio-fua-gs",
        "waldio-normal",
        "waldio-normal-gs",
        "xftl",
        "iftl",
    ];

    /// SQLite's own six modes, in the order `joj compare` lists them.
    pub const SQLITE: [JournalMode; 6] = [
        JournalMode::Off,
        JournalMode::Memory,
        JournalMode::Wal,
        JournalMode::Delete,
        JournalMode::Truncate,
        JournalMode::Persist,
    ];

    /// The six WALDIO modes: each durability option without and with group sync.
    pub const WALDIO_ALL: [JournalMode; 6] = [
        JournalMode::waldio(joj_waldio::SyncOption::Full, false),
        JournalMode::waldio(joj_waldio::SyncOption::Full, true),
        JournalMode::waldio(joj_waldio::SyncOption::Fua, false),
        JournalMode::waldio(joj_waldio::SyncOption::Fua, true),
        JournalMode::waldio(joj_waldio::SyncOption::Normal, false),
        JournalMode::waldio(joj_waldio::SyncOption::Normal, true),
    ];

    pub const fn waldio(sync: joj_waldio::SyncOption, group: bool) -> JournalMode {
        JournalMode::Waldio(WaldioMode { sync, group })
    }

    /// Whether the mode runs on the emulated transactional device (no kernel filesystem).
    pub fn on_device(self) -> bool {
        matches!(self, JournalMode::Xftl | JournalMode::Iftl)
    }

    /// Which of SQLite's journal modes this mode runs SQLite in: WALDIO is SQLite's WAL under
    /// another VFS, X-FTL its rollback mode whose batches the device commits.
    pub fn sqlite_journal(self) -> SqliteJournal {
        match self {
            JournalMode::Delete | JournalMode::Xftl | JournalMode::Iftl => SqliteJournal::Delete,
            JournalMode::Truncate => SqliteJournal::Truncate,
            JournalMode::Persist => SqliteJournal::Persist,
            JournalMode::Wal | JournalMode::Waldio(_) => SqliteJournal::Wal,
            JournalMode::Memory => SqliteJournal::Memory,
            JournalMode::Off => SqliteJournal::Off,
        }
    }

    /// SQLite's WAL mode underneath (stock WAL or WALDIO).
    pub fn is_wal(self) -> bool {
        self.sqlite_journal().is_wal()
    }

    /// `PRAGMA journal_mode` of the mode.
    pub fn pragma(self) -> &'static str {
        self.sqlite_journal().pragma()
    }

    /// Mobibench's `-j` number.
    pub fn from_mobibench(n: u32) -> Result<Self, ConfigError> {
        Ok(match n {
            0 => JournalMode::Delete,
            1 => JournalMode::Truncate,
            2 => JournalMode::Persist,
            3 => JournalMode::Wal,
            4 => JournalMode::Memory,
            5 => JournalMode::Off,
            _ => {
                return Err(ConfigError::MobibenchCode {
                    flag: 'j',
                    given: n,
                    choices: "Mobibench journal modes are 0..=5 (0=DELETE 1=TRUNCATE 2=PERSIST 3=WAL 4=MEMORY 5=OFF)",
                });
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
            JournalMode::Iftl => f.write_str("iftl"),
            other => f.write_str(&other.pragma().to_ascii_lowercase()),
        }
    }
}

impl FromStr for JournalMode {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        let unknown = || ConfigError::Unknown {
            what: "journal mode",
            given: s.to_string(),
            choices: JOURNAL_CHOICES,
        };
        Ok(match s.to_ascii_lowercase().as_str() {
            "delete" => JournalMode::Delete,
            "truncate" => JournalMode::Truncate,
            "persist" => JournalMode::Persist,
            "wal" => JournalMode::Wal,
            "memory" => JournalMode::Memory,
            "off" => JournalMode::Off,
            "xftl" => JournalMode::Xftl,
            "iftl" => JournalMode::Iftl,
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
                    _ => return Err(unknown()),
                };
                JournalMode::waldio(sync, group)
            }
            _ => return Err(unknown()),
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
    /// The names `FromStr` reads (Mobibench's `-s` numbers are read too).
    pub const NAMES: [&'static str; 3] = ["off", "normal", "full"];

    pub fn pragma(self) -> &'static str {
        match self {
            Synchronous::Off => "OFF",
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        }
    }

    pub fn from_mobibench(n: u32) -> Result<Self, ConfigError> {
        Ok(match n {
            0 => Synchronous::Off,
            1 => Synchronous::Normal,
            2 => Synchronous::Full,
            _ => {
                return Err(ConfigError::MobibenchCode {
                    flag: 's',
                    given: n,
                    choices: "Mobibench synchronous modes are 0=OFF 1=NORMAL 2=FULL",
                });
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
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "off" | "0" => Synchronous::Off,
            "normal" | "1" => Synchronous::Normal,
            "full" | "2" => Synchronous::Full,
            _ => {
                return Err(ConfigError::Unknown {
                    what: "synchronous mode",
                    given: s.to_string(),
                    choices: "off, normal or full",
                });
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_a_mode_that_displays_as_it() {
        for name in JournalMode::NAMES {
            assert_eq!(name.parse::<JournalMode>().unwrap().to_string(), name);
        }
        for name in Synchronous::NAMES {
            assert_eq!(name.parse::<Synchronous>().unwrap().to_string(), name);
        }
    }

    #[test]
    fn every_mode_reads_back_its_own_name() {
        for m in JournalMode::SQLITE
            .into_iter()
            .chain(JournalMode::WALDIO_ALL)
            .chain([JournalMode::Xftl, JournalMode::Iftl])
        {
            assert_eq!(m.to_string().parse::<JournalMode>(), Ok(m));
        }
        assert!(matches!(
            "waldio-fast".parse::<JournalMode>(),
            Err(ConfigError::Unknown {
                what: "journal mode",
                ..
            })
        ));
        assert!(matches!(
            JournalMode::from_mobibench(6),
            Err(ConfigError::MobibenchCode {
                flag: 'j',
                given: 6,
                ..
            })
        ));
    }
}
