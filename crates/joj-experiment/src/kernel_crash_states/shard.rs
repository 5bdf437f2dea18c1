//! Crash states spread over machines: `--shard K/N` checks the K-th of N disjoint, contiguous
//! shares of the states a saved log's plan holds and writes a part ([`Part`],
//! docs/formats/crash-part.md); [`merge`] reads the N parts of one run and gives the document an
//! unsharded run of the same log gives, through the same [`super::tally::tally`].
//!
//! Every part is an input anyone can write: it is read only if it is a regular file of at most
//! [`MAX_PART_BYTES`], and parts are merged only when they are of one run (writer, log, plan,
//! flags), every share is there once, and each part holds exactly its share.

use std::io::{Read, Seek};
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::check::Outcome;
use super::error::CrashFsError;
use super::jbd2::Journal;
use super::part_bounds::{ImageReplay, check as check_bounds};
use super::report::CrashFsReport;
use super::share::Shard;
use super::tally::{Checked, StateDetail, tally};
use crate::error::ExperimentError;

/// The `format` of a part.
pub const PART_FORMAT: &str = "joj-crash-part";
/// The part format's version (docs/formats/crash-part.md).
pub const PART_VERSION: u32 = 1;
/// Largest part read (a part of 10,000 states is a few MiB).
pub const MAX_PART_BYTES: u64 = 256 << 20;
/// The log a run checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogRef {
    /// As given, for people; not compared (each machine may keep the log elsewhere).
    pub path: PathBuf,
    pub bytes: u64,
    /// SipHash-2-4 (zero keys) of the log's bytes, 16 hex digits.
    pub siphash24: String,
}

impl LogRef {
    /// Whether two refs name the same bytes.
    fn same(&self, other: &LogRef) -> bool {
        self.bytes == other.bytes && self.siphash24 == other.siphash24
    }
}

/// A distinct image a shard checked.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartImage {
    /// The content hash, 16 hex digits.
    pub hash: String,
    pub outcome: Outcome,
    /// The journal replay's home blocks (the mount cost needs them; the report leaves them
    /// out).
    pub home_blocks: Vec<u64>,
}

/// The longest time a part may say a step took: 10^7 s (about 116 days), longer than any run
/// or check of joj's (a check of the largest plan takes hours), short enough that a merged
/// rate of states per second stays a number a reader can use.
pub const MAX_PART_SECONDS: f64 = 1e7;

/// A state a shard checked.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartState {
    pub index: usize,
    /// An index into the part's `images`.
    pub image: usize,
    pub acknowledged: u64,
    pub begun: u64,
    pub detail: Option<StateDetail>,
}

/// One shard's result (docs/formats/crash-part.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    pub format: String,
    pub version: u32,
    pub writer: String,
    pub shard: Shard,
    pub log: LogRef,
    /// The whole run's report as far as the plan decides it (check fields empty).
    pub run: CrashFsReport,
    pub journal: Option<Journal>,
    pub first: usize,
    pub end: usize,
    pub images: Vec<PartImage>,
    pub states: Vec<PartState>,
    pub check_s: f64,
}

/// One state as a shard checked it.
pub struct ShardState {
    pub index: usize,
    pub image: u64,
    pub outcome: Outcome,
    pub acknowledged: u64,
    pub begun: u64,
    pub detail: Option<StateDetail>,
}

/// This joj, as a part's `writer` says it.
pub fn writer() -> String {
    format!("joj {}", env!("CARGO_PKG_VERSION"))
}

impl Part {
    /// The part of `shard` from its checked `states` (in index order).
    pub fn new(
        shard: Shard,
        log: LogRef,
        run: CrashFsReport,
        journal: Option<Journal>,
        range: Range<usize>,
        states: Vec<ShardState>,
        check_s: f64,
    ) -> Part {
        let mut images: Vec<PartImage> = Vec::new();
        let mut at = std::collections::HashMap::new();
        let states = states
            .into_iter()
            .map(|s| {
                let image = *at.entry(s.image).or_insert_with(|| {
                    let mut outcome = s.outcome;
                    let home_blocks = outcome
                        .replay
                        .as_mut()
                        .map(|r| std::mem::take(&mut r.home_blocks))
                        .unwrap_or_default();
                    images.push(PartImage {
                        hash: format!("{:016x}", s.image),
                        outcome,
                        home_blocks,
                    });
                    images.len() - 1
                });
                PartState {
                    index: s.index,
                    image,
                    acknowledged: s.acknowledged,
                    begun: s.begun,
                    detail: s.detail,
                }
            })
            .collect();
        Part {
            format: PART_FORMAT.into(),
            version: PART_VERSION,
            writer: writer(),
            shard,
            log,
            run,
            journal,
            first: range.start,
            end: range.end,
            images,
            states,
            check_s,
        }
    }

    /// States of this part that would violate full durability or fail the checker.
    pub fn flagged(&self) -> usize {
        self.states.iter().filter(|s| s.detail.is_some()).count()
    }
}

