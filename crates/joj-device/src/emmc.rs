//! The emulated eMMC: host command timing, the volatile write-back cache, flush, FUA /
//! reliable write, packed commands and discard, on top of the page-mapping FTL.
//!
//! # Time
//! The device keeps a host clock `now_ns` (simulated): the latest completion of any command. A
//! command arrives and starts as the command queue decides (`queue`: with `queue_depth` 1, when
//! the previous command completed; with a deeper queue, commands of different issuers overlap),
//! pays the command overhead on the controller and the host-bus transfer, and completes when
//! the host may continue. Background work (destaging, GC, checkpoints) is scheduled on the NAND
//! units and may end after the command returns.
//!
//! # Durability
//! - A cached write is volatile until a flush. Dirty pages beyond the destage watermark, or
//!   all dirty pages after an idle period, are programmed in the background and may survive a
//!   power loss, but nothing promises it.
//! - `flush` programs every dirty page, waits for every program issued, then writes a mapping
//!   checkpoint and waits for it: every write completed before the flush is durable.
//! - FUA / reliable writes bypass the cache (merging any cached older sectors of their pages)
//!   and complete when their pages are programmed: the OOB `(lpn, seq)` lets recovery find them
//!   without a checkpoint. With `ReliableWriteAtomicity::Command` a reliable write command is
//!   instead one transaction, all of its pages old or all new after a cut (`reliable`).
//! - Discard unmaps whole pages in its range (partial pages are left alone) and is durable at
//!   the next flush.
//!
//! # Fault model
//! `power_loss(after_ns)` cuts power `after_ns` after the last command completed: the cache is
//! lost, and the medium tears or undoes the NAND commands still under way (see `nand`).
//! Recovery (`Emmc::recover`) rebuilds the mapping and reports its modeled time. A torn copy is
//! never returned to the host: it is ignored and the previous copy of the page is used. The
//! tears are reported as counts instead: `RecoveryReport::torn_pages` (interrupted programs)
//! and `torn_erase_blocks`, and the device's counters carry them as
//! `recovery_torn_pages` / `recovery_torn_erase_blocks` of the last power-on.

mod reliable;

use crate::addr::Lpn;
use crate::block::{BlockDevice, DeviceGeometry, PackedWrite, WriteFlags};
use crate::cache::{Evicted, WriteCache};
use crate::config::{DataMode, Profile, Timing};
use crate::counters::{Counters, Latencies};
use crate::error::DeviceError;
use crate::ftl::{Ftl, FtlStats, RecoveryReport};
use crate::medium::Medium;
use crate::nand::NandMedium;
use crate::queue::{Admitted, CommandKind, CommandQueue, CommandTimes};

/// Latest instant idle time may run the host clock to: 2^62 ns, 146 years. A trace's gaps
/// (`--honor-timestamps`) and a paced run's waits move the clock; past this bound they are
/// refused, which leaves three quarters of the `u64` nanosecond range (over 400 years) for
/// the device's own work after it, so no completion time overflows.
pub const MAX_CLOCK_NS: u64 = 1 << 62;

#[derive(Debug, Clone, Default)]
pub(crate) struct HostCounters {
    read_requests: u64,
    read_bytes: u64,
    pub(crate) write_requests: u64,
    pub(crate) write_bytes: u64,
    flushes: u64,
    fua: u64,
    discards: u64,
    discard_bytes: u64,
    packed: u64,
    reliable_atomic_commands: u64,
    reliable_atomic_pages: u64,
    rmw_reads: u64,
    cache_hits: u64,
    cache_misses: u64,
    cache_write_hits: u64,
}

/// What is left after a power cut: the medium, and when power went.
#[derive(Debug)]
pub struct PowerCut<M> {
    pub medium: M,
    pub at_ns: u64,
}

/// An emulated eMMC over medium `M`.
#[derive(Debug)]
pub struct Emmc<M: Medium> {
    profile: Profile,
    pub(crate) ftl: Ftl<M>,
    pub(crate) cache: WriteCache,
    /// The command queue: when each command arrives and starts (`queue`).
    pub(crate) queue: CommandQueue,
    /// The host clock: the latest completion of any command (or idle time, `advance_to`).
    now_ns: u64,
    last_command: CommandTimes,
    /// Commands started (admitted to the queue).
    started: u64,
    start_ns: u64,
    capacity_bytes: u64,
    pub(crate) page_bytes: u64,
    pub(crate) sector_bytes: u64,
    pub(crate) full_mask: u64,
    pub(crate) store_data: bool,
    watermark_pages: usize,
    failed: bool,
    pub(crate) host: HostCounters,
    pub(crate) lat: Latencies,
    baseline_ftl: FtlStats,
    baseline_busy_ns: u64,
    /// Fault injection: power goes after this many more commands (`cut_power_after`).
    cut_after: Option<u64>,
    /// While logging (`gc_commands` is `Some`): commands started since `log_gc_commands`, the
    /// ones among them that ran garbage collection, and the GC count at the last command start.
    commands: u64,
    gc_commands: Option<Vec<u64>>,
    gc_seen: u64,
    /// Torn pages and blocks found by the recovery that powered this device on.
    recovery_torn: (u64, u64),
    /// When the last host command started: the earliest instant `power_loss_at` can cut.
    command_start_ns: u64,
    pub(crate) page_buf: Vec<u8>,
    merge_buf: Vec<u8>,
    /// A NAND page's worth of unit buffers, for the units programmed together.
    group_buf: Vec<u8>,
    /// Mapping units per NAND page.
    slots_per_page: usize,
}

