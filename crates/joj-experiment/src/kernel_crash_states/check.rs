//! The checker: a crash state's image materialized on a loop device (the durable image plus
//! the state's writes, written sparse into a file on tmpfs), recovered by the kernel (mount:
//! the filesystem replays its journal), the database opened by the mode's own VFS and read,
//! then the filesystem unmounted and its own checker run read-only (`e2fsck -fn`,
//! `xfs_repair -n`, `btrfs check --readonly`).
//!
//! One loop device serves every state: the image file is emptied and refilled, and the
//! device's cached blocks dropped, between states. Identical images (by content hash) are
//! checked once; each state is still judged against its own acknowledged transactions.

use std::collections::HashMap;
use std::hash::Hasher;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;

use joj_linux::record::{BLOCK_BYTES, BlockLog, LogOp, SparseImage};
use joj_linux::{Beneath, FsKind, ScratchFs, ScratchOptions};
use serde::{Deserialize, Serialize};

use super::confined::{Confinement, ImageEscape};
use super::jbd2::{self, Journal};
use super::postmark::Expected;
use super::states::{CrashState, Epoch};
use super::workload::{self, Setup, Shown};
use crate::error::ExperimentError;

/// What the checks of one image found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The kernel refused to mount the image (its message), if it did.
    pub unmountable: Option<String>,
    /// The filesystem checker's complaint, if any.
    pub fsck: Option<String>,
    pub shown: Shown,
    /// What the kernel's journal recovery replays from the image, for ext4 with a journal.
    pub replay: Option<jbd2::Replay>,
}

/// How a recovered filesystem is read: the SQLite database, or the PostMark-like files.
#[derive(Debug, Clone, Copy)]
pub enum Reader<'a> {
    Sqlite(Setup),
    Postmark(&'a Expected),
}

impl Reader<'_> {
    /// What the workload's directory in the mounted `image` shows, read beneath its root only.
    pub fn shown(&self, image: &Confinement) -> Result<Shown, ImageEscape> {
        match self {
            Reader::Sqlite(setup) => workload::shown(image, *setup),
            Reader::Postmark(e) => e.shown(image.beneath(), Path::new(workload::DIR_NAME)),
        }
    }
}

/// Checks crash images of one recorded run.
pub struct Checker<'a> {
    fs: ScratchFs,
    log: &'a BlockLog,
    epochs: &'a [Epoch],
    reader: Reader<'a>,
    /// The journal of an ext4 image, whose replay each outcome reports.
    journal: Option<Journal>,
    /// The base image plus every write of the epochs before `next_epoch`.
    durable: SparseImage,
    next_epoch: usize,
    cache: HashMap<u64, Outcome>,
    /// Images checked (distinct contents).
    pub images_checked: u64,
}

impl<'a> Checker<'a> {
    pub fn new(
        kind: FsKind,
        log: &'a BlockLog,
        epochs: &'a [Epoch],
        reader: Reader<'a>,
        journal: Option<Journal>,
    ) -> Result<Self, ExperimentError> {
        let options = ScratchOptions {
            size_bytes: log.base.size_bytes,
            // Two workers mount copies of one filesystem at once: xfs refuses a second mount
            // of the same UUID unless told not to look.
            extra_mount_options: (kind.fs_type() == "xfs").then(|| "nouuid".to_string()),
            ..ScratchOptions::default()
        };
        let fs = ScratchFs::from_image(kind, &options, |f| write_image(f, &log.base))
            .map_err(joj_linux::Error::from)?;
        Ok(Checker {
            fs,
            log,
            epochs,
            reader,
            journal,
            durable: log.base.clone(),
            next_epoch: 0,
            cache: HashMap::new(),
            images_checked: 0,
        })
    }

    /// The image `state` leaves. States must come in epoch order.
    pub fn image(&mut self, state: &CrashState) -> SparseImage {
        let epoch = state.epoch as usize;
        assert!(
            epoch >= self.next_epoch.saturating_sub(1),
            "states out of epoch order"
        );
        while self.next_epoch < epoch {
            for w in &self.epochs[self.next_epoch].writes {
                apply(&mut self.durable, &self.log.ops[w.op], None);
            }
            self.next_epoch += 1;
        }
        state.assert_within(self.epochs);
        let mut image = self.durable.clone();
        let e = &self.epochs[epoch];
        for &i in &state.kept {
            let torn = state.torn.filter(|t| t.write == i).map(|t| t.sectors);
            apply(&mut image, &self.log.ops[e.writes[i as usize].op], torn);
        }
        image
    }

