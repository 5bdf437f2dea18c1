//! The device side of mounting a crash image: the journal replay that jbd2's recovery does
//! ([`jbd2::replay`]), timed through an emulated eMMC profile. The model's journal is written
//! once first (so its reads cost NAND reads), then each replay reads the journal blocks the
//! scan reads, writes the home blocks and flushes; the cost is the modeled time that took.
//! The kernel's CPU time and ext4's other mount work are not included.

use joj_device::{BlockDevice, Emmc, NandMedium, Profile, WriteFlags};
use joj_linux::record::BLOCK_BYTES;
use serde::{Deserialize, Serialize};

use super::error::CrashFsError;
use super::jbd2::{Journal, Replay};
use crate::error::ExperimentError;

/// The profile the mount cost is modeled on.
pub const MOUNT_PROFILE: &str = "galaxy-s5";

/// Times journal replays on one model.
pub struct MountModel {
    emmc: Emmc<NandMedium>,
    journal: Journal,
    /// The journal's blocks: no replay reads more ([`jbd2::replay`]).
    blocks: u64,
}

fn dev(what: &'static str) -> impl FnOnce(joj_device::DeviceError) -> ExperimentError {
    move |source| ExperimentError::Device { what, source }
}

impl MountModel {
    /// A model holding `journal`, which must be one a run locates ([`Journal::check`]: its
    /// runs follow one another, within the bounds every block written here keeps to).
    pub fn new(journal: Journal) -> Result<Self, ExperimentError> {
        let blocks = journal.check().map_err(CrashFsError::MountJournal)?;
        let profile = Profile::builtin(MOUNT_PROFILE)
            .map_err(|e| ExperimentError::CrashStates(format!("the mount-cost profile: {e}")))?;
        let mut emmc = Emmc::new(&profile).map_err(dev("making the mount-cost model"))?;
        let block = vec![0x5au8; BLOCK_BYTES as usize];
        for run in &journal.runs {
            for b in run.physical..run.physical + run.blocks {
                emmc.write(b * BLOCK_BYTES, &block, WriteFlags::NONE)
                    .map_err(dev("writing the model's journal"))?;
            }
        }
        emmc.flush().map_err(dev("writing the model's journal"))?;
        Ok(MountModel {
            emmc,
            journal,
            blocks,
        })
    }

    /// Modeled nanoseconds of `r`: its journal reads from `r.start` on (wrapping from
    /// `r.maxlen` back to `r.first`, as the scan does), its home writes, a flush.
    pub fn cost_ns(&mut self, r: &Replay) -> Result<u64, ExperimentError> {
        if r.journal_blocks_read == 0 || r.maxlen <= r.first || r.start < r.first {
            return Ok(0);
        }
        let t0 = self.emmc.now_ns();
        let mut buf = vec![0u8; BLOCK_BYTES as usize];
        let lap = u128::from(r.maxlen - r.first);
        for i in 0..r.journal_blocks_read.min(self.blocks) {
            // Below `maxlen`: the sum is taken where it cannot overflow.
            let l = r.first + ((u128::from(r.start - r.first) + u128::from(i)) % lap) as u64;
            let Some(at) = self.journal.offset_of(l) else {
                break;
            };
            self.emmc
                .read(at, &mut buf)
                .map_err(dev("reading the journal (mount model)"))?;
        }
        // The model is smaller than a filesystem may be: home blocks wrap round it.
        let capacity_blocks = self.emmc.geometry().capacity_bytes / BLOCK_BYTES;
        for &h in &r.home_blocks {
            let at = (h % capacity_blocks) * BLOCK_BYTES;
            self.emmc
                .write(at, &buf, WriteFlags::NONE)
                .map_err(dev("writing home blocks (mount model)"))?;
        }
        self.emmc.flush().map_err(dev("flushing (mount model)"))?;
        Ok(self.emmc.now_ns() - t0)
    }
}

/// The mount cost over the images checked.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MountCost {
    pub profile: String,
    /// Images whose journal needs replay (the rest mount without one).
    pub images_replaying: u64,
    pub images: u64,
    pub mean_transactions: f64,
    pub max_transactions: u64,
    pub mean_journal_blocks: f64,
    pub max_journal_blocks: u64,
    pub mean_home_blocks: f64,
    pub max_home_blocks: u64,
    pub mean_ms: f64,
    pub max_ms: f64,
}

impl MountCost {
    pub fn add(&mut self, r: &Replay, ns: u64) {
        let n = self.images as f64;
        let mean = |m: f64, x: u64| (m * n + x as f64) / (n + 1.0);
        self.profile = MOUNT_PROFILE.to_string();
        self.mean_transactions = mean(self.mean_transactions, r.transactions);
        self.mean_journal_blocks = mean(self.mean_journal_blocks, r.journal_blocks_read);
        self.mean_home_blocks = mean(self.mean_home_blocks, r.home_blocks_written);
        self.mean_ms = (self.mean_ms * n + ns as f64 / 1e6) / (n + 1.0);
        self.max_transactions = self.max_transactions.max(r.transactions);
        self.max_journal_blocks = self.max_journal_blocks.max(r.journal_blocks_read);
        self.max_home_blocks = self.max_home_blocks.max(r.home_blocks_written);
        self.max_ms = self.max_ms.max(ns as f64 / 1e6);
        self.images += 1;
        self.images_replaying += u64::from(r.transactions > 0);
    }
}

#[cfg(test)]
mod tests {
    use super::super::jbd2::{JournalShapeError, Run};
    use super::*;

    fn journal(logical: u64, blocks: u64) -> Journal {
        Journal {
            runs: vec![Run {
                logical,
                physical: 100,
                blocks,
            }],
        }
    }

    #[test]
    fn a_model_of_a_journal_with_a_gap_is_refused_not_a_panic() {
        assert!(matches!(
            MountModel::new(journal(5, 3)),
            Err(ExperimentError::CrashFs(CrashFsError::MountJournal(
                JournalShapeError::Gap { logical: 5, .. }
            )))
        ));
    }

    #[test]
    fn a_replay_is_timed_on_no_more_reads_than_the_journal_holds() {
        let lap = Replay {
            start: 1,
            first: 1,
            maxlen: 64,
            transactions: 1,
            journal_blocks_read: 64,
            ..Replay::default()
        };
        let endless = Replay {
            journal_blocks_read: 10u64.pow(18),
            ..lap.clone()
        };
        let cost = |r: &Replay| MountModel::new(journal(0, 64)).unwrap().cost_ns(r).unwrap();
        let lap_ns = cost(&lap);
        assert!(lap_ns > 0);
        assert_eq!(cost(&endless), lap_ns, "64 reads, however many it claims");
    }
}