/// One mapping unit to program: the sectors `mask` of it come from cache slot `src` and from
/// `extra` (`(offset in the unit, bytes)`, the request's own), the rest from flash.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UnitWrite<'a> {
    pub(crate) lpn: u32,
    pub(crate) mask: u64,
    pub(crate) src: Option<u32>,
    pub(crate) extra: Option<(usize, &'a [u8])>,
}

impl Emmc<NandMedium> {
    /// A freshly formatted device of `profile` on emulated NAND in memory.
    pub fn new(profile: &Profile) -> Result<Emmc<NandMedium>, DeviceError> {
        crate::memory_budget::check(profile)?;
        Emmc::format(NandMedium::for_profile(profile), profile)
    }
}

impl<M: Medium> Emmc<M> {
    fn assemble(ftl: Ftl<M>, profile: &Profile, now_ns: u64) -> Emmc<M> {
        let g = &profile.geometry;
        // The device's "page" is the FTL's mapping unit (the NAND page unless the profile maps
        // sub-page units): requests split into it, the cache holds it.
        let unit = ftl.medium().slot_bytes();
        let page_bytes = u64::from(unit);
        let slots_per_page = ftl.medium().slots_per_page() as usize;
        let store_data = ftl.medium().data_mode() == DataMode::Full;
        let capacity_pages = (profile.cache.capacity_bytes / page_bytes) as usize;
        let spp = unit / g.sector_bytes;
        let full_mask = if spp == 64 {
            u64::MAX
        } else {
            (1u64 << spp) - 1
        };
        let pb = if store_data { unit as usize } else { 0 };
        Emmc {
            capacity_bytes: ftl.logical_pages() * page_bytes,
            cache: WriteCache::new(capacity_pages, unit as usize, store_data),
            queue: CommandQueue::new(profile.timing.queue_depth, now_ns),
            watermark_pages: capacity_pages * profile.cache.destage_watermark_percent as usize
                / 100,
            page_bytes,
            sector_bytes: u64::from(g.sector_bytes),
            full_mask,
            store_data,
            now_ns,
            last_command: CommandTimes::default(),
            started: 0,
            start_ns: now_ns,
            failed: false,
            host: HostCounters::default(),
            lat: Latencies::default(),
            baseline_ftl: ftl.stats().clone(),
            baseline_busy_ns: ftl.medium().busy_ns(),
            cut_after: None,
            commands: 0,
            gc_commands: None,
            gc_seen: 0,
            recovery_torn: (0, 0),
            command_start_ns: now_ns,
            page_buf: vec![0; pb],
            merge_buf: vec![0; pb],
            group_buf: vec![0; pb * slots_per_page],
            slots_per_page,
            profile: profile.clone(),
            ftl,
        }
    }

    /// Format `medium` as a new device of `profile` (erases whatever it holds).
    pub fn format(medium: M, profile: &Profile) -> Result<Emmc<M>, DeviceError> {
        let ftl = Ftl::format(medium, profile.ftl.clone(), profile.logical_pages())?;
        Ok(Self::assemble(ftl, profile, 0))
    }

    /// Power the device on after a cut: rebuild the mapping from the medium.
    pub fn recover(
        cut: PowerCut<M>,
        profile: &Profile,
    ) -> Result<(Emmc<M>, RecoveryReport), DeviceError> {
        let (ftl, report) = Ftl::recover(
            cut.medium,
            profile.ftl.clone(),
            profile.logical_pages(),
            cut.at_ns,
        )?;
        let now = cut.at_ns + report.modeled_ns;
        let mut dev = Self::assemble(ftl, profile, now);
        dev.recovery_torn = (report.torn_pages, report.torn_erase_blocks);
        Ok((dev, report))
    }

    /// Cut power `after_ns` after the host clock: the cache is lost, NAND commands under way are
    /// torn or undone (`seed` picks the torn bytes).
    pub fn power_loss(self, after_ns: u64, seed: u64) -> PowerCut<M> {
        let at_ns = self.now_ns + after_ns;
        let mut medium = self.ftl.into_medium();
        medium.power_loss(at_ns, seed);
        PowerCut { medium, at_ns }
    }