    /// Checks `image` (or recalls the outcome of an identical one): its [`content_hash`] and
    /// outcome. An image that leads out of its filesystem is an [`ImageEscape`], not an
    /// outcome.
    pub fn check(
        &mut self,
        image: &SparseImage,
    ) -> Result<Result<(u64, Outcome), ImageEscape>, ExperimentError> {
        let key = content_hash(image);
        if let Some(o) = self.cache.get(&key) {
            return Ok(Ok((key, o.clone())));
        }
        let outcome = match self.check_fresh(image)? {
            Ok(o) => o,
            Err(escape) => return Ok(Err(escape)),
        };
        self.images_checked += 1;
        self.cache.insert(key, outcome.clone());
        Ok(Ok((key, outcome)))
    }

    fn check_fresh(
        &mut self,
        image: &SparseImage,
    ) -> Result<Result<Outcome, ImageEscape>, ExperimentError> {
        let replay = self.journal.as_ref().map(|j| jbd2::replay(image, j));
        self.fs
            .refill(|f| write_image(f, image))
            .map_err(joj_linux::Error::from)?;
        // A foreign image: mounted nosymfollow,nodev,nosuid,noexec (ScratchFs::from_image).
        let (unmountable, shown) = match self.fs.mount() {
            Err(e) => (
                Some(e.to_string()),
                Ok(Shown::Broken("the filesystem does not mount".into())),
            ),
            Ok(()) => {
                let shown = self.read_mounted();
                self.fs.unmount().map_err(joj_linux::Error::from)?;
                (None, shown?)
            }
        };
        let shown = match shown {
            Ok(s) => s,
            Err(escape) => return Ok(Err(escape)),
        };
        let fsck = fsck(self.fs.kind(), &self.fs.main_device().path)?;
        Ok(Ok(Outcome {
            unmountable,
            fsck,
            shown,
            replay,
        }))
    }

    /// What the mounted image shows, read with SQLite (or the file reader) confined to it; the
    /// confinement ends before the image is unmounted.
    fn read_mounted(&self) -> Result<Result<Shown, ImageEscape>, ExperimentError> {
        let root = Beneath::open_root(self.fs.mount_path()).map_err(|e| {
            ExperimentError::CrashStates(format!("opening the crash image's mount point: {e}"))
        })?;
        let image = Confinement::new(root)?;
        Ok(self.reader.shown(&image))
    }

    pub fn close(self) -> Result<(), ExperimentError> {
        self.fs.close().map_err(joj_linux::Error::from)?;
        Ok(())
    }
}

/// Applies a logged write (only its first `torn` sectors, if torn).
pub(super) fn apply(image: &mut SparseImage, op: &LogOp, torn: Option<u32>) {
    if let LogOp::Write { offset_bytes, data } = op {
        let len = torn.map_or(data.len(), |s| s as usize * 512);
        assert!(
            len <= data.len() && offset_bytes + data.len() as u64 <= image.size_bytes,
            "a crash state applies a logged write, or its first sectors, inside the image: \
             {len} of {} bytes at {offset_bytes}, image of {} bytes",
            data.len(),
            image.size_bytes
        );
        image.write(*offset_bytes, &data[..len]);
    }
}

pub(super) fn write_image(file: &std::fs::File, image: &SparseImage) -> std::io::Result<()> {
    for (index, data) in &image.blocks {
        file.write_all_at(data, index * BLOCK_BYTES)?;
    }
    Ok(())
}

/// The image's identity (docs/formats/crash-part.md): SipHash-2-4 with zero keys over its size,
/// then each block's index and data (little-endian `u64`s). Stable across processes and
/// builds, so that shards checked apart count distinct images as one run does.
pub fn content_hash(image: &SparseImage) -> u64 {
    let mut h = stable_hasher();
    h.write(&image.size_bytes.to_le_bytes());
    for (index, data) in &image.blocks {
        h.write(&index.to_le_bytes());
        h.write(data);
    }
    h.finish()
}

/// SipHash-2-4: the algorithm `std::hash::SipHasher` names (deprecated only in favour of
/// `DefaultHasher`, whose algorithm is unspecified and may change between builds).
#[allow(deprecated)]
pub type StableHasher = std::hash::SipHasher;

/// SipHash-2-4 with zero keys.
#[allow(deprecated)]
pub fn stable_hasher() -> StableHasher {
    std::hash::SipHasher::new_with_keys(0, 0)
}

/// The filesystem's own checker, read-only; `None` when it finds the filesystem clean.
fn fsck(kind: FsKind, device: &Path) -> Result<Option<String>, ExperimentError> {
    let (tool, args): (&str, &[&str]) = match kind.fs_type() {
        "ext4" => ("e2fsck", &["-f", "-n"]),
        "xfs" => ("xfs_repair", &["-n"]),
        _ => ("btrfs", &["check", "--readonly"]),
    };
    let out = Command::new(tool)
        .args(args)
        .arg(device)
        .output()
        .map_err(|source| ExperimentError::Io {
            what: format!("running {tool} (install it: e2fsprogs, xfsprogs or btrfs-progs)"),
            source,
        })?;
    if out.status.success() {
        return Ok(None);
    }
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(6)
        .collect();
    Ok(Some(format!(
        "{tool} exit {}: {}",
        out.status.code().unwrap_or(-1),
        lines.join(" | ")
    )))
}

