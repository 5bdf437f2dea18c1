//! Replay of a block trace (`joj_trace::TraceRecord`s) through an emulated device.
//!
//! Requests are given to the device in trace order. When the trace says when each request
//! completed (`TraceRecord::complete_ns`), a request arrives once every earlier request that
//! completed before it was issued has completed in the model too, and requests the kernel had
//! in flight together overlap as far as the profile's command queue allows
//! (`docs/device-model.md`, "Command queue"); a request whose completion the trace does not
//! give counts as completed before the next one was issued — a trace without completions
//! replays back to back, each request starting when the previous one completed. A request
//! with a preflush is a flush (a barrier) followed by the write. Reads, synchronous writes
//! (`REQ_SYNC`), FUA writes and flushes are the ones the application waited for; the time
//! during which at least one of them was outstanding is reported as `app_wait_s`. With
//! `honor_timestamps` the gaps between requests in the trace are kept as idle time (during
//! which the device may destage its cache).
//!
//! A trace of several devices (an ext4 external journal, say) is replayed either for one of
//! them (`ReplayOptions::dev`) or with every device laid out as a partition of the one emulated
//! device (`ReplayOptions::partitions`), in order of first appearance, each starting at the
//! first MiB boundary after the highest sector the previous one used: a phone's partitions
//! share one eMMC.
//!
//! A device whose profile has no volatile write cache (`cache.capacity_bytes == 0`, an SD card)
//! is given no flush: Linux completes a flush for a queue without a write cache in the block
//! layer (`block/blk-flush.c`, `blk_flush_policy`) and sends a FUA write as a plain write, so
//! the replay drops pure flushes and preflushes for it (`ReplayReport::flushes_dropped`).
//!
//! A trace of several devices can also be replayed with each device through its own profile
//! (`crate::replay_devices`), timed as the host sees it.
//!
//! The requests come from a [`Requests`] source, read twice (`crate::requests`): from memory,
//! or from a file one record at a time (`crate::TraceFile`), so that a replay of a trace of any
//! length holds one request besides the device. `DeviceSummary` is the `device` section of
//! every report joj prints about a modeled run.

use serde::{Deserialize, Serialize};

use joj_trace::{Op, SECTOR_BYTES, TraceRecord};

use crate::block::{BlockDevice, WriteFlags};
use crate::config::{DataMode, Profile};
use crate::counters::Counters;
use crate::emmc::Emmc;
use crate::error::ReplayError;
pub use crate::requests::PARTITIONED_DEV;
use crate::requests::{Requests, Scan, Selection};

/// How to replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayOptions {
    /// Replay only this device (`major:minor`); required when the trace has several.
    pub dev: Option<String>,
    /// With several devices and no `dev`: replay them all as partitions of one device.
    #[serde(default)]
    pub partitions: bool,
    /// Keep the trace's inter-arrival gaps as idle time (otherwise back to back).
    pub honor_timestamps: bool,
    /// `OobOnly` (default): no data is stored; the trace carries none anyway.
    pub data_mode: DataMode,
    /// Age the device before the replay (GC-validity experiments); its cold region starts at
    /// the first MiB above the highest sector the replayed trace touches.
    #[serde(default)]
    pub aging: Option<AgingSpec>,
    /// Before the replay (outside its modeled time and counters), write every page the trace
    /// reads. A trace captured on a filesystem that already held its files (a restart after a
    /// crash) reads pages a fresh emulated device has never been given, and the model answers
    /// reads of unmapped pages without touching flash.
    #[serde(default)]
    pub prefill_reads: bool,
}

/// Aging asked of a replay: the validity, the cold region follows from the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgingSpec {
    pub validity_percent: u32,
    pub seed: u64,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            dev: None,
            partitions: false,
            honor_timestamps: false,
            data_mode: DataMode::OobOnly,
            aging: None,
            prefill_reads: false,
        }
    }
}

