//! A trace file replayed through emulated devices (`joj replay`): the choices a replay makes —
//! one device of a profile, the same with the eMMC paper's optimized journal (reliable write
//! atomic per command), or every device of the trace through its own profile — and the
//! documents they yield (`docs/formats/replay.md`).
//!
//! The documents are printed through `serde_json::Value`, whose objects keep their keys sorted:
//! every object of a document, the device sections included, comes out in alphabetical key
//! order, as it always has.

use std::path::Path;

use joj_device::{
    Counters, DeviceProfile, DeviceSummary, EjournalError, EjournalStats, HostCompletion, OpsBasis,
    Profile, ProfileError, ReliableWriteAtomicity, ReplayError, ReplayOptions, ReplayReport,
    TraceFile, ejournal, replay_devices, replay_ejournal, replay_requests,
};
use serde::Serialize;

use crate::host::{HostMeasured, Modeled, Pacing};

/// Why a trace could not be replayed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceReplayError {
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error(transparent)]
    Ejournal(#[from] EjournalError),
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// A device assignment not of the form `DEV=PROFILE`.
    #[error("--device-for {given}: expected DEV=PROFILE, e.g. `--device-for journal=galaxy-s5`")]
    ProfileForSyntax { given: String },
}

/// One trace through one device of a profile.
#[derive(Debug, Clone)]
pub struct TraceReplayOptions<'a> {
    pub trace: &'a Path,
    /// A built-in profile name or a profile JSON path.
    pub profile: &'a str,
    /// Replay only this device of the trace (`major:minor`).
    pub dev: Option<String>,
    /// Every device of the trace as a partition of the one emulated device.
    pub partitions: bool,
    /// Keep the trace's gaps between requests as idle time.
    pub honor_timestamps: bool,
    /// Replay with the optimized journal, in a region of this many MiB (`None`: the trace as
    /// captured).
    pub emmc_journal_mib: Option<u64>,
    /// The host completion model applied to the back-to-back replay.
    pub completion: Option<HostCompletion>,
    /// Transactions the traced run ran (`--transactions`): the modeled figures count them,
    /// over the header's count if it has one.
    pub transactions: Option<u64>,
}

/// The most transactions a replay is told its trace ran (`--transactions`): the most a
/// `joj bench` run counts, 10^8 per thread over 64 threads. A count is a divisor only, so the
/// bound holds back a slip of the keyboard, not an allocation.
pub const MAX_TRANSACTIONS: u64 = joj_workload::config::bounds::MAX_TRANSACTIONS
    * joj_workload::config::bounds::MAX_THREADS as u64;

/// Where the transactions of a replay's modeled figures were counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TransactionsFrom {
    /// The trace's header (`meta.transactions`, which `joj bench --trace` writes).
    Header,
    /// `--transactions N`, over the header's count if it has one.
    Option,
}

/// The transactions a replay counts its modeled figures by, and where the count came from:
/// `given` (`--transactions`) over the trace header's; `None` when neither says (the figures
/// then count requests).
fn counted(header: Option<u64>, given: Option<u64>) -> Option<(u64, TransactionsFrom)> {
    match (given, header) {
        (Some(n), _) => Some((n, TransactionsFrom::Option)),
        (None, Some(n)) => Some((n, TransactionsFrom::Header)),
        (None, None) => None,
    }
}

/// What the replay of a trace through one device counted.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayCounts {
    /// The profile's volatile write cache in bytes; 0: flushes are dropped (`flushes_dropped`).
    pub cache_bytes: u64,
    pub dev: Option<String>,
    pub discards: u64,
    pub flushes: u64,
    /// Flushes and preflushes not sent because the profile has no write cache.
    pub flushes_dropped: u64,
    pub honor_timestamps: bool,
    pub reads: u64,
    pub records: u64,
    pub skipped_other: u64,
    pub writes: u64,
}

