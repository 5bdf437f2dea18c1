//! Configuration of an emulated device: `Geometry`, `Timing`, `CacheConfig`, `FtlConfig`, and the
//! named `Profile` that bundles them with its sources. Units are at the end of every name.

use serde::{Deserialize, Serialize};

use crate::error::ProfileError;

/// Physical pages a model may have: it keeps at least 16 B of state per page (the out-of-band
/// area, `Oob`) in memory, so 2^28 pages already hold 4 GiB — a 2 TiB device of 8 KiB pages.
/// With a sub-page mapping unit the bound is on slots (units of pages).
pub const MAX_PHYSICAL_PAGES: u64 = 1 << 28;

/// The most spare a profile may declare: ten times the capacity it offers.
pub const MAX_OVER_PROVISIONING_PERCENT: f64 = 1000.0;
/// The largest profile file read: a profile is a few KiB of JSON.
pub const MAX_PROFILE_BYTES: u64 = 1 << 20;
/// Longest a single step of a profile's timing may take (a page read or program, an erase, a
/// command's overhead or latency): 10 s, far above any flash device's milliseconds; the
/// nanosecond device clock then needs more than a billion such steps to overflow.
pub const MAX_STEP_NS: u64 = 10_000_000_000;

/// Largest NAND page: 64 KiB. Real NAND pages are 2–16 KiB (docs/sources.md#nand-geometry: 4 and
/// 8 KiB in Micron MLC datasheets, 16 KiB in Linux's NAND ID table; MQSim's configurations all use
/// 8 KiB); the model holds a page in a buffer of that size for every request, so the bound also
/// bounds that allocation.
pub const MAX_PAGE_BYTES: u32 = 64 << 10;
/// Largest write cache: 1 GiB. An eMMC's cache (`EXT_CSD[CACHE_SIZE]`) is a few hundred KiB
/// to a few MiB, and an SSD's DRAM (about 1 GiB per TiB of flash) holds mostly its mapping
/// table; the model keeps the cache's slots, and with `--data full` its bytes, in memory.
pub const MAX_CACHE_BYTES: u64 = 1 << 30;
/// Slowest host bus, NAND channel or NVM: 1 MB/s, below every bus mode of a real part (eMMC's
/// backward-compatible 1-bit bus at 26 MHz moves 3.25 MB/s, ONFI's slowest asynchronous mode
/// 10 MB/s). At this floor the largest run joj makes (a 2 TiB device written over 101 times:
/// preconditioning and 100 random passes, about 2.2·10^14 bytes) takes 2.2·10^17 ns, under
/// 1/80 of the nanosecond clock's 1.8·10^19.
pub const MIN_BYTES_PER_S: u64 = 1_000_000;
/// Fastest host bus, NAND channel or NVM: 10^18 bytes/s, the `zero-latency` reference's (a
/// device that takes next to no time; no bus of a part comes within a million times of it:
/// PCIe 6.0 ×16 moves 1.3·10^11 B/s, an HBM3 stack 8·10^11). At this speed every transfer the
/// model makes already takes its smallest time, 1 ns; a profile claiming more claims a bus
/// nothing has.
pub const MAX_BYTES_PER_S: u64 = 1_000_000_000_000_000_000;

/// The host sector sizes a profile may give: 512 B (eMMC addresses 512-byte sectors,
/// JESD84-B51; SATA, SCSI and NVMe's 512-byte logical blocks) and 4 KiB (eMMC's large-sector
/// mode, `EXT_CSD[DATA_SECTOR_SIZE]`; 4Kn disks).
pub const SECTOR_BYTES: [u32; 2] = [512, 4096];

/// Most mapping units (slots) one NAND page may hold.
pub const MAX_SLOTS_PER_PAGE: u32 = 8;

/// Most independently busy units (`channels × dies_per_channel × planes_per_die`): 4096. The
/// largest SSDs have 16 or 32 channels of up to 32 dies of 4 planes (2048 units); the model
/// keeps a free list, a write frontier and busy times per unit, and the FTL reserves a block
/// per unit, all sized before a request is served.
pub const MAX_UNITS: u64 = 4096;
/// Most pages in an erase block: 4096. NAND blocks hold 64 to a few thousand pages (MQSim's
/// presets 128–1024; 3D TLC and QLC parts a few thousand); the model keeps a scratch entry per
/// page of a block for GC and, with page data, a written block's pages in one buffer (4096
/// pages of 64 KiB: 256 MiB).
pub const MAX_PAGES_PER_BLOCK: u32 = 4096;
/// Most erase blocks a device may have: 2^22. A 2 TiB device of 512 KiB blocks has 4 Mi of
/// them; the model keeps some 60 B of state per block (programmed count, erase count, free
/// list, data buffer), sized before a request is served.
pub const MAX_BLOCKS: u64 = 1 << 22;
/// Most metadata pages one flush (`ftl.flush_meta_pages`) or one X-FTL commit
/// (`ftl.commit_meta_pages`) programs: 65,536, the most `joj device calibrate` derives. A
/// firmware that logs its whole page map per flush programs the map's size (an 8 GiB device of
/// 8 KiB pages: 512 pages), a measured flush some tens of pages; the model schedules each one,
/// on every flush or commit.
pub const MAX_META_PAGES: u32 = 65_536;

/// Shape of the NAND array.
///
/// Defaults describe an eMMC 5.x class part: 8 KiB pages and 256 pages per block (Micron's L74A
/// MLC datasheet and MQSim's configuration, docs/sources.md#nand-geometry; Galaxy S5 eMMC has
/// 8 KiB pages, WALDIO §3.3), 2 channels × 2 dies × 2 planes = 8 parallel units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    /// Bytes of data per NAND page (the FTL's mapping unit). A multiple of `sector_bytes`, at
    /// most 64 sectors.
    pub page_bytes: u32,
    pub pages_per_block: u32,
    /// Erase blocks in each plane.
    pub blocks_per_plane: u32,
    pub planes_per_die: u32,
    pub dies_per_channel: u32,
    pub channels: u32,
    /// Host addressing unit (eMMC: 512-byte sectors).
    pub sector_bytes: u32,
}

impl Default for Geometry {
    fn default() -> Self {
        Geometry {
            page_bytes: 8192,
            pages_per_block: 256,
            blocks_per_plane: 512,
            planes_per_die: 2,
            dies_per_channel: 2,
            channels: 2,
            sector_bytes: 512,
        }
    }
}

impl Geometry {
    /// Independently busy program/read/erase units (`channels × dies × planes`). Block `b` lives
    /// on unit `b % units`, and unit `u` on channel `u % channels`.
    pub fn units(&self) -> u32 {
        self.channels * self.dies_per_channel * self.planes_per_die
    }

    pub fn blocks(&self) -> u32 {
        self.units() * self.blocks_per_plane
    }

    pub fn physical_pages(&self) -> u64 {
        u64::from(self.blocks()) * u64::from(self.pages_per_block)
    }

    pub fn sectors_per_page(&self) -> u32 {
        self.page_bytes / self.sector_bytes
    }

    pub fn unit_of_block(&self, block: u32) -> u32 {
        block % self.units()
    }

    pub fn channel_of_unit(&self, unit: u32) -> u32 {
        unit % self.channels
    }

