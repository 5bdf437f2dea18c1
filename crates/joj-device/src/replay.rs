//! Replay of a block trace (`joj_trace::TraceRecord`s) through an emulated device.
//!
//! eMMC (before 5.1 command queueing) executes one command at a time, so requests are replayed
//! one after the other in trace order, each starting when the previous one completed. A
//! request with a preflush is a flush followed by the write. Reads, synchronous writes
//! (`REQ_SYNC`), FUA writes and flushes are the ones the application waited for; their summed
//! latency is reported as `app_wait_s`. With `honor_timestamps` the gaps between requests in
//! the trace are kept as idle time (during which the device may destage its cache).

use serde::{Deserialize, Serialize};

use joj_trace::{Op, SECTOR_BYTES, TraceRecord};

use crate::block::{BlockDevice, WriteFlags};
use crate::config::{DataMode, Profile};
use crate::counters::Counters;
use crate::emmc::Emmc;
use crate::error::ReplayError;

/// How to replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayOptions {
    /// Replay only this device (`major:minor`); required when the trace has several.
    pub dev: Option<String>,
    /// Keep the trace's inter-arrival gaps as idle time (otherwise back to back).
    pub honor_timestamps: bool,
    /// `OobOnly` (default): no data is stored; the trace carries none anyway.
    pub data_mode: DataMode,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            dev: None,
            honor_timestamps: false,
            data_mode: DataMode::OobOnly,
        }
    }
}

/// Result of a replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
    pub profile: String,
    pub dev: Option<String>,
    /// Records replayed (after the device filter).
    pub records: u64,
    pub reads: u64,
    pub writes: u64,
    /// Pure flushes plus preflushes.
    pub flushes: u64,
    pub discards: u64,
    /// Records of other operations (secure erase, driver-private), skipped.
    pub skipped_other: u64,
    /// Modeled time of the whole replay.
    pub modeled_s: f64,
    /// Modeled time the application spent waiting on reads, sync or FUA writes and flushes.
    pub app_wait_s: f64,
    pub device: Counters,
}

/// Replay `records` through a fresh device of `profile`, back to back, single device.
pub fn replay(records: &[TraceRecord], profile: &Profile) -> Result<ReplayReport, ReplayError> {
    replay_with(records, profile, &ReplayOptions::default())
}

/// Replay `records` through a fresh device of `profile` with `opts`.
pub fn replay_with(
    records: &[TraceRecord],
    profile: &Profile,
    opts: &ReplayOptions,
) -> Result<ReplayReport, ReplayError> {
    let dev_name = match &opts.dev {
        Some(d) => Some(d.clone()),
        None => {
            let mut devs: Vec<&str> = records.iter().map(|r| r.dev.as_str()).collect();
            devs.sort_unstable();
            devs.dedup();
            if devs.len() > 1 {
                return Err(ReplayError::SeveralDevices {
                    devices: devs.join(", "),
                });
            }
            devs.first().map(|d| d.to_string())
        }
    };
    let profile = profile.clone().with_data_mode(opts.data_mode);
    let mut dev = Emmc::new(&profile).map_err(|source| ReplayError::Device { index: 0, source })?;
    let mut report = ReplayReport {
        profile: profile.name.clone(),
        dev: dev_name.clone(),
        records: 0,
        reads: 0,
        writes: 0,
        flushes: 0,
        discards: 0,
        skipped_other: 0,
        modeled_s: 0.0,
        app_wait_s: 0.0,
        device: dev.counters(),
    };
    let mut buf = Vec::new();
    let mut wait_ns = 0u64;
    let first_time = records.first().map_or(0, |r| r.time_ns);
    let start_ns = dev.now_ns();
    for (index, r) in records.iter().enumerate() {
        if dev_name.as_deref().is_some_and(|d| d != r.dev) {
            continue;
        }
        report.records += 1;
        let err = |source| ReplayError::Device { index, source };
        if opts.honor_timestamps {
            dev.advance_to(start_ns + r.time_ns.saturating_sub(first_time))
                .map_err(err)?;
        }
        let before = dev.now_ns();
        let bytes = r.sectors * SECTOR_BYTES;
        let offset = r.sector * SECTOR_BYTES;
        if matches!(r.op, Op::Read | Op::Write | Op::Discard) && r.sectors == 0 {
            return Err(ReplayError::EmptyRequest {
                index,
                op: format!("{:?}", r.op).to_lowercase(),
            });
        }
        if r.preflush && r.op != Op::Flush {
            dev.flush().map_err(err)?;
            report.flushes += 1;
        }
        let waited = match r.op {
            Op::Read => {
                buf.resize(bytes as usize, 0);
                dev.read(offset, &mut buf).map_err(err)?;
                report.reads += 1;
                true
            }
            Op::Write => {
                buf.resize(bytes as usize, 0);
                let flags = if r.fua {
                    WriteFlags::FUA
                } else {
                    WriteFlags::NONE
                };
                dev.write(offset, &buf, flags).map_err(err)?;
                report.writes += 1;
                r.sync || r.fua || r.preflush
            }
            Op::Flush => {
                dev.flush().map_err(err)?;
                report.flushes += 1;
                true
            }
            Op::Discard => {
                dev.discard(offset, bytes).map_err(err)?;
                report.discards += 1;
                false
            }
            Op::Other => {
                report.skipped_other += 1;
                false
            }
        };
        if waited {
            wait_ns += dev.now_ns() - before;
        }
    }
    report.modeled_s = (dev.now_ns() - start_ns) as f64 / 1e9;
    report.app_wait_s = wait_ns as f64 / 1e9;
    report.device = dev.counters();
    Ok(report)
}
