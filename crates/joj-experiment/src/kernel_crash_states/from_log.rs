//! A saved log checked again (`joj crash --from-log`), and what a recorded log says about its
//! run.
//!
//! A saved log is an input anyone can write. It is read only if it is a regular file of at
//! most [`MAX_LOG_BYTES`], whose device is at most [`MAX_DEVICE_BYTES`]; and it is checked
//! against what the run is told before anything is made: its labels (`docs/formats/blocklog.md`,
//! written by every recorded run: `fs`, `journal`, `synchronous`, `workload`, `canary`,
//! `seed`) must agree with the options, and its image's superblock must be of the filesystem
//! `--fs` names. A log without labels (version 1) is checked by its superblock alone, and the
//! caller must say its filesystem and journal mode.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use joj_linux::FsKind;
use joj_linux::record::{BlockLog, Labels, SparseImage};
use joj_workload::JournalMode;

use super::error::CrashFsError;
use super::options::{CrashFsOptions, FsWorkload, MAX_TRANSACTIONS};
use super::shard::LogRef;
use super::workload::{Canary, StockSync};
use crate::error::ExperimentError;

/// Largest log read: it is held in memory whole (joj's documented runs save a few MiB); the
/// blocklog reader's own bound.
pub const MAX_LOG_BYTES: u64 = joj_linux::record::MAX_LOG_BYTES;
/// Largest device of a log: each checker materializes crash images of it on tmpfs (sparse,
/// but its loop device and the filesystem's checker see the whole size); joj records on
/// 64–300 MiB images.
pub const MAX_DEVICE_BYTES: u64 = 16 << 30;

/// The label keys a recorded run writes.
pub mod key {
    pub const FS: &str = "fs";
    pub const JOURNAL: &str = "journal";
    pub const SYNCHRONOUS: &str = "synchronous";
    pub const WORKLOAD: &str = "workload";
    pub const CANARY: &str = "canary";
    pub const SEED: &str = "seed";
    pub const TRANSACTIONS: &str = "transactions";
    pub const WRITER: &str = "writer";
    /// tracefs's count of the recorded window, written by the run that recorded it.
    pub const TRACED_WRITE_BYTES: &str = "traced-write-bytes";
    pub const TRACED_FLUSHES: &str = "traced-flushes";
}

/// The labels a recorded run of `opts` writes into its log.
pub fn labels(opts: &CrashFsOptions) -> Labels {
    [
        (key::FS, opts.fs.to_string()),
        (key::JOURNAL, opts.mode.to_string()),
        (key::SYNCHRONOUS, opts.sync.name().to_string()),
        (key::WORKLOAD, workload_name(opts.workload).to_string()),
        (
            key::CANARY,
            opts.canary.map_or("none", Canary::name).to_string(),
        ),
        (key::SEED, opts.seed.to_string()),
        (key::TRANSACTIONS, opts.transactions.to_string()),
        (key::WRITER, format!("joj {}", env!("CARGO_PKG_VERSION"))),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn workload_name(w: FsWorkload) -> &'static str {
    match w {
        FsWorkload::Sqlite => "sqlite",
        FsWorkload::Postmark => "postmark",
    }
}

/// What a log says about the run that recorded it (each `None` when it does not say).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogIdentity {
    pub fs: Option<FsKind>,
    pub mode: Option<JournalMode>,
    pub sync: Option<StockSync>,
    pub workload: Option<FsWorkload>,
    /// `Some(None)`: the log says it ran without a canary.
    pub canary: Option<Option<Canary>>,
    pub seed: Option<u64>,
    /// The run's `-n` (at most [`MAX_TRANSACTIONS`]).
    pub transactions: Option<u64>,
    /// What tracefs counted in the recorded window (bytes written, flushes), as the recording
    /// run wrote it into the log.
    pub traced_write_bytes: Option<u64>,
    pub traced_flushes: Option<u64>,
}