    pub fn validate(&self) -> Result<(), ProfileError> {
        let bad = |reason: &str| {
            Err(ProfileError::Invalid {
                reason: reason.to_string(),
            })
        };
        if !SECTOR_BYTES.contains(&self.sector_bytes) {
            return Err(ProfileError::SectorSize {
                value: self.sector_bytes,
            });
        }
        if self.page_bytes > MAX_PAGE_BYTES {
            return Err(ProfileError::OutOfRange {
                field: "geometry.page_bytes",
                value: u64::from(self.page_bytes),
                min: u64::from(self.sector_bytes),
                max: u64::from(MAX_PAGE_BYTES),
                unit: "bytes",
                reason: "NAND pages are 2 to 16 KiB, and the model holds a page in a buffer \
                         for every request",
                example: "8192 (eMMC 5.x, Galaxy S5)",
            });
        }
        if self.page_bytes == 0 || !self.page_bytes.is_multiple_of(self.sector_bytes) {
            return bad(&format!(
                "geometry.page_bytes is {}, which is not a non-zero multiple of \
                 geometry.sector_bytes ({}): a NAND page holds whole sectors; fix: give a \
                 multiple such as 8192 (eMMC 5.x, Galaxy S5) or 4096",
                self.page_bytes, self.sector_bytes
            ));
        }
        if self.sectors_per_page() > 64 {
            return bad(&format!(
                "geometry.page_bytes {} holds {} sectors of {} bytes, more than the 64 the \
                 model tracks per page; fix: give at most {} (e.g. 8192)",
                self.page_bytes,
                self.sectors_per_page(),
                self.sector_bytes,
                64 * self.sector_bytes
            ));
        }
        let counts = [
            ("pages_per_block", self.pages_per_block, "128"),
            ("blocks_per_plane", self.blocks_per_plane, "1024"),
            ("channels", self.channels, "2"),
            ("dies_per_channel", self.dies_per_channel, "1"),
            ("planes_per_die", self.planes_per_die, "2"),
        ];
        if let Some((field, _, example)) = counts.iter().find(|(_, n, _)| *n == 0) {
            return bad(&format!(
                "geometry.{field} is 0; every geometry count must be at least 1, or the \
                 device has no NAND to write; fix: give a count such as {example}"
            ));
        }
        // In u64 and saturating: the u32 products of `units` and `blocks` are only computed
        // once this bound holds. MAX_PHYSICAL_PAGES < 2^32: page numbers fit in 32 bits.
        let pages = [
            self.channels,
            self.dies_per_channel,
            self.planes_per_die,
            self.blocks_per_plane,
            self.pages_per_block,
        ]
        .iter()
        .fold(1u64, |n, &k| n.saturating_mul(u64::from(k)));
        if pages > MAX_PHYSICAL_PAGES {
            return Err(ProfileError::TooLarge {
                pages,
                max_pages: MAX_PHYSICAL_PAGES,
            });
        }
        self.validate_counts()
    }

    /// The parallel units, the pages of a block and the blocks are each within their bound
    /// ([`MAX_UNITS`], [`MAX_PAGES_PER_BLOCK`], [`MAX_BLOCKS`]): the model sizes state per unit,
    /// per page of a block and per block before it serves a request. In u64, once every count
    /// is non-zero and the pages are within [`MAX_PHYSICAL_PAGES`].
    fn validate_counts(&self) -> Result<(), ProfileError> {
        let units = u64::from(self.channels)
            * u64::from(self.dies_per_channel)
            * u64::from(self.planes_per_die);
        if units > MAX_UNITS {
            return Err(ProfileError::OutOfRange {
                field: "geometry.channels × dies_per_channel × planes_per_die",
                value: units,
                min: 1,
                max: MAX_UNITS,
                unit: "parallel units",
                reason: "the largest SSDs have 32 channels of up to 32 dies of 4 planes, and the \
                         model keeps a free list, a write frontier and a reserved block per unit",
                example: "2 channels × 2 dies × 2 planes = 8 (eMMC 5.x)",
            });
        }
        if self.pages_per_block > MAX_PAGES_PER_BLOCK {
            return Err(ProfileError::OutOfRange {
                field: "geometry.pages_per_block",
                value: u64::from(self.pages_per_block),
                min: 1,
                max: u64::from(MAX_PAGES_PER_BLOCK),
                unit: "pages",
                reason: "NAND blocks hold 64 to a few thousand pages, and the model keeps a \
                         written block's pages in one buffer",
                example: "256 (eMMC 5.x)",
            });
        }
        let blocks = units * u64::from(self.blocks_per_plane);
        if blocks > MAX_BLOCKS {
            return Err(ProfileError::OutOfRange {
                field: "geometry.blocks_per_plane × parallel units",
                value: blocks,
                min: 1,
                max: MAX_BLOCKS,
                unit: "blocks",
                reason: "a 2 TiB device of 512 KiB blocks has 4 Mi blocks, and the model keeps \
                         some 60 B of state per block",
                example: "512 blocks per plane × 8 units (eMMC 5.x, 8 GiB)",
            });
        }
        Ok(())
    }
}

/// Latencies and bandwidths of the NAND array and the host interface, in simulated time.
///
/// Defaults: MLC-class array times (docs/sources.md#nand-timing: Micron MLC datasheets give read
/// 50–75 µs, program 900–1300 µs, erase 3–3.8 ms; MQSim's default is read 75 µs, program 750 µs,
/// erase 3.8 ms): read 50 µs, program 750 µs, erase 3 ms; channel 400 MB/s (ONFI 4 / Toggle 2
/// class); host bus 400 MB/s (eMMC HS400); a command overhead of 30 µs (a fit, see the profiles).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Array read time of one page (tR).
    pub read_page_ns: u64,
    /// Array program time of one page (tPROG).
    pub program_page_ns: u64,
    /// Block erase time (tBERS).
    pub erase_block_ns: u64,
    /// Bandwidth of a NAND channel between controller and die registers.
    pub channel_bytes_per_s: u64,
    /// Bandwidth of the host bus (eMMC HS400: 400 MB/s).
    pub host_bytes_per_s: u64,
    /// Fixed cost of every host command (command, response, firmware), paid once per packed
    /// command. The controller does one command's work at a time.
    pub command_overhead_ns: u64,
    /// The part of every command's time that holds nothing of the device — no controller, bus
    /// or unit — so that commands in flight together overlap in it: the path between the
    /// host's submission and the controller's work (a virtual disk's host-side I/O path, an
    /// NVMe submission and completion). Paid before the controller work. 0 (the default):
    /// every command's fixed cost is serial, `command_overhead_ns`. `joj device calibrate`
    /// splits a measured command into the two from its queue-depth scaling.
    #[serde(default)]
    pub command_latency_ns: u64,
    /// Tasks the device holds at once (eMMC 5.1 command queueing, 1–32: `CMDQ_DEPTH` + 1,
    /// JESD84-B51 as Linux reads it, `drivers/mmc/core/mmc.c`). 1: one command at a time, an
    /// eMMC before 5.1 (and the default).
    #[serde(default = "default_queue_depth")]
    pub queue_depth: u32,
}

