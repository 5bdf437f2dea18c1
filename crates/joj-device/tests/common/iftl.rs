//! Shared by the i-FTL tests: a small device and a reference model of what it must show.

#![allow(dead_code)]

use std::collections::HashMap;

use joj_device::{
    DataMode, FtlConfig, Geometry, IFtl, IftlConfig, Lpn, NandMedium, NvmTiming, Timing, WriteKind,
};

pub const PAGE_BYTES: usize = 512;

/// 2 channels × 32 blocks × 8 pages of 512 B; 64 KiB of NVM.
pub fn geometry() -> Geometry {
    Geometry {
        page_bytes: PAGE_BYTES as u32,
        pages_per_block: 8,
        blocks_per_plane: 32,
        planes_per_die: 1,
        dies_per_channel: 1,
        channels: 2,
        sector_bytes: 512,
    }
}

pub fn ftl_config() -> FtlConfig {
    FtlConfig {
        gc_free_blocks: 2,
        ..FtlConfig::default()
    }
}

pub fn iftl_config() -> IftlConfig {
    IftlConfig {
        nvm_bytes: 64 << 10,
        nvm: NvmTiming::default(),
        tx_slots: 8,
        log_entries: 256,
        log_blocks: 4,
        metadata_slots: Some(96),
    }
}

pub const LOGICAL_PAGES: u64 = 300;

pub fn device() -> IFtl<NandMedium> {
    device_with(iftl_config(), LOGICAL_PAGES)
}

pub fn device_with(cfg: IftlConfig, logical: u64) -> IFtl<NandMedium> {
    let m = NandMedium::new(geometry(), Timing::default(), DataMode::Full);
    IFtl::format(m, cfg, &ftl_config(), logical).expect("format")
}

/// A page whose first 8 bytes are `tag` and the rest a byte of it: a torn or stale page
/// never passes for another version.
pub fn page(tag: u64) -> Vec<u8> {
    let mut p = vec![(tag % 251) as u8; PAGE_BYTES];
    p[..8].copy_from_slice(&tag.to_le_bytes());
    p
}

/// The tag of a page read back, or an error if it is no page `page` made.
pub fn tag_of(p: &[u8]) -> Result<u64, String> {
    if p.iter().all(|&b| b == 0) {
        return Ok(0);
    }
    let mut w = [0u8; 8];
    w.copy_from_slice(&p[..8]);
    let tag = u64::from_le_bytes(w);
    if p[8..].iter().any(|&b| b != (tag % 251) as u8) {
        return Err(format!("page with tag {tag} is not intact"));
    }
    Ok(tag)
}

/// The data tag of a logical page: every tenth is metadata (an inode page, say).
pub fn kind_of(lpn: u32) -> WriteKind {
    if lpn.is_multiple_of(10) {
        WriteKind::Metadata
    } else {
        WriteKind::Data
    }
}

/// Every logical page's tag as a plain reader sees it.
pub fn read_all(f: &mut IFtl<NandMedium>, now: u64) -> Result<Vec<u64>, String> {
    let mut buf = vec![0u8; PAGE_BYTES];
    let mut out = Vec::with_capacity(f.logical_pages() as usize);
    for lpn in 0..f.logical_pages() as u32 {
        f.read(None, Lpn(lpn), &mut buf, now)
            .map_err(|e| format!("read of {lpn}: {e}"))?;
        out.push(tag_of(&buf).map_err(|e| format!("lpn {lpn}: {e}"))?);
    }
    Ok(out)
}

/// The committed state, and per open transaction the pages it wrote.
#[derive(Debug, Default, Clone)]
pub struct Model {
    pub committed: HashMap<u32, u64>,
    pub open: HashMap<u32, HashMap<u32, u64>>,
}

impl Model {
    pub fn expected(&self, lpn: u32) -> u64 {
        self.committed.get(&lpn).copied().unwrap_or(0)
    }

    pub fn commit(&mut self, tid: u32) {
        if let Some(w) = self.open.remove(&tid) {
            self.committed.extend(w);
        }
    }

    pub fn abort(&mut self, tid: u32) {
        self.open.remove(&tid);
    }

    /// Which open transaction holds `lpn`.
    pub fn holder(&self, lpn: u32) -> Option<u32> {
        self.open
            .iter()
            .find(|(_, w)| w.contains_key(&lpn))
            .map(|(&t, _)| t)
    }
}