    /// Cut power at `at_ns`, which may lie inside the last host command (from its start on):
    /// what the command had not yet programmed never happened, its programs under way are torn,
    /// and its map writes not yet complete leave the previous ones. This is the one way to cut
    /// *inside* a command; `power_loss` cuts after the last completion.
    ///
    /// # Panics
    /// If `at_ns` is before the last command started (the medium no longer knows what was
    /// under way then).
    pub fn power_loss_at(self, at_ns: u64, seed: u64) -> PowerCut<M> {
        assert!(
            at_ns >= self.command_start_ns,
            "power_loss_at({at_ns}) before the last command started ({})",
            self.command_start_ns
        );
        let mut medium = self.ftl.into_medium();
        medium.power_loss(at_ns, seed);
        PowerCut { medium, at_ns }
    }

    /// When the last host command started (simulated ns).
    pub fn command_start_ns(&self) -> u64 {
        self.command_start_ns
    }

    /// Shut down cleanly: flush, then hand the medium back (to save an image).
    pub fn close(mut self) -> Result<M, DeviceError> {
        self.flush()?;
        Ok(self.ftl.into_medium())
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    pub fn ftl(&self) -> &Ftl<M> {
        &self.ftl
    }

    /// The host clock: completion of the last command, in simulated ns.
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Let the host clock run to `t_ns` (idle time between requests): no command arrives
    /// before it. After `idle_destage_after_ns` of idleness the device programs its dirty pages
    /// in the background. Refused beyond [`MAX_CLOCK_NS`].
    pub fn advance_to(&mut self, t_ns: u64) -> Result<(), DeviceError> {
        if t_ns > MAX_CLOCK_NS {
            return Err(DeviceError::ClockBeyond {
                t_ns,
                max_ns: MAX_CLOCK_NS,
            });
        }
        self.queue.hold_until(t_ns);
        if t_ns <= self.now_ns {
            return Ok(());
        }
        let idle = self.profile.cache.idle_destage_after_ns;
        if idle > 0 && t_ns - self.now_ns >= idle && self.cache.dirty_pages() > 0 {
            let at = self.now_ns + idle;
            self.guard(|d| {
                while d.cache.dirty_pages() > 0 {
                    d.destage_oldest(at)?;
                }
                Ok(())
            })?;
        }
        self.now_ns = t_ns;
        Ok(())
    }

    /// The next commands come from `issuer` (`BlockDevice::set_issuer`).
    pub fn set_issuer(&mut self, issuer: u32) {
        self.queue.set_issuer(issuer);
    }

    /// The next command arrives at `t_ns` (or as soon after as the queue's rules allow),
    /// whoever issued it: a replay that knows what each request waited for.
    pub fn arrive_at(&mut self, t_ns: u64) {
        self.queue.arrive_at(t_ns);
    }

    /// Tasks the device holds at once (`timing.queue_depth`).
    pub fn queue_depth(&self) -> u32 {
        self.queue.depth()
    }

    /// When the next command would arrive (`queue`, rule 1).
    pub fn next_arrival_ns(&self) -> u64 {
        self.queue.next_arrival_ns()
    }

    /// Commands started since the device was made or powered on.
    pub fn commands_started(&self) -> u64 {
        self.started
    }

    /// Start counting afresh (after preconditioning): counters and latencies cover what
    /// follows.
    pub fn reset_counters(&mut self) {
        self.host = HostCounters::default();
        self.lat = Latencies::default();
        self.baseline_ftl = self.ftl.stats().clone();
        self.baseline_busy_ns = self.ftl.medium().busy_ns();
        self.start_ns = self.now_ns;
    }

    /// Heap bytes held by the model per logical page (mapping, checkpoint, OOB areas, block
    /// tables, cache bookkeeping), excluding stored page data.
    pub fn bytes_per_logical_page(&self) -> f64 {
        let total = self.ftl.heap_bytes()
            + self.ftl.medium().metadata_heap_bytes()
            + self.cache.heap_bytes();
        total as f64 / self.ftl.logical_pages() as f64
    }

    pub(crate) fn xfer_ns(&self, bytes: u64) -> u64 {
        Timing::transfer_ns(bytes, self.profile.timing.host_bytes_per_s)
    }

    pub(crate) fn check_range(&self, offset_bytes: u64, len_bytes: u64) -> Result<(), DeviceError> {
        if self.failed {
            return Err(DeviceError::Failed);
        }
        if len_bytes == 0 {
            return Err(DeviceError::EmptyRequest);
        }
        if !offset_bytes.is_multiple_of(self.sector_bytes)
            || !len_bytes.is_multiple_of(self.sector_bytes)
        {
            return Err(DeviceError::Misaligned {
                offset_bytes,
                len_bytes,
                sector_bytes: self.sector_bytes as u32,
            });
        }
        if offset_bytes
            .checked_add(len_bytes)
            .is_none_or(|end| end > self.capacity_bytes)
        {
            return Err(DeviceError::BeyondDevice {
                offset_bytes,
                len_bytes,
                capacity_bytes: self.capacity_bytes,
            });
        }
        Ok(())
    }

    /// Run `f`; an FTL or medium error marks the device failed (its state is no longer trusted).
    pub(crate) fn guard<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, DeviceError>,
    ) -> Result<T, DeviceError> {
        let r = f(self);
        if let Err(DeviceError::Ftl(e)) = &r
            && !e.is_refusal()
        {
            self.failed = true;
        }
        r
    }