fn default_queue_depth() -> u32 {
    1
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            read_page_ns: 50_000,
            program_page_ns: 750_000,
            erase_block_ns: 3_000_000,
            channel_bytes_per_s: 400_000_000,
            host_bytes_per_s: 400_000_000,
            command_overhead_ns: 30_000,
            command_latency_ns: 0,
            queue_depth: 1,
        }
    }
}

impl Timing {
    /// Every time and bandwidth the model divides by or adds is non-zero: a zero would model
    /// that step as taking no time while the results still name the profile.
    /// `command_overhead_ns` may be 0 (a model without per-command cost).
    pub fn validate(&self) -> Result<(), ProfileError> {
        let fields = [
            (
                "timing.read_page_ns",
                self.read_page_ns,
                "50000 (tR of MLC NAND)",
            ),
            (
                "timing.program_page_ns",
                self.program_page_ns,
                "750000 (tPROG)",
            ),
            (
                "timing.erase_block_ns",
                self.erase_block_ns,
                "3000000 (tBERS)",
            ),
            (
                "timing.channel_bytes_per_s",
                self.channel_bytes_per_s,
                "400000000",
            ),
            (
                "timing.host_bytes_per_s",
                self.host_bytes_per_s,
                "400000000 (eMMC HS400)",
            ),
        ];
        if let Some(&(field, _, example)) = fields.iter().find(|(_, value, _)| *value == 0) {
            return Err(ProfileError::ZeroTiming { field, example });
        }
        for (field, value, example) in [
            (
                "timing.channel_bytes_per_s",
                self.channel_bytes_per_s,
                "400000000",
            ),
            (
                "timing.host_bytes_per_s",
                self.host_bytes_per_s,
                "400000000 (eMMC HS400)",
            ),
        ] {
            check_bandwidth(field, value, example)?;
        }
        let steps = [
            ("read_page_ns", self.read_page_ns),
            ("program_page_ns", self.program_page_ns),
            ("erase_block_ns", self.erase_block_ns),
            ("command_overhead_ns", self.command_overhead_ns),
            ("command_latency_ns", self.command_latency_ns),
        ];
        if let Some(&(field, value)) = steps.iter().find(|(_, v)| *v > MAX_STEP_NS) {
            return Err(ProfileError::Invalid {
                reason: format!(
                    "timing.{field} {value} ns is longer than {} s, which no step of a flash \
                     device takes (an erase is milliseconds); fix: give the step in nanoseconds",
                    MAX_STEP_NS / 1_000_000_000
                ),
            });
        }
        if !(1..=crate::queue::MAX_QUEUE_DEPTH).contains(&self.queue_depth) {
            return Err(ProfileError::Invalid {
                reason: format!(
                    "timing.queue_depth {} is outside 1..={} (eMMC 5.1 queues at most {} tasks; \
                     1 is a device without a queue)",
                    self.queue_depth,
                    crate::queue::MAX_QUEUE_DEPTH,
                    crate::queue::MAX_QUEUE_DEPTH
                ),
            });
        }
        Ok(())
    }

    /// Time to move `bytes` at `bytes_per_s`, rounded up to a whole nanosecond.
    pub fn transfer_ns(bytes: u64, bytes_per_s: u64) -> u64 {
        if bytes_per_s == 0 {
            return 0;
        }
        ((u128::from(bytes) * 1_000_000_000).div_ceil(u128::from(bytes_per_s))) as u64
    }
}

/// `value` bytes/s is at least [`MIN_BYTES_PER_S`] (slower, the transfers of a long run would
/// carry the nanosecond clock towards overflow) and at most [`MAX_BYTES_PER_S`].
fn check_bandwidth(
    field: &'static str,
    value: u64,
    example: &'static str,
) -> Result<(), ProfileError> {
    if value < MIN_BYTES_PER_S {
        return Err(ProfileError::TooSlow {
            field,
            value,
            min: MIN_BYTES_PER_S,
            example,
        });
    }
    if value > MAX_BYTES_PER_S {
        return Err(ProfileError::OutOfRange {
            field,
            value,
            min: MIN_BYTES_PER_S,
            max: MAX_BYTES_PER_S,
            unit: "bytes/s",
            reason: "faster than any bus (PCIe 6.0 ×16 moves 1.3·10^11 B/s; 10^18 is the \
                     zero-latency reference's, at which every transfer already takes the \
                     model's smallest time, 1 ns)",
            example,
        });
    }
    Ok(())
}

/// The volatile write-back cache of the device.
///
/// Default 512 KiB: eMMC 5.x parts advertise a cache of a few hundred KiB to a few MiB in
/// `EXT_CSD[CACHE_SIZE]` *(typical value, unverified for any one part)*.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Capacity in bytes; rounded down to whole pages. 0 disables the cache (every write is
    /// written through as if FUA, but without the durability promise of a flush-free FUA).
    pub capacity_bytes: u64,
    /// When dirty pages exceed this share of the capacity, the oldest are programmed in the
    /// background.
    pub destage_watermark_percent: u32,
    /// Host idle time after which the device programs every dirty page in the background.
    /// `0` disables idle destaging.
    pub idle_destage_after_ns: u64,
    /// Whether a write that covers only part of a page which is not already cached is written
    /// through (read-modify-write program before completion) instead of being cached. Fits
    /// parts whose cache works in whole pages (Galaxy S5, WALDIO Fig. 6: 2 MB/s at 512 B).
    pub partial_page_write_through: bool,
}

impl CacheConfig {
    /// The capacity is at most [`MAX_CACHE_BYTES`] (the model allocates it) and the watermark a
    /// share of it.
    pub fn validate(&self) -> Result<(), ProfileError> {
        if self.capacity_bytes > MAX_CACHE_BYTES {
            return Err(ProfileError::OutOfRange {
                field: "cache.capacity_bytes",
                value: self.capacity_bytes,
                min: 0,
                max: MAX_CACHE_BYTES,
                unit: "bytes",
                reason: "an eMMC's cache is a few hundred KiB to a few MiB and an SSD's DRAM \
                         holds mostly its mapping table, and the model keeps the cache in memory",
                example: "524288 (512 KiB, eMMC 5.x)",
            });
        }
        if self.idle_destage_after_ns > MAX_STEP_NS {
            return Err(ProfileError::OutOfRange {
                field: "cache.idle_destage_after_ns",
                value: self.idle_destage_after_ns,
                min: 0,
                max: MAX_STEP_NS,
                unit: "ns",
                reason: "a cache destages after milliseconds of idleness; the model adds this \
                         to the clock",
                example: "2000000 (2 ms, galaxy-s5)",
            });
        }
        if self.destage_watermark_percent > 100 {
            return Err(ProfileError::Invalid {
                reason: format!(
                    "cache.destage_watermark_percent is {}, more than the whole cache; fix: \
                     give a percentage of 0 to 100, such as 50",
                    self.destage_watermark_percent
                ),
            });
        }
        Ok(())
    }
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            capacity_bytes: 512 * 1024,
            destage_watermark_percent: 50,
            idle_destage_after_ns: 2_000_000,
            partial_page_write_through: false,
        }
    }
}

