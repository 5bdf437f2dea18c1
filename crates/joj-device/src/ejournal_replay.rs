//! The optimized journal's replay: a trace transformed by `ejournal::transform`, its steps run
//! through a fresh device (`replay::Replayer`). Apart from `ejournal` so that `replay` (whose
//! `DeviceSummary` carries the transformation's counts) and `ejournal` do not import each other.

use joj_trace::{Op, SECTOR_BYTES, TraceRecord};

use crate::config::Profile;
use crate::ejournal::{EjournalError, EjournalStats, Region, Step, transform};
use crate::error::ReplayError;
use crate::replay::{ReplayOptions, ReplayReport, Replayer};

/// Replay `records` (one device) through `profile` with the optimized journal. `profile` should
/// have `ftl.reliable_write_atomicity = "command"` for the durability the design claims; the
/// replay's timing does not depend on it.
pub fn replay_ejournal(
    records: &[TraceRecord],
    profile: &Profile,
    opts: &ReplayOptions,
    region_mib: u64,
) -> Result<(ReplayReport, EjournalStats), EjournalError> {
    let mut devs: Vec<&str> = records.iter().map(|r| r.dev.as_str()).collect();
    devs.sort_unstable();
    devs.dedup();
    let selected: Vec<TraceRecord> = match (&opts.dev, devs.len()) {
        (Some(d), _) => records.iter().filter(|r| &r.dev == d).cloned().collect(),
        (None, n) if n > 1 => {
            return Err(EjournalError::SeveralDevices {
                devices: devs.join(", "),
            });
        }
        _ => records.to_vec(),
    };
    let top = selected
        .iter()
        .filter(|r| r.op != Op::Flush)
        .map(|r| (r.sector + r.sectors) * SECTOR_BYTES)
        .max()
        .unwrap_or(0);
    let page_bytes = u64::from(profile.geometry.page_bytes);
    let capacity = profile.capacity_bytes();
    let region = Region::above(top, region_mib);
    if region_mib == 0 {
        return Err(EjournalError::RegionTooSmall { region_mib });
    }
    if region.start_bytes.saturating_add(region.bytes) > capacity {
        return Err(EjournalError::RegionBeyondDevice {
            region_mib,
            start_bytes: region.start_bytes,
            capacity_bytes: capacity,
        });
    }
    // Aging's cold region starts above the journal region.
    let top_with_region = region.start_bytes + region.bytes;
    let mut replayer = Replayer::new(profile, opts.data_mode, opts.aging, top_with_region)
        .map_err(|source| ReplayError::Device { index: 0, source })?;
    let (steps, stats) = transform(&selected, page_bytes, region)?;
    let flush = TraceRecord::new(0, "", Op::Flush, 0, 0);
    for step in &steps {
        match step {
            Step::Keep(i, r) => replayer.apply(*i, r)?,
            Step::OrderingFlush => replayer.apply(0, &flush)?,
            Step::Packed { extents, from } => {
                replayer.apply_packed_reliable(from.first().copied().unwrap_or(0), extents)?
            }
            Step::Checkpoint { writes, forced } => {
                for &(offset, bytes) in writes {
                    let mut w = TraceRecord::new(
                        0,
                        "",
                        Op::Write,
                        offset / SECTOR_BYTES,
                        bytes / SECTOR_BYTES,
                    );
                    w.sync = *forced;
                    replayer.apply(0, &w)?;
                }
                let mut f = flush.clone();
                f.sync = *forced;
                replayer.apply(0, &f)?;
            }
        }
    }
    let mut report = replayer.finish();
    report.dev = opts.dev.clone().or(devs.first().map(|d| d.to_string()));
    Ok((report, stats))
}
