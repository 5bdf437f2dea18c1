//! Device aging for garbage-collection experiments (X-FTL §6.3.1: "we controlled aging of the
//! flash memory chips such that the ratio of valid pages carried over by garbage collection was
//! approximately 30 %, 50 % or 70 %").
//!
//! The logical pages from `from_lpn` up are *cold*: the workload never touches them. Aging
//! fills all free blocks but `keep_free` with cold pages, in rounds of one block per unit; after
//! each round a random `100 − validity` % of the round's pages are trimmed, so every filled
//! block holds about `validity` % valid pages and the device has just enough free blocks left
//! for GC to start soon after the workload does. Greedy GC then finds victims at about that
//! validity (the workload's own blocks, rewritten, may be emptier: the validity GC actually saw
//! is reported by `DeviceSummary::gc_validity`). Cold pages are written as zeros, which the
//! emulated NAND stores without a data buffer, so aging a large device costs little memory.
//! X-FTL's eMMC and the i-FTL device age alike ([`Ageable`]); the i-FTL's GC threshold counts
//! the log blocks it keeps free for lazy GC.

use serde::{Deserialize, Serialize};

use crate::block::{BlockDevice, WriteFlags};
use crate::config::Profile;
use crate::emmc::Emmc;
use crate::error::DeviceError;
use crate::iftl_device::IftlDevice;
use crate::medium::Medium;
use crate::rng::SimRng;

/// A device aging can fill: its profile, its logical size, and its free blocks against the
/// count at which its GC starts (X-FTL's eMMC and the i-FTL device).
pub trait Ageable: BlockDevice {
    fn aging_profile(&self) -> &Profile;
    fn logical_pages(&self) -> u64;
    fn free_blocks(&self) -> u32;
    /// Free blocks at or below which GC runs (i-FTL: its reserve plus the log blocks not
    /// yet taken).
    fn gc_threshold_blocks(&self) -> u32;
    /// Start counting afresh, after aging.
    fn reset_counters(&mut self);
}

impl<M: Medium> Ageable for Emmc<M> {
    fn aging_profile(&self) -> &Profile {
        self.profile()
    }

    fn logical_pages(&self) -> u64 {
        self.ftl().logical_pages()
    }

    fn free_blocks(&self) -> u32 {
        self.ftl().free_blocks()
    }

    fn gc_threshold_blocks(&self) -> u32 {
        self.profile().ftl.gc_free_blocks
    }

    fn reset_counters(&mut self) {
        Emmc::reset_counters(self)
    }
}

impl<M: Medium> Ageable for IftlDevice<M> {
    fn aging_profile(&self) -> &Profile {
        self.profile()
    }

    fn logical_pages(&self) -> u64 {
        IftlDevice::logical_pages(self)
    }

    fn free_blocks(&self) -> u32 {
        self.ftl().free_blocks()
    }

    fn gc_threshold_blocks(&self) -> u32 {
        self.ftl().gc_threshold_blocks()
    }

    fn reset_counters(&mut self) {
        IftlDevice::reset_counters(self)
    }
}

/// How to age a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Aging {
    /// Share of valid pages in every aged block, in percent (1..=99).
    pub validity_percent: u32,
    /// First cold logical page (the workload uses the pages below).
    pub from_lpn: u64,
    /// Free blocks left after aging, on top of the FTL's GC threshold.
    pub keep_free: u32,
}

/// What aging did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgingReport {
    pub validity_percent: u32,
    pub pages_written: u64,
    pub pages_trimmed: u64,
    pub free_blocks_after: u32,
}