/// Garbage-collection victim policy (see `gc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// Fewest valid pages (Kawaguchi et al., USENIX 1995; Bux & Iliadis 2010).
    Greedy,
    /// Largest `(1-u)·age/(1+u)` (Rosenblum & Ousterhout, LFS, SOSP 1991; Kawaguchi et al.).
    CostBenefit,
}

/// The page-mapping FTL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Spare capacity as a share of logical capacity: `physical = logical × (1 + p/100)`.
    /// Default 7 % (the gap between GiB and GB that consumer parts keep, Desnoyers 2012 §1).
    pub over_provisioning_percent: f64,
    pub gc_policy: GcPolicy,
    /// Garbage collection starts when free blocks fall to this count and stops above it.
    pub gc_free_blocks: u32,
    /// A mapping checkpoint is written after this many page programs without one, which bounds
    /// the recovery scan.
    pub checkpoint_interval_programs: u64,
    /// Capacity of X-FTL's transactional mapping table (X-L2P), in entries (the paper's
    /// implementation: 500 or 1000, §5.3).
    #[serde(default = "default_xl2p_entries")]
    pub xl2p_entries: u32,
    /// Pages of FTL metadata every flush programs, at least. `0`: only the dirty map pages and a
    /// root page (a checkpoint of what changed). A firmware that logs its whole page map on every
    /// flush (the OpenSSD greedy FTL, `ftl_flush`) sets the size of that map here.
    #[serde(default)]
    pub flush_meta_pages: u32,
    /// Pages every X-FTL `commit(t)` programs, at least, before it is durable. `0`: only the
    /// commit table (X-L2P) pages.
    #[serde(default)]
    pub commit_meta_pages: u32,
    /// Whether the map area's blocks are erased as its log comes round to them (one erase per
    /// `pages_per_block` map pages on a unit, the first block of each unit erased at format),
    /// as the OpenSSD greedy FTL does (`logging_pmap_table`: "if there is no free page, then
    /// erase old map block first"). X-FTL Table 1 counts these erases. `false` (the default,
    /// and the profiles made before this knob): the map area is programmed and read but never
    /// erased.
    #[serde(default)]
    pub erase_map_blocks: bool,
    /// The FTL's mapping unit in bytes (sub-page mapping): a divisor of `geometry.page_bytes`
    /// giving at most [`MAX_SLOTS_PER_PAGE`] units per page, a multiple of `sector_bytes`.
    /// `None` (the default, and every profile before this field): the NAND page.
    /// `docs/device-model.md`, "Mapping unit".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping_unit_bytes: Option<u32>,
    /// What a reliable write keeps all-or-nothing across a power cut inside its command
    /// (`docs/device-model.md`, "Reliable write across a packed command"). `page` (the default,
    /// and every profile made before this knob): each page is old or new on its own.
    /// `command`: every page of one reliable write command, packed or not, is old or every page
    /// is new — the eMMC-features paper's assumption, carried out as one X-FTL transaction.
    #[serde(default)]
    pub reliable_write_atomicity: ReliableWriteAtomicity,
}

/// The unit a reliable write is atomic in against a power cut inside its command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ReliableWriteAtomicity {
    /// Every page is old or new on its own; a cut inside a command of several pages may leave
    /// some old and some new (what eMMC's reliable write promises per address, JESD84-A441).
    #[default]
    Page,
    /// Every page of the command is old, or every page is new.
    Command,
}

fn default_xl2p_entries() -> u32 {
    1000
}

impl FtlConfig {
    /// The metadata pages of a flush and of a commit are each at most [`MAX_META_PAGES`]: the
    /// model schedules every one of them, on every flush or commit.
    pub fn validate_meta_pages(&self) -> Result<(), ProfileError> {
        for (field, value) in [
            ("ftl.flush_meta_pages", self.flush_meta_pages),
            ("ftl.commit_meta_pages", self.commit_meta_pages),
        ] {
            if value > MAX_META_PAGES {
                return Err(ProfileError::OutOfRange {
                    field,
                    value: u64::from(value),
                    min: 0,
                    max: u64::from(MAX_META_PAGES),
                    unit: "pages",
                    reason: "a firmware that logs its whole page map programs the map's size \
                             (512 pages for 8 GiB of 8 KiB pages), a measured flush some tens of \
                             pages, and the model schedules each one on every flush or commit",
                    example: "27 (the openssd profile, X-FTL Table 1), or 0 (only what changed)",
                });
            }
        }
        Ok(())
    }

    /// The X-L2P table holds at least one entry: with none, no transaction of X-FTL (nor a
    /// reliable write of the eMMC journal) could ever be made, and every run failed with "the
    /// X-L2P table is full (0 entries …)" only once the device was formatted.
    pub fn validate_xl2p(&self) -> Result<(), ProfileError> {
        if self.xl2p_entries == 0 {
            return Err(ProfileError::OutOfRange {
                field: "ftl.xl2p_entries",
                value: 0,
                min: 1,
                max: u64::from(u32::MAX),
                unit: "entries",
                reason: "each page an open X-FTL transaction (or a reliable write) changes takes \
                         one entry until it commits",
                example: "1000 (X-FTL's prototype, the default)",
            });
        }
        Ok(())
    }
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            over_provisioning_percent: 7.0,
            gc_policy: GcPolicy::Greedy,
            gc_free_blocks: 4,
            checkpoint_interval_programs: 65_536,
            xl2p_entries: default_xl2p_entries(),
            flush_meta_pages: 0,
            commit_meta_pages: 0,
            erase_map_blocks: false,
            mapping_unit_bytes: None,
            reliable_write_atomicity: ReliableWriteAtomicity::Page,
        }
    }
}

/// Timing of the byte-addressable NVM beside the controller (i-FTL's STT-RAM), per access:
/// `latency + bytes / bandwidth`, every access charged a row miss.
///
/// Defaults from the Everspin EMD3D256M 256 Mb STT-MRAM datasheet (rev. 1.3, 10/2018,
/// Figure 4 example at DDR3-1066: CL-tRCD-tRP = 8-47-36 clocks of 1.875 ns): read = tRCD + CL =
/// 103 ns; write = tRCD + tRP = 156 ns (data is non-volatile only once its row is precharged,
/// datasheet "Command descriptions", note 2); 1066 MT/s × 16 bits = 2.13 GB/s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvmTiming {
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
    pub bytes_per_s: u64,
}

impl Default for NvmTiming {
    fn default() -> Self {
        NvmTiming {
            read_latency_ns: 103,
            write_latency_ns: 156,
            bytes_per_s: 2_132_000_000,
        }
    }
}

/// i-FTL (`docs/formats/iftl.md`): the NVM region and the sizes of its tables.
///
/// `nvm_bytes` 8 MiB is the paper's (§V.A). `tx_slots`, `log_entries` and `log_blocks` have no
/// source (the paper gives no sizes); they bound when `FtlError::TxnTableFull`, `LogFtlFull` and
/// `LogBlocksFull` occur, not the speed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IftlConfig {
    pub nvm_bytes: u64,
    #[serde(default)]
    pub nvm: NvmTiming,
    /// Transactions open at once (transaction-table slots).
    pub tx_slots: u32,
    /// Entries of the logFTL ring.
    pub log_entries: u32,
    /// Flash blocks reserved for lazy GC's copies of retained pages (paper Fig. 5 "Log-Block").
    pub log_blocks: u32,
    /// Metadata slots (one page each) in NVM; `None`: every byte left after the tables.
    #[serde(default)]
    pub metadata_slots: Option<u32>,
}