    /// Split `[offset, offset+len)` into `(lpn, byte offset in page, byte offset in request,
    /// length, sector mask)`.
    pub(crate) fn pages(
        &self,
        offset: u64,
        len: u64,
    ) -> impl Iterator<Item = (u32, usize, usize, usize, u64)> + use<M> {
        let page = self.page_bytes;
        let sector = self.sector_bytes;
        let full = self.full_mask;
        let mut pos = offset;
        let end = offset + len;
        std::iter::from_fn(move || {
            if pos >= end {
                return None;
            }
            let lpn = pos / page;
            let in_page = pos % page;
            let n = (page - in_page).min(end - pos);
            let first = in_page / sector;
            let count = n / sector;
            assert!(
                count >= 1
                    && in_page.is_multiple_of(sector)
                    && n.is_multiple_of(sector)
                    && lpn <= u64::from(u32::MAX),
                "a request splits into whole sectors of a page: pos {pos}, {n} bytes at {in_page} in page {lpn}, sector {sector}"
            );
            let mask = if count == 64 {
                full
            } else {
                ((1u64 << count) - 1) << first
            };
            let item = (
                lpn as u32,
                in_page as usize,
                (pos - offset) as usize,
                n as usize,
                mask,
            );
            pos += n;
            Some(item)
        })
    }

    /// Assemble unit `u` in `buf` (one unit, or empty without data): the sectors it covers
    /// from its cache slot and the request, the rest read from flash when it is only partly
    /// covered. Returns when it is ready.
    fn merge_unit(
        &mut self,
        u: &UnitWrite<'_>,
        buf: &mut [u8],
        issue_ns: u64,
    ) -> Result<u64, DeviceError> {
        let mut t = issue_ns;
        if u.mask != self.full_mask {
            if self.ftl.is_mapped(Lpn(u.lpn)) {
                if let Some(done) = self.ftl.read(Lpn(u.lpn), buf, issue_ns)? {
                    t = done;
                }
                self.host.rmw_reads += 1;
            } else {
                buf.fill(0);
            }
        }
        if self.store_data {
            let sb = self.sector_bytes as usize;
            if let Some(slot) = u.src {
                let data = self.cache.slot_data(slot);
                let mut m = u.mask;
                while m != 0 {
                    let i = m.trailing_zeros() as usize;
                    m &= m - 1;
                    buf[i * sb..(i + 1) * sb].copy_from_slice(&data[i * sb..(i + 1) * sb]);
                }
            }
            if let Some((off, bytes)) = u.extra {
                buf[off..off + bytes.len()].copy_from_slice(bytes);
            }
        }
        Ok(t)
    }

