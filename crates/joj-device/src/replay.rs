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
//! `load_trace` reads either input joj knows (a joj-trace file, or blkparse text), and
//! `DeviceSummary` is the `device` section of every report joj prints about a modeled run.

use std::io::BufRead;
use std::path::Path;

use serde::{Deserialize, Serialize};

use joj_trace::{Op, SECTOR_BYTES, TraceHeader, TraceRecord};

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
    pub profile: String,
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
    let devs = devices_in_order(records);
    let merged;
    let (records, dev_name) = match &opts.dev {
        Some(d) => {
            if !devs.contains(&d.as_str()) {
                return Err(ReplayError::NoSuchDevice {
                    dev: d.clone(),
                    devices: listed(&devs),
                });
            }
            (records, Some(d.clone()))
        }
        None if devs.len() > 1 && opts.partitions => {
            merged = as_partitions(records, &devs);
            (&merged[..], Some(PARTITIONED_DEV.to_string()))
        }
        None if devs.len() > 1 => {
            let mut sorted = devs.clone();
            sorted.sort_unstable();
            return Err(ReplayError::SeveralDevices {
                devices: listed(&sorted),
            });
        }
        None => (records, devs.first().map(|d| d.to_string())),
    };
    let selected = || {
        records
            .iter()
            .filter(|r| dev_name.as_deref().is_none_or(|d| d == r.dev))
    };
    let mut replayer = Replayer::for_records(profile, opts, selected)?;
    replayer.follow_completions();
    let first_time = records.first().map_or(0, |r| r.time_ns);
    for (index, r) in records.iter().enumerate() {
        if dev_name.as_deref().is_some_and(|d| d != r.dev) {
            continue;
        }
        if opts.honor_timestamps {
            replayer
                .idle_until(r.time_ns.saturating_sub(first_time))
                .map_err(|source| ReplayError::Device { index, source })?;
        }
        replayer.apply(index, r)?;
    }
    let mut report = replayer.finish();
    report.dev = dev_name;
    Ok(report)
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