impl IftlConfig {
    /// Every size and time the i-FTL divides by or counts on is non-zero; the NVM, which the
    /// model holds in memory, is at most 1 GiB.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let fields = [
            (
                "iftl.nvm.read_latency_ns",
                self.nvm.read_latency_ns,
                "103 (STT-MRAM tRCD + CL)",
            ),
            (
                "iftl.nvm.write_latency_ns",
                self.nvm.write_latency_ns,
                "156 (tRCD + tRP)",
            ),
            ("iftl.nvm.bytes_per_s", self.nvm.bytes_per_s, "2132000000"),
        ];
        if let Some(&(field, _, example)) = fields.iter().find(|(_, value, _)| *value == 0) {
            return Err(ProfileError::ZeroTiming { field, example });
        }
        check_bandwidth("iftl.nvm.bytes_per_s", self.nvm.bytes_per_s, "2132000000")?;
        // The two latencies (the bandwidth has its own bound above).
        for &(field, value, example) in &fields[..2] {
            if value > MAX_STEP_NS {
                return Err(ProfileError::OutOfRange {
                    field,
                    value,
                    min: 1,
                    max: MAX_STEP_NS,
                    unit: "ns",
                    reason: "no NVM access takes 10 s (STT-MRAM and DRAM take some 100 ns), and \
                             longer steps would carry the nanosecond clock towards overflow",
                    example,
                });
            }
        }
        let sizes = [
            ("iftl.nvm_bytes", self.nvm_bytes, 1 << 30, "8388608"),
            (
                "iftl.tx_slots",
                u64::from(self.tx_slots),
                u64::from(u32::MAX),
                "64",
            ),
            (
                "iftl.log_entries",
                u64::from(self.log_entries),
                u64::from(u32::MAX),
                "16384",
            ),
        ];
        if self.metadata_slots == Some(0) {
            return Err(ProfileError::IftlField {
                field: "iftl.metadata_slots",
                value: 0,
                max: u64::from(u32::MAX),
                example: "96, or leave it out to use every NVM byte left after the tables",
            });
        }
        match sizes.iter().find(|&&(_, v, max, _)| v == 0 || v > max) {
            Some(&(field, value, max, example)) => Err(ProfileError::IftlField {
                field,
                value,
                max,
                example,
            }),
            None => Ok(()),
        }
    }
}

impl Default for IftlConfig {
    fn default() -> Self {
        IftlConfig {
            nvm_bytes: 8 << 20,
            nvm: NvmTiming::default(),
            tx_slots: 64,
            log_entries: 16_384,
            log_blocks: 8,
            metadata_slots: None,
        }
    }
}

/// Whether the medium keeps page contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum DataMode {
    /// Page data is stored and read back; checksums cover it.
    #[default]
    Full,
    /// Only OOB areas are stored: timing, mapping, GC and counters behave exactly as in `Full`,
    /// but reads return zeros. For long synthetic runs and trace replay.
    OobOnly,
}

/// A named device: geometry, timing, cache and FTL settings, with the sources they come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    pub description: String,
    /// Where each number comes from.
    pub sources: Vec<String>,
    pub geometry: Geometry,
    pub timing: Timing,
    pub cache: CacheConfig,
    pub ftl: FtlConfig,
    #[serde(default)]
    pub data_mode: DataMode,
    /// i-FTL's NVM and tables, for profiles of a board with NVM (`openssd-iftl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iftl: Option<IftlConfig>,
    /// The target host (`crate::host`): how its host time relates to this machine's. `None`:
    /// this machine's host time, unscaled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::host::HostConfig>,
    /// The measurements a calibrated profile was derived from (`joj device calibrate`), kept as
    /// written; the model reads none of it. Its `queue_depth` part holds the device's
    /// throughput at several queue depths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<serde_json::Value>,
    /// Where the profile was read from (not part of the document): results name it beside
    /// `name`, which a file may share with a built-in.
    #[serde(skip)]
    pub source: crate::ProfileSource,
}

impl From<&Profile> for crate::ProfileRef {
    fn from(p: &Profile) -> crate::ProfileRef {
        crate::ProfileRef {
            name: p.name.clone(),
            source: p.source.label(),
        }
    }
}

const BUILTIN: &[(&str, &str)] = &[
    ("emmc5", include_str!("../profiles/emmc5.json")),
    ("galaxy-s5", include_str!("../profiles/galaxy-s5.json")),
    ("openssd", include_str!("../profiles/openssd.json")),
    (
        "openssd-iftl",
        include_str!("../profiles/openssd-iftl.json"),
    ),
    ("sdcard-2013", include_str!("../profiles/sdcard-2013.json")),
    (
        "zero-latency",
        include_str!("../profiles/zero-latency.json"),
    ),
];

