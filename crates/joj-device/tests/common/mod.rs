//! Shared by the integration tests: a tiny device profile and a `HashMap` model of what every
//! page may read back.

#![allow(dead_code)]

use std::collections::HashMap;

use joj_device::queue::CommandTimes;
use joj_device::{
    BlockDevice, CacheConfig, DataMode, Emmc, FtlConfig, GcPolicy, Geometry, Profile, Timing,
    WriteFlags,
};
use proptest::test_runner::{Config as ProptestConfig, RngSeed};

/// Seed of the property tests when `JOJ_SEED` (or proptest's own `PROPTEST_RNG_SEED`) is not
/// set.
pub const DEFAULT_PROPTEST_SEED: u64 = 0x6A6F_6A5F_6465_7631;

/// A proptest configuration whose every random choice comes from one printed seed:
/// `JOJ_SEED` if set, else `PROPTEST_RNG_SEED`, else `DEFAULT_PROPTEST_SEED`. The same seed generates the same
/// cases in the same order, so a failure is rerun exactly by setting the printed seed.
/// Failures are not persisted to files: a case worth keeping becomes a named regression test.
pub fn seeded_proptest_config(cases: u32) -> ProptestConfig {
    let given = std::env::var("JOJ_SEED").or_else(|_| std::env::var("PROPTEST_RNG_SEED"));
    let seed = match given {
        Ok(s) => s.trim().parse::<u64>().unwrap_or_else(|_| {
            panic!("JOJ_SEED={s:?} is not a u64; give a decimal seed such as 12345")
        }),
        Err(_) => DEFAULT_PROPTEST_SEED,
    };
    eprintln!("proptest seed {seed} (rerun exactly with JOJ_SEED={seed})");
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..ProptestConfig::default()
    }
}

/// 32 blocks of 8 pages of 2 KiB (4 sectors) on 2 units; 30 % spare; an 8-page cache.
pub fn tiny_profile() -> Profile {
    Profile {
        name: "tiny".into(),
        description: "test device".into(),
        sources: vec!["tests".into()],
        geometry: Geometry {
            page_bytes: 2048,
            pages_per_block: 8,
            blocks_per_plane: 16,
            planes_per_die: 1,
            dies_per_channel: 1,
            channels: 2,
            sector_bytes: 512,
        },
        timing: Timing::default(),
        cache: CacheConfig {
            capacity_bytes: 8 * 2048,
            destage_watermark_percent: 50,
            idle_destage_after_ns: 0,
            partial_page_write_through: false,
        },
        ftl: FtlConfig {
            over_provisioning_percent: 30.0,
            gc_policy: GcPolicy::Greedy,
            gc_free_blocks: 2,
            checkpoint_interval_programs: 40,
            ..FtlConfig::default()
        },
        data_mode: DataMode::Full,
        iftl: None,
        host: None,
        calibration: None,
        source: Default::default(),
    }
}

/// Data of write number `id` for a request of `len` bytes: every sector starts with the write
/// id and its sector index, so a mix of writes or sectors is visible.
pub fn pattern(id: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    for (i, s) in v.chunks_mut(512).enumerate() {
        s[..8].copy_from_slice(&id.to_le_bytes());
        s[8..16].copy_from_slice(&(i as u64).to_le_bytes());
        for (j, b) in s[16..].iter_mut().enumerate() {
            *b = (id as u8).wrapping_mul(31).wrapping_add(j as u8);
        }
    }
    v
}

/// What each logical page holds now, and every content it may hold after a power loss: the
/// last durable one and each one written since.
pub struct Model {
    pub page_bytes: usize,
    pub pages: u64,
    pub current: HashMap<u64, Vec<u8>>,
    pub allowed: HashMap<u64, Vec<Vec<u8>>>,
}

impl Model {
    pub fn new(page_bytes: usize, pages: u64) -> Model {
        Model {
            page_bytes,
            pages,
            current: HashMap::new(),
            allowed: HashMap::new(),
        }
    }