/// `joj replay --json`: one trace through one device.
#[derive(Debug, Clone, Serialize)]
pub struct TraceReplayReport {
    /// The device's own counters and latencies.
    pub counters: Counters,
    pub device: DeviceSummary,
    /// The optimized journal's figures (`null` without `--emmc-journal`).
    pub emmc_journal: Option<EjournalStats>,
    /// `joj-trace` or `blkparse`.
    pub format: &'static str,
    /// The transactions the trace's header counts (`meta.transactions`; `null` when it does
    /// not), whether or not `--transactions` overrode them.
    pub header_transactions: Option<u64>,
    /// The host time a `joj bench` recording measured, composed with the device's (`null` for
    /// other traces, and with `--honor-timestamps`: `modeled_not` says why).
    pub modeled: Option<Modeled>,
    /// Why a recording's host time was not composed (`null` when it was, or when the trace
    /// carries none).
    pub modeled_not: Option<&'static str>,
    /// The profile's name (`profile`) and where it came from (`profile_source`).
    #[serde(flatten)]
    pub profile: joj_device::ProfileRef,
    pub replay: ReplayCounts,
    pub trace: String,
    /// Where `device.ops` was counted when it counts transactions: `header` or `option`
    /// (`--transactions`); `null` when it counts requests.
    pub transactions_from: Option<TransactionsFrom>,
}

/// A replay's document and the replay's own report (for the text view).
pub struct TraceReplay {
    pub report: TraceReplayReport,
    pub replayed: ReplayReport,
}

/// Replay `opts.trace` through one device of `opts.profile`.
pub fn replay_trace(opts: &TraceReplayOptions) -> Result<TraceReplay, TraceReplayError> {
    let profile = Profile::load(opts.profile)?;
    if let Some(mib) = opts.emmc_journal_mib {
        // Before the trace, which may be large, is read.
        joj_device::ejournal::check_region_fits(mib, profile.capacity_bytes())?;
    }
    let trace = TraceFile::open(opts.trace)?;
    let ro = ReplayOptions {
        dev: opts.dev.clone(),
        partitions: opts.partitions,
        honor_timestamps: opts.honor_timestamps,
        ..ReplayOptions::default()
    };
    let (replayed, ejournal) = match opts.emmc_journal_mib {
        Some(mib) => {
            // The transformation groups a journal transaction's requests: it holds the trace.
            let records = trace.load("the optimized journal's transformation (--emmc-journal)")?;
            let (r, s) = replay_ejournal(&records, &emmc_journal_profile(&profile), &ro, mib)?;
            (r, Some(s))
        }
        // A plain replay reads the file one record at a time.
        None => (replay_requests(&trace, &profile, &ro)?, None),
    };
    let count = counted(trace.transactions(), opts.transactions);
    let mut summary = DeviceSummary::from_replay(&replayed, count.map(|(n, _)| n));
    if let Some(host) = &opts.completion {
        summary = summary.with_completion(host, replayed.completions());
    }
    let (modeled, modeled_not) =
        unless_honored(opts.honor_timestamps, modeled(&trace, &profile, &summary));
    let report = TraceReplayReport {
        counters: replayed.device.clone(),
        device: summary,
        emmc_journal: ejournal,
        format: trace.format,
        header_transactions: trace.transactions(),
        modeled,
        modeled_not,
        profile: joj_device::ProfileRef::from(&profile),
        replay: ReplayCounts {
            cache_bytes: replayed.cache_bytes,
            dev: replayed.dev.clone(),
            discards: replayed.discards,
            flushes: replayed.flushes,
            flushes_dropped: replayed.flushes_dropped,
            honor_timestamps: opts.honor_timestamps,
            reads: replayed.reads,
            records: replayed.records,
            skipped_other: replayed.skipped_other,
            writes: replayed.writes,
        },
        trace: opts.trace.display().to_string(),
        transactions_from: count.map(|(_, from)| from),
    };
    Ok(TraceReplay { report, replayed })
}

