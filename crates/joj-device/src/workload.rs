//! fio-like synthetic workloads on an emulated device: sequential or random, read or write,
//! a fixed I/O size, a flush or a FUA write every k writes, preconditioning to a fill level.

use serde::{Deserialize, Serialize};

use crate::block::{BlockDevice, WriteFlags};
use crate::config::{DataMode, Profile};
use crate::counters::Counters;
use crate::emmc::Emmc;
use crate::error::DeviceError;
use crate::rng::SimRng;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Seq,
    Rand,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoKind {
    Read,
    Write,
}

/// How writes are made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncKind {
    /// Never (the cache absorbs what it can).
    None,
    /// A flush after every k-th write.
    Flush,
    /// Every k-th write is a FUA write.
    Fua,
}

/// A synthetic workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    pub pattern: Pattern,
    pub kind: IoKind,
    /// Bytes per request; a multiple of the sector size. Random offsets are aligned to it.
    pub io_bytes: u64,
    pub sync: SyncKind,
    /// `k` of "every k writes" (ignored with `SyncKind::None`; 0 means 1).
    pub sync_every: u64,
    /// Share of the capacity written sequentially (whole pages) before measuring, 0..=1.
    pub precondition_fill: f64,
    /// Then this many device capacities of random whole-page writes over the filled region,
    /// to reach GC steady state (SNIA PTS style). Typical: 2.0 with `precondition_fill` 1.0.
    pub precondition_random_passes: f64,
    /// Requests measured.
    pub ops: u64,
    pub seed: u64,
    /// Storage of page data: `OobOnly` (default) is faster and gives the same counters.
    pub data_mode: DataMode,
    /// Host issuers of the measured requests (`joj device run --iodepth`, fio's iodepth): each
    /// issues its next request when its previous one completed, the one ready earliest in
    /// device time first (ties to the lower). 1: one request at a time. The profile's
    /// `timing.queue_depth` bounds what the device overlaps; at most `MAX_QUEUE_DEPTH`, as more
    /// could only wait on the host.
    #[serde(default = "one_issuer")]
    pub issuers: u32,
}

fn one_issuer() -> u32 {
    1
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            pattern: Pattern::Rand,
            kind: IoKind::Write,
            io_bytes: 4096,
            sync: SyncKind::None,
            sync_every: 1,
            precondition_fill: 0.0,
            precondition_random_passes: 0.0,
            ops: 10_000,
            seed: 1,
            data_mode: DataMode::OobOnly,
            issuers: 1,
        }
    }
}

/// The part of a workload run under way, for progress reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Filling and randomizing the device before measuring (not counted).
    Precondition,
    /// The measured requests.
    Measure,
}

/// Requests between two progress reports.
const REPORT_EVERY: u64 = 1 << 16;

impl WorkloadSpec {
    /// Requests the preconditioning of a device of `capacity_bytes` with `page_bytes` pages
    /// issues (for a progress total).
    pub fn precondition_requests(&self, capacity_bytes: u64, page_bytes: u64) -> u64 {
        let pages = capacity_bytes / page_bytes.max(1);
        let filled = ((pages as f64 * self.precondition_fill.clamp(0.0, 1.0)) as u64).min(pages);
        let passes = if filled > 0 {
            (self.precondition_random_passes.max(0.0) * pages as f64) as u64
        } else {
            0
        };
        filled + passes
    }
}

/// What a workload run yields: the spec, the device, and its counters over the measured part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadReport {
    /// The profile's name (`profile`) and where it came from (`profile_source`).
    #[serde(flatten)]
    pub profile: crate::ProfileRef,
    pub spec: WorkloadSpec,
    pub capacity_bytes: u64,
    /// Heap bytes of model state per logical page (page data excluded).
    pub bytes_per_logical_page: f64,
    pub device: Counters,
}

