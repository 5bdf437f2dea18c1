//! Typed values of joj's enumerated options: each parser lists the real choices (so `--help`
//! shows them) and turns the chosen one into the library's type through the library's own
//! parser, so a name means the same on the command line and in the library.

use std::str::FromStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use joj_linux::FsKind;
use joj_vfs::SyncCall;
use joj_workload::paper::PaperWorkload;
use joj_workload::{DbOp, FileAccess, FileSync, JournalMode, KeyOrder, StartState, Synchronous};

type Parser<T> = clap::builder::TryMapValueParser<
    PossibleValuesParser,
    fn(String) -> Result<T, Box<dyn std::error::Error + Send + Sync>>,
>;

/// A parser that accepts `values` (with their aliases) and maps the chosen one with `map`.
fn choices<T: Clone + Send + Sync + 'static>(
    values: Vec<PossibleValue>,
    map: fn(String) -> Result<T, Box<dyn std::error::Error + Send + Sync>>,
) -> Parser<T> {
    PossibleValuesParser::new(values).try_map(map)
}

fn named(names: &[&'static str]) -> Vec<PossibleValue> {
    names.iter().map(|n| PossibleValue::new(*n)).collect()
}

fn parse<T>(s: String) -> Result<T, Box<dyn std::error::Error + Send + Sync>>
where
    T: FromStr,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    s.parse::<T>().map_err(Into::into)
}

/// Where a run's files live, as `--fs` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fs {
    /// A directory of the host filesystem.
    Host,
    /// A scratch filesystem joj makes on a loop device.
    Scratch(FsKind),
}

impl Fs {
    pub fn scratch(self) -> Option<FsKind> {
        match self {
            Fs::Host => None,
            Fs::Scratch(kind) => Some(kind),
        }
    }
}

/// `--fs`: `host` or a scratch filesystem kind.
pub fn fs() -> Parser<Fs> {
    let mut values = vec![PossibleValue::new("host").help("a directory of the host filesystem")];
    values.extend(FsKind::ALL.iter().map(|k| PossibleValue::new(k.name())));
    choices(values, |s| {
        if s == "host" {
            Ok(Fs::Host)
        } else {
            parse::<FsKind>(s).map(Fs::Scratch)
        }
    })
}

/// `--fs` of commands that need a scratch filesystem.
pub fn scratch_fs() -> Parser<FsKind> {
    choices(named(&FsKind::ALL.map(FsKind::name)), parse::<FsKind>)
}

/// `-j/--journal`: a journal mode by name, or Mobibench's number.
pub fn journal() -> Parser<JournalMode> {
    let mut values = named(&JournalMode::NAMES);
    values[JournalMode::NAMES.len() - 1] = PossibleValue::new("xftl").help("needs --device");
    for (n, mode) in ["DELETE", "TRUNCATE", "PERSIST", "WAL", "MEMORY", "OFF"]
        .iter()
        .enumerate()
    {
        values.push(PossibleValue::new(["0", "1", "2", "3", "4", "5"][n]).help(*mode));
    }
    values.push(PossibleValue::new("waldio-full").hide(true));
    values.push(PossibleValue::new("waldio-full-gs").hide(true));
    choices(values, |s| match s.parse::<u32>() {
        Ok(n) => JournalMode::from_mobibench(n).map_err(Into::into),
        Err(_) => parse::<JournalMode>(s),
    })
}

/// `--modes` of compare and restart: journal modes by name.
pub fn mode() -> Parser<JournalMode> {
    choices(named(&JournalMode::NAMES), parse::<JournalMode>)
}

/// `-s/--sync`: `PRAGMA synchronous` by name or Mobibench's number.
pub fn synchronous() -> Parser<Synchronous> {
    let mut values = named(&Synchronous::NAMES);
    values.extend(["0", "1", "2"].map(|n| PossibleValue::new(n).hide(true)));
    choices(values, parse::<Synchronous>)
}

/// `--sync-call`: the system call joj's VFS issues when SQLite syncs.
pub fn sync_call() -> Parser<SyncCall> {
    choices(named(&["fdatasync", "fsync"]), |s| {
        Ok(if s == "fsync" {
            SyncCall::Fsync
        } else {
            SyncCall::Fdatasync
        })
    })
}

/// `--start`.
pub fn start() -> Parser<StartState> {
    choices(named(&StartState::NAMES), parse::<StartState>)
}

/// `--keys`.
pub fn keys() -> Parser<KeyOrder> {
    let values = vec![
        PossibleValue::new("sequential").alias("seq"),
        PossibleValue::new("random").alias("rand"),
    ];
    choices(values, parse::<KeyOrder>)
}

/// What `--op` names: a SQLite operation or a file access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Db(DbOp),
    File(FileAccess),
}

/// `--op`: a SQLite operation or a file access pattern.
pub fn op() -> Parser<Op> {
    let mut values = named(&DbOp::NAMES);
    values.extend(FileAccess::NAMES.iter().map(|n| match *n {
        "write" => PossibleValue::new("write").alias("seqwrite"),
        "read" => PossibleValue::new("read").alias("seqread"),
        other => PossibleValue::new(other),
    }));
    choices(values, |s| match s.parse::<DbOp>() {
        Ok(op) => Ok(Op::Db(op)),
        Err(_) => parse::<FileAccess>(s).map(Op::File),
    })
}