/// Age `dev` as `aging` says; `seed` picks the trimmed pages. Counters are reset after.
pub fn age<D: Ageable>(dev: &mut D, aging: &Aging, seed: u64) -> Result<AgingReport, DeviceError> {
    if !(1..=99).contains(&aging.validity_percent) {
        return Err(DeviceError::Aging(format!(
            "validity {} % is outside 1..=99",
            aging.validity_percent
        )));
    }
    let profile = dev.aging_profile();
    let g = profile.geometry.clone();
    // A logical page is a mapping unit; a block holds `slots_per_page` of them per page.
    let page = u64::from(profile.mapping_unit_bytes());
    let ppb = u64::from(g.pages_per_block) * u64::from(profile.slots_per_page());
    let units = u64::from(g.units());
    let logical = dev.logical_pages();
    if aging.from_lpn >= logical {
        return Err(DeviceError::Aging(format!(
            "cold region starts at page {} beyond the device's {logical}",
            aging.from_lpn
        )));
    }
    let keep = dev.gc_threshold_blocks() + aging.keep_free.max(1);
    let mut rng = SimRng::new(seed);
    // Cold logical pages not currently holding a valid aged page.
    let mut pool: Vec<u64> = (aging.from_lpn..logical).rev().collect();
    let zero = vec![0u8; page as usize];
    let round = (units * ppb) as usize;
    let keep_per_round = round * aging.validity_percent as usize / 100;
    let mut report = AgingReport {
        validity_percent: aging.validity_percent,
        pages_written: 0,
        pages_trimmed: 0,
        free_blocks_after: 0,
    };
    while u64::from(dev.free_blocks()) >= u64::from(keep) + units {
        if pool.len() < round {
            return Err(DeviceError::Aging(format!(
                "the cold region (pages {}..{logical}) is too small to age this device to {} %",
                aging.from_lpn, aging.validity_percent
            )));
        }
        let mut written: Vec<u64> = Vec::with_capacity(round);
        for _ in 0..round {
            let lpn = pool.pop().expect("checked");
            // Written through (FUA): programmed now, so the trims below find them on flash.
            dev.write(lpn * page, &zero, WriteFlags::FUA)?;
            written.push(lpn);
        }
        report.pages_written += round as u64;
        // Trim a random part of the round (Fisher–Yates prefix).
        for i in 0..round - keep_per_round {
            let j = i + rng.below((round - i) as u64) as usize;
            written.swap(i, j);
            let lpn = written[i];
            dev.discard(lpn * page, page)?;
            pool.push(lpn);
            report.pages_trimmed += 1;
        }
    }
    dev.flush()?;
    dev.reset_counters();
    report.free_blocks_after = dev.free_blocks();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Profile;

    /// Age a fresh device from `make` to 30, 50 and 70 %, overwrite a small hot region until
    /// GC runs on the aged blocks, and check the validity GC saw.
    fn collects_at_about_the_asked_validity<D: Ageable>(p: &Profile, make: impl Fn() -> D) {
        for v in [30u32, 50, 70] {
            let mut dev = make();
            let r = age(
                &mut dev,
                &Aging {
                    validity_percent: v,
                    from_lpn: 1024,
                    keep_free: 2,
                },
                v.into(),
            )
            .unwrap();
            assert!(r.pages_written > 0);
            let mut rng = SimRng::new(1);
            let page = u64::from(p.geometry.page_bytes);
            for _ in 0..20_000 {
                let lpn = rng.below(1024);
                dev.write(lpn * page, &vec![0u8; page as usize], WriteFlags::NONE)
                    .unwrap();
            }
            let c = dev.counters();
            assert!(c.gc_runs > 0, "no GC at {v} %");
            let seen =
                c.gc_copies as f64 / (c.gc_runs as f64 * f64::from(p.geometry.pages_per_block));
            eprintln!(
                "asked {v} %: GC saw {:.1} % over {} runs",
                seen * 100.0,
                c.gc_runs
            );
            assert!(
                (seen - f64::from(v) / 100.0).abs() < 0.1,
                "validity {v} %: GC copied {:.0} % of its victims",
                seen * 100.0
            );
        }
    }

    #[test]
    fn aged_device_collects_at_about_the_asked_validity() {
        let p = Profile::builtin("galaxy-s5")
            .unwrap()
            .with_blocks_per_plane(64)
            .with_data_mode(crate::config::DataMode::OobOnly);
        collects_at_about_the_asked_validity(&p, || Emmc::new(&p).unwrap());
    }

    /// The i-FTL device ages the same way (its GC threshold counts the log blocks it keeps).
    #[test]
    fn aged_iftl_device_collects_at_about_the_asked_validity() {
        let mut p = Profile::builtin("galaxy-s5")
            .unwrap()
            .with_blocks_per_plane(128)
            .with_data_mode(crate::config::DataMode::OobOnly);
        p.iftl = Some(Default::default());
        collects_at_about_the_asked_validity(&p, || IftlDevice::new(&p).unwrap());
    }
}