/// `joj device run --json`: a synthetic run's report, with the model's own speed in wall-clock
/// time (`docs/formats/device-commands.md`).
#[derive(Debug, Clone, Serialize)]
pub struct DeviceRunReport {
    pub bytes_per_logical_page: f64,
    pub capacity_bytes: u64,
    /// The device's counters over the measured requests.
    pub counters: Counters,
    /// The same as a replay's `device` section.
    pub device: crate::replay::DeviceSummary,
    /// The profile's name (`profile`) and where it came from (`profile_source`).
    #[serde(flatten)]
    pub profile: crate::ProfileRef,
    /// Raw NAND bytes of the device.
    pub raw_bytes: u64,
    pub spec: WorkloadSpec,
    pub wall: WallTime,
}

/// How fast the model ran, in wall-clock time (the model's own time is simulated).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct WallTime {
    pub measured_s: f64,
    pub precondition_s: f64,
    pub simulated_requests_per_s: f64,
}

impl DeviceRunReport {
    pub fn new(report: WorkloadReport, raw_bytes: u64, wall: WallTime) -> DeviceRunReport {
        let c = &report.device;
        DeviceRunReport {
            device: crate::replay::DeviceSummary::new(&report.profile, c, None, c.modeled_s),
            bytes_per_logical_page: report.bytes_per_logical_page,
            capacity_bytes: report.capacity_bytes,
            counters: report.device,
            profile: report.profile,
            raw_bytes,
            spec: report.spec,
            wall,
        }
    }
}

/// Fill `dev` sequentially to `fill` of its capacity, then write `passes` capacities of random
/// whole pages within the filled region; finally flush and reset the counters.
pub fn precondition(
    dev: &mut Emmc<impl crate::medium::Medium>,
    fill: f64,
    passes: f64,
    seed: u64,
) -> Result<(), DeviceError> {
    precondition_observed(dev, fill, passes, seed, &mut |_| {})
}

/// `precondition`, calling `observe(requests done)` every few tens of thousands of requests.
pub fn precondition_observed(
    dev: &mut Emmc<impl crate::medium::Medium>,
    fill: f64,
    passes: f64,
    seed: u64,
    observe: &mut dyn FnMut(u64),
) -> Result<(), DeviceError> {
    let g = dev.geometry();
    let page = u64::from(g.optimal_write_bytes);
    let pages = g.capacity_bytes / page;
    let filled = ((pages as f64 * fill.clamp(0.0, 1.0)) as u64).min(pages);
    let data = if dev.profile().data_mode == DataMode::Full {
        vec![0xA5u8; page as usize]
    } else {
        vec![0u8; page as usize]
    };
    for p in 0..filled {
        dev.write(p * page, &data, WriteFlags::NONE)?;
        if (p + 1).is_multiple_of(REPORT_EVERY) {
            observe(p + 1);
        }
    }
    if filled > 0 {
        let mut rng = SimRng::new(seed ^ 0x005E_ED0F_F111);
        let n = (passes.max(0.0) * pages as f64) as u64;
        for i in 0..n {
            dev.write(rng.below(filled) * page, &data, WriteFlags::NONE)?;
            if (i + 1).is_multiple_of(REPORT_EVERY) {
                observe(filled + i + 1);
            }
        }
        observe(filled + n);
    }
    dev.flush()?;
    dev.reset_counters();
    Ok(())
}

/// Run `spec` on a fresh device of `profile`.
pub fn run_workload(profile: &Profile, spec: &WorkloadSpec) -> Result<WorkloadReport, DeviceError> {
    run_workload_observed(profile, spec, &mut |_, _| {})
}

/// `run_workload`, calling `observe(phase, requests done in the phase)` as it goes: at the
/// start of each phase, every few tens of thousands of requests, and at the end of
/// `Phase::Measure` (so a caller can time the measured part on the wall clock).
pub fn run_workload_observed(
    profile: &Profile,
    spec: &WorkloadSpec,
    observe: &mut dyn FnMut(Phase, u64),
) -> Result<WorkloadReport, DeviceError> {
    let profile = profile.clone().with_data_mode(spec.data_mode);
    let mut dev = Emmc::new(&profile)?;
    run_on_observed(&mut dev, spec, observe)
}