impl LogIdentity {
    /// Parses `labels` of the log at `log`; a value this joj does not know is refused.
    pub fn of(log: &Path, labels: &Labels) -> Result<LogIdentity, CrashFsError> {
        fn parse<T>(
            log: &Path,
            labels: &Labels,
            key: &'static str,
            f: impl FnOnce(&str) -> Option<T>,
        ) -> Result<Option<T>, CrashFsError> {
            labels
                .get(key)
                .map(|v| {
                    f(v).ok_or_else(|| CrashFsError::LogLabelUnknown {
                        log: log.to_path_buf(),
                        key,
                        value: joj_trace::input::quoted(v),
                    })
                })
                .transpose()
        }
        Ok(LogIdentity {
            fs: parse(log, labels, key::FS, |v| v.parse().ok())?,
            mode: parse(log, labels, key::JOURNAL, |v| v.parse().ok())?,
            sync: parse(log, labels, key::SYNCHRONOUS, StockSync::from_name)?,
            workload: parse(log, labels, key::WORKLOAD, FsWorkload::from_name)?,
            canary: parse(log, labels, key::CANARY, |v| match v {
                "none" => Some(None),
                c => Canary::from_name(c).map(Some),
            })?,
            seed: parse(log, labels, key::SEED, |v| v.parse().ok())?,
            transactions: parse(log, labels, key::TRANSACTIONS, |v| {
                v.parse()
                    .ok()
                    .filter(|n| (1..=MAX_TRANSACTIONS).contains(n))
            })?,
            traced_write_bytes: parse(log, labels, key::TRACED_WRITE_BYTES, |v| v.parse().ok())?,
            traced_flushes: parse(log, labels, key::TRACED_FLUSHES, |v| v.parse().ok())?,
        })
    }

    /// Every label that disagrees with `opts`, the first one as an error.
    pub fn check(&self, log: &Path, opts: &CrashFsOptions) -> Result<(), CrashFsError> {
        let mismatch = |flag, key, given: String, logged: String| {
            Err(CrashFsError::LogMismatch {
                log: log.to_path_buf(),
                flag,
                key,
                given,
                logged,
            })
        };
        if let Some(fs) = self.fs.filter(|&f| f != opts.fs) {
            return mismatch("--fs", key::FS, opts.fs.to_string(), fs.to_string());
        }
        if let Some(m) = self.mode.filter(|&m| m != opts.mode) {
            return mismatch("-j", key::JOURNAL, opts.mode.to_string(), m.to_string());
        }
        if let Some(s) = self.sync.filter(|&s| s != opts.sync) {
            return mismatch(
                "--synchronous",
                key::SYNCHRONOUS,
                opts.sync.name().into(),
                s.name().into(),
            );
        }
        if let Some(w) = self.workload.filter(|&w| w != opts.workload) {
            return mismatch(
                "--fs-workload",
                key::WORKLOAD,
                workload_name(opts.workload).into(),
                workload_name(w).into(),
            );
        }
        if let Some(c) = self.canary.filter(|&c| c != opts.canary) {
            let name = |c: Option<Canary>| c.map_or("none", Canary::name).to_string();
            return mismatch("--fs-canary", key::CANARY, name(opts.canary), name(c));
        }
        Ok(())
    }
}

/// The log at `path`, opened only if it is a regular file within [`MAX_LOG_BYTES`].
fn open(path: &Path) -> Result<(std::fs::File, u64), ExperimentError> {
    // Without blocking: a FIFO would hold a plain open until a writer came; it is refused
    // below, like every file that is not a regular one.
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|source| ExperimentError::Io {
            what: format!("opening {}", path.display()),
            source,
        })?;
    let m = f.metadata().map_err(|source| ExperimentError::Io {
        what: format!("inspecting {}", path.display()),
        source,
    })?;
    if !m.is_file() {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        let found = if t.is_dir() {
            "directory"
        } else if t.is_fifo() {
            "FIFO"
        } else if t.is_socket() {
            "socket"
        } else if t.is_block_device() || t.is_char_device() {
            "device"
        } else {
            "special file"
        };
        return Err(CrashFsError::LogNotRegular {
            log: path.to_path_buf(),
            found,
        }
        .into());
    }
    if m.len() > MAX_LOG_BYTES {
        return Err(CrashFsError::LogTooLarge {
            log: path.to_path_buf(),
            bytes: m.len(),
            max: MAX_LOG_BYTES,
        }
        .into());
    }
    Ok((f, m.len()))
}

fn log_error(path: &Path, e: joj_linux::record::LogError) -> ExperimentError {
    ExperimentError::CrashStates(format!("{}: {e}", path.display()))
}