/// Result of a replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// The profile's name (`profile`) and where it came from (`profile_source`).
    #[serde(flatten)]
    pub profile: crate::ProfileRef,
    pub dev: Option<String>,
    /// Records replayed (after the device filter).
    pub records: u64,
    pub reads: u64,
    pub writes: u64,
    /// Pure flushes plus preflushes.
    pub flushes: u64,
    /// Flushes and preflushes not sent because the profile has no write cache (Linux sends
    /// none to such a device).
    #[serde(default)]
    pub flushes_dropped: u64,
    /// The profile's volatile write cache (`cache.capacity_bytes`); 0: flushes are dropped.
    #[serde(default)]
    pub cache_bytes: u64,
    pub discards: u64,
    /// Records of other operations (secure erase, driver-private), skipped.
    pub skipped_other: u64,
    /// Modeled time of the whole replay.
    pub modeled_s: f64,
    /// Modeled time the application spent waiting on reads, sync or FUA writes and flushes.
    pub app_wait_s: f64,
    pub device: Counters,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aging: Option<crate::aging::AgingReport>,
}

impl ReplayReport {
    /// Device commands that completed: every read, write, flush and discard replayed (a
    /// preflush is its own flush command on an eMMC).
    pub fn completions(&self) -> u64 {
        self.reads + self.writes + self.flushes + self.discards
    }
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
    replay_requests(records, profile, opts)
}

/// Replay the requests of `requests` through a fresh device of `profile` with `opts`: one pass
/// over them for what the replay must know first ([`Requests::scan`]), one to apply them. What
/// the replay holds besides the device is one request, whatever the trace's length.
pub fn replay_requests<R: Requests + ?Sized>(
    requests: &R,
    profile: &Profile,
    opts: &ReplayOptions,
) -> Result<ReplayReport, ReplayError> {
    // How high the requests reach matters to aging (and to partitions, of several devices);
    // without either, what a source knows without a pass will do.
    let scan = match requests.known() {
        Some(known) if opts.aging.is_none() && known.devices.len() <= 1 => known,
        _ => requests.scan()?,
    };
    let devs = scan.names();
    let (selection, dev_name, top_sectors) = match &opts.dev {
        Some(d) => {
            if !devs.contains(&d.as_str()) {
                return Err(ReplayError::NoSuchDevice {
                    dev: d.clone(),
                    devices: listed(&devs),
                });
            }
            (Selection::Dev(d.clone()), Some(d.clone()), scan.end_of(d))
        }
        None if devs.len() > 1 && opts.partitions => {
            let (starts, top) = scan.partitions();
            (
                Selection::Partitions(starts),
                Some(PARTITIONED_DEV.to_string()),
                top,
            )
        }
        None if devs.len() > 1 => {
            let mut sorted = devs.clone();
            sorted.sort_unstable();
            return Err(ReplayError::SeveralDevices {
                devices: listed(&sorted),
            });
        }
        None => (
            Selection::All,
            devs.first().map(|d| d.to_string()),
            scan.end_sectors.first().copied().unwrap_or(0),
        ),
    };
    let top = top_sectors.saturating_mul(SECTOR_BYTES);
    let mut replayer = Replayer::above(profile, opts, top, requests, &selection)?;
    replayer.follow_completions();
    let mut first_time = None;
    let mut seen = 0u64;
    requests.each(&mut |index, r| {
        seen += 1;
        let first = *first_time.get_or_insert(r.time_ns);
        let Some(r) = selection.pick(r) else {
            return Ok(());
        };
        if opts.honor_timestamps {
            replayer
                .idle_until(r.time_ns.saturating_sub(first))
                .map_err(|source| ReplayError::Device { index, source })?;
        }
        replayer.apply(index, &r).map(|_| ())
    })?;
    changed_since_scanned(&scan, seen)?;
    let mut report = replayer.finish();
    report.dev = dev_name;
    Ok(report)
}

/// An error if the pass that applied the requests saw another number than the scan: the trace
/// changed between the two.
pub(crate) fn changed_since_scanned(scan: &Scan, seen: u64) -> Result<(), ReplayError> {
    if seen == scan.records {
        return Ok(());
    }
    Err(ReplayError::ChangedWhileReplayed {
        scanned: scan.records,
        applied: seen,
    })
}