/// Reads the part at `path` (a regular file within [`MAX_PART_BYTES`], of this format, within
/// the bounds a run keeps: [`super::part_bounds::check`]).
pub fn read_part(path: &Path) -> Result<Part, CrashFsError> {
    let bad = |why: String| CrashFsError::PartUnreadable {
        part: path.to_path_buf(),
        why,
    };
    // Without blocking: a FIFO would hold a plain open until a writer came (refused below).
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| bad(format!("cannot open it ({e})")))?;
    let m = f
        .metadata()
        .map_err(|e| bad(format!("cannot inspect it ({e})")))?;
    if !m.is_file() {
        return Err(bad("it is not a regular file".into()));
    }
    if m.len() > MAX_PART_BYTES {
        return Err(bad(format!(
            "{} bytes, more than the {MAX_PART_BYTES} a part of joj's runs can be",
            m.len()
        )));
    }
    // Read as it is parsed, twice (the bytes themselves are not held), never past the length
    // checked above.
    fn from_start(
        mut f: &std::fs::File,
        len: u64,
    ) -> std::io::Result<std::io::BufReader<std::io::Take<&std::fs::File>>> {
        f.seek(std::io::SeekFrom::Start(0))?;
        Ok(std::io::BufReader::new(f.take(len)))
    }
    let reader = |f| from_start(f, m.len()).map_err(|e| bad(format!("cannot read it ({e})")));
    // The format and version first, from a pass that holds nothing else (a part of another
    // format is named as such, not by the first field it lacks), then the part parsed
    // straight into its types: parsed whole as a `serde_json::Value` a part took 14 times its
    // size in memory (a 234 MB part, 3.3 GB; docs/robustness.md H130).
    // Each a string or a number, nothing that would be held whole.
    #[derive(Deserialize)]
    struct Head {
        format: Option<String>,
        version: Option<u64>,
    }
    let head: Head = serde_json::from_reader(reader(&f)?).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => bad(format!("not a {PART_FORMAT} document ({e})")),
        _ => bad(format!("not JSON ({e})")),
    })?;
    if head.format.as_deref() != Some(PART_FORMAT) {
        return Err(bad(format!(
            "its format is {}, not {PART_FORMAT}",
            head.format.map_or("missing".into(), |f| format!("{f:?}"))
        )));
    }
    match head.version {
        Some(v) if v == u64::from(PART_VERSION) => {}
        Some(v) if v > u64::from(PART_VERSION) => {
            return Err(bad(format!(
                "version {v} is newer than this joj reads ({PART_VERSION}); merge it with the \
                 joj that wrote it"
            )));
        }
        v => return Err(bad(format!("version {v:?} is not one joj wrote"))),
    }
    let part: Part =
        serde_json::from_reader(reader(&f)?).map_err(|e| bad(format!("not a valid part ({e})")))?;
    // Before any of its numbers sizes a list, a loop or the mount model.
    let replays = part.images.iter().map(|i| ImageReplay {
        replay: i.outcome.replay.as_ref(),
        home_blocks_listed: i.home_blocks.len(),
    });
    check_bounds(part.shard, part.journal.as_ref(), replays)
        .and_then(|()| super::part_run::check(&part.run))
        .map_err(|fault| CrashFsError::PartOutOfBounds {
            part: path.to_path_buf(),
            fault,
        })?;
    check_times(path, &part)?;
    Ok(part)
}

/// The part's times are seconds a run took: finite, not negative, within [`MAX_PART_SECONDS`]
/// (the rate is a count over such a time, and the part's run leaves it 0 for the merge to
/// compute). The merge sums `check_s` and divides by it, so one edited field would otherwise
/// make every figure of the merged report a wrong one.
fn check_times(path: &Path, part: &Part) -> Result<(), CrashFsError> {
    let fields = [
        ("check_s", part.check_s, MAX_PART_SECONDS),
        ("run.log.record_s", part.run.log.record_s, MAX_PART_SECONDS),
        ("run.check_s", part.run.check_s, MAX_PART_SECONDS),
        ("run.states_per_s", part.run.states_per_s, f64::MAX),
    ];
    for (field, value, max) in fields {
        if !(value.is_finite() && (0.0..=max).contains(&value)) {
            // 1e308 as such, not as its 309 digits.
            let value = if value.abs() < 1e9 {
                value.to_string()
            } else {
                format!("{value:e}")
            };
            return Err(CrashFsError::PartInvalid {
                part: path.to_path_buf(),
                why: format!(
                    "shard {}: {field} is {value}, not a time a run takes (seconds from 0 to \
                     {MAX_PART_SECONDS})",
                    part.shard
                ),
            });
        }
    }
    Ok(())
}

