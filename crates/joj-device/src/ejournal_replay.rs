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
// long: device choice, region bounds, the transformation and its steps, in the order a reader
// checks them; each step's replay is a call.
pub fn replay_ejournal(
    records: &[TraceRecord],
    profile: &Profile,
    opts: &ReplayOptions,
    region_mib: u64,
) -> Result<(ReplayReport, EjournalStats), EjournalError> {
    let scan = crate::requests::Requests::scan(records)?;
    let devs = scan.names();
    // The trace itself when it is one device's: not copied (at the bound it is gigabytes).
    let selected: std::borrow::Cow<'_, [TraceRecord]> = match &opts.dev {
        Some(d) if !devs.contains(&d.as_str()) => {
            return Err(ReplayError::NoSuchDevice {
                dev: d.clone(),
                devices: devs.join(", "),
            }
            .into());
        }
        Some(d) => records.iter().filter(|r| &r.dev == d).cloned().collect(),
        None if devs.len() > 1 => {
            let mut sorted = devs.clone();
            sorted.sort_unstable();
            return Err(EjournalError::SeveralDevices {
                devices: sorted.join(", "),
            });
        }
        None => std::borrow::Cow::Borrowed(records),
    };
    if region_mib == 0 {
        return Err(EjournalError::RegionTooSmall { region_mib });
    }
    let capacity = profile.capacity_bytes();
    // A request beyond the device is the trace's fault, named as the plain replay names it,
    // before the region is placed above it (a region above the device's end could not be
    // mended by a smaller one).
    let end_of = |r: &TraceRecord| r.addressed_end().saturating_mul(SECTOR_BYTES);
    // Found in the whole trace, so that the index is the record's number in the file.
    let of_device = |r: &TraceRecord| opts.dev.as_ref().is_none_or(|d| &r.dev == d);
    if let Some((index, r)) = records
        .iter()
        .enumerate()
        .find(|(_, r)| of_device(r) && end_of(r) > capacity)
    {
        return Err(EjournalError::Replay(ReplayError::BeyondDevice {
            index,
            sector: r.sector,
            sectors: r.sectors,
            capacity_bytes: capacity,
        }));
    }
    let top = selected.iter().map(end_of).max().unwrap_or(0);
    let region = Region::above(top, region_mib);
    if region.start_bytes.saturating_add(region.bytes) > capacity {
        return Err(EjournalError::RegionBeyondDevice {
            region_mib,
            start_bytes: region.start_bytes,
            capacity_bytes: capacity,
        });
    }
    let (steps, stats) = transform(&selected, u64::from(profile.geometry.page_bytes), region)?;
    // Prefilled as the plain replay is; aging's cold region starts above the journal region.
    let mut replayer = Replayer::above(
        profile,
        opts,
        region.start_bytes + region.bytes,
        &selected[..],
        &crate::requests::Selection::All,
    )?;
    let first_ns = selected.first().map_or(0, |r| r.time_ns);
    let arrives = |i: usize| selected[i].time_ns.saturating_sub(first_ns);
    let flush = TraceRecord::new(0, "", Op::Flush, 0, 0);
    for step in &steps {
        let at = match step {
            Step::Keep(i) => Some(*i),
            Step::Packed { from, .. } => from.last().copied(),
            Step::OrderingFlush | Step::Checkpoint { .. } => None,
        };
        if let (true, Some(i)) = (opts.honor_timestamps, at) {
            replayer
                .idle_until(arrives(i))
                .map_err(|source| ReplayError::Device { index: i, source })?;
        }
        match step {
            Step::Keep(i) => {
                replayer.apply(*i, &selected[*i])?;
            }
            Step::OrderingFlush => {
                replayer.apply(0, &flush)?;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use joj_trace::BlockClass;

    #[test]
    fn a_checkpoint_write_is_at_most_what_a_replayed_request_carries() {
        assert_eq!(
            crate::ejournal::CHECKPOINT_WRITE_BYTES,
            crate::replay::MAX_REQUEST_BYTES
        );
    }

    fn trace() -> Vec<TraceRecord> {
        let mut desc = TraceRecord::new(0, "7:0", Op::Write, 5000, 8);
        desc.class = BlockClass::FsJournal;
        let mut commit = TraceRecord::new(10_000, "7:0", Op::Write, 5008, 8);
        commit.class = BlockClass::FsJournal;
        (commit.preflush, commit.fua) = (true, true);
        vec![desc, commit]
    }

    #[test]
    fn a_device_the_trace_lacks_is_refused() {
        let opts = ReplayOptions {
            dev: Some("8:1".into()),
            ..ReplayOptions::default()
        };
        let profile = Profile::builtin("galaxy-s5").unwrap();
        let err = replay_ejournal(&trace(), &profile, &opts, 1).unwrap_err();
        assert!(
            matches!(err, EjournalError::Replay(ReplayError::NoSuchDevice { .. })),
            "{err}"
        );
    }

    /// A write ending past the device is the trace's fault: named as the plain replay names it
    /// (by its record number in the file), not blamed on a journal region a smaller size cannot
    /// mend (a probe, 2026-11-28: "the journal region … ends beyond the device's … bytes; fix: a
    /// smaller `--journal-region-mib`", for any size).
    #[test]
    fn a_record_beyond_the_device_is_named_not_the_region() {
        let profile = Profile::builtin("galaxy-s5").unwrap();
        let sectors = profile.capacity_bytes() / SECTOR_BYTES;
        let mut records = vec![TraceRecord::new(0, "8:0", Op::Write, 0, 8)];
        records.extend(trace());
        records.push(TraceRecord::new(20_000, "7:0", Op::Write, sectors - 4, 8));
        let opts = ReplayOptions {
            dev: Some("7:0".into()),
            ..ReplayOptions::default()
        };
        for region_mib in [1, 256] {
            let err = replay_ejournal(&records, &profile, &opts, region_mib).unwrap_err();
            assert!(
                matches!(
                    err,
                    EjournalError::Replay(ReplayError::BeyondDevice { index: 3, .. })
                ),
                "{err}"
            );
        }
    }

    #[test]
    fn recorded_gaps_become_idle_time_when_asked() {
        let profile = Profile::builtin("galaxy-s5").unwrap();
        let back_to_back = replay_ejournal(&trace(), &profile, &ReplayOptions::default(), 1)
            .unwrap()
            .0;
        let paced = ReplayOptions {
            honor_timestamps: true,
            ..ReplayOptions::default()
        };
        let (paced, stats) = replay_ejournal(&trace(), &profile, &paced, 1).unwrap();
        assert_eq!(stats.packed_commands, 1);
        assert!(paced.modeled_s >= 10e-6, "{}", paced.modeled_s);
        assert!(paced.modeled_s > back_to_back.modeled_s);
    }
}