/// The optimized journal's region when `--journal-region-mib` does not say.
pub const DEFAULT_REGION_MIB: u64 = ejournal::DEFAULT_REGION_MIB;

/// The profile the optimized journal replays on: `profile` with reliable write atomic per
/// command (each jbd2 transaction is one packed reliable write).
pub fn emmc_journal_profile(profile: &Profile) -> Profile {
    let mut p = profile.clone();
    p.ftl.reliable_write_atomicity = ReliableWriteAtomicity::Command;
    p
}

/// A recording `joj bench` made carries the host time it measured: the replay composes it with
/// the device's time as the run did, over the transactions `summary` counts (the header's, or
/// `--transactions`), so that `modeled.ops` is `device.ops`. A replay counting requests composes
/// nothing: the host time is per transaction of the run.
fn modeled(trace: &TraceFile, profile: &Profile, summary: &DeviceSummary) -> Option<Modeled> {
    if summary.ops_basis != OpsBasis::Transactions {
        return None;
    }
    let (h, paced_on) = recorded_host(trace)?;
    let device_s = summary
        .completion
        .as_ref()
        .map_or(summary.modeled_s, |c| c.modeled_s);
    Some(Modeled::compose(
        profile,
        &h,
        device_s,
        summary.ops,
        &Pacing::Recorded { paced_on },
    ))
}

/// Why a replay with `--honor-timestamps` composes no host time: the trace's gaps, kept as idle
/// time, already hold the recording machine's host time, so composing it would count it twice.
const HONORED_NOT_COMPOSED: &str = "--honor-timestamps keeps the trace's gaps, which already \
     hold the recording machine's host time: composing it would count the host twice";

/// `composed` as the replay reports it: with `--honor-timestamps`, nothing, and why — said
/// exactly where a host time would have been composed.
fn unless_honored<T>(honored: bool, composed: Option<T>) -> (Option<T>, Option<&'static str>) {
    if honored {
        (None, composed.map(|_| HONORED_NOT_COMPOSED))
    } else {
        (composed, None)
    }
}

/// The host time a `joj bench` recording measured (`meta.host`) and the profile it was paced on
/// (`meta.paced_on`), when its header has them.
fn recorded_host(trace: &TraceFile) -> Option<(HostMeasured, Option<String>)> {
    let h = serde_json::from_value(trace.header.meta.get("host")?.clone()).ok()?;
    let paced_on = trace
        .header
        .meta
        .get("paced_on")
        .and_then(|v| v.as_str())
        .map(str::to_string);
    Some((h, paced_on))
}

/// Every device of a trace through its own profile.
#[derive(Debug, Clone)]
pub struct DevicesReplayOptions<'a> {
    pub trace: &'a Path,
    /// `DEV=PROFILE` per device: `DEV` is `major:minor`, or `main` / `journal` as the trace's
    /// header names them; `PROFILE` a built-in name or a profile JSON path.
    pub profile_for: &'a [String],
    /// Allow one profile for two devices (two separate devices of one kind).
    pub same_profile_ok: bool,
    pub honor_timestamps: bool,
    /// Transactions the traced run ran (`--transactions`), over the header's count.
    pub transactions: Option<u64>,
}

/// What the replay of one device of the trace counted.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceReplayCounts {
    /// The profile's volatile write cache in bytes; 0: flushes are dropped (`flushes_dropped`).
    pub cache_bytes: u64,
    pub discards: u64,
    pub flushes: u64,
    /// Flushes a device without a write cache had no use for.
    pub flushes_dropped: u64,
    pub reads: u64,
    pub records: u64,
    pub skipped_other: u64,
    pub writes: u64,
}