/// A replay fed one request at a time: the device and counters of [`replay_with`] (which runs
/// on it), for a caller that gets its requests while they happen (`joj bench --pace`).
pub struct Replayer {
    dev: Emmc<crate::nand::NandMedium>,
    /// The profile has no write cache: flushes are dropped, FUA is a plain write.
    no_cache: bool,
    report: ReplayReport,
    start_ns: u64,
    wait_ns: u64,
    /// The end of the time counted in `wait_ns` so far (waits that overlap count once).
    waited_until_ns: u64,
    /// When the last request applied completed.
    last_done_ns: u64,
    /// `Some` once [`Replayer::follow_completions`]: what each request may have waited for.
    deps: Option<Dependencies>,
    buf: Vec<u8>,
}

/// The most requests [`Dependencies`] holds whose recorded completion no issue has reached.
const MAX_PENDING: usize = joj_trace::completions::MAX_WAITING_REQUESTS;

/// The recorded dependency order of a trace with completions: a request arrives once every
/// earlier request whose recorded completion came at or before its recorded issue has
/// completed in the model. At most [`MAX_PENDING`] requests are in flight in the recording:
/// past it, the one with the earliest recorded completion is taken as done before the next
/// request (more than 65,536 requests in flight is no device's queue, but a trace whose
/// completion times are wrong or hostile; robustness.md H106). That only adds a wait.
#[derive(Debug, Default)]
struct Dependencies {
    /// `(recorded completion, modeled completion)` of requests applied whose recorded
    /// completion no request's issue has reached yet, earliest recorded completion first.
    pending: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64)>>,
    /// The latest modeled completion of the requests every later one waits for.
    done_ns: u64,
    /// The latest recorded issue seen (records are in issue order; times may jitter).
    issued_ns: u64,
}

impl Dependencies {
    /// The earliest modeled instant a request issued (in the recording) at `issue_ns` may
    /// arrive.
    fn arrival_ns(&mut self, issue_ns: u64) -> u64 {
        self.issued_ns = self.issued_ns.max(issue_ns);
        while let Some(&std::cmp::Reverse((recorded, modeled))) = self.pending.peek() {
            if recorded > self.issued_ns {
                break;
            }
            self.pending.pop();
            self.done_ns = self.done_ns.max(modeled);
        }
        self.done_ns
    }

    /// A request that completed at `recorded_ns` in the recording (`None`: not recorded)
    /// completed at `modeled_ns` in the model.
    fn completed(&mut self, recorded_ns: Option<u64>, modeled_ns: u64) {
        match recorded_ns {
            Some(t) => self.pending.push(std::cmp::Reverse((t, modeled_ns))),
            None => self.done_ns = self.done_ns.max(modeled_ns),
        }
        if self.pending.len() > MAX_PENDING
            && let Some(std::cmp::Reverse((_, modeled))) = self.pending.pop()
        {
            self.done_ns = self.done_ns.max(modeled);
        }
    }
}

impl Replayer {
    /// A fresh device of `profile`, aged first when `aging` says so: the cold region starts
    /// at the first MiB at or above `top_bytes` (the highest byte the requests will touch).
    pub fn new(
        profile: &Profile,
        data_mode: DataMode,
        aging: Option<AgingSpec>,
        top_bytes: u64,
    ) -> Result<Replayer, crate::DeviceError> {
        let profile = profile.clone().with_data_mode(data_mode);
        let mut dev = Emmc::new(&profile)?;
        let aged = match aging {
            Some(a) => {
                let from = top_bytes.div_ceil(1 << 20).saturating_mul(1 << 20)
                    / u64::from(profile.geometry.page_bytes);
                let spec = crate::aging::Aging {
                    validity_percent: a.validity_percent,
                    from_lpn: from,
                    keep_free: 2,
                };
                Some(crate::aging::age(&mut dev, &spec, a.seed)?)
            }
            None => None,
        };
        let report = ReplayReport {
            profile: crate::ProfileRef::from(&profile),
            dev: None,
            records: 0,
            reads: 0,
            writes: 0,
            flushes: 0,
            flushes_dropped: 0,
            cache_bytes: profile.cache.capacity_bytes,
            discards: 0,
            skipped_other: 0,
            modeled_s: 0.0,
            app_wait_s: 0.0,
            device: dev.counters(),
            aging: aged,
        };
        let start_ns = dev.now_ns();
        Ok(Replayer {
            no_cache: profile.cache.capacity_bytes == 0,
            dev,
            report,
            start_ns,
            wait_ns: 0,
            waited_until_ns: start_ns,
            last_done_ns: start_ns,
            deps: None,
            buf: Vec::new(),
        })
    }