    /// Program `units`, a NAND page's worth per program (sub-page mapping packs them; with
    /// the unit the page, one program each), each group once its units are assembled; returns
    /// when the last program completes.
    pub(crate) fn program_units(
        &mut self,
        units: &[UnitWrite<'_>],
        issue_ns: u64,
    ) -> Result<u64, DeviceError> {
        let mut buf = std::mem::take(&mut self.group_buf);
        let r = self.program_units_in(units, &mut buf, issue_ns);
        self.group_buf = buf;
        r
    }

    fn program_units_in(
        &mut self,
        units: &[UnitWrite<'_>],
        buf: &mut [u8],
        issue_ns: u64,
    ) -> Result<u64, DeviceError> {
        let ub = if self.store_data {
            self.page_bytes as usize
        } else {
            0
        };
        let mut done = issue_ns;
        for group in units.chunks(self.slots_per_page) {
            let mut ready = issue_ns;
            for (i, u) in group.iter().enumerate() {
                ready = ready.max(self.merge_unit(u, &mut buf[i * ub..(i + 1) * ub], issue_ns)?);
            }
            const MAX: usize = crate::config::MAX_SLOTS_PER_PAGE as usize;
            let mut lpns = [Lpn(0); MAX];
            let mut data: [&[u8]; MAX] = [&[]; MAX];
            for (i, u) in group.iter().enumerate() {
                lpns[i] = Lpn(u.lpn);
                data[i] = &buf[i * ub..(i + 1) * ub];
            }
            let n = group.len();
            done = done.max(self.ftl.write_many(&lpns[..n], &data[..n], ready)?);
        }
        Ok(done)
    }

    /// Program the oldest dirty pages (a NAND page's worth) in the background; their slots
    /// are busy until done.
    fn destage_oldest(&mut self, issue_ns: u64) -> Result<bool, DeviceError> {
        const MAX: usize = crate::config::MAX_SLOTS_PER_PAGE as usize;
        let none = UnitWrite {
            lpn: 0,
            mask: 0,
            src: None,
            extra: None,
        };
        let mut units = [none; MAX];
        let mut n = 0;
        while n < self.slots_per_page {
            let Some(Evicted { lpn, mask, slot }) = self.cache.take_oldest() else {
                break;
            };
            units[n] = UnitWrite {
                lpn,
                mask,
                src: Some(slot),
                extra: None,
            };
            n += 1;
        }
        if n == 0 {
            return Ok(false);
        }
        let r = self.program_units(&units[..n], issue_ns);
        for u in &units[..n] {
            if let Some(slot) = u.src {
                self.cache.free_slot(slot);
            }
        }
        let done = r?;
        for _ in 0..n {
            self.cache.hold_until(done);
        }
        Ok(true)
    }

    /// Wait (from `t`) until the cache has a free slot; returns the new time.
    fn make_room(&mut self, mut t: u64) -> Result<u64, DeviceError> {
        self.cache.release(t);
        while self.cache.is_full() {
            if self.cache.dirty_pages() > 0
                && self.cache.dirty_pages() >= self.cache.capacity_pages() / 2
            {
                self.destage_oldest(t)?;
                continue;
            }
            match self.cache.pop_earliest_inflight() {
                Some(done) => t = t.max(done),
                None => {
                    self.destage_oldest(t)?;
                }
            }
            self.cache.release(t);
        }
        Ok(t)
    }

    /// Fault injection for crash tests: after `n` more commands the device stops (every later
    /// command fails with `DeviceError::Failed`, nothing more reaches the medium), as if power
    /// went between two commands; `power_loss` then decides what was in flight. `None` disarms.
    pub fn cut_power_after(&mut self, n: Option<u64>) {
        self.cut_after = n;
    }

    /// Start (`true`) or stop logging which commands run garbage collection, numbered from 0 at
    /// this call as `cut_power_after` counts them; a crash test can then cut right after them.
    pub fn log_gc_commands(&mut self, on: bool) {
        self.commands = 0;
        self.gc_seen = self.ftl.stats().gc_runs;
        self.gc_commands = on.then(Vec::new);
    }

    /// The commands that ran garbage collection since `log_gc_commands(true)` (the command under
    /// way included once the next one starts).
    pub fn gc_commands(&self) -> &[u64] {
        self.gc_commands.as_deref().unwrap_or(&[])
    }

    /// Commands left before the armed power cut (`None`: disarmed). A run armed with a count
    /// larger than it needs and read afterwards counts its own commands, so that later runs of
    /// the same work can cut among them.
    pub fn power_cut_countdown(&self) -> Option<u64> {
        self.cut_after
    }

    /// Commands executed (by the fault-injection count) are numbered here.
    fn tick(&mut self) -> Result<(), DeviceError> {
        if self.failed {
            return Err(DeviceError::Failed);
        }
        match self.cut_after {
            Some(0) => {
                self.failed = true;
                Err(DeviceError::Failed)
            }
            Some(n) => {
                self.cut_after = Some(n - 1);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Start a host command of `kind`: count it for fault injection (a cut device refuses it),
    /// admit it to the queue, retire the medium's work finished by its start, and return its
    /// arrival and start.
    pub(crate) fn start_command(&mut self, kind: CommandKind) -> Result<Admitted, DeviceError> {
        self.tick()?;
        if let Some(log) = &mut self.gc_commands {
            let gc = self.ftl.stats().gc_runs;
            if gc > self.gc_seen && self.commands > 0 {
                log.push(self.commands - 1);
            }
            self.gc_seen = gc;
            self.commands += 1;
        }
        let admitted = self.queue.begin(kind);
        self.started += 1;
        let start = admitted.start_ns;
        self.ftl.medium_mut().retire(start);
        self.command_start_ns = start;
        Ok(admitted)
    }

    /// The command's pipelined latency, then its controller work (its overhead), begun at its
    /// start: returns when done.
    pub(crate) fn overhead_done(&mut self, start: u64) -> u64 {
        let t = &self.profile.timing;
        let (latency, overhead) = (t.command_latency_ns, t.command_overhead_ns);
        self.queue.controller(start + latency, overhead)
    }

    /// The command's overhead and then its `bytes` over the host bus: returns when the data is
    /// in the device.
    pub(crate) fn command_and_data(&mut self, start: u64, bytes: u64) -> u64 {
        let t = self.overhead_done(start);
        let xfer = self.xfer_ns(bytes);
        self.queue.bus(t, xfer)
    }

    /// The command of `kind` admitted as `admitted` completed at `done`: the queue and the
    /// host clock learn it.
    pub(crate) fn finish(&mut self, kind: CommandKind, admitted: Admitted, done: u64) {
        self.queue.end(kind, done);
        self.now_ns = self.now_ns.max(done);
        self.last_command = CommandTimes {
            arrival_ns: admitted.arrival_ns,
            start_ns: admitted.start_ns,
            done_ns: done,
        };
    }

    /// When the last command arrived, started and completed.
    pub fn last_command(&self) -> CommandTimes {
        self.last_command
    }

    /// Account a completed read of `bytes` admitted as `admitted` that ends at `done`.
    pub(crate) fn finish_read(&mut self, admitted: Admitted, done: u64, bytes: usize) {
        self.host.read_requests += 1;
        self.host.read_bytes += bytes as u64;
        self.lat.read.record(done - admitted.arrival_ns);
        self.finish(CommandKind::Queued, admitted, done);
    }

    fn write_cached(
        &mut self,
        offset_bytes: u64,
        data: &[u8],
        mut t: u64,
    ) -> Result<u64, DeviceError> {
        let write_through_partial = self.profile.cache.partial_page_write_through;
        let parts: Vec<_> = self.pages(offset_bytes, data.len() as u64).collect();
        for (lpn, in_page, in_req, n, mask) in parts {
            let bytes = if self.store_data {
                &data[in_req..in_req + n]
            } else {
                &[][..]
            };
            if self.cache.capacity_pages() == 0
                || (write_through_partial
                    && mask != self.full_mask
                    && self.cache.lookup(lpn).is_none())
            {
                let one = UnitWrite {
                    lpn,
                    mask,
                    src: None,
                    extra: Some((in_page, bytes)),
                };
                t = self.program_units(&[one], t)?;
                continue;
            }
            if self.cache.lookup(lpn).is_none() {
                t = self.make_room(t)?;
            }
            if self.cache.put(lpn, in_page, bytes, mask) {
                self.host.cache_write_hits += 1;
            }
        }
        while self.cache.dirty_pages() > self.watermark_pages {
            self.destage_oldest(t)?;
        }
        Ok(t)
    }

    fn write_durable(
        &mut self,
        offset_bytes: u64,
        data: &[u8],
        t: u64,
    ) -> Result<u64, DeviceError> {
        let parts: Vec<_> = self.pages(offset_bytes, data.len() as u64).collect();
        let units: Vec<UnitWrite<'_>> = parts
            .into_iter()
            .map(|(lpn, in_page, in_req, n, mask)| {
                let bytes = if self.store_data {
                    &data[in_req..in_req + n]
                } else {
                    &[][..]
                };
                // Older cached sectors of the unit go with it.
                let cached = self.cache.take(lpn);
                UnitWrite {
                    lpn,
                    mask: mask | cached.as_ref().map_or(0, |ev| ev.mask),
                    src: cached.map(|ev| ev.slot),
                    extra: Some((in_page, bytes)),
                }
            })
            .collect();
        let covered: usize = units
            .iter()
            .map(|u| u.extra.map_or(0, |(_, b)| b.len()))
            .sum();
        assert!(
            !self.store_data || covered == data.len(),
            "a durable write programs every byte of its request: {covered} of {}",
            data.len()
        );
        let r = self.program_units(&units, t);
        for u in &units {
            if let Some(slot) = u.src {
                self.cache.free_slot(slot);
            }
        }
        r
    }

    fn do_write(
        &mut self,
        offset_bytes: u64,
        data: &[u8],
        flags: WriteFlags,
        t: u64,
    ) -> Result<u64, DeviceError> {
        if flags.durable() {
            self.count_write(data.len() as u64);
            self.write_durable(offset_bytes, data, t)
        } else {
            self.host.write_requests += 1;
            self.host.write_bytes += data.len() as u64;
            self.write_cached(offset_bytes, data, t)
        }
    }

    /// Count one durable (FUA or reliable) host write request of `bytes`.
    fn count_write(&mut self, bytes: u64) {
        self.host.write_requests += 1;
        self.host.write_bytes += bytes;
        self.host.fua += 1;
    }

    fn check_data(&self, offset_bytes: u64, len: usize) -> Result<(), DeviceError> {
        self.check_range(offset_bytes, len as u64)
    }

    fn record_write_latency(&mut self, flags: WriteFlags, ns: u64) {
        if flags.durable() {
            self.lat.fua_write.record(ns);
        } else {
            self.lat.write.record(ns);
        }
    }

    fn ftl_delta(&self) -> FtlStats {
        let s = self.ftl.stats();
        let b = &self.baseline_ftl;
        FtlStats {
            host_programs: s.host_programs - b.host_programs,
            gc_copies: s.gc_copies - b.gc_copies,
            nand_reads: s.nand_reads - b.nand_reads,
            erases: s.erases - b.erases,
            map_programs: s.map_programs - b.map_programs,
            checkpoints: s.checkpoints - b.checkpoints,
            trims: s.trims - b.trims,
            gc_runs: s.gc_runs - b.gc_runs,
            commits: s.commits - b.commits,
            aborts: s.aborts - b.aborts,
            commit_table_programs: s.commit_table_programs - b.commit_table_programs,
            map_erases: s.map_erases - b.map_erases,
            page_programs: s.page_programs - b.page_programs,
            padding_slots: s.padding_slots - b.padding_slots,
        }
    }
}

impl<M: Medium> BlockDevice for Emmc<M> {
    fn geometry(&self) -> DeviceGeometry {
        DeviceGeometry {
            capacity_bytes: self.capacity_bytes,
            sector_bytes: self.sector_bytes as u32,
            optimal_write_bytes: self.page_bytes as u32,
        }
    }

    fn read(&mut self, offset_bytes: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.check_range(offset_bytes, buf.len() as u64)?;
        let admitted = self.start_command(CommandKind::Queued)?;
        let t = self.overhead_done(admitted.start_ns);
        let done = self.guard(|d| {
            let mut ready = t;
            let parts: Vec<_> = d.pages(offset_bytes, buf.len() as u64).collect();
            let sb = d.sector_bytes as usize;
            for (lpn, in_page, in_req, n, mask) in parts {
                let cached = d.cache.lookup(lpn);
                if let Some((slot, cmask)) = cached
                    && cmask & mask == mask
                {
                    d.host.cache_hits += 1;
                    if d.store_data {
                        buf[in_req..in_req + n]
                            .copy_from_slice(&d.cache.slot_data(slot)[in_page..in_page + n]);
                    }
                    continue;
                }
                d.host.cache_misses += 1;
                let mut page = std::mem::take(&mut d.page_buf);
                let r = d.ftl.read(Lpn(lpn), &mut page, t);
                if let Ok(Some(done)) = r {
                    ready = ready.max(done);
                }
                if let Err(e) = r {
                    d.page_buf = page;
                    return Err(e.into());
                }
                if d.store_data {
                    if let Some((slot, cmask)) = cached {
                        let data = d.cache.slot_data(slot);
                        let mut m = cmask;
                        while m != 0 {
                            let i = m.trailing_zeros() as usize;
                            m &= m - 1;
                            page[i * sb..(i + 1) * sb].copy_from_slice(&data[i * sb..(i + 1) * sb]);
                        }
                    }
                    buf[in_req..in_req + n].copy_from_slice(&page[in_page..in_page + n]);
                } else {
                    buf[in_req..in_req + n].fill(0);
                }
                d.page_buf = page;
            }
            let xfer = d.xfer_ns(buf.len() as u64);
            Ok(d.queue.bus(ready, xfer))
        })?;
        self.finish_read(admitted, done, buf.len());
        Ok(())
    }

    fn write(
        &mut self,
        offset_bytes: u64,
        data: &[u8],
        flags: WriteFlags,
    ) -> Result<(), DeviceError> {
        self.check_data(offset_bytes, data.len())?;
        self.check_not_in_txn(offset_bytes, data.len() as u64)?;
        let admitted = self.start_command(CommandKind::Queued)?;
        let t = self.command_and_data(admitted.start_ns, data.len() as u64);
        let bytes_before = self.host.write_bytes;
        let done = if self.reliable_atomic(flags) {
            self.count_write(data.len() as u64);
            let one = [PackedWrite { offset_bytes, data }];
            self.guard(|d| d.write_reliable_atomic(&one, t))?
        } else {
            self.guard(|d| d.do_write(offset_bytes, data, flags, t))?
        };
        assert_eq!(
            self.host.write_bytes - bytes_before,
            data.len() as u64,
            "a write counts its bytes once"
        );
        assert!(
            done >= admitted.arrival_ns,
            "a write completes after it arrives: done {done} < arrival {}",
            admitted.arrival_ns
        );
        self.record_write_latency(flags, done - admitted.arrival_ns);
        self.finish(CommandKind::Queued, admitted, done);
        Ok(())
    }

    fn write_packed(
        &mut self,
        writes: &[PackedWrite<'_>],
        flags: WriteFlags,
    ) -> Result<(), DeviceError> {
        for w in writes {
            self.check_data(w.offset_bytes, w.data.len())?;
            self.check_not_in_txn(w.offset_bytes, w.data.len() as u64)?;
        }
        if writes.is_empty() {
            return Err(DeviceError::EmptyRequest);
        }
        let admitted = self.start_command(CommandKind::Queued)?;
        let total: u64 = writes.iter().map(|w| w.data.len() as u64).sum();
        let t = self.command_and_data(admitted.start_ns, total);
        let bytes_before = self.host.write_bytes;
        let done = if self.reliable_atomic(flags) {
            for w in writes {
                self.count_write(w.data.len() as u64);
            }
            self.guard(|d| d.write_reliable_atomic(writes, t))?
        } else {
            self.guard(|d| {
                let mut done = t;
                for w in writes {
                    done = done.max(d.do_write(w.offset_bytes, w.data, flags, t)?);
                }
                Ok(done)
            })?
        };
        assert_eq!(
            self.host.write_bytes - bytes_before,
            total,
            "a packed write of {} writes counts its bytes once",
            writes.len()
        );
        self.host.packed += 1;
        self.record_write_latency(flags, done - admitted.arrival_ns);
        self.finish(CommandKind::Queued, admitted, done);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), DeviceError> {
        let admitted = self.start_command(CommandKind::Barrier)?;
        let t = self.overhead_done(admitted.start_ns);
        let done = self.guard(|d| {
            while d.destage_oldest(t)? {}
            let t = t.max(d.ftl.program_horizon_ns());
            d.cache.clear_inflight();
            Ok(d.ftl.flush_checkpoint(t)?)
        })?;
        self.host.flushes += 1;
        self.lat.flush.record(done - admitted.arrival_ns);
        self.finish(CommandKind::Barrier, admitted, done);
        Ok(())
    }

    fn discard(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), DeviceError> {
        self.check_range(offset_bytes, len_bytes)?;
        self.check_not_in_txn(offset_bytes, len_bytes)?;
        let admitted = self.start_command(CommandKind::Barrier)?;
        let done = self.overhead_done(admitted.start_ns);
        let full = self.full_mask;
        let parts: Vec<_> = self.pages(offset_bytes, len_bytes).collect();
        self.guard(|d| {
            for (lpn, _, _, _, mask) in parts {
                if mask != full {
                    continue;
                }
                if let Some(ev) = d.cache.take(lpn) {
                    d.cache.free_slot(ev.slot);
                }
                d.ftl.trim(Lpn(lpn))?;
            }
            Ok(())
        })?;
        self.host.discards += 1;
        self.host.discard_bytes += len_bytes;
        self.lat.discard.record(done - admitted.arrival_ns);
        self.finish(CommandKind::Barrier, admitted, done);
        Ok(())
    }

    fn set_issuer(&mut self, issuer: u32) {
        Emmc::set_issuer(self, issuer);
    }

    fn issuer_ready_ns(&self, issuer: u32) -> Option<u64> {
        Some(self.queue.ready_ns(issuer))
    }

    fn counters(&self) -> Counters {
        let s = self.ftl_delta();
        // Programs are of NAND pages; reads, host programs and GC copies of mapping units.
        let page = u64::from(self.profile.geometry.page_bytes);
        let unit = self.page_bytes;
        let nand_programs = s.page_programs + s.map_programs + s.commit_table_programs;
        let nand_program_bytes = nand_programs * page;
        let spp = u64::from(self.ftl.medium().slots_per_page());
        assert_eq!(
            s.host_programs + s.gc_copies + s.padding_slots,
            s.page_programs * spp,
            "every slot of a data page programmed is a host unit, a GC copy or padding \
             ({} host, {} GC, {} padding, {} pages of {spp})",
            s.host_programs,
            s.gc_copies,
            s.padding_slots,
            s.page_programs
        );
        let spb = u64::from(self.ftl.medium().slots_per_block());
        assert!(
            s.gc_copies <= s.gc_runs * spb && self.now_ns >= self.start_ns,
            "GC copies at most a victim's slots per run ({} copies, {} runs of {spb}); \
             the clock runs forward (now {} ns, start {} ns)",
            s.gc_copies,
            s.gc_runs,
            self.now_ns,
            self.start_ns
        );
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let modeled_s = (self.now_ns - self.start_ns) as f64 / 1e9;
        let ops = (self.host.read_requests + self.host.write_requests) as f64;
        let wear = self.ftl.wear();
        Counters {
            host_write_bytes: self.host.write_bytes,
            nand_program_bytes,
            erases: s.erases,
            map_erases: s.map_erases,
            gc_copies: s.gc_copies,
            gc_runs: s.gc_runs,
            gc_validity: ratio(
                s.gc_copies as f64,
                (s.gc_runs * u64::from(self.ftl.medium().slots_per_block())) as f64,
            ),
            waf: ratio(nand_program_bytes as f64, self.host.write_bytes as f64),
            flushes: self.host.flushes,
            fua: self.host.fua,
            modeled_s,
            modeled_ops_per_sec: ratio(ops, modeled_s),
            host_read_requests: self.host.read_requests,
            host_read_bytes: self.host.read_bytes,
            host_write_requests: self.host.write_requests,
            discards: self.host.discards,
            discard_bytes: self.host.discard_bytes,
            packed_commands: self.host.packed,
            reliable_atomic_commands: self.host.reliable_atomic_commands,
            reliable_atomic_pages: self.host.reliable_atomic_pages,
            nand_reads: s.nand_reads,
            nand_read_bytes: s.nand_reads * unit,
            nand_programs,
            host_page_programs: s.host_programs,
            padding_slots: s.padding_slots,
            map_page_programs: s.map_programs,
            checkpoints: s.checkpoints,
            txn_commits: s.commits,
            txn_aborts: s.aborts,
            commit_table_programs: s.commit_table_programs,
            rmw_reads: self.host.rmw_reads,
            cache_hits: self.host.cache_hits,
            cache_misses: self.host.cache_misses,
            cache_write_hits: self.host.cache_write_hits,
            nand_busy_s: (self.ftl.medium().busy_ns() - self.baseline_busy_ns) as f64 / 1e9,
            ftl_waf: ratio(nand_program_bytes as f64, (s.host_programs * unit) as f64),
            wear_min_erases: wear.min_erases,
            wear_max_erases: wear.max_erases,
            wear_mean_erases: wear.mean_erases,
            recovery_torn_pages: self.recovery_torn.0,
            recovery_torn_erase_blocks: self.recovery_torn.1,
            latency: self.lat.summaries(),
        }
    }
}