/// `--op` of commands that run SQLite only.
pub fn db_op() -> Parser<DbOp> {
    choices(named(&DbOp::NAMES), parse::<DbOp>)
}

/// `--file-sync`.
pub fn file_sync() -> Parser<FileSync> {
    let values = FileSync::NAMES
        .iter()
        .map(|n| match *n {
            "buffered" => PossibleValue::new("buffered").aliases(["normal", "none"]),
            "direct" => PossibleValue::new("direct").alias("odirect"),
            other => PossibleValue::new(other),
        })
        .collect();
    choices(values, parse::<FileSync>)
}

/// `--workload`: one of the X-FTL paper's workloads (its sizes come from other options).
pub fn paper_workload() -> Parser<String> {
    let values = PaperWorkload::NAMES
        .iter()
        .map(|n| match *n {
            "xftl-synthetic" => PossibleValue::new(*n).alias("synthetic"),
            "rl-bench" => PossibleValue::new(*n).alias("rlbench"),
            other => PossibleValue::new(other),
        })
        .collect();
    choices(values, Ok)
}

/// A Mobibench numeric flag: `codes` with their meanings, mapped by `map`.
fn mobibench<T: Clone + Send + Sync + 'static>(
    codes: &[(&'static str, &'static str)],
    map: fn(String) -> Result<T, Box<dyn std::error::Error + Send + Sync>>,
) -> Parser<T> {
    let values = codes
        .iter()
        .map(|(code, help)| PossibleValue::new(*code).help(*help))
        .collect();
    choices(values, map)
}

/// Mobibench `-d`: the DB mode.
pub fn mobibench_db() -> Parser<DbOp> {
    mobibench(
        &[
            ("0", "insert"),
            ("1", "update"),
            ("2", "delete"),
            ("3", "select (joj)"),
        ],
        |s| DbOp::from_mobibench(s.parse().unwrap_or(u32::MAX)).map_err(Into::into),
    )
}

/// Mobibench `-a`: the file access mode.
pub fn mobibench_access() -> Parser<FileAccess> {
    mobibench(
        &[
            ("0", "write"),
            ("1", "random write"),
            ("2", "read"),
            ("3", "random read"),
            ("4", "append"),
        ],
        |s| FileAccess::from_mobibench(s.parse().unwrap_or(u32::MAX)).map_err(Into::into),
    )
}

/// Mobibench `-y`: the file sync mode (the mmap modes 5–7 and the fbarrier modes 9–10 are
/// refused with the reason).
pub fn mobibench_file_sync() -> Parser<FileSync> {
    let mut values: Vec<PossibleValue> = [
        ("0", "normal (buffered)"),
        ("1", "O_SYNC"),
        ("2", "fsync"),
        ("3", "O_DIRECT"),
        ("4", "O_DIRECT|O_SYNC"),
        ("8", "fdatasync"),
    ]
    .iter()
    .map(|(code, help)| PossibleValue::new(*code).help(*help))
    .collect();
    values.extend(["5", "6", "7", "9", "10"].map(|n| PossibleValue::new(n).hide(true)));
    choices(values, |s| {
        FileSync::from_mobibench(s.parse().unwrap_or(u32::MAX)).map_err(Into::into)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, Command};

    fn parsed<T: Clone + Send + Sync + 'static>(p: Parser<T>, s: &str) -> Result<T, String> {
        let cmd = Command::new("t").arg(Arg::new("v").value_parser(p));
        cmd.try_get_matches_from(["t", s])
            .map(|m| m.get_one::<T>("v").cloned().expect("a value"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn every_listed_name_parses_to_the_library_value_of_that_name() {
        for name in JournalMode::NAMES {
            assert_eq!(parsed(journal(), name).unwrap().to_string(), name);
            assert_eq!(parsed(mode(), name).unwrap().to_string(), name);
        }
        assert_eq!(parsed(journal(), "3"), Ok(JournalMode::Wal));
        assert_eq!(parsed(synchronous(), "1"), Ok(Synchronous::Normal));
        assert_eq!(parsed(fs(), "host"), Ok(Fs::Host));
        assert_eq!(parsed(fs(), "xfs"), Ok(Fs::Scratch(FsKind::Xfs)));
        assert_eq!(
            parsed(op(), "randwrite"),
            Ok(Op::File(FileAccess::RandWrite))
        );
        assert_eq!(parsed(op(), "select"), Ok(Op::Db(DbOp::Select)));
        assert_eq!(parsed(keys(), "rand"), Ok(KeyOrder::Random));
        assert_eq!(parsed(mobibench_db(), "1"), Ok(DbOp::Update));
        assert!(parsed(journal(), "waldio-fast").is_err());
        let mmap = parsed(mobibench_file_sync(), "6").unwrap_err();
        assert!(mmap.contains("mmap"), "{mmap}");
    }
}