    /// From now on, requests follow the recorded dependency order of their trace (the module
    /// header): requests the kernel had in flight together may overlap in the device's queue.
    /// Without it every request starts when the previous one completed.
    pub fn follow_completions(&mut self) {
        let mut deps = Dependencies {
            done_ns: self.dev.now_ns(),
            ..Dependencies::default()
        };
        deps.done_ns = deps.done_ns.max(self.last_done_ns);
        self.deps = Some(deps);
    }

    /// Modeled time from the replay's start to the completion of the last request applied.
    pub fn last_done_elapsed_ns(&self) -> u64 {
        self.last_done_ns - self.start_ns
    }

    /// Give the next command an explicit arrival, when following completions.
    fn arrive(&mut self, r: &TraceRecord) {
        if let Some(deps) = &mut self.deps {
            let t = deps.arrival_ns(r.time_ns);
            self.dev.arrive_at(t);
        }
    }

    /// Execute request `r` (number `index` of its trace, for errors): when the previous one
    /// completed, or, following completions, as the module header says. Returns whether the
    /// host waited for it (a read, a flush the device executes, a synchronous write): the time
    /// counted in `app_wait_s`.
    pub fn apply(&mut self, index: usize, r: &TraceRecord) -> Result<bool, ReplayError> {
        let commands_before = self.dev.commands_started();
        self.arrive(r);
        let arrival = self.dev.next_arrival_ns();
        let waited = self.execute(index, r)?;
        if self.dev.commands_started() == commands_before {
            // Nothing reached the device (a dropped flush, an op it does not know).
            return Ok(waited);
        }
        let done = self.dev.last_command().done_ns;
        assert!(
            done >= arrival,
            "request {index} completes after it arrives: done {done} ns, arrival {arrival} ns"
        );
        self.last_done_ns = done;
        if let Some(deps) = &mut self.deps {
            deps.completed(r.complete_ns, done);
        }
        if waited {
            self.count_wait(arrival, done);
        }
        Ok(waited)
    }

    /// Count `[arrival, done]` as time the application waited, once where waits overlap.
    fn count_wait(&mut self, arrival: u64, done: u64) {
        let from = arrival.max(self.waited_until_ns);
        self.wait_ns += done.saturating_sub(from);
        self.waited_until_ns = self.waited_until_ns.max(done);
    }