/// What the log at `path` says about its run (reads only its first few KiB).
pub fn identity(path: &Path) -> Result<LogIdentity, ExperimentError> {
    let (f, _) = open(path)?;
    let labels = BlockLog::read_labels(f).map_err(|e| log_error(path, e))?;
    Ok(LogIdentity::of(path, &labels)?)
}

/// Reads and checks the whole log at `path` (see the module documentation).
pub fn load(path: &Path) -> Result<BlockLog, ExperimentError> {
    load_with_ref(path).map(|(log, _)| log)
}

/// A reader that hashes what it reads.
struct Hashing<R> {
    inner: R,
    hasher: super::check::StableHasher,
    bytes: u64,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::hash::Hasher;
        let n = self.inner.read(buf)?;
        self.hasher.write(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

/// [`load`], and what the log's bytes are (for the parts of a sharded run,
/// docs/formats/crash-part.md): its length and SipHash-2-4.
pub fn load_with_ref(path: &Path) -> Result<(BlockLog, LogRef), ExperimentError> {
    use std::hash::Hasher;
    let (f, len) = open(path)?;
    let mut reader = Hashing {
        inner: f.take(len),
        hasher: super::check::stable_hasher(),
        bytes: 0,
    };
    // Read no more than the length checked: a file growing meanwhile is read as it was.
    let log = BlockLog::read_from(&mut reader).map_err(|e| log_error(path, e))?;
    // Whatever the reader left unread (nothing, for a valid log) is part of the bytes too.
    std::io::copy(&mut reader, &mut std::io::sink()).map_err(|source| ExperimentError::Io {
        what: format!("reading {}", path.display()),
        source,
    })?;
    // What the reader accepted, checked again as it is about to be used: whole sectors inside
    // the device, and no more bytes than the file had.
    for (i, op) in log.ops.iter().enumerate() {
        if let joj_linux::record::LogOp::Write { offset_bytes, data } = op {
            let bytes = data.len() as u64;
            assert!(
                bytes > 0
                    && offset_bytes.is_multiple_of(joj_linux::record::SECTOR_BYTES)
                    && bytes.is_multiple_of(joj_linux::record::SECTOR_BYTES)
                    && offset_bytes + bytes <= log.base.size_bytes,
                "a loaded log's write {i} is whole sectors inside its device: {bytes} bytes at {offset_bytes} of {}",
                log.base.size_bytes
            );
        }
    }
    assert!(
        reader.bytes <= len,
        "a log is read within its checked length: {} of {len} bytes",
        reader.bytes
    );
    let log_ref = LogRef {
        path: path.to_path_buf(),
        bytes: reader.bytes,
        siphash24: format!("{:016x}", reader.hasher.finish()),
    };
    if log.base.size_bytes > MAX_DEVICE_BYTES {
        return Err(CrashFsError::DeviceTooLarge {
            log: path.to_path_buf(),
            bytes: log.base.size_bytes,
            max: MAX_DEVICE_BYTES,
        }
        .into());
    }
    Ok((log, log_ref))
}

/// The filesystem whose superblock the image holds, by each one's magic where it keeps it:
/// ext4 `0xEF53` at byte 1080, xfs `XFSB` at byte 0, btrfs `_BHRfS_M` at byte 65600.
pub fn superblock_fs(image: &SparseImage) -> Option<&'static str> {
    let at = |offset: u64, len: usize| {
        let mut buf = vec![0u8; len];
        if offset + len as u64 <= image.size_bytes {
            image.read(offset, &mut buf);
        }
        buf
    };
    if at(0, 4) == b"XFSB" {
        Some("xfs")
    } else if at(65_536 + 64, 8) == b"_BHRfS_M" {
        Some("btrfs")
    } else if at(1024 + 56, 2) == [0x53, 0xEF] {
        Some("ext4")
    } else {
        None
    }
}

/// Checks a loaded log against `opts`: its labels, its image's filesystem, and that its states
/// can be planned ([`super::states::count_epochs`]), before the image's checker runs.
pub fn check(path: &Path, log: &BlockLog, opts: &CrashFsOptions) -> Result<(), CrashFsError> {
    LogIdentity::of(path, &log.labels)?.check(path, opts)?;
    super::states::count_epochs(&log.ops)?;
    match superblock_fs(&log.base) {
        None => Err(CrashFsError::ImageNoFs {
            log: path.to_path_buf(),
        }),
        Some(found) if found != opts.fs.fs_type() => Err(CrashFsError::ImageFsMismatch {
            log: path.to_path_buf(),
            given: opts.fs,
            found,
        }),
        Some(_) => Ok(()),
    }
}

/// What the filesystem's own checker, read-only, says of an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsckVerdict {
    Clean,
    /// xfs with a dirty log: `xfs_repair` cannot replay a log (only the kernel can), and
    /// without the replay it expects spurious inconsistencies, so it cannot judge the image.
    LogNotReplayed,
    /// A complaint (its first lines).
    Damaged(String),
}