/// Run `spec` on `dev` (preconditioning it first).
pub fn run_on<M: crate::medium::Medium>(
    dev: &mut Emmc<M>,
    spec: &WorkloadSpec,
) -> Result<WorkloadReport, DeviceError> {
    run_on_observed(dev, spec, &mut |_, _| {})
}

/// Of issuers `0..n`, the one whose next request would arrive first in device time (ties to
/// the lower): a closed loop of `n` requests in flight.
fn earliest_issuer<D: BlockDevice>(dev: &D, n: u32) -> u32 {
    (0..n)
        .min_by_key(|&i| (dev.issuer_ready_ns(i).unwrap_or(0), i))
        .unwrap_or(0)
}

/// `run_on` with progress reports (see `run_workload_observed`).
pub fn run_on_observed<M: crate::medium::Medium>(
    dev: &mut Emmc<M>,
    spec: &WorkloadSpec,
    observe: &mut dyn FnMut(Phase, u64),
) -> Result<WorkloadReport, DeviceError> {
    let g = dev.geometry();
    let sector = u64::from(g.sector_bytes);
    if spec.io_bytes == 0 || !spec.io_bytes.is_multiple_of(sector) {
        return Err(DeviceError::Misaligned {
            offset_bytes: 0,
            len_bytes: spec.io_bytes,
            sector_bytes: g.sector_bytes,
        });
    }
    if !(1..=crate::queue::MAX_QUEUE_DEPTH).contains(&spec.issuers) {
        return Err(DeviceError::Issuers {
            issuers: spec.issuers,
            max: crate::queue::MAX_QUEUE_DEPTH,
        });
    }
    if spec.io_bytes > g.capacity_bytes {
        return Err(DeviceError::BeyondDevice {
            offset_bytes: 0,
            len_bytes: spec.io_bytes,
            capacity_bytes: g.capacity_bytes,
        });
    }
    observe(Phase::Precondition, 0);
    precondition_observed(
        dev,
        spec.precondition_fill,
        spec.precondition_random_passes,
        spec.seed,
        &mut |n| observe(Phase::Precondition, n),
    )?;
    observe(Phase::Measure, 0);
    let slots = g.capacity_bytes / spec.io_bytes;
    let read_slots = if spec.kind == IoKind::Read && spec.precondition_fill > 0.0 {
        ((g.capacity_bytes as f64 * spec.precondition_fill.min(1.0)) as u64 / spec.io_bytes).max(1)
    } else {
        slots
    };
    let region = if spec.kind == IoKind::Read {
        read_slots
    } else {
        slots
    };
    let mut rng = SimRng::new(spec.seed);
    let mut buf = vec![0u8; spec.io_bytes as usize];
    let k = spec.sync_every.max(1);
    let mut next_seq = 0u64;
    for i in 0..spec.ops {
        if spec.issuers > 1 {
            dev.set_issuer(earliest_issuer(dev, spec.issuers));
        }
        let slot = match spec.pattern {
            Pattern::Seq => {
                let s = next_seq % region;
                next_seq += 1;
                s
            }
            Pattern::Rand => rng.below(region),
        };
        let off = slot * spec.io_bytes;
        match spec.kind {
            IoKind::Read => dev.read(off, &mut buf)?,
            IoKind::Write => {
                let nth = (i + 1) % k == 0;
                let flags = if spec.sync == SyncKind::Fua && nth {
                    WriteFlags::FUA
                } else {
                    WriteFlags::NONE
                };
                dev.write(off, &buf, flags)?;
                if spec.sync == SyncKind::Flush && nth {
                    dev.flush()?;
                }
            }
        }
        if (i + 1).is_multiple_of(REPORT_EVERY) {
            observe(Phase::Measure, i + 1);
        }
    }
    observe(Phase::Measure, spec.ops);
    Ok(WorkloadReport {
        profile: crate::ProfileRef::from(dev.profile()),
        spec: spec.clone(),
        capacity_bytes: g.capacity_bytes,
        bytes_per_logical_page: dev.bytes_per_logical_page(),
        device: dev.counters(),
    })
}