    fn execute(&mut self, index: usize, r: &TraceRecord) -> Result<bool, ReplayError> {
        let report = &mut self.report;
        let dev = &mut self.dev;
        let buf = &mut self.buf;
        report.records += 1;
        let err = |source| ReplayError::Device { index, source };
        // An empty write with a preflush (`FWS 0 + 0`: the block layer's flush of an fsync, as
        // blkparse shows it at queue time) is a flush and nothing else.
        let empty_preflush = r.op == Op::Write && r.sectors == 0 && r.preflush;
        if matches!(r.op, Op::Read | Op::Write | Op::Discard) && r.sectors == 0 && !empty_preflush {
            return Err(ReplayError::EmptyRequest {
                index,
                op: format!("{:?}", r.op).to_lowercase(),
            });
        }
        // Checked before anything is sized by it: a record's length is the trace's word.
        let capacity_bytes = dev.geometry().capacity_bytes;
        let (offset, bytes) = match request_bytes(r, capacity_bytes) {
            Some(range) => range,
            None => {
                return Err(ReplayError::BeyondDevice {
                    index,
                    sector: r.sector,
                    sectors: r.sectors,
                    capacity_bytes,
                });
            }
        };
        assert!(
            offset + bytes <= capacity_bytes,
            "request {index} lies inside the device: {bytes} bytes at {offset} of {capacity_bytes}"
        );
        if r.preflush && r.op != Op::Flush {
            if self.no_cache {
                report.flushes_dropped += 1;
            } else {
                dev.flush().map_err(err)?;
                report.flushes += 1;
            }
        }
        if empty_preflush {
            return Ok(true);
        }
        let waited = match r.op {
            Op::Read => {
                buf.resize(bytes as usize, 0);
                dev.read(offset, buf).map_err(err)?;
                report.reads += 1;
                true
            }
            Op::Write => {
                buf.resize(bytes as usize, 0);
                let flags = if r.fua && !self.no_cache {
                    WriteFlags::FUA
                } else {
                    WriteFlags::NONE
                };
                dev.write(offset, buf, flags).map_err(err)?;
                report.writes += 1;
                r.sync || r.fua || r.preflush
            }
            Op::Flush if self.no_cache => {
                report.flushes_dropped += 1;
                false
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
        Ok(waited)
    }

    /// One packed command of reliable writes, `(offset, bytes)` each (the optimized journal's
    /// commit, `ejournal`): durable on return, waited for by the application.
    pub fn apply_packed_reliable(
        &mut self,
        index: usize,
        extents: &[(u64, u64)],
    ) -> Result<(), ReplayError> {
        let arrival = self.dev.next_arrival_ns();
        let total: u64 = extents.iter().map(|e| e.1).sum();
        self.buf.resize(total as usize, 0);
        let mut writes = Vec::with_capacity(extents.len());
        let mut at = 0usize;
        for &(offset, bytes) in extents {
            writes.push(crate::block::PackedWrite {
                offset_bytes: offset,
                data: &self.buf[at..at + bytes as usize],
            });
            at += bytes as usize;
        }
        assert_eq!(
            at as u64,
            total,
            "a packed reliable command carries the bytes of its {} extents",
            extents.len()
        );
        self.dev
            .write_packed(&writes, WriteFlags::RELIABLE)
            .map_err(|source| ReplayError::Device { index, source })?;
        self.report.records += 1;
        self.report.writes += extents.len() as u64;
        let done = self.dev.last_command().done_ns;
        self.last_done_ns = done;
        if let Some(deps) = &mut self.deps {
            deps.completed(None, done);
        }
        self.count_wait(arrival, done);
        Ok(())
    }

    /// Modeled time since the replay started (after aging and prefill).
    pub fn elapsed_ns(&self) -> u64 {
        self.dev.now_ns() - self.start_ns
    }

    /// A device of `profile` for the requests of `requests` that `selection` applies, aged
    /// with its cold region from the first MiB above `top_bytes` (the highest byte they touch,
    /// or above, for a caller that writes above them: the optimized journal's region), their
    /// reads' pages written first when `opts.prefill_reads`.
    pub(crate) fn above<R: Requests + ?Sized>(
        profile: &Profile,
        opts: &ReplayOptions,
        top_bytes: u64,
        requests: &R,
        selection: &Selection,
    ) -> Result<Replayer, ReplayError> {
        let mut replayer = Replayer::new(profile, opts.data_mode, opts.aging, top_bytes)
            .map_err(ReplayError::MakeDevice)?;
        if opts.prefill_reads {
            prefill(&mut replayer.dev, requests, selection)?;
            replayer.start_ns = replayer.dev.now_ns();
            replayer.waited_until_ns = replayer.start_ns;
            replayer.last_done_ns = replayer.start_ns;
        }
        Ok(replayer)
    }

    /// Leave the device idle until `elapsed_ns` after the replay started (nothing if it is
    /// already later); the device may destage its cache meanwhile.
    pub fn idle_until(&mut self, elapsed_ns: u64) -> Result<(), crate::DeviceError> {
        self.dev
            .advance_to(self.start_ns.saturating_add(elapsed_ns))
    }

    /// The report of everything applied.
    pub fn finish(mut self) -> ReplayReport {
        self.report.modeled_s = self.elapsed_ns() as f64 / 1e9;
        self.report.app_wait_s = self.wait_ns as f64 / 1e9;
        self.report.device = self.dev.counters();
        self.report
    }
}

/// Write every device page the read requests of `requests` (as `selection` applies them)
/// touch, in runs of consecutive pages, flush, and start the counters afresh. The pages are
/// held as a set: at most the device's pages, whatever the number of reads.
fn prefill<R: Requests + ?Sized>(
    dev: &mut Emmc<crate::nand::NandMedium>,
    requests: &R,
    selection: &Selection,
) -> Result<(), ReplayError> {
    const RUN_PAGES: u64 = 64;
    let page = u64::from(dev.geometry().optimal_write_bytes);
    let capacity_bytes = dev.geometry().capacity_bytes;
    let mut pages = std::collections::BTreeSet::new();
    requests.each(&mut |_, r| {
        let Some(r) = selection.pick(r) else {
            return Ok(());
        };
        // A read beyond the device is left to `Replayer::apply`, which reports it.
        if r.op == Op::Read
            && r.sectors > 0
            && let Some((offset, bytes)) = request_bytes(&r, capacity_bytes)
        {
            pages.extend(offset / page..=(offset + bytes - 1) / page);
        }
        Ok(())
    })?;
    let device_err = |source| ReplayError::Device { index: 0, source };
    let pages: Vec<u64> = pages.into_iter().collect();
    let mut buf = Vec::new();
    let mut i = 0;
    while i < pages.len() {
        let mut n = 1;
        while i + n < pages.len() && pages[i + n] == pages[i] + n as u64 && (n as u64) < RUN_PAGES {
            n += 1;
        }
        buf.resize(n * page as usize, 0);
        dev.write(pages[i] * page, &buf, WriteFlags::NONE)
            .map_err(device_err)?;
        i += n;
    }
    dev.flush().map_err(device_err)?;
    dev.reset_counters();
    Ok(())
}

/// How many device names a message lists before it says how many more there are.
const LISTED_DEVICES: usize = 16;

/// `names` for a message, joined by commas: the first [`LISTED_DEVICES`], then how many more
/// (a trace may name thousands of devices; a message should not repeat them all).
pub(crate) fn listed<S: AsRef<str>>(names: &[S]) -> String {
    let shown: Vec<&str> = names
        .iter()
        .take(LISTED_DEVICES)
        .map(AsRef::as_ref)
        .collect();
    match names.len().saturating_sub(LISTED_DEVICES) {
        0 => shown.join(", "),
        more => format!("{}, and {more} more", shown.join(", ")),
    }
}

/// What modeled throughput counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpsBasis {
    /// Transactions of the run (the trace's header or the run result says how many).
    Transactions,
    /// Host read and write requests of the trace or workload.
    Requests,
}

/// The `device` section of a run result, a replay and a device run: what the modeled device
/// did and how long it took, with `modeled_ops_per_sec = ops / modeled_s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceSummary {
    /// The profile's name (`profile`) and where it came from (`profile_source`).
    #[serde(flatten)]
    pub profile: crate::ProfileRef,
    pub host_write_bytes: u64,
    pub nand_program_bytes: u64,
    /// Data blocks erased (by GC).
    pub erases: u64,
    /// Map-area blocks erased (not in `erases`).
    #[serde(default)]
    pub map_erases: u64,
    pub gc_copies: u64,
    pub waf: f64,
    pub flushes: u64,
    pub fua: u64,
    pub modeled_s: f64,
    pub modeled_ops_per_sec: f64,
    /// The `ops` of `modeled_ops_per_sec`.
    pub ops: u64,
    pub ops_basis: OpsBasis,
    /// Part of `modeled_s` the application waited for (reads, sync or FUA writes, flushes);
    /// equal to `modeled_s` for a synthetic run, where every request is waited for.
    pub app_wait_s: f64,
    /// NAND page programs (host, GC copies, map and commit-table pages) and page reads.
    #[serde(default)]
    pub nand_programs: u64,
    #[serde(default)]
    pub nand_reads: u64,
    #[serde(default)]
    pub gc_runs: u64,
    /// Share of valid pages GC copied out of its victims (0 without GC).
    #[serde(default)]
    pub gc_validity: f64,
    /// X-FTL transactions committed on the device (0 for plain block traces).
    #[serde(default)]
    pub txn_commits: u64,
    /// How the device was aged before the run, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aging: Option<crate::aging::AgingReport>,
    /// The host completion model applied to the replay (`--completion`), if asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<crate::completion::CompletionReport>,
    /// The optimized journal's transformation, when the trace was replayed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emmc_journal: Option<crate::ejournal::EjournalStats>,
}

