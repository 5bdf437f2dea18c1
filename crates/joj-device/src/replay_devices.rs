//! Replay of a trace of several devices, each device through its own profile, timed as the
//! host sees it (`docs/device-model.md`, "Several devices, each with its profile").
//!
//! Each device is its own emulated device and runs its own requests in trace order, as
//! `crate::replay_with` does for one (one at a time, or overlapping as far as the trace's
//! completions and the device's command queue allow). The devices share one host clock:
//!
//! - a request starts when its device lets it (its previous request finished, or the queue
//!   takes it), and
//! - no earlier than the modeled completion of every request the host waited for (a read, a
//!   synchronous, FUA or preflush write, a flush) that the trace shows issued before it on
//!   another device.
//!
//! The trace records when each request was issued, not when it completed, so the second rule
//! reads "the host waited for it" as "nothing issued after it could start before it ended".
//! That is exact for a host that has one waited request in flight at a time — an `fsync`
//! writes its data, waits, writes the journal, waits, flushes, waits — and an upper bound on
//! host time otherwise. Requests the host did not wait for (background writeback, discards)
//! overlap with the other device's work. The run's host time is the latest completion on any
//! device; the application's wait is the sum of the devices' waited times, which never
//! overlap under these rules.

use serde::{Deserialize, Serialize};

use joj_trace::TraceRecord;

use crate::config::Profile;
use crate::error::ReplayError;
use crate::replay::{DeviceSummary, ReplayOptions, ReplayReport, Replayer};
use crate::requests::{Requests, Scan, Selection};

/// One device of a trace and the profile it is replayed through.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceProfile {
    /// `major:minor`, as the trace's records name it.
    pub dev: String,
    pub profile: Profile,
}

/// Result of replaying every device of a trace through its own profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DevicesReport {
    /// One replay per device, in the order the assignments were given.
    pub devices: Vec<ReplayReport>,
    /// Modeled time of the run as the host sees it: the last completion on any device.
    pub host_modeled_s: f64,
    /// Modeled time the application waited, summed over the devices.
    pub host_app_wait_s: f64,
}

impl DevicesReport {
    /// The run's `device` section over every device: the host's modeled time and wait, and the
    /// devices' counts summed (`profile` joins the profiles with `+`). Each device's own
    /// section is `DeviceSummary::from_replay` of its report.
    pub fn summary(&self, transactions: Option<u64>) -> DeviceSummary {
        let mut parts = self
            .devices
            .iter()
            .map(|r| DeviceSummary::from_replay(r, transactions));
        let Some(mut all) = parts.next() else {
            return DeviceSummary::new(
                &crate::ProfileRef::built_in(""),
                &crate::Counters::default(),
                transactions,
                0.0,
            );
        };
        for d in parts {
            all.profile.name = format!("{}+{}", all.profile.name, d.profile.name);
            if all.profile.source != d.profile.source {
                all.profile.source = format!("{}+{}", all.profile.source, d.profile.source);
            }
            all.host_write_bytes += d.host_write_bytes;
            all.nand_program_bytes += d.nand_program_bytes;
            all.erases += d.erases;
            all.map_erases += d.map_erases;
            all.gc_copies += d.gc_copies;
            all.flushes += d.flushes;
            all.fua += d.fua;
            all.nand_programs += d.nand_programs;
            all.nand_reads += d.nand_reads;
            all.gc_runs += d.gc_runs;
            all.txn_commits += d.txn_commits;
            if transactions.is_none() {
                all.ops += d.ops;
            }
        }
        all.waf = if all.host_write_bytes > 0 {
            all.nand_program_bytes as f64 / all.host_write_bytes as f64
        } else {
            0.0
        };
        all.modeled_s = self.host_modeled_s;
        all.app_wait_s = self.host_app_wait_s;
        all.modeled_ops_per_sec = if self.host_modeled_s > 0.0 {
            all.ops as f64 / self.host_modeled_s
        } else {
            0.0
        };
        all
    }
}