impl Profile {
    /// Names of the profiles compiled into the crate (the files in `profiles/`).
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// A built-in profile by name.
    pub fn builtin(name: &str) -> Result<Profile, ProfileError> {
        let text = BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| ProfileError::Unknown {
                name: name.to_string(),
                known: Self::builtin_names().join(", "),
            })?;
        Self::from_json(text)
    }

    /// Parse and validate a profile document.
    pub fn from_json(text: &str) -> Result<Profile, ProfileError> {
        let p: Profile = serde_json::from_str(text).map_err(|e| ProfileError::Parse {
            message: e.to_string(),
        })?;
        p.validate()?;
        Ok(p)
    }

    /// A built-in name, or else a path to a profile JSON file (a regular file of at most
    /// [`MAX_PROFILE_BYTES`]).
    ///
    /// A built-in name wins over a file of that name (`./NAME` names the file); when such a
    /// file exists, a note says so. A file whose `name` is a built-in's but whose content
    /// differs is loaded with a warning naming the fields that differ; its
    /// [`Profile::source`] is the file, which every result names.
    pub fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
        if let Ok(p) = Self::builtin(name_or_path) {
            if std::path::Path::new(name_or_path).is_file() {
                crate::profile_source::say_once(format!(
                    "joj: note: {name_or_path} names the built-in profile, not the file \
                     {name_or_path} here; give ./{name_or_path} for the file"
                ));
            }
            return Ok(p);
        }
        let path = std::path::Path::new(name_or_path);
        if !path.exists() {
            return Err(ProfileError::Unknown {
                name: name_or_path.to_string(),
                known: Self::builtin_names().join(", "),
            });
        }
        let bytes = joj_trace::input::read_all(path, MAX_PROFILE_BYTES, "a device profile")
            .map_err(|e| ProfileError::Input(e.to_string()))?;
        // A byte-order mark (some editors save one) is not JSON; text that is not UTF-8 is
        // refused where it stops being so, never read with its bytes replaced.
        let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        let text = std::str::from_utf8(body).map_err(|e| ProfileError::ParseFile {
            path: name_or_path.to_string(),
            message: format!(
                "it is not UTF-8 text (byte {} is not part of a UTF-8 character); save it as \
                 UTF-8",
                e.valid_up_to() + (bytes.len() - body.len())
            ),
            known: Self::builtin_names().join(", "),
        })?;
        let mut p = Self::from_json(text).map_err(|e| match e {
            ProfileError::Parse { message } => ProfileError::ParseFile {
                path: name_or_path.to_string(),
                message,
                known: Self::builtin_names().join(", "),
            },
            e => e,
        })?;
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        p.source = crate::ProfileSource::File(abs);
        if let Ok(b) = Self::builtin(&p.name) {
            let fields = match (serde_json::to_value(&p), serde_json::to_value(&b)) {
                (Ok(a), Ok(b)) => crate::profile_source::differing_fields(&a, &b),
                _ => vec!["the document".to_string()],
            };
            if !fields.is_empty() {
                let label = crate::ProfileRef::from(&p);
                crate::profile_source::say_once(format!(
                    "joj: warning: the profile file {} is named {} like the built-in, but \
                     differs from it ({}); results name it {label}",
                    p.source.label(),
                    p.name,
                    fields.join(", ")
                ));
            }
        }
        // A calibration that doubted its own measurements wrote the profile all the same, and
        // said so in the file: say it again wherever the profile is used (the warnings are the
        // file's text, so only their number is printed).
        let warnings = p
            .calibration
            .as_ref()
            .and_then(|c| c.get("warnings"))
            .and_then(|w| w.as_array())
            .map_or(0, Vec::len);
        if warnings > 0 {
            crate::profile_source::say_once(format!(
                "joj: warning: the calibration that made {} warned {warnings} time(s) that its \
                 measurements may not be the device's (calibration.warnings in the file); its \
                 modeled figures inherit that doubt; fix: calibrate again on a quiet machine",
                p.source.label()
            ));
        }
        Ok(p)
    }

    pub fn validate(&self) -> Result<(), ProfileError> {
        crate::profile_text::check_name(&self.name)?;
        crate::profile_text::check_text("description", &self.description)?;
        crate::profile_text::check_sources("sources", &self.sources)?;
        if self.sources.is_empty() {
            return Err(ProfileError::Invalid {
                reason: "sources is empty: every number of a profile needs a source; fix: name \
                         each (a datasheet, a vendor's figure, a device-level measurement) or \
                         add a sentence saying which have none"
                    .into(),
            });
        }
        self.geometry.validate()?;
        self.timing.validate()?;
        let op = self.ftl.over_provisioning_percent;
        // Above 1000 % a device's spare is ten times what it offers the host (devices spare 7
        // to 28 %); 2e8 left 0 logical pages, found only when a run wrote its first request.
        if !(op.is_finite() && op > 0.0 && op <= MAX_OVER_PROVISIONING_PERCENT) {
            return Err(ProfileError::Invalid {
                reason: format!(
                    "ftl.over_provisioning_percent is {op:e}; it must be above 0 and at most \
                     {MAX_OVER_PROVISIONING_PERCENT}, as an FTL needs spare blocks to collect \
                     garbage into and a device offers most of its NAND; fix: give a percentage \
                     such as 7 (a typical eMMC) or 28 (an SSD)"
                ),
            });
        }
        self.ftl.validate_meta_pages()?;
        self.ftl.validate_xl2p()?;
        if let Some(i) = &self.iftl {
            i.validate()?;
        }
        if let Some(h) = &self.host {
            h.validate()?;
            // A wait per sync call longer than any step of a device would make every modeled
            // figure the wait alone (u64::MAX gave 0.0 transactions/s = host 3.9e11 s).
            if let Some(w) = h.sync_wait_ns.filter(|&w| w > MAX_STEP_NS) {
                return Err(ProfileError::OutOfRange {
                    field: "host.sync_wait_ns",
                    value: w,
                    min: 0,
                    max: MAX_STEP_NS,
                    unit: "ns",
                    reason: "a sync call's waits on a phone are tens to hundreds of microseconds \
                             (wake-ups, context switches), never seconds",
                    example: "100000 (100 µs), or leave it out to use this machine's waits",
                });
            }
        }
        self.validate_mapping_unit()?;
        self.validate_spare_blocks()?;
        self.cache.validate()
    }

    /// The check `Ftl::empty` and `IFtl::format` make, made when the profile is read, so that a
    /// profile too small for its spare blocks is named as the profile's fault, not a trace
    /// record's.
    fn validate_spare_blocks(&self) -> Result<(), ProfileError> {
        let g = &self.geometry;
        let blocks = u64::from(g.blocks());
        let slots_per_block = u64::from(g.pages_per_block) * u64::from(self.slots_per_page());
        let user_blocks = self.logical_pages().div_ceil(slots_per_block.max(1));
        let log_blocks = self.iftl.as_ref().map_or(0, |i| u64::from(i.log_blocks));
        let spare = u64::from(g.units()) + u64::from(self.ftl.gc_free_blocks) + 2 + log_blocks;
        if blocks >= user_blocks + spare {
            return Ok(());
        }
        // Logical pages are physical / (1 + op / 100): over-provisioning of
        // 100 * spare / (blocks - spare) percent leaves `spare` blocks free.
        let larger_op = if blocks > spare {
            let min = 100.0 * spare as f64 / (blocks - spare) as f64;
            format!(
                ", or over_provisioning_percent {:.1} or more",
                (min * 10.0).ceil() / 10.0 + 0.1
            )
        } else {
            String::new()
        };
        Err(ProfileError::SpareBlocks {
            blocks,
            user_blocks,
            spare,
            units: g.units(),
            gc_free_blocks: self.ftl.gc_free_blocks,
            log: if log_blocks > 0 {
                format!(", {log_blocks} iftl.log_blocks")
            } else {
                String::new()
            },
            op_percent: format!("{}", self.ftl.over_provisioning_percent),
            larger_op,
        })
    }

    /// The FTL's mapping unit: `ftl.mapping_unit_bytes`, else the NAND page.
    pub fn mapping_unit_bytes(&self) -> u32 {
        self.ftl
            .mapping_unit_bytes
            .unwrap_or(self.geometry.page_bytes)
    }

    /// Mapping units (slots) per NAND page: 1 unless the profile maps sub-page units.
    pub fn slots_per_page(&self) -> u32 {
        (self.geometry.page_bytes / self.mapping_unit_bytes().max(1)).max(1)
    }

    fn validate_mapping_unit(&self) -> Result<(), ProfileError> {
        let Some(unit) = self.ftl.mapping_unit_bytes else {
            return Ok(());
        };
        let g = &self.geometry;
        let fits = unit >= g.sector_bytes
            && unit.is_multiple_of(g.sector_bytes)
            && g.page_bytes.is_multiple_of(unit)
            && g.page_bytes / unit <= MAX_SLOTS_PER_PAGE;
        if !fits {
            return Err(ProfileError::Invalid {
                reason: format!(
                    "ftl.mapping_unit_bytes {unit} must be a multiple of sector_bytes ({}) that \
                     divides page_bytes ({}) into at most {MAX_SLOTS_PER_PAGE} units",
                    g.sector_bytes, g.page_bytes
                ),
            });
        }
        let slots = g
            .physical_pages()
            .saturating_mul(u64::from(g.page_bytes / unit));
        if slots > MAX_PHYSICAL_PAGES {
            return Err(ProfileError::TooLarge {
                pages: slots,
                max_pages: MAX_PHYSICAL_PAGES,
            });
        }
        Ok(())
    }

    /// Logical pages (mapping units) the FTL exports for this profile.
    pub fn logical_pages(&self) -> u64 {
        let phys = (self.geometry.physical_pages() * u64::from(self.slots_per_page())) as f64;
        (phys / (1.0 + self.ftl.over_provisioning_percent / 100.0)).floor() as u64
    }

    /// The most memory the emulated device of this profile holds, in bytes, when a run writes
    /// at most `written_bytes`: a 16-byte OOB area per mapping unit and some 10 bytes of
    /// mapping and block state per logical page from the start, and, in `DataMode::Full`, the
    /// data of every unit written (at most the whole device).
    pub fn model_memory_bytes(&self, written_bytes: u64) -> u64 {
        let slots = self
            .geometry
            .physical_pages()
            .saturating_mul(u64::from(self.slots_per_page()));
        let state = slots
            .saturating_mul(16)
            .saturating_add(self.logical_pages().saturating_mul(10));
        let raw = slots.saturating_mul(u64::from(self.geometry.page_bytes / self.slots_per_page()));
        match self.data_mode {
            DataMode::Full => state.saturating_add(raw.min(written_bytes)),
            DataMode::OobOnly => state,
        }
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.logical_pages() * u64::from(self.mapping_unit_bytes())
    }

    /// The same profile with a different number of blocks per plane (for tests and benches that
    /// need a small or a large device).
    pub fn with_blocks_per_plane(mut self, blocks_per_plane: u32) -> Profile {
        self.geometry.blocks_per_plane = blocks_per_plane;
        self
    }

    /// The same profile resized to `gib` GiB of raw NAND (its blocks per plane), checked.
    pub fn with_raw_gib(self, gib: u64) -> Result<Profile, ProfileError> {
        let g = &self.geometry;
        // One block in every plane: the step a raw size grows by.
        let block_row_bytes =
            u64::from(g.pages_per_block) * u64::from(g.page_bytes) * u64::from(g.units());
        let bpp = match u32::try_from((gib << 30) / block_row_bytes) {
            Ok(bpp) if bpp > 0 => bpp,
            _ => {
                return Err(ProfileError::RawSize {
                    gib,
                    profile: self.name.clone(),
                    block_row_mib: block_row_bytes >> 20,
                    min_gib: block_row_bytes.div_ceil(1 << 30),
                });
            }
        };
        let profile = self.with_blocks_per_plane(bpp);
        profile.validate()?;
        Ok(profile)
    }

    /// The profile's host, or this machine when it has no `host` section.
    pub fn host_or_this_machine(&self) -> crate::host::HostConfig {
        self.host
            .clone()
            .unwrap_or_else(crate::host::HostConfig::this_machine)
    }

    pub fn with_data_mode(mut self, mode: DataMode) -> Profile {
        self.data_mode = mode;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_timing_or_bandwidth_is_refused_naming_the_field() {
        let mut p = Profile::builtin("emmc5").unwrap();
        p.timing.command_overhead_ns = 0;
        assert!(
            p.validate().is_ok(),
            "no per-command cost is a model choice"
        );
        p.timing.channel_bytes_per_s = 0;
        assert!(matches!(
            p.validate(),
            Err(ProfileError::ZeroTiming {
                field: "timing.channel_bytes_per_s",
                ..
            })
        ));
    }

    /// Every profile number needs a source (the host section already refused an empty list).
    #[test]
    fn a_profile_without_sources_is_refused_naming_the_fix() {
        let mut p = Profile::builtin("emmc5").unwrap();
        p.sources.clear();
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("sources is empty") && e.contains("fix:"), "{e}");
    }

    #[test]
    fn a_device_beyond_the_page_bound_is_refused() {
        let p = Profile::builtin("emmc5").unwrap();
        let per_plane =
            MAX_PHYSICAL_PAGES / u64::from(p.geometry.units() * p.geometry.pages_per_block);
        assert!(
            p.clone()
                .with_blocks_per_plane(per_plane as u32)
                .validate()
                .is_ok()
        );
        assert!(matches!(
            p.with_blocks_per_plane(per_plane as u32 + 1).validate(),
            Err(ProfileError::TooLarge { .. })
        ));
    }

    #[test]
    fn builtin_profiles_parse_and_validate() {
        for name in Profile::builtin_names() {
            let p = Profile::builtin(name).unwrap();
            assert_eq!(p.name, name);
            assert!(!p.sources.is_empty());
            assert!(p.capacity_bytes() > 0);
        }
        assert_eq!(Profile::builtin("emmc5").unwrap().geometry.page_bytes, 8192);
    }

    /// A wait per sync call or an idle time before destaging past any step of a device is
    /// refused naming the field (u64::MAX was taken, and a modeled run reported 0.0
    /// transactions/s = host 3.9e11 s).
    #[test]
    fn a_host_wait_or_an_idle_time_beyond_a_step_is_refused() {
        let mut p = Profile::builtin("galaxy-s5").unwrap();
        assert!(p.validate().is_ok());
        if let Some(h) = p.host.as_mut() {
            h.sync_wait_ns = Some(u64::MAX);
        }
        assert!(matches!(
            p.validate(),
            Err(ProfileError::OutOfRange {
                field: "host.sync_wait_ns",
                ..
            })
        ));
        let mut p = Profile::builtin("galaxy-s5").unwrap();
        p.cache.idle_destage_after_ns = MAX_STEP_NS + 1;
        assert!(matches!(
            p.validate(),
            Err(ProfileError::OutOfRange {
                field: "cache.idle_destage_after_ns",
                ..
            })
        ));
        p.cache.idle_destage_after_ns = MAX_STEP_NS;
        assert!(p.validate().is_ok());
    }

    /// Numbers inside the old checks that left a device with nothing to model (found by a
    /// probe of 2026-11-29): a CPU 1e300 times this machine's, a spare of 2e8 % (0 logical
    /// pages, found only at the first request), no i-FTL metadata slot.
    #[test]
    fn numbers_that_leave_nothing_to_model_are_refused_at_load() {
        let mut p = Profile::builtin("galaxy-s5").unwrap();
        if let Some(h) = p.host.as_mut() {
            h.cpu_factor = 1e-300;
        }
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("host.cpu_factor") && e.contains("fix:"), "{e}");

        let mut p = Profile::builtin("emmc5").unwrap();
        p.ftl.over_provisioning_percent = 2e8;
        let e = p.validate().unwrap_err().to_string();
        assert!(
            e.contains("over_provisioning_percent") && e.contains("fix:"),
            "{e}"
        );
        p.ftl.over_provisioning_percent = MAX_OVER_PROVISIONING_PERCENT;
        assert!(p.validate().is_ok());

        let mut p = Profile::builtin("openssd-iftl").unwrap();
        if let Some(i) = p.iftl.as_mut() {
            i.metadata_slots = Some(0);
        }
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("iftl.metadata_slots is 0"), "{e}");
    }

    /// A profile file saved with a byte-order mark loads; one that is not UTF-8 is refused
    /// naming the byte (it was read with the bytes replaced, and the name printed mangled).
    #[test]
    fn a_profile_file_is_utf8_with_or_without_a_byte_order_mark() {
        let dir = tempfile::tempdir().unwrap();
        let json = serde_json::to_string(&Profile::builtin("emmc5").unwrap()).unwrap();
        let bom = dir.path().join("bom.json");
        std::fs::write(&bom, [b"\xEF\xBB\xBF".as_slice(), json.as_bytes()].concat()).unwrap();
        assert!(Profile::load(bom.to_str().unwrap()).is_ok());
        let bad = dir.path().join("latin1.json");
        let mangled = json
            .replacen("emmc5", "em\u{0}mc", 1)
            .replace('\u{0}', "\u{1}");
        let mut bytes = mangled.into_bytes();
        let at = bytes.iter().position(|&b| b == 1).unwrap();
        bytes[at] = 0xE9; // Latin-1 "é": not UTF-8
        std::fs::write(&bad, bytes).unwrap();
        let e = Profile::load(bad.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("byte {at} is not")), "{e}");
    }

    #[test]
    fn a_zero_nvm_figure_is_refused_naming_the_field() {
        let mut p = Profile::builtin("openssd-iftl").unwrap();
        assert!(p.validate().is_ok());
        if let Some(i) = p.iftl.as_mut() {
            i.nvm.bytes_per_s = 0;
        }
        assert!(matches!(
            p.validate(),
            Err(ProfileError::ZeroTiming {
                field: "iftl.nvm.bytes_per_s",
                ..
            })
        ));
        // Named by its own path, not under `timing.` (it said `timing.iftl.nvm.bytes_per_s`).
        let said = p.validate().unwrap_err().to_string();
        assert!(
            said.starts_with("invalid profile: iftl.nvm.bytes_per_s is 0"),
            "{said}"
        );
    }

    #[test]
    fn a_mapping_unit_must_divide_the_page_in_sectors_and_at_most_eight() {
        let mut p = Profile::builtin("emmc5").unwrap();
        for (unit, ok) in [
            (4096, true),
            (1024, true),
            (8192, true),
            (3072, false),
            (256, false),
        ] {
            p.ftl.mapping_unit_bytes = Some(unit);
            assert_eq!(p.validate().is_ok(), ok, "{unit}");
        }
        p.ftl.mapping_unit_bytes = Some(4096);
        assert_eq!(p.slots_per_page(), 2);
        let whole = Profile::builtin("emmc5").unwrap().logical_pages();
        assert!(
            (2 * whole..=2 * whole + 1).contains(&p.logical_pages()),
            "twice the units, rounded down once"
        );
        p.ftl.mapping_unit_bytes = Some(512);
        assert!(
            p.validate().is_err(),
            "512 B units: 16 to an 8 KiB page, more than 8"
        );
    }

    #[test]
    fn unknown_profile_is_a_clear_error() {
        let e = Profile::load("no-such-profile").unwrap_err();
        assert!(matches!(e, ProfileError::Unknown { .. }));
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let mut v: serde_json::Value =
            serde_json::from_str(include_str!("../profiles/emmc5.json")).unwrap();
        v["timing"]["program_ns"] = serde_json::json!(1);
        assert!(matches!(
            Profile::from_json(&v.to_string()),
            Err(ProfileError::Parse { .. })
        ));
    }

    #[test]
    fn a_cache_beyond_a_gib_is_refused_naming_the_field_and_the_bound() {
        let mut p = Profile::builtin("emmc5").unwrap();
        p.cache.capacity_bytes = MAX_CACHE_BYTES;
        assert!(p.validate().is_ok(), "a 1 GiB cache is within the bound");
        for huge in [MAX_CACHE_BYTES + 1, 1 << 40, u64::MAX] {
            p.cache.capacity_bytes = huge;
            let e = p.validate().unwrap_err();
            assert!(
                matches!(
                    e,
                    ProfileError::OutOfRange {
                        field: "cache.capacity_bytes",
                        value,
                        max: MAX_CACHE_BYTES,
                        ..
                    } if value == huge
                ),
                "{huge}: {e:?}"
            );
            let text = e.to_string();
            assert!(
                text.contains("cache.capacity_bytes") && text.contains("1073741824"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_page_beyond_64_kib_or_a_sector_neither_512_nor_4096_bytes_is_refused() {
        let base = Profile::builtin("emmc5").unwrap();
        let with = |page_bytes: u32, sector_bytes: u32| {
            let mut p = base.clone();
            p.geometry.page_bytes = page_bytes;
            p.geometry.sector_bytes = sector_bytes;
            p.validate()
        };
        assert!(
            with(MAX_PAGE_BYTES, 4096).is_ok(),
            "64 KiB of 4 KiB sectors"
        );
        assert!(with(16384, 512).is_ok());
        // The probe's geometry: 63 sectors of 64 MiB, a 4 GiB page buffer per request.
        let e = with(u32::MAX - (1 << 26) + 1, 1 << 26).unwrap_err();
        assert!(
            matches!(e, ProfileError::SectorSize { value } if value == 1 << 26),
            "{e:?}"
        );
        assert!(e.to_string().contains("geometry.sector_bytes"), "{e}");
        let e = with(128 << 10, 4096).unwrap_err();
        assert!(
            matches!(
                e,
                ProfileError::OutOfRange {
                    field: "geometry.page_bytes",
                    max,
                    ..
                } if max == u64::from(MAX_PAGE_BYTES)
            ),
            "{e:?}"
        );
        assert!(with(8192, 1024).is_err(), "1 KiB sectors are no device's");
    }

    #[test]
    fn a_bandwidth_below_a_megabyte_per_second_is_refused_naming_the_field() {
        for field in ["host_bytes_per_s", "channel_bytes_per_s"] {
            let mut p = Profile::builtin("emmc5").unwrap();
            let set = |p: &mut Profile, v: u64| match field {
                "host_bytes_per_s" => p.timing.host_bytes_per_s = v,
                _ => p.timing.channel_bytes_per_s = v,
            };
            set(&mut p, MIN_BYTES_PER_S);
            assert!(p.validate().is_ok(), "{field} at the floor");
            set(&mut p, 1);
            let e = p.validate().unwrap_err();
            assert!(
                matches!(
                    e,
                    ProfileError::TooSlow {
                        field: f,
                        value: 1,
                        min: MIN_BYTES_PER_S,
                        ..
                    } if f == format!("timing.{field}")
                ),
                "{field}: {e:?}"
            );
            assert!(e.to_string().contains("fix:"), "{e}");
        }
        let mut p = Profile::builtin("openssd-iftl").unwrap();
        if let Some(i) = p.iftl.as_mut() {
            i.nvm.bytes_per_s = 1;
        }
        assert!(matches!(
            p.validate(),
            Err(ProfileError::TooSlow {
                field: "iftl.nvm.bytes_per_s",
                ..
            })
        ));
    }

    #[test]
    fn transfer_rounds_up() {
        assert_eq!(Timing::transfer_ns(8192, 400_000_000), 20_480);
        assert_eq!(Timing::transfer_ns(1, 3_000_000_000), 1);
    }
}