/// Why a state violates its mode's promise, if it does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "detail")]
pub enum Violation {
    Unmountable(String),
    /// The database is corrupt or shows a transaction in part.
    Broken(String),
    /// Fewer transactions than acknowledged (beyond the window).
    Lost {
        shown: u64,
        acknowledged: u64,
    },
    /// A transaction that had not begun is visible.
    FromTheFuture {
        shown: u64,
        begun: u64,
    },
}

/// Judges an outcome against a state's bounds and the mode's window (a pure function).
pub fn judge(outcome: &Outcome, acked: u64, begun: u64, allowed_loss: u64) -> Option<Violation> {
    if let Some(m) = &outcome.unmountable {
        return Some(Violation::Unmountable(m.clone()));
    }
    match &outcome.shown {
        Shown::Broken(why) => Some(Violation::Broken(why.clone())),
        &Shown::Transactions(k) if k > begun => Some(Violation::FromTheFuture { shown: k, begun }),
        &Shown::Transactions(k) if k + allowed_loss < acked => Some(Violation::Lost {
            shown: k,
            acknowledged: acked,
        }),
        Shown::Transactions(_) => None,
        Shown::Candidates { whole, partial } => {
            // Each reading as (transactions shown whole, transactions it needs begun).
            let floor = acked.saturating_sub(allowed_loss);
            let readings: Vec<(u64, u64)> = (whole.iter().map(|&k| (k, k)))
                .chain(partial.iter().map(|&k| (k, k + 1)))
                .collect();
            if readings
                .iter()
                .any(|&(k, needs)| k >= floor && needs <= begun)
            {
                return None;
            }
            // No reading fits: from the future if one keeps every acknowledged transaction,
            // else lost (the reading closest to the acknowledged count is named).
            match (readings.iter())
                .filter(|&&(k, _)| k >= floor)
                .map(|&(_, needs)| needs)
                .min()
            {
                Some(needs) => Some(Violation::FromTheFuture {
                    shown: needs,
                    begun,
                }),
                None => Some(Violation::Lost {
                    shown: readings.iter().map(|&(k, _)| k).max().unwrap_or(0),
                    acknowledged: acked,
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(k: u64) -> Outcome {
        Outcome {
            unmountable: None,
            fsck: None,
            shown: Shown::Transactions(k),
            replay: None,
        }
    }

    #[test]
    fn judge_holds_a_state_to_its_bounds_and_window() {
        assert_eq!(judge(&ok(3), 3, 4, 0), None);
        assert_eq!(judge(&ok(4), 3, 4, 0), None);
        assert!(matches!(
            judge(&ok(2), 3, 4, 0),
            Some(Violation::Lost { .. })
        ));
        assert_eq!(judge(&ok(2), 3, 4, 1), None);
        assert!(matches!(
            judge(&ok(5), 3, 4, 0),
            Some(Violation::FromTheFuture { .. })
        ));
        let either = |whole: Vec<u64>, partial: Vec<u64>| Outcome {
            shown: Shown::Candidates { whole, partial },
            ..ok(0)
        };
        // A file created then deleted: the image is the state after 5 and after 7.
        assert_eq!(judge(&either(vec![5, 7], vec![]), 7, 7, 0), None);
        assert_eq!(judge(&either(vec![5, 7], vec![]), 5, 5, 0), None);
        // Neither fits state 6: 5 lost one, 7 is from the future; the one keeping every
        // acknowledged transaction is named.
        assert_eq!(
            judge(&either(vec![5, 7], vec![]), 6, 6, 0),
            Some(Violation::FromTheFuture { shown: 7, begun: 6 })
        );
        assert_eq!(
            judge(&either(vec![2, 4], vec![]), 6, 6, 0),
            Some(Violation::Lost {
                shown: 4,
                acknowledged: 6
            })
        );
        // Transaction 4 in part: fine while it is begun and not acknowledged.
        assert_eq!(judge(&either(vec![], vec![3]), 3, 4, 0), None);
        assert_eq!(
            judge(&either(vec![], vec![3]), 3, 3, 0),
            Some(Violation::FromTheFuture { shown: 4, begun: 3 })
        );
        assert_eq!(
            judge(&either(vec![], vec![3]), 4, 4, 0),
            Some(Violation::Lost {
                shown: 3,
                acknowledged: 4
            })
        );
        let broken = Outcome {
            shown: Shown::Broken("x".into()),
            ..ok(0)
        };
        assert!(matches!(
            judge(&broken, 0, 0, 9),
            Some(Violation::Broken(_))
        ));
    }
}
