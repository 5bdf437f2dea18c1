//! A file workload (Mobibench's file mode) as plain data.

use super::bounds;
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

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
    /// The names `FromStr` reads and `Display` writes.
    pub const NAMES: [&'static str; 5] = ["write", "randwrite", "read", "randread", "append"];

    pub fn from_mobibench(n: u32) -> Result<Self, ConfigError> {
        Ok(match n {
            0 => FileAccess::Write,
            1 => FileAccess::RandWrite,
            2 => FileAccess::Read,
            3 => FileAccess::RandRead,
            4 => FileAccess::Append,
            _ => {
                return Err(ConfigError::MobibenchCode {
                    flag: 'a',
                    given: n,
                    choices: "access modes are 0=write 1=random write 2=read 3=random read 4=append",
                });
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
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "write" | "seqwrite" => FileAccess::Write,
            "randwrite" | "random-write" => FileAccess::RandWrite,
            "read" | "seqread" => FileAccess::Read,
            "randread" | "random-read" => FileAccess::RandRead,
            "append" => FileAccess::Append,
            _ => {
                return Err(ConfigError::Unknown {
                    what: "file access",
                    given: s.to_string(),
                    choices: "write, randwrite, read, randread or append",
                });
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
/// 4=O_DIRECT|O_SYNC 8=fdatasync; the mmap modes 5–7 and the fbarrier system calls 9–10,
/// which mainline Linux lacks, are not offered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileSync {
    Buffered,
    OSync,
    Fsync,
    Fdatasync,
    ODirect,
    ODirectDsync,
    /// `O_DIRECT|O_SYNC`: Mobibench's `-y 4`.
    ODirectSync,
}

impl FileSync {
    /// The names `FromStr` reads and `Display` writes.
    pub const NAMES: [&'static str; 7] = [
        "buffered",
        "osync",
        "fsync",
        "fdatasync",
        "direct",
        "direct-dsync",
        "direct-sync",
    ];

    pub fn from_mobibench(n: u32) -> Result<Self, ConfigError> {
        Ok(match n {
            0 => FileSync::Buffered,
            1 => FileSync::OSync,
            2 => FileSync::Fsync,
            3 => FileSync::ODirect,
            4 => FileSync::ODirectSync,
            8 => FileSync::Fdatasync,
            5..=7 => {
                return Err(ConfigError::MobibenchCode {
                    flag: 'y',
                    given: n,
                    choices: "Mobibench's mmap modes are not supported by joj; use 0=normal 1=O_SYNC 2=fsync 3=O_DIRECT 4=O_DIRECT|O_SYNC 8=fdatasync",
                });
            }
            9 | 10 => {
                return Err(ConfigError::MobibenchCode {
                    flag: 'y',
                    given: n,
                    choices: "Mobibench's fbarrier/fdatabarrier modes call system calls mainline Linux does not have; use 0=normal 1=O_SYNC 2=fsync 3=O_DIRECT 4=O_DIRECT|O_SYNC 8=fdatasync",
                });
            }
            _ => {
                return Err(ConfigError::MobibenchCode {
                    flag: 'y',
                    given: n,
                    choices: "sync modes are 0=normal 1=O_SYNC 2=fsync 3=O_DIRECT 4=O_DIRECT|O_SYNC 8=fdatasync",
                });
            }
        })
    }

    pub fn is_direct(self) -> bool {
        matches!(
            self,
            FileSync::ODirect | FileSync::ODirectDsync | FileSync::ODirectSync
        )
    }
}

impl FromStr for FileSync {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "buffered" | "normal" | "none" => FileSync::Buffered,
            "osync" | "o_sync" => FileSync::OSync,
            "fsync" => FileSync::Fsync,
            "fdatasync" => FileSync::Fdatasync,
            "direct" | "odirect" | "o_direct" => FileSync::ODirect,
            "direct-dsync" | "odirect-dsync" | "o_direct+o_dsync" => FileSync::ODirectDsync,
            "direct-sync" | "odirect-sync" | "o_direct+o_sync" => FileSync::ODirectSync,
            _ => {
                return Err(ConfigError::Unknown {
                    what: "file sync",
                    given: s.to_string(),
                    choices: "buffered, osync, fsync, fdatasync, direct, direct-dsync or direct-sync",
                });
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
            FileSync::ODirectSync => "direct-sync",
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
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.record_bytes == 0 || self.file_size_bytes < self.record_bytes {
            return Err(ConfigError::FileSmallerThanRecord {
                file_bytes: self.file_size_bytes,
                record_bytes: self.record_bytes,
            });
        }
        if self.sync.is_direct() && !self.record_bytes.is_multiple_of(512) {
            return Err(ConfigError::DirectRecord {
                record_bytes: self.record_bytes,
            });
        }
        if self.threads == 0 {
            return Err(ConfigError::Zero { what: "threads" });
        }
        bounds::at_most(
            "threads",
            self.threads.into(),
            bounds::MAX_THREADS.into(),
            "each thread writes its own file",
        )?;
        bounds::at_most(
            "bytes per record",
            self.record_bytes,
            bounds::MAX_FILE_RECORD_BYTES,
            "a record is one buffer in memory; 64 MiB",
        )?;
        bounds::at_most(
            "bytes per file",
            self.file_size_bytes,
            bounds::MAX_FILE_BYTES,
            "64 GiB",
        )
    }

    pub fn ops_per_thread(&self) -> u64 {
        self.file_size_bytes / self.record_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn a_bad_file_sync_names_every_choice_it_reads() {
        let e = FileSync::from_str("nope").unwrap_err().to_string();
        for name in FileSync::NAMES {
            assert!(
                e.split(|c: char| c == ',' || c.is_whitespace())
                    .any(|w| w == name),
                "{name} missing from: {e}"
            );
        }
    }
}
