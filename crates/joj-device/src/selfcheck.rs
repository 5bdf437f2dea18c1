//! A profile's headline figures, measured on the model the way fio would measure a real part:
//! 4 KiB random write IOPS with and without FUA, sequential write bandwidth from 512 B to
//! 16 KiB, and flush latency. All at queue depth 1, on a device half filled sequentially (random writes then land on mapped pages half the time).

use serde::{Deserialize, Serialize};

use crate::config::{DataMode, Profile};
use crate::error::DeviceError;
use crate::workload::{IoKind, Pattern, SyncKind, WorkloadSpec, run_workload};

/// Sequential write bandwidth at one I/O size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeqPoint {
    pub io_bytes: u64,
    pub mib_per_s: f64,
    pub mb_per_s: f64,
}

/// The self-check's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfCheckReport {
    /// The profile's name (`profile`) and where it came from (`profile_source`).
    #[serde(flatten)]
    pub profile: crate::ProfileRef,
    /// Capacity of the device measured (the profile's geometry with fewer blocks, for speed).
    pub capacity_bytes: u64,
    pub rand_write_4k_iops: f64,
    pub rand_write_4k_mib_per_s: f64,
    pub rand_write_4k_fua_iops: f64,
    pub rand_write_4k_fua_mib_per_s: f64,
    pub rand_write_4k_fua_mean_latency_us: f64,
    pub seq_write: Vec<SeqPoint>,
    /// Mean latency of a flush after 16 random 4 KiB cached writes.
    pub flush_after_16_writes_us: f64,
    /// Mean latency of a flush with nothing to write back.
    pub empty_flush_us: f64,
}

fn spec(
    pattern: Pattern,
    io_bytes: u64,
    sync: SyncKind,
    sync_every: u64,
    ops: u64,
) -> WorkloadSpec {
    WorkloadSpec {
        pattern,
        kind: IoKind::Write,
        io_bytes,
        sync,
        sync_every,
        precondition_fill: 0.5,
        precondition_random_passes: 0.0,
        ops,
        seed: 7,
        data_mode: DataMode::OobOnly,
        issuers: 1,
    }
}

/// Raw bytes of the device the self-check measures: the profile's geometry cut down to this
/// size keeps the run short, and at the op counts used GC does not start.
pub const SELF_CHECK_RAW_BYTES: u64 = 1 << 30;

/// Measure `profile` (on at most `SELF_CHECK_RAW_BYTES` of raw flash).
pub fn self_check(profile: &Profile) -> Result<SelfCheckReport, DeviceError> {
    let g = &profile.geometry;
    let per_plane_block_bytes =
        u64::from(g.units()) * u64::from(g.pages_per_block) * u64::from(g.page_bytes);
    let bpp = SELF_CHECK_RAW_BYTES
        .div_ceil(per_plane_block_bytes)
        .min(u64::from(g.blocks_per_plane)) as u32;
    let p = profile.clone().with_blocks_per_plane(bpp);
    let mib = |bytes: u64, s: f64| {
        if s > 0.0 {
            bytes as f64 / s / (1024.0 * 1024.0)
        } else {
            0.0
        }
    };
    let rand = run_workload(&p, &spec(Pattern::Rand, 4096, SyncKind::None, 1, 20_000))?;
    let fua = run_workload(&p, &spec(Pattern::Rand, 4096, SyncKind::Fua, 1, 20_000))?;
    let mut seq_write = Vec::new();
    for io in [512u64, 1024, 2048, 4096, 8192, 16384] {
        let ops = (16 * 1024 * 1024 / io).max(1000);
        let r = run_workload(&p, &spec(Pattern::Seq, io, SyncKind::None, 1, ops))?;
        let m = mib(r.device.host_write_bytes, r.device.modeled_s);
        seq_write.push(SeqPoint {
            io_bytes: io,
            mib_per_s: m,
            mb_per_s: m * 1.048_576,
        });
    }
    let flush = run_workload(
        &p,
        &spec(Pattern::Rand, 4096, SyncKind::Flush, 16, 16 * 200),
    )?;
    // An empty flush: command overhead only (nothing dirty, mapping clean).
    let empty_flush_us = p.timing.command_overhead_ns as f64 / 1000.0;
    Ok(SelfCheckReport {
        profile: crate::ProfileRef::from(profile),
        capacity_bytes: rand.capacity_bytes,
        rand_write_4k_iops: rand.device.modeled_ops_per_sec,
        rand_write_4k_mib_per_s: mib(rand.device.host_write_bytes, rand.device.modeled_s),
        rand_write_4k_fua_iops: fua.device.modeled_ops_per_sec,
        rand_write_4k_fua_mib_per_s: mib(fua.device.host_write_bytes, fua.device.modeled_s),
        rand_write_4k_fua_mean_latency_us: fua.device.latency.fua_write.mean_us,
        seq_write,
        flush_after_16_writes_us: flush.device.latency.flush.mean_us,
        empty_flush_us,
    })
}

impl std::fmt::Display for SelfCheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "profile {} (measured on {:.0} MiB logical, QD1, half filled)",
            self.profile,
            self.capacity_bytes as f64 / 1048576.0
        )?;
        writeln!(
            f,
            "  4 KiB random write        {:>9.0} IOPS  {:>7.1} MiB/s",
            self.rand_write_4k_iops, self.rand_write_4k_mib_per_s
        )?;
        writeln!(
            f,
            "  4 KiB random write, FUA   {:>9.0} IOPS  {:>7.1} MiB/s  ({:.0} us per write)",
            self.rand_write_4k_fua_iops,
            self.rand_write_4k_fua_mib_per_s,
            self.rand_write_4k_fua_mean_latency_us
        )?;
        for p in &self.seq_write {
            writeln!(
                f,
                "  sequential write {:>6} B  {:>7.1} MiB/s  ({:.1} MB/s)",
                p.io_bytes, p.mib_per_s, p.mb_per_s
            )?;
        }
        writeln!(
            f,
            "  flush after 16 x 4 KiB    {:>9.0} us",
            self.flush_after_16_writes_us
        )?;
        write!(
            f,
            "  empty flush               {:>9.0} us",
            self.empty_flush_us
        )
    }
}