/// One device of a replay with a profile per device.
#[derive(Debug, Clone, Serialize)]
pub struct DevicesReplaySection {
    pub counters: Counters,
    /// `major:minor`.
    pub dev: Option<String>,
    pub device: DeviceSummary,
    /// The device as `--profile-for` named it.
    pub named: String,
    /// The profile's name (`profile`) and where it came from (`profile_source`).
    #[serde(flatten)]
    pub profile: joj_device::ProfileRef,
    pub replay: DeviceReplayCounts,
}

/// The run's time as the host saw its devices.
#[derive(Debug, Clone, Serialize)]
pub struct HostTime {
    pub app_wait_s: f64,
    pub modeled_ops_per_sec: f64,
    pub modeled_s: f64,
    pub ops: u64,
    /// `transactions` (the trace's header or `--transactions` counts them) or `requests`.
    pub ops_basis: &'static str,
}

/// `joj replay --profile-for … --json`: a section per device and the host's time.
#[derive(Debug, Clone, Serialize)]
pub struct DevicesReplayReport {
    pub devices: Vec<DevicesReplaySection>,
    pub format: &'static str,
    /// As in [`TraceReplayReport`].
    pub header_transactions: Option<u64>,
    pub honor_timestamps: bool,
    pub host: HostTime,
    /// The host time a `joj bench` recording measured, composed with the devices' time as the
    /// host saw them (`host.modeled_s`), over `host.ops` transactions, on the host of the data
    /// device's profile (`null` when the trace carries no host time or counts requests).
    pub modeled: Option<Modeled>,
    /// The `--device-for` name whose profile's host `modeled` is composed on (`main` when
    /// given); `null` with `modeled`.
    pub modeled_host_of: Option<String>,
    /// The other devices whose profiles model another host, not used (`journal's galaxy-s5
    /// models Galaxy S5: …`); empty when every profile models the same host.
    pub modeled_hosts_unused: Vec<String>,
    /// Why a recording's host time was not composed (`--honor-timestamps`); `null` when it
    /// was, or when the trace carries none.
    pub modeled_not: Option<&'static str>,
    pub trace: String,
    /// Where `host.ops` (and each device's `ops`) was counted when it counts transactions:
    /// `header` or `option` (`--transactions`); `null` when it counts requests.
    pub transactions_from: Option<TransactionsFrom>,
}

/// Replay every device of `opts.trace` through its own profile, timed as the host sees them.
pub fn replay_trace_devices(
    opts: &DevicesReplayOptions,
) -> Result<DevicesReplayReport, TraceReplayError> {
    let trace = TraceFile::open(opts.trace)?;
    let (assign, names) = assignment(&trace, opts.profile_for)?;
    let ro = ReplayOptions {
        honor_timestamps: opts.honor_timestamps,
        ..ReplayOptions::default()
    };
    let report = replay_devices(&trace, &assign, &ro, opts.same_profile_ok)?;
    let count = counted(trace.transactions(), opts.transactions);
    let txns = count.map(|(n, _)| n);
    let ops = txns.unwrap_or_else(|| {
        report
            .devices
            .iter()
            .map(|d| d.device.host_read_requests + d.device.host_write_requests)
            .sum()
    });
    let per_sec = if report.host_modeled_s > 0.0 {
        ops as f64 / report.host_modeled_s
    } else {
        0.0
    };
    let (composed, modeled_not) = unless_honored(
        opts.honor_timestamps,
        txns.and_then(|n| modeled_devices(&trace, &assign, &names, report.host_modeled_s, n)),
    );
    let (modeled, modeled_host_of, modeled_hosts_unused) = match composed {
        Some((m, of, unused)) => (Some(m), Some(of), unused),
        None => (None, None, Vec::new()),
    };
    let devices = report
        .devices
        .iter()
        .zip(names)
        .map(|(r, named)| section(r, named, txns))
        .collect();
    Ok(DevicesReplayReport {
        devices,
        format: trace.format,
        header_transactions: trace.transactions(),
        honor_timestamps: opts.honor_timestamps,
        host: HostTime {
            app_wait_s: report.host_app_wait_s,
            modeled_ops_per_sec: per_sec,
            modeled_s: report.host_modeled_s,
            ops,
            ops_basis: if txns.is_some() {
                "transactions"
            } else {
                "requests"
            },
        },
        modeled,
        modeled_host_of,
        modeled_hosts_unused,
        modeled_not,
        trace: opts.trace.display().to_string(),
        transactions_from: count.map(|(_, from)| from),
    })
}