/// Merges the parts at `paths` into the report an unsharded run of the same log gives.
pub fn merge(paths: &[PathBuf]) -> Result<CrashFsReport, ExperimentError> {
    let parts: Vec<(PathBuf, Part)> = paths
        .iter()
        .map(|p| read_part(p).map(|part| (p.clone(), part)))
        .collect::<Result<_, _>>()?;
    let ordered = check_parts(&parts)?;
    let (_, first) = ordered[0];
    let mut report = first.run.clone();
    let hashes: Vec<Vec<u64>> = ordered
        .iter()
        .map(|(path, part)| image_hashes(path, part))
        .collect::<Result<_, _>>()?;
    // The replays as the checker gave them: home blocks back in place.
    let outcomes: Vec<Vec<Outcome>> = ordered
        .iter()
        .map(|(_, part)| {
            part.images
                .iter()
                .map(|i| {
                    let mut o = i.outcome.clone();
                    if let Some(r) = o.replay.as_mut() {
                        r.home_blocks = i.home_blocks.clone();
                    }
                    o
                })
                .collect()
        })
        .collect();
    let states = ordered.iter().enumerate().flat_map(|(p, (_, part))| {
        let (hashes, outcomes) = (&hashes[p], &outcomes[p]);
        part.states.iter().map(move |s| Checked {
            index: s.index,
            image: hashes[s.image],
            outcome: &outcomes[s.image],
            acknowledged: s.acknowledged,
            begun: s.begun,
            detail: s.detail.as_ref(),
        })
    });
    tally(&mut report, first.journal.as_ref(), states)?;
    report.check_s = ordered.iter().map(|(_, p)| p.check_s).sum();
    report.states_per_s = report.states_explored as f64 / report.check_s.max(1e-9);
    Ok(report)
}

/// The parts in shard order, once each checked to be of one run and to hold their shares.
fn check_parts(parts: &[(PathBuf, Part)]) -> Result<Vec<&(PathBuf, Part)>, CrashFsError> {
    let (first_path, first) = &parts[0];
    let run_doc = |p: &Part| serde_json::to_value(&p.run).unwrap_or_default();
    let first_run = run_doc(first);
    for (path, part) in &parts[1..] {
        let differs = |field: &'static str| CrashFsError::PartsDiffer {
            first: first_path.clone(),
            other: path.clone(),
            field,
        };
        if part.writer != first.writer {
            return Err(differs("writer (the joj that wrote it)"));
        }
        if part.shard.n != first.shard.n {
            return Err(differs("shard count N"));
        }
        if !part.log.same(&first.log) {
            return Err(differs("log (its bytes)"));
        }
        if run_doc(part) != first_run || part.journal != first.journal {
            return Err(differs("run (flags, seed, states or plan)"));
        }
    }
    let n = first.shard.n;
    let mut by_k: Vec<Option<&(PathBuf, Part)>> = vec![None; n as usize];
    for entry in parts {
        let k = entry.1.shard.k;
        if k == 0 || k > n {
            return Err(CrashFsError::PartInvalid {
                part: entry.0.clone(),
                why: format!("it says it is shard {k} of {n}"),
            });
        }
        if let Some((earlier, _)) = by_k[k as usize - 1] {
            return Err(CrashFsError::PartTwice {
                k,
                n,
                first: earlier.clone(),
                second: entry.0.clone(),
            });
        }
        by_k[k as usize - 1] = Some(entry);
    }
    let missing: Vec<u32> = (1..=n)
        .filter(|k| by_k[*k as usize - 1].is_none())
        .collect();
    if !missing.is_empty() {
        return Err(CrashFsError::PartsMissing { n, missing });
    }
    let ordered: Vec<&(PathBuf, Part)> = by_k.into_iter().flatten().collect();
    for (path, part) in &ordered {
        check_share(path, part)?;
    }
    Ok(ordered)
}

/// A part holds exactly its share: the range its K gives, every index once in order, each
/// naming an image it lists.
fn check_share(path: &Path, part: &Part) -> Result<(), CrashFsError> {
    let invalid = |why: String| CrashFsError::PartInvalid {
        part: path.to_path_buf(),
        why,
    };
    let want = part.shard.range(part.run.states_explored as usize);
    if part.first != want.start || part.end != want.end {
        return Err(invalid(format!(
            "it holds states {}..{}, and shard {} of {} states is {}..{}",
            part.first, part.end, part.shard, part.run.states_explored, want.start, want.end
        )));
    }
    if part.states.len() != want.len()
        || part
            .states
            .iter()
            .zip(want.clone())
            .any(|(s, i)| s.index != i)
    {
        return Err(invalid(format!(
            "its states are not exactly {}..{} in order",
            want.start, want.end
        )));
    }
    for s in &part.states {
        let Some(image) = part.images.get(s.image) else {
            return Err(invalid(format!(
                "state {} names image {}, and it lists {}",
                s.index,
                s.image,
                part.images.len()
            )));
        };
        if StateDetail::needed(&image.outcome, s.acknowledged, s.begun) && s.detail.is_none() {
            return Err(invalid(format!(
                "state {} fails a check and has no detail to rebuild it",
                s.index
            )));
        }
    }
    Ok(())
}

fn image_hashes(path: &Path, part: &Part) -> Result<Vec<u64>, CrashFsError> {
    part.images
        .iter()
        .map(|i| {
            u64::from_str_radix(&i.hash, 16)
                .ok()
                .filter(|_| i.hash.len() == 16)
                .ok_or_else(|| CrashFsError::PartInvalid {
                    part: path.to_path_buf(),
                    why: format!("image hash {:?} is not 16 hex digits", i.hash),
                })
        })
        .collect()
}
