//! The device side of mounting a crash image: the journal replay that jbd2's recovery does
//! ([`jbd2::replay`]), timed through an emulated eMMC profile. The model's journal is written
//! once first (so its reads cost NAND reads), then each replay reads the journal blocks the
//! scan reads, writes the home blocks and flushes; the cost is the modeled time that took.
//! The kernel's CPU time and ext4's other mount work are not included.

use joj_device::{BlockDevice, Emmc, NandMedium, Profile, WriteFlags};
use joj_linux::record::BLOCK_BYTES;
use serde::{Deserialize, Serialize};

use super::jbd2::{Journal, Replay};
use crate::error::ExperimentError;

/// The profile the mount cost is modeled on.
pub const MOUNT_PROFILE: &str = "galaxy-s5";

/// Times journal replays on one model.
pub struct MountModel {
    emmc: Emmc<NandMedium>,
    journal: Journal,
}

fn dev(what: &'static str) -> impl FnOnce(joj_device::DeviceError) -> ExperimentError {
    move |source| ExperimentError::Device { what, source }
}

impl MountModel {
    pub fn new(journal: Journal) -> Result<Self, ExperimentError> {
        let profile = Profile::builtin(MOUNT_PROFILE)
            .map_err(|e| ExperimentError::CrashStates(format!("the mount-cost profile: {e}")))?;
        let mut emmc = Emmc::new(&profile).map_err(dev("making the mount-cost model"))?;
        let maxlen: u64 = journal.runs.iter().map(|r| r.blocks).sum();
        let block = vec![0x5au8; BLOCK_BYTES as usize];
        for l in 0..maxlen {
            let at = journal.offset_of(l).expect("within the journal");
            emmc.write(at, &block, WriteFlags::NONE)
                .map_err(dev("writing the model's journal"))?;
        }
        emmc.flush().map_err(dev("writing the model's journal"))?;
        Ok(MountModel { emmc, journal })
    }

    /// Modeled nanoseconds of `r`: its journal reads from `r.start` on (wrapping from
    /// `r.maxlen` back to `r.first`, as the scan does), its home writes, a flush.
    pub fn cost_ns(&mut self, r: &Replay) -> Result<u64, ExperimentError> {
        if r.journal_blocks_read == 0 || r.maxlen <= r.first || r.start < r.first {
            return Ok(0);
        }
        let t0 = self.emmc.now_ns();
        let mut buf = vec![0u8; BLOCK_BYTES as usize];
        for i in 0..r.journal_blocks_read {
            let l = r.first + (r.start - r.first + i) % (r.maxlen - r.first);
            let Some(at) = self.journal.offset_of(l) else {
                break;
            };
            self.emmc
                .read(at, &mut buf)
                .map_err(dev("reading the journal (mount model)"))?;
        }
        let capacity = self.emmc.geometry().capacity_bytes;
        for &h in &r.home_blocks {
            let at = (h * BLOCK_BYTES) % capacity;
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