    pub fn page(&self, lpn: u64) -> Vec<u8> {
        self.current
            .get(&lpn)
            .cloned()
            .unwrap_or_else(|| vec![0; self.page_bytes])
    }

    fn set(&mut self, lpn: u64, content: Vec<u8>, durable: bool) {
        let old = self.page(lpn);
        let allowed = self.allowed.entry(lpn).or_insert_with(|| vec![old]);
        if durable {
            allowed.clear();
        }
        allowed.push(content.clone());
        self.current.insert(lpn, content);
    }

    pub fn write(&mut self, offset: u64, data: &[u8], durable: bool) {
        let pb = self.page_bytes as u64;
        let mut pos = offset;
        let end = offset + data.len() as u64;
        while pos < end {
            let lpn = pos / pb;
            let in_page = (pos % pb) as usize;
            let n = ((pb - pos % pb).min(end - pos)) as usize;
            let mut page = self.page(lpn);
            let from = (pos - offset) as usize;
            page[in_page..in_page + n].copy_from_slice(&data[from..from + n]);
            self.set(lpn, page, durable);
            pos += n as u64;
        }
    }

    pub fn discard(&mut self, offset: u64, len: u64) {
        let pb = self.page_bytes as u64;
        let first = offset.div_ceil(pb);
        let last = (offset + len) / pb;
        for lpn in first..last {
            self.set(lpn, vec![0; self.page_bytes], false);
        }
    }

    pub fn flush(&mut self) {
        self.allowed.clear();
    }

    pub fn read(&self, offset: u64, len: usize) -> Vec<u8> {
        let pb = self.page_bytes as u64;
        (offset..offset + len as u64)
            .map(|b| {
                let p = self.current.get(&(b / pb));
                p.map_or(0, |p| p[(b % pb) as usize])
            })
            .collect()
    }

    /// Check every page of `dev` after a power loss against what is allowed; adopt what it
    /// holds as the new durable state. Returns a description of the first violation.
    pub fn check_after_crash(&mut self, dev: &mut impl BlockDevice) -> Result<(), String> {
        let pb = self.page_bytes;
        let mut buf = vec![0u8; pb];
        for lpn in 0..self.pages {
            dev.read(lpn * pb as u64, &mut buf)
                .map_err(|e| format!("read of page {lpn}: {e}"))?;
            let ok = match self.allowed.get(&lpn) {
                Some(allowed) => allowed.contains(&buf),
                None => buf == self.page(lpn),
            };
            if !ok {
                let n = self.allowed.get(&lpn).map_or(1, |a| a.len());
                return Err(format!(
                    "page {lpn} reads a content that is neither its durable one nor a later write ({n} allowed); \
                     first sector header {:?}",
                    &buf[..16]
                ));
            }
            self.current.insert(lpn, buf.clone());
        }
        self.allowed.clear();
        Ok(())
    }
}

/// Host thread 1 writes page 0, then thread 2 writes page 1 (pages of `page` bytes, `flags`):
/// when each command arrived, started and completed.
pub fn two_threads_write(
    dev: &mut Emmc<joj_device::NandMedium>,
    page: usize,
    flags: WriteFlags,
) -> (CommandTimes, CommandTimes) {
    dev.set_issuer(1);
    dev.write(0, &vec![0; page], flags)
        .expect("thread 1's write");
    let first = dev.last_command();
    dev.set_issuer(2);
    dev.write(page as u64, &vec![0; page], flags)
        .expect("thread 2's write");
    (first, dev.last_command())
}

/// The image probe's device: 2 channels of 32 blocks of 16 pages of 4 KiB, no page data.
pub fn small_image_profile() -> Profile {
    let mut p = Profile::builtin("emmc5")
        .expect("a built-in profile")
        .with_data_mode(DataMode::OobOnly);
    p.geometry.page_bytes = 4096;
    p.geometry.pages_per_block = 16;
    p.geometry.blocks_per_plane = 32;
    p.geometry.planes_per_die = 1;
    p.geometry.dies_per_channel = 1;
    p.geometry.channels = 2;
    p.ftl.over_provisioning_percent = 30.0;
    p
}