/// The `major:minor` a device is named by on the command line: itself, or a role the trace's
/// header gives one of its devices (`main`, `journal`).
pub fn resolve_device(name: &str, header: &joj_trace::TraceHeader) -> Result<String, ReplayError> {
    if name.contains(':') {
        return Ok(name.to_string());
    }
    let role = match name {
        "main" => Some(joj_trace::DeviceRole::Main),
        "journal" => Some(joj_trace::DeviceRole::Journal),
        _ => None,
    };
    let found: Vec<&joj_trace::TraceDevice> = header
        .devices
        .iter()
        .filter(|d| Some(d.role) == role)
        .collect();
    match found.as_slice() {
        [one] => Ok(one.dev.clone()),
        _ => Err(ReplayError::UnknownDeviceName {
            name: name.to_string(),
            devices: crate::replay::listed(
                &header
                    .devices
                    .iter()
                    .map(|d| format!("{} ({:?})", d.dev, d.role).to_lowercase())
                    .collect::<Vec<_>>(),
            ),
        }),
    }
}

/// Check that `assign` gives every device of `records` exactly one profile, and no profile to
/// two devices unless `shared_profile_ok`.
pub fn check_assignment(
    records: &[TraceRecord],
    assign: &[DeviceProfile],
    shared_profile_ok: bool,
) -> Result<(), ReplayError> {
    check_scanned(&records.scan()?, assign, shared_profile_ok)
}

/// [`check_assignment`] of the trace `scan` was made of.
fn check_scanned(
    scan: &Scan,
    assign: &[DeviceProfile],
    shared_profile_ok: bool,
) -> Result<(), ReplayError> {
    let devs = scan.names();
    let mut sorted: Vec<&str> = devs.clone();
    sorted.sort_unstable();
    let listed = crate::replay::listed(&sorted);
    for (i, a) in assign.iter().enumerate() {
        if !devs.contains(&a.dev.as_str()) {
            return Err(ReplayError::NoSuchDevice {
                dev: a.dev.clone(),
                devices: listed,
            });
        }
        if assign[..i].iter().any(|b| b.dev == a.dev) {
            return Err(ReplayError::DeviceProfiledTwice { dev: a.dev.clone() });
        }
        if !shared_profile_ok
            && let Some(b) = assign[..i]
                .iter()
                .find(|b| b.profile.name == a.profile.name)
        {
            return Err(ReplayError::SharedProfile {
                profile: a.profile.name.clone(),
                first: b.dev.clone(),
                second: a.dev.clone(),
            });
        }
    }
    // Each model holds its pages' state from the start: the bound on one device's pages
    // (`MAX_PHYSICAL_PAGES`) is the bound on the replay's, or several devices each just inside
    // it would take the machine's memory.
    let total = assign.iter().fold(0u64, |n, a| {
        n.saturating_add(
            a.profile
                .geometry
                .physical_pages()
                .saturating_mul(u64::from(a.profile.slots_per_page())),
        )
    });
    if total > crate::config::MAX_PHYSICAL_PAGES {
        return Err(ReplayError::DevicesTooLarge {
            total,
            max: crate::config::MAX_PHYSICAL_PAGES,
        });
    }
    if let Some(missing) = sorted.iter().find(|d| !assign.iter().any(|a| a.dev == **d)) {
        return Err(ReplayError::DeviceWithoutProfile {
            dev: missing.to_string(),
            devices: listed,
        });
    }
    Ok(())
}