/// A recording's host time composed with the time the host waited for its devices, as
/// [`modeled`] composes it for one device, on the host of the data device's profile (the one
/// the trace's header calls `main`, else the first given) — as `joj bench --device P
/// --journal-device Q` composes on P's host. Also returns which `--device-for` name that was,
/// and the other devices whose profiles model another host (their host sections not used).
fn modeled_devices(
    trace: &TraceFile,
    assign: &[DeviceProfile],
    names: &[String],
    devices_s: f64,
    transactions: u64,
) -> Option<(Modeled, String, Vec<String>)> {
    let (h, paced_on) = recorded_host(trace)?;
    let main = joj_device::resolve_device("main", &trace.header).ok();
    let at = assign
        .iter()
        .position(|d| Some(&d.dev) == main.as_ref())
        .unwrap_or(0);
    let (data, named) = (assign.get(at)?, names.get(at)?);
    let host = data.profile.host_or_this_machine();
    let others = assign
        .iter()
        .zip(names)
        .filter(|(d, _)| d.profile.host_or_this_machine() != host)
        .map(|(d, n)| {
            format!(
                "{n}'s {} models {}",
                d.profile.name,
                d.profile.host_or_this_machine().name
            )
        })
        .collect();
    let m = Modeled::compose(
        &data.profile,
        &h,
        devices_s,
        transactions,
        &Pacing::Recorded { paced_on },
    );
    Some((m, named.clone(), others))
}

/// Each `DEV=PROFILE` resolved against the trace's devices, with the name it was given.
fn assignment(
    trace: &TraceFile,
    profile_for: &[String],
) -> Result<(Vec<DeviceProfile>, Vec<String>), TraceReplayError> {
    let mut assign = Vec::with_capacity(profile_for.len());
    let mut names = Vec::with_capacity(profile_for.len());
    for given in profile_for {
        let (name, profile) = given
            .split_once('=')
            .filter(|(d, p)| !d.is_empty() && !p.is_empty())
            .ok_or_else(|| TraceReplayError::ProfileForSyntax {
                given: given.clone(),
            })?;
        let dev = joj_device::resolve_device(name, &trace.header)?;
        assign.push(DeviceProfile {
            dev,
            profile: Profile::load(profile)?,
        });
        names.push(name.to_string());
    }
    Ok((assign, names))
}

fn section(r: &ReplayReport, named: String, txns: Option<u64>) -> DevicesReplaySection {
    DevicesReplaySection {
        counters: r.device.clone(),
        dev: r.dev.clone(),
        device: DeviceSummary::from_replay(r, txns),
        named,
        profile: r.profile.clone(),
        replay: DeviceReplayCounts {
            cache_bytes: r.cache_bytes,
            discards: r.discards,
            flushes: r.flushes,
            flushes_dropped: r.flushes_dropped,
            reads: r.reads,
            records: r.records,
            skipped_other: r.skipped_other,
            writes: r.writes,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_counts_over_the_header_and_neither_leaves_requests() {
        assert_eq!(
            counted(Some(1), Some(1000)),
            Some((1000, TransactionsFrom::Option))
        );
        assert_eq!(
            counted(None, Some(10)),
            Some((10, TransactionsFrom::Option))
        );
        assert_eq!(
            counted(Some(20), None),
            Some((20, TransactionsFrom::Header))
        );
        assert_eq!(counted(None, None), None);
    }
}
