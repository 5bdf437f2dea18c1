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

/// `--fs` of commands that need a scratch filesystem: `host` is known but refused, saying why.
pub fn scratch_fs() -> Parser<FsKind> {
    let mut values = named(&FsKind::ALL.map(FsKind::name));
    values.push(PossibleValue::new("host").hide(true));
    choices(values, |s| {
        if s == "host" {
            return Err(NotOnHost.into());
        }
        parse::<FsKind>(s)
    })
}

/// `--fs` of `joj trace -- COMMAND`: a scratch filesystem; `host` is known but refused, saying
/// why.
pub fn traced_fs() -> Parser<FsKind> {
    let mut values = named(&FsKind::ALL.map(FsKind::name));
    values.push(PossibleValue::new("host").hide(true));
    choices(values, |s| {
        if s == "host" {
            return Err(TraceNotOnHost.into());
        }
        parse::<FsKind>(s)
    })
}

/// `joj trace --fs host -- COMMAND`.
#[derive(Debug, thiserror::Error)]
#[error(
    "joj trace runs the command on a scratch filesystem it makes on a loop device, so that every \
     block request of the device is the command's; a host directory cannot give that; fix: pick \
     a scratch filesystem, e.g. --fs ext4 (needs root)"
)]
struct TraceNotOnHost;

/// `--fs host` where a command cuts the power of a filesystem it made itself.
#[derive(Debug, thiserror::Error)]
#[error(
    "this command cuts the power of a filesystem joj makes on a loop device, which a host \
     directory cannot give; fix: pick a scratch filesystem, e.g. --fs ext4 (needs root)"
)]
struct NotOnHost;

/// `-j/--journal`: a journal mode by name, or Mobibench's number.
pub fn journal() -> Parser<JournalMode> {
    let mut values = named(&JournalMode::NAMES);
    values[JournalMode::NAMES.len() - 2] = PossibleValue::new("xftl").help("needs --device");
    values[JournalMode::NAMES.len() - 1] =
        PossibleValue::new("iftl").help("needs --device (openssd-iftl: the i-FTL paper's board)");
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

/// An unsigned whole-number type a [`Count`] can produce.
pub trait Whole: TryFrom<u64> + Clone + Send + Sync + 'static {
    const MAX: u64;
}

impl Whole for u32 {
    const MAX: u64 = u32::MAX as u64;
}

impl Whole for u64 {
    const MAX: u64 = u64::MAX;
}

impl Whole for usize {
    const MAX: u64 = usize::MAX as u64;
}

/// The largest optimized-journal region `--journal-region-mib` takes: 1 TiB (the paper used
/// 32–512 MiB; larger than any device joj models).
pub const MAX_JOURNAL_REGION_MIB: u64 = 1 << 20;

/// A count or size given on the command line: a whole number in `min..=max`. A negative
/// number, text or an out-of-range value gets one message naming the range (clap's own parser
/// would take `-5` for an unknown flag); the arguments using it set `allow_negative_numbers`
/// so the value reaches it.
#[derive(Clone)]
pub struct Count<T> {
    min: u64,
    max: u64,
    kind: std::marker::PhantomData<T>,
}

/// A whole number of type `T`, any value the type holds.
pub fn count<T: Whole>() -> Count<T> {
    within(0, T::MAX)
}

/// A whole number of type `T` in `min..=max` (`max` capped at what `T` holds).
pub fn within<T: Whole>(min: u64, max: u64) -> Count<T> {
    Count {
        min,
        max: max.min(T::MAX),
        kind: std::marker::PhantomData,
    }
}

impl<T: Whole> Count<T> {
    /// Why `given` is refused, if it is.
    fn check(&self, given: &str) -> Result<T, String> {
        let refused = match given.trim().parse::<i128>() {
            Ok(n) if n < 0 => "a count or size cannot be negative".to_string(),
            Ok(n) if n < i128::from(self.min) => format!("it is below {}", self.min),
            Ok(n) if n > i128::from(self.max) => format!("it is above {}", self.max),
            Ok(n) => {
                return T::try_from(n as u64).map_err(|_| format!("it is above {}", self.max));
            }
            Err(_) => "it is not a whole number".to_string(),
        };
        Err(format!(
            "{refused}; fix: give a whole number from {} to {}",
            self.min, self.max
        ))
    }
}

impl<T: Whole> TypedValueParser for Count<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let given = value.to_string_lossy();
        self.check(&given).map_err(|why| {
            let arg = arg.map_or_else(|| "the value".to_string(), ToString::to_string);
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value '{given}' for '{arg}': {why}\n"),
            )
            .with_cmd(cmd)
        })
    }
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
    fn a_negative_count_is_refused_naming_the_range() {
        let cmd = Command::new("t").arg(
            Arg::new("n")
                .short('n')
                .allow_negative_numbers(true)
                .value_parser(within::<u64>(1, 100)),
        );
        let run = |v: &str| {
            cmd.clone()
                .try_get_matches_from(["t", "-n", v])
                .map(|m| *m.get_one::<u64>("n").expect("a value"))
                .map_err(|e| e.to_string())
        };
        assert_eq!(run("7"), Ok(7));
        let negative = run("-5").unwrap_err();
        assert!(negative.contains("cannot be negative"), "{negative}");
        assert!(negative.contains("from 1 to 100"), "{negative}");
        assert!(run("0").unwrap_err().contains("below 1"));
        assert!(run("101").unwrap_err().contains("above 100"));
        assert!(run("ten").unwrap_err().contains("not a whole number"));
        assert!(
            within::<u32>(0, u64::MAX)
                .check("4294967296")
                .unwrap_err()
                .contains("above 4294967295")
        );
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