impl DeviceSummary {
    /// From a device's counters: `ops` transactions if given, else its host read and write
    /// requests.
    pub fn new(
        profile: &crate::ProfileRef,
        c: &Counters,
        transactions: Option<u64>,
        app_wait_s: f64,
    ) -> DeviceSummary {
        let (ops, ops_basis) = match transactions {
            Some(t) => (t, OpsBasis::Transactions),
            None => (
                c.host_read_requests + c.host_write_requests,
                OpsBasis::Requests,
            ),
        };
        for (name, v) in [
            ("waf", c.waf),
            ("modeled_s", c.modeled_s),
            ("app_wait_s", app_wait_s),
            ("gc_validity", c.gc_validity),
        ] {
            assert!(
                v.is_finite() && v >= 0.0,
                "a device summary's {name} is finite and non-negative: {v}"
            );
        }
        assert!(
            c.gc_validity <= 1.0,
            "GC copies at most every page of its victims: validity {}",
            c.gc_validity
        );
        DeviceSummary {
            profile: profile.clone(),
            host_write_bytes: c.host_write_bytes,
            nand_program_bytes: c.nand_program_bytes,
            erases: c.erases,
            map_erases: c.map_erases,
            gc_copies: c.gc_copies,
            waf: c.waf,
            flushes: c.flushes,
            fua: c.fua,
            modeled_s: c.modeled_s,
            modeled_ops_per_sec: if c.modeled_s > 0.0 {
                ops as f64 / c.modeled_s
            } else {
                0.0
            },
            ops,
            ops_basis,
            app_wait_s,
            nand_programs: c.nand_programs,
            nand_reads: c.nand_reads,
            gc_runs: c.gc_runs,
            gc_validity: c.gc_validity,
            txn_commits: c.txn_commits,
            aging: None,
            completion: None,
            emmc_journal: None,
        }
    }