/// The recorded dependency order of a trace with completions: a request arrives once every
/// earlier request whose recorded completion came at or before its recorded issue has
/// completed in the model.
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
            profile: profile.name.clone(),
            dev: None,
            records: 0,
            reads: 0,
            writes: 0,
            flushes: 0,
            flushes_dropped: 0,
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
        if matches!(r.op, Op::Read | Op::Write | Op::Discard) && r.sectors == 0 {
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

    /// A device of `profile` for the requests `records()` yields: sized (and aged) up to the
    /// highest byte they touch, their reads' pages written first when `opts.prefill_reads`.
    pub(crate) fn for_records<'a, I: Iterator<Item = &'a TraceRecord>>(
        profile: &Profile,
        opts: &ReplayOptions,
        records: impl Fn() -> I,
    ) -> Result<Replayer, ReplayError> {
        let top = records()
            .map(|r| {
                r.sector
                    .saturating_add(r.sectors)
                    .saturating_mul(SECTOR_BYTES)
            })
            .max()
            .unwrap_or(0);
        Replayer::above(profile, opts, top, records)
    }

    /// [`Replayer::for_records`] with aging's cold region from the first MiB above `top_bytes`
    /// (a caller that writes above its records: the optimized journal's region).
    pub(crate) fn above<'a, I: Iterator<Item = &'a TraceRecord>>(
        profile: &Profile,
        opts: &ReplayOptions,
        top_bytes: u64,
        records: impl Fn() -> I,
    ) -> Result<Replayer, ReplayError> {
        let device_err = |source| ReplayError::Device { index: 0, source };
        let mut replayer =
            Replayer::new(profile, opts.data_mode, opts.aging, top_bytes).map_err(device_err)?;
        if opts.prefill_reads {
            prefill(&mut replayer.dev, records()).map_err(device_err)?;
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

/// Write every device page the read requests of `records` touch, in runs of consecutive
/// pages, flush, and start the counters afresh.
fn prefill<'a>(
    dev: &mut Emmc<crate::nand::NandMedium>,
    records: impl Iterator<Item = &'a TraceRecord>,
) -> Result<(), crate::DeviceError> {
    const RUN_PAGES: u64 = 64;
    let page = u64::from(dev.geometry().optimal_write_bytes);
    let capacity_bytes = dev.geometry().capacity_bytes;
    // A read beyond the device is left to `Replayer::apply`, which reports it.
    let mut pages: Vec<u64> = records
        .filter(|r| r.op == Op::Read && r.sectors > 0)
        .filter_map(|r| request_bytes(r, capacity_bytes))
        .flat_map(|(offset, bytes)| offset / page..=(offset + bytes - 1) / page)
        .collect();
    pages.sort_unstable();
    pages.dedup();
    let mut buf = Vec::new();
    let mut i = 0;
    while i < pages.len() {
        let mut n = 1;
        while i + n < pages.len() && pages[i + n] == pages[i] + n as u64 && (n as u64) < RUN_PAGES {
            n += 1;
        }
        buf.resize(n * page as usize, 0);
        dev.write(pages[i] * page, &buf, WriteFlags::NONE)?;
        i += n;
    }
    dev.flush()?;
    dev.reset_counters();
    Ok(())
}

/// The device name records carry after `as_partitions`.
pub const PARTITIONED_DEV: &str = "partitions";

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

/// Devices of `records` in order of first appearance.
pub(crate) fn devices_in_order(records: &[TraceRecord]) -> Vec<&str> {
    // A set beside the list keeps this linear in the records, however many devices they name.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut devs: Vec<&str> = Vec::new();
    for r in records {
        if seen.insert(&r.dev) {
            devs.push(&r.dev);
        }
    }
    devs
}

/// `records` with every device moved to a partition of one device: device `i` starts at the
/// first MiB boundary after the highest sector devices `0..i` used.
fn as_partitions(records: &[TraceRecord], devs: &[&str]) -> Vec<TraceRecord> {
    const MIB_SECTORS: u64 = (1 << 20) / SECTOR_BYTES;
    // One pass for each device's highest sector, and a map from device to its start: linear in
    // the records however many devices they name.
    let mut ends: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for r in records {
        let end = ends.entry(r.dev.as_str()).or_insert(0);
        *end = (*end).max(r.sector.saturating_add(r.sectors));
    }
    let mut starts: std::collections::HashMap<&str, u64> =
        std::collections::HashMap::with_capacity(devs.len());
    let mut next = 0u64;
    for d in devs {
        starts.insert(d, next);
        let end = ends.get(d).copied().unwrap_or(0);
        next += end.div_ceil(MIB_SECTORS).max(1) * MIB_SECTORS;
    }
    records
        .iter()
        .map(|r| {
            let start = starts.get(r.dev.as_str()).copied().unwrap_or(0);
            let mut m = r.clone();
            if r.op != Op::Flush {
                m.sector = m.sector.saturating_add(start);
            }
            m.dev = PARTITIONED_DEV.to_string();
            m
        })
        .collect()
}

/// A block trace as read from a file, whichever format it was in.
#[derive(Debug, Clone)]
pub struct LoadedTrace {
    /// `joj-trace` or `blkparse`.
    pub format: &'static str,
    /// The joj-trace header (a blkparse import gets the importer's header).
    pub header: TraceHeader,
    pub records: Vec<TraceRecord>,
}

impl LoadedTrace {
    /// Transactions of the run the trace captured, if its header says (`meta.transactions`,
    /// which `joj bench --trace` writes).
    pub fn transactions(&self) -> Option<u64> {
        self.header
            .meta
            .get("transactions")
            .and_then(|v| v.as_u64())
            .filter(|&n| n > 0)
    }
}

/// Read a joj-trace file or blkparse text (told apart by the first byte: a joj-trace file starts
/// with its JSON header). A joj-trace file may hold no request (a run that did no block
/// I/O); blkparse text with no request in it is an error.
pub fn load_trace(path: &Path) -> Result<LoadedTrace, ReplayError> {
    let shown = path.display().to_string();
    let err = |source| ReplayError::Trace {
        path: shown.clone(),
        source,
    };
    let input = joj_trace::input::open(
        path,
        joj_trace::format::MAX_TRACE_BYTES,
        "a block trace (joj-trace or blkparse text)",
    )
    .map_err(|e| err(e.into()))?;
    let mut reader = input.reader();
    // A read past the file's limit (it grew while being read) is said as such.
    let first = match reader.fill_buf() {
        Ok(b) => b.first().copied(),
        Err(e) => return Err(err(reader.input_error(e).into())),
    };
    let read = if first == Some(b'{') {
        joj_trace::read_trace(&mut reader).map(|(header, records)| LoadedTrace {
            format: "joj-trace",
            header,
            records,
        })
    } else {
        joj_trace::import_blkparse(&mut reader).map(|import| LoadedTrace {
            format: "blkparse",
            header: import.header(),
            records: import.records,
        })
    };
    let loaded = read.map_err(|e| match e {
        joj_trace::TraceError::Io(io) => err(reader.input_error(io).into()),
        e => err(e),
    })?;
    // A joj-trace file is recognised by its header, so one that holds no request is a run that
    // did no block I/O (a read-only mix served from the page cache): it replays to zero. Text
    // with no blkparse event in it is not a trace at all.
    if loaded.records.is_empty() && loaded.format == "blkparse" {
        return Err(ReplayError::NoRequests { path: shown });
    }
    Ok(loaded)
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
    pub profile: String,
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
        profile: &str,
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
            profile: profile.to_string(),
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