/// The verdict of `tool`'s exit status and output (a pure function).
pub fn fsck_verdict(tool: &str, exit: Option<i32>, output: &str) -> FsckVerdict {
    if exit == Some(0) {
        return FsckVerdict::Clean;
    }
    if tool == "xfs_repair"
        && exit == Some(1)
        && output.contains("valuable metadata changes in a log")
    {
        return FsckVerdict::LogNotReplayed;
    }
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(4)
        .collect();
    FsckVerdict::Damaged(format!(
        "exit {}: {}",
        exit.unwrap_or(-1),
        lines.join(" | ")
    ))
}

/// Runs the filesystem's own checker read-only on the saved log's image (its base, on a loop
/// device of its own, not mounted) before the kernel mounts any state of it. A complaint
/// refuses the log; what was found is returned for the report.
pub fn check_image_before_mount(
    path: &Path,
    kind: FsKind,
    log: &BlockLog,
) -> Result<String, ExperimentError> {
    let options = joj_linux::ScratchOptions {
        size_bytes: log.base.size_bytes,
        ..joj_linux::ScratchOptions::default()
    };
    let fs = joj_linux::ScratchFs::from_image(kind, &options, |f| {
        super::check::write_image(f, &log.base)
    })
    .map_err(joj_linux::Error::from)?;
    let (tool, args): (&'static str, &[&str]) = match kind.fs_type() {
        "ext4" => ("e2fsck", &["-f", "-n"]),
        "xfs" => ("xfs_repair", &["-n"]),
        _ => ("btrfs", &["check", "--readonly"]),
    };
    let out = Command::new(tool)
        .args(args)
        .arg(&fs.main_device().path)
        .output()
        .map_err(|source| ExperimentError::Io {
            what: format!("running {tool} (install it: e2fsprogs, xfsprogs or btrfs-progs)"),
            source,
        });
    fs.close().map_err(joj_linux::Error::from)?;
    let out = out?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    match fsck_verdict(tool, out.status.code(), &text) {
        FsckVerdict::Clean => Ok(format!("{tool} {}: clean", args.join(" "))),
        FsckVerdict::LogNotReplayed => Ok(format!(
            "{tool} {}: not judged (the log holds changes only the kernel replays)",
            args.join(" ")
        )),
        FsckVerdict::Damaged(detail) => Err(CrashFsError::ImageFailsFsck {
            log: PathBuf::from(path),
            tool,
            detail,
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> CrashFsOptions {
        CrashFsOptions {
            fs: FsKind::Ext4,
            mode: JournalMode::Wal,
            workload: FsWorkload::Sqlite,
            emmc_journal: false,
            canary: None,
            sync: StockSync::Full,
            transactions: 10,
            states: 10,
            seed: 42,
            from_log: None,
            save_dir: None,
            save_log: false,
            judge_as: super::super::workload::JudgeAs::Window,
            shard: None,
            record_only: false,
        }
    }

    #[test]
    fn a_recorded_runs_labels_say_what_it_was_and_a_mismatch_names_both() {
        let o = opts();
        let id = LogIdentity::of(Path::new("l"), &labels(&o)).unwrap();
        assert_eq!(id.fs, Some(FsKind::Ext4));
        assert_eq!(id.mode, Some(JournalMode::Wal));
        assert_eq!(id.canary, Some(None));
        assert_eq!(id.seed, Some(42));
        id.check(Path::new("l"), &o).unwrap();
        let xfs = CrashFsOptions {
            fs: FsKind::Xfs,
            mode: "waldio".parse().unwrap(),
            ..opts()
        };
        let e = id.check(Path::new("l"), &xfs).unwrap_err().to_string();
        assert!(
            e.contains("--fs xfs") && e.contains("fs=ext4") && e.contains("fix:"),
            "{e}"
        );
        let waldio = CrashFsOptions {
            mode: "waldio".parse().unwrap(),
            ..opts()
        };
        let e = id.check(Path::new("l"), &waldio).unwrap_err().to_string();
        assert!(e.contains("-j waldio") && e.contains("journal=wal"), "{e}");
        let mut unknown = labels(&o);
        unknown.insert("journal".into(), "quantum".into());
        assert!(matches!(
            LogIdentity::of(Path::new("l"), &unknown),
            Err(CrashFsError::LogLabelUnknown { key: "journal", .. })
        ));
        // A value is shown cut, whatever its length.
        let mut long = labels(&o);
        long.insert("journal".into(), "x".repeat(1 << 20));
        let e = LogIdentity::of(Path::new("l"), &long)
            .unwrap_err()
            .to_string();
        assert!(
            e.len() < 1_000 && e.contains("journal=\"xxx"),
            "{} bytes",
            e.len()
        );
        // A count no run records is a value joj does not know either.
        for bad in ["-1", "1e3", "0", "100001", ""] {
            let mut l = labels(&o);
            l.insert("transactions".into(), bad.into());
            assert!(
                matches!(
                    LogIdentity::of(Path::new("l"), &l),
                    Err(CrashFsError::LogLabelUnknown {
                        key: "transactions",
                        ..
                    })
                ),
                "transactions={bad}"
            );
        }
        let mut l = labels(&o);
        l.insert("transactions".into(), "100000".into());
        assert_eq!(
            LogIdentity::of(Path::new("l"), &l).unwrap().transactions,
            Some(100_000)
        );
    }

    #[test]
    fn a_checker_complaint_refuses_but_an_unreplayed_xfs_log_is_said() {
        assert_eq!(fsck_verdict("e2fsck", Some(0), ""), FsckVerdict::Clean);
        assert_eq!(
            fsck_verdict(
                "xfs_repair",
                Some(1),
                "ALERT: The filesystem has valuable metadata changes in a log which is being"
            ),
            FsckVerdict::LogNotReplayed
        );
        assert!(matches!(
            fsck_verdict("e2fsck", Some(4), "Inode 12 has illegal block(s)\n\nmore"),
            FsckVerdict::Damaged(d) if d == "exit 4: Inode 12 has illegal block(s) | more"
        ));
    }

    #[test]
    fn a_log_too_large_or_of_a_device_too_large_is_refused_before_it_is_used() {
        let dir = tempfile::tempdir().unwrap();
        // A sparse file one byte over the bound: refused by its length, never read.
        let big = dir.path().join("big.blocklog");
        std::fs::File::create(&big)
            .and_then(|f| f.set_len(MAX_LOG_BYTES + 1))
            .unwrap();
        assert!(matches!(
            load(&big),
            Err(ExperimentError::CrashFs(CrashFsError::LogTooLarge { .. }))
        ));
        // A valid log of a device beyond the bound (its image is all zeros: no block held).
        let huge = dir.path().join("huge.blocklog");
        let log = BlockLog {
            base: SparseImage::zeroed(MAX_DEVICE_BYTES + 4096),
            ..BlockLog::default()
        };
        log.write_to(std::fs::File::create(&huge).unwrap()).unwrap();
        let e = load(&huge).unwrap_err();
        assert!(
            matches!(
                e,
                ExperimentError::CrashFs(CrashFsError::DeviceTooLarge { .. })
            ),
            "{e}"
        );
        assert!(e.to_string().contains("fix:"));
        assert!(matches!(
            load(dir.path()),
            Err(ExperimentError::CrashFs(CrashFsError::LogNotRegular {
                found: "directory",
                ..
            }))
        ));
    }

    #[test]
    fn the_superblock_names_the_filesystem() {
        let mut img = SparseImage::zeroed(1 << 20);
        assert_eq!(superblock_fs(&img), None);
        img.write(1024, &{
            let mut sb = [0u8; 512];
            sb[56..58].copy_from_slice(&[0x53, 0xEF]);
            sb
        });
        assert_eq!(superblock_fs(&img), Some("ext4"));
        img.write(0, b"XFSB");
        assert_eq!(superblock_fs(&img), Some("xfs"));
    }
}