    /// Apply `host`'s completion model to this back-to-back replay of `completions` commands.
    pub fn with_completion(
        mut self,
        host: &crate::completion::HostCompletion,
        completions: u64,
    ) -> DeviceSummary {
        let device_ns = (self.modeled_s * 1e9).round() as u64;
        self.completion = Some(host.account(device_ns, completions, self.ops));
        self
    }

    /// From a replay: `ops` transactions if given, else the replayed host requests.
    pub fn from_replay(r: &ReplayReport, transactions: Option<u64>) -> DeviceSummary {
        DeviceSummary {
            aging: r.aging.clone(),
            ..DeviceSummary::new(&r.profile, &r.device, transactions, r.app_wait_s)
        }
    }
}

/// The largest read or write replayed, one buffer in memory: 64 MiB, above any block layer's
/// request size (Linux's `max_hw_sectors_kb` is at most a few MiB on eMMC, SATA and NVMe).
/// A discard carries no data and may be as large as the device.
pub const MAX_REQUEST_BYTES: u64 = 64 << 20;

/// The byte offset and length of `r`, if it lies inside a device of `capacity_bytes` and, when
/// it carries data, is at most [`MAX_REQUEST_BYTES`] (a request with no data — a flush —
/// always passes).
fn request_bytes(r: &TraceRecord, capacity_bytes: u64) -> Option<(u64, u64)> {
    if !matches!(r.op, Op::Read | Op::Write | Op::Discard) {
        return Some((0, 0));
    }
    let offset = r.sector.checked_mul(SECTOR_BYTES)?;
    let bytes = r.sectors.checked_mul(SECTOR_BYTES)?;
    let carries_data = r.op != Op::Discard;
    let fits = offset.checked_add(bytes)? <= capacity_bytes;
    (fits && !(carries_data && bytes > MAX_REQUEST_BYTES)).then_some((offset, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_far_in_the_future_hold_at_most_the_bound_and_only_add_waits() {
        // Every request completes, in the recording, long after every later issue (H106).
        let mut d = Dependencies::default();
        for i in 0..200_000u64 {
            let arrival = d.arrival_ns(i);
            assert!(arrival <= i.saturating_sub(MAX_PENDING as u64) * 10 + 10);
            d.completed(Some(1 << 60), i * 10 + 10);
            assert!(
                d.pending.len() <= MAX_PENDING,
                "{} pending",
                d.pending.len()
            );
        }
        // The request past the bound waits for the one taken as done: the earliest of
        // them in the recording, here the first of the equal completions the heap gives.
        assert!(d.arrival_ns(200_000) >= 10);
        // Once an issue reaches their recorded completion, every one is waited for.
        assert_eq!(d.arrival_ns(1 << 60), 199_999 * 10 + 10);
    }
}