/// Replay every device of `records` through its profile in `assign` (checked by
/// [`check_assignment`]), timed as the module header says. `opts.dev` and `opts.partitions`
/// do not apply and must be unset; aging, data mode, prefill and timestamps apply per device.
pub fn replay_devices<R: Requests + ?Sized>(
    records: &R,
    assign: &[DeviceProfile],
    opts: &ReplayOptions,
    shared_profile_ok: bool,
) -> Result<DevicesReport, ReplayError> {
    let scan = records.scan()?;
    check_scanned(&scan, assign, shared_profile_ok)?;
    let mut replayers = Vec::with_capacity(assign.len());
    for a in assign {
        let top = scan.end_of(&a.dev).saturating_mul(joj_trace::SECTOR_BYTES);
        let mine = Selection::Dev(a.dev.clone());
        let mut replayer = Replayer::above(&a.profile, opts, top, records, &mine)?;
        replayer.follow_completions();
        replayers.push(replayer);
    }
    // Host time (ns since the replay began) at which each device's latest waited request ended.
    let mut waited_until = vec![0u64; assign.len()];
    let mut first_time = None;
    let mut seen = 0u64;
    records.each(&mut |index, r| {
        seen += 1;
        let first_time = *first_time.get_or_insert(r.time_ns);
        let Some(i) = assign.iter().position(|a| a.dev == r.dev) else {
            return Ok(());
        };
        let mut start = waited_until
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, t)| *t)
            .max()
            .unwrap_or(0);
        if opts.honor_timestamps {
            start = start.max(r.time_ns.saturating_sub(first_time));
        }
        replayers[i]
            .idle_until(start)
            .map_err(|source| ReplayError::Device { index, source })?;
        if replayers[i].apply(index, r)? {
            waited_until[i] = waited_until[i].max(replayers[i].last_done_elapsed_ns());
        }
        Ok(())
    })?;
    crate::replay::changed_since_scanned(&scan, seen)?;
    let mut devices = Vec::with_capacity(assign.len());
    let mut host_ns = 0u64;
    for (replayer, a) in replayers.into_iter().zip(assign) {
        host_ns = host_ns.max(replayer.elapsed_ns());
        let mut report = replayer.finish();
        report.dev = Some(a.dev.clone());
        devices.push(report);
    }
    let host_app_wait_s = devices.iter().map(|d| d.app_wait_s).sum();
    Ok(DevicesReport {
        devices,
        host_modeled_s: host_ns as f64 / 1e9,
        host_app_wait_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use joj_trace::Op;

    fn profile(name: &str) -> Profile {
        let mut p = Profile::builtin("galaxy-s5").unwrap();
        p.name = name.to_string();
        p
    }

    fn assign(pairs: &[(&str, &str)]) -> Vec<DeviceProfile> {
        pairs
            .iter()
            .map(|(d, p)| DeviceProfile {
                dev: d.to_string(),
                profile: profile(p),
            })
            .collect()
    }

    fn write(t: u64, dev: &str, sector: u64, sync: bool) -> TraceRecord {
        let mut r = TraceRecord::new(t, dev, Op::Write, sector, 64);
        r.sync = sync;
        r
    }

    fn run(records: &[TraceRecord]) -> DevicesReport {
        replay_devices(
            records,
            &assign(&[("7:0", "a"), ("7:1", "b")]),
            &ReplayOptions::default(),
            false,
        )
        .unwrap()
    }

    /// Modeled time of `records` replayed alone on one device of the same profile.
    fn alone(records: &[TraceRecord]) -> f64 {
        crate::replay::replay(records, &profile("a"))
            .unwrap()
            .modeled_s
    }

    #[test]
    fn a_request_after_a_waited_one_on_the_other_device_starts_after_it_ends() {
        // A synchronous write on A, then one on B: B's write cannot start before A's ended,
        // so the host time is the sum of the two.
        let recs = [write(0, "7:0", 0, true), write(1, "7:1", 0, true)];
        let r = run(&recs);
        let a = alone(&recs[..1]);
        let b = alone(&recs[1..]);
        assert!(
            (r.host_modeled_s - (a + b)).abs() < 1e-9,
            "host {} != {a} + {b}",
            r.host_modeled_s
        );
    }

    #[test]
    fn requests_the_host_did_not_wait_for_overlap_across_devices() {
        // Background writes on A and on B: each device runs its own, at the same time.
        let recs: Vec<TraceRecord> = (0..8)
            .flat_map(|i| {
                [
                    write(i, "7:0", i * 64, false),
                    write(i, "7:1", i * 64, false),
                ]
            })
            .collect();
        let r = run(&recs);
        let a: Vec<_> = recs.iter().filter(|x| x.dev == "7:0").cloned().collect();
        let one = alone(&a);
        assert!(
            (r.host_modeled_s - one).abs() < 1e-9,
            "host {} should equal one device's {one}",
            r.host_modeled_s
        );
        assert_eq!(r.devices.len(), 2);
        assert!(r.devices.iter().all(|d| d.writes == 8));
    }

    #[test]
    fn a_flush_on_one_device_holds_the_next_request_on_the_other() {
        let mut flush = TraceRecord::new(1, "7:0", Op::Flush, 0, 0);
        flush.sync = true;
        let recs = [write(0, "7:0", 0, false), flush, write(2, "7:1", 0, false)];
        let r = run(&recs);
        let a = alone(&recs[..2]);
        assert!(r.host_modeled_s > a, "B's write must follow A's flush");
    }

    #[test]
    fn a_device_without_a_profile_is_refused() {
        let recs = [write(0, "7:0", 0, true), write(1, "7:1", 0, true)];
        let e = replay_devices(
            &recs[..],
            &assign(&[("7:0", "a")]),
            &ReplayOptions::default(),
            false,
        )
        .unwrap_err();
        assert!(matches!(e, ReplayError::DeviceWithoutProfile { ref dev, .. } if dev == "7:1"));
    }

    /// A trace naming thousands of devices gets a message of a line, not of every name (a
    /// probe's 9,900 devices made a 67 KB line).
    #[test]
    fn a_message_lists_a_few_devices_and_counts_the_rest() {
        let names: Vec<String> = (0..9_900).map(|i| format!("7:{i}")).collect();
        let recs: Vec<TraceRecord> = names
            .iter()
            .enumerate()
            .map(|(t, d)| write(t as u64, d, 0, true))
            .collect();
        let e = check_assignment(&recs, &assign(&[("9:9", "a")]), false).unwrap_err();
        let text = e.to_string();
        assert!(text.len() < 1_000, "{} bytes: {text}", text.len());
        assert!(text.contains("and 9884 more"), "{text}");
    }

    #[test]
    fn a_device_not_in_the_trace_is_refused() {
        let recs = [write(0, "7:0", 0, true)];
        let e = check_assignment(&recs, &assign(&[("7:0", "a"), ("7:9", "b")]), false);
        assert!(matches!(e, Err(ReplayError::NoSuchDevice { ref dev, .. }) if dev == "7:9"));
    }

    #[test]
    fn one_profile_for_two_devices_is_refused_unless_asked() {
        let recs = [write(0, "7:0", 0, true), write(1, "7:1", 0, true)];
        let both = assign(&[("7:0", "a"), ("7:1", "a")]);
        let e = check_assignment(&recs, &both, false);
        assert!(matches!(e, Err(ReplayError::SharedProfile { .. })));
        assert!(check_assignment(&recs, &both, true).is_ok());
    }

    /// Each device's model holds state for every page (or mapping slot) up front, and the
    /// bound on one device's pages bounds one model only: four devices just inside it took
    /// 24 GB and the machine's memory. The devices of one replay share the bound.
    #[test]
    fn devices_beyond_the_page_bound_together_are_refused_before_any_is_made() {
        let recs = [write(0, "7:0", 0, true), write(1, "7:1", 0, true)];
        let sized = |name: &str, pages: u64| {
            let p = profile(name);
            let per_block = u64::from(p.geometry.units() * p.geometry.pages_per_block)
                * u64::from(p.slots_per_page());
            p.with_blocks_per_plane((pages / per_block) as u32)
        };
        let half = crate::config::MAX_PHYSICAL_PAGES / 2;
        let fits = [
            DeviceProfile {
                dev: "7:0".into(),
                profile: sized("a", half),
            },
            DeviceProfile {
                dev: "7:1".into(),
                profile: sized("b", half),
            },
        ];
        assert!(fits.iter().all(|d| d.profile.validate().is_ok()));
        assert!(check_assignment(&recs, &fits, false).is_ok());
        let mut over = fits.clone();
        over[1].profile = sized("b", half + half / 2);
        assert!(
            over[1].profile.validate().is_ok(),
            "each alone is within the bound"
        );
        let e = check_assignment(&recs, &over, false);
        assert!(
            matches!(e, Err(ReplayError::DevicesTooLarge { total, max })
                if total > max && max == crate::config::MAX_PHYSICAL_PAGES),
            "{e:?}"
        );
    }

    #[test]
    fn a_device_given_two_profiles_is_refused() {
        let recs = [write(0, "7:0", 0, true)];
        let e = check_assignment(&recs, &assign(&[("7:0", "a"), ("7:0", "b")]), false);
        assert!(matches!(e, Err(ReplayError::DeviceProfiledTwice { .. })));
    }

    #[test]
    fn a_profile_without_a_cache_gets_no_flush() {
        let mut p = profile("sd");
        p.cache.capacity_bytes = 0;
        let mut flush = TraceRecord::new(1, "7:0", Op::Flush, 0, 0);
        flush.sync = true;
        let mut w = write(0, "7:0", 0, true);
        w.preflush = true;
        let r = crate::replay::replay(&[w, flush], &p).unwrap();
        assert_eq!((r.flushes, r.flushes_dropped), (0, 2));
    }
}
