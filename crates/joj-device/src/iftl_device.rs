//! i-FTL as a device the layers above call (the flash file layer passes each write's data tag
//! down): `begin → tid`, `write(tid, lpn, kind, data)`, `read`, `commit(tid)` (durable on
//! return), `abort(tid)`, `power_cut`, `recover` — with host command timing from the profile.
//!
//! Timing: commands arrive and start as the command queue decides (`queue`, the profile's
//! `queue_depth`; the i-FTL paper's board has none by default); every command pays the
//! profile's command overhead on the controller; a write also the host transfer.
//! A transactional write returns once its data is in the device (its page is programmed and
//! its mapping stored in the background, like a cache destage); a plain write returns when its
//! page and mapping are persistent; `commit` returns when its commit store is persistent,
//! which the NVM's ordering puts after every earlier store of the transaction, and each of
//! those after its page's program — the durability point. The volatile write cache of `Emmc`
//! is not used: i-FTL's writes go straight to the FTL. `block` puts the device behind the
//! `BlockDevice` and `TransactionalDevice` contracts.

mod block;

use serde::{Deserialize, Serialize};

use crate::addr::Lpn;
use crate::config::{DataMode, Profile, Timing};
use crate::error::{DeviceError, FtlError, MediumError};
use crate::iftl::{IFtl, IftlRecoveryReport, IftlStats, WriteKind};
use crate::medium::Medium;
use crate::nand::NandMedium;
use crate::nvm::{Nvm, NvmStats};
use crate::queue::{CommandKind, CommandQueue};
use crate::xftl::Tid;

/// What is left after a power cut: the medium, the NVM, and when power went.
#[derive(Debug)]
pub struct IftlPowerCut<M> {
    pub medium: M,
    pub nvm: Nvm,
    pub at_ns: u64,
}

/// Host commands served.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IftlHostCounters {
    pub begins: u64,
    pub writes: u64,
    pub write_bytes: u64,
    pub reads: u64,
    pub read_bytes: u64,
    pub commits: u64,
    pub aborts: u64,
}

/// An i-FTL device over medium `M`.
#[derive(Debug, Clone)]
pub struct IftlDevice<M: Medium> {
    profile: Profile,
    ftl: IFtl<M>,
    /// When each command arrives and starts (`queue`).
    queue: CommandQueue,
    /// The host clock: the latest completion of any command.
    now_ns: u64,
    store_data: bool,
    host: IftlHostCounters,
    flushes: u64,
    /// The FTL's counters and the clock when counting (re)started ([`Self::reset_counters`]).
    baseline: IftlStats,
    start_ns: u64,
    /// Whether every NAND command's and NVM store's undo record is kept, so that a power cut
    /// may fall at any instant of the run ([`Self::keep_cut_history`]); else each command
    /// forgets those complete when it starts, and a cut falls at or after the last command.
    keep_history: bool,
}

impl IftlDevice<NandMedium> {
    /// A new, formatted device of `profile` on emulated NAND. The profile's `iftl` section
    /// gives the NVM (its defaults when absent).
    pub fn new(profile: &Profile) -> Result<IftlDevice<NandMedium>, DeviceError> {
        profile.validate().map_err(|e| FtlError::GeometryTooSmall {
            reason: e.to_string(),
        })?;
        crate::memory_budget::check(profile)?;
        Self::format(NandMedium::for_profile(profile), profile)
    }
}

impl<M: Medium> IftlDevice<M> {
    pub fn format(medium: M, profile: &Profile) -> Result<IftlDevice<M>, DeviceError> {
        let cfg = profile.iftl.clone().unwrap_or_default();
        let ftl = IFtl::format(medium, cfg, &profile.ftl, profile.logical_pages())?;
        Ok(Self::assemble(ftl, profile, 0))
    }

    fn assemble(ftl: IFtl<M>, profile: &Profile, now_ns: u64) -> IftlDevice<M> {
        let baseline = ftl.stats().clone();
        IftlDevice {
            store_data: profile.data_mode == DataMode::Full,
            profile: profile.clone(),
            ftl,
            queue: CommandQueue::new(profile.timing.queue_depth, now_ns),
            now_ns,
            host: IftlHostCounters::default(),
            flushes: 0,
            baseline,
            start_ns: now_ns,
            keep_history: false,
        }
    }

    /// Keep the undo record of every command from now on, so that [`Self::power_cut`] may cut
    /// at any instant since (crash harnesses that run first and choose the instant after).
    /// Memory then grows with the run: a block's data for every erase, in `DataMode::Full`.
    pub fn keep_cut_history(&mut self) {
        self.keep_history = true;
    }

    /// A command of `kind` is admitted to the queue; unless the history is kept, what
    /// completed by its start can no longer be undone by a power cut and its undo record is
    /// dropped. Returns when its pipelined latency and its controller work (the command
    /// overhead) are done.
    fn start(&mut self, kind: CommandKind) -> u64 {
        let start = self.queue.begin(kind).start_ns;
        if !self.keep_history {
            self.ftl.retire(start);
        }
        let overhead = self.overhead_ns();
        let latency = self.profile.timing.command_latency_ns;
        self.queue.controller(start + latency, overhead)
    }

    /// `start` for a command that also moves `bytes` to the device: returns when they are in.
    fn start_with_data(&mut self, bytes: u64) -> u64 {
        let t = self.start(CommandKind::Queued);
        let xfer = self.xfer_ns(bytes);
        self.queue.bus(t, xfer)
    }

    /// The command of `kind` completed at `done`.
    fn finish(&mut self, kind: CommandKind, done: u64) {
        self.queue.end(kind, done);
        self.now_ns = self.now_ns.max(done);
    }

    /// The next commands come from `issuer` (`BlockDevice::set_issuer`).
    pub fn set_issuer(&mut self, issuer: u32) {
        self.queue.set_issuer(issuer);
    }

    /// Start counting afresh (after the file layer is formatted and the database loaded):
    /// `BlockDevice::counters` and `stats_since_reset` cover what follows.
    pub fn reset_counters(&mut self) {
        self.host = IftlHostCounters::default();
        self.flushes = 0;
        self.baseline = self.ftl.stats().clone();
        self.start_ns = self.now_ns;
    }

    /// The FTL's counters since the last [`Self::reset_counters`] (or the format).
    pub fn stats_since_reset(&self) -> IftlStats {
        self.ftl.stats().since(&self.baseline)
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The simulated host clock: when the last command returned.
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Let the host clock run to `ns` (think time between commands): no command arrives
    /// before it.
    pub fn advance_to(&mut self, ns: u64) {
        self.now_ns = self.now_ns.max(ns);
        self.queue.hold_until(ns);
    }

    pub fn logical_pages(&self) -> u64 {
        self.ftl.logical_pages()
    }

    pub fn page_bytes(&self) -> u32 {
        self.ftl.page_bytes()
    }

    pub fn stats(&self) -> &IftlStats {
        self.ftl.stats()
    }

    pub fn nvm_stats(&self) -> &NvmStats {
        self.ftl.nvm_stats()
    }

    pub fn host_counters(&self) -> &IftlHostCounters {
        &self.host
    }

    pub fn ftl(&self) -> &IFtl<M> {
        &self.ftl
    }

    pub fn ftl_mut(&mut self) -> &mut IFtl<M> {
        &mut self.ftl
    }

    fn overhead_ns(&self) -> u64 {
        self.profile.timing.command_overhead_ns
    }

    fn xfer_ns(&self, bytes: u64) -> u64 {
        Timing::transfer_ns(bytes, self.profile.timing.host_bytes_per_s)
    }

    fn check_page(&self, len: usize) -> Result<(), DeviceError> {
        let pb = self.page_bytes() as usize;
        if len != pb {
            return Err(FtlError::Medium(MediumError::BadDataLength {
                expected: pb,
                found: len,
            })
            .into());
        }
        Ok(())
    }

    /// Open a transaction.
    pub fn begin(&mut self) -> Result<Tid, DeviceError> {
        let t = self.start(CommandKind::Queued);
        let (tid, _) = self.ftl.begin(t)?;
        self.finish(CommandKind::Queued, t);
        self.host.begins += 1;
        Ok(tid)
    }

    /// Write one page of `kind` for `tid` (`None`: a plain write, persistent on return).
    pub fn write(
        &mut self,
        tid: Option<Tid>,
        lpn: Lpn,
        kind: WriteKind,
        data: &[u8],
    ) -> Result<(), DeviceError> {
        self.check_page(data.len())?;
        let t = self.start_with_data(data.len() as u64);
        let bytes = if self.store_data || kind == WriteKind::Metadata {
            data
        } else {
            &[][..]
        };
        let done = self.ftl.write(tid, lpn, kind, bytes, t)?;
        self.finish(CommandKind::Queued, if tid.is_some() { t } else { done });
        self.host.writes += 1;
        self.host.write_bytes += data.len() as u64;
        Ok(())
    }

    /// Update `bytes` at `offset_bytes` of metadata page `lpn` (in place in NVM when `tid`
    /// already owns the page).
    pub fn write_bytes(
        &mut self,
        tid: Option<Tid>,
        lpn: Lpn,
        offset_bytes: u32,
        bytes: &[u8],
    ) -> Result<(), DeviceError> {
        let t = self.start_with_data(bytes.len() as u64);
        let done = self.ftl.write_bytes(tid, lpn, offset_bytes, bytes, t)?;
        self.finish(CommandKind::Queued, if tid.is_some() { t } else { done });
        self.host.writes += 1;
        self.host.write_bytes += bytes.len() as u64;
        Ok(())
    }

    /// Read one page as `tid` sees it (`None`: the committed version).
    pub fn read(&mut self, tid: Option<Tid>, lpn: Lpn, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.check_page(buf.len())?;
        let t = self.start(CommandKind::Queued);
        let done = self.ftl.read(tid, lpn, buf, t)?;
        if !self.store_data {
            buf.fill(0);
        }
        let xfer = self.xfer_ns(buf.len() as u64);
        let end = self.queue.bus(done, xfer);
        self.finish(CommandKind::Queued, end);
        self.host.reads += 1;
        self.host.read_bytes += buf.len() as u64;
        Ok(())
    }

    /// Commit `tid`: durable when this returns.
    pub fn commit(&mut self, tid: Tid) -> Result<(), DeviceError> {
        let t = self.start(CommandKind::Queued);
        let done = self.ftl.commit(tid, t)?;
        self.finish(CommandKind::Queued, done);
        self.host.commits += 1;
        Ok(())
    }

    /// Abort `tid`: every page it wrote reads as before.
    pub fn abort(&mut self, tid: Tid) -> Result<(), DeviceError> {
        let t = self.start(CommandKind::Queued);
        let done = self.ftl.abort(tid, t)?;
        self.finish(CommandKind::Queued, done);
        self.host.aborts += 1;
        Ok(())
    }

    /// Cut power at `at_ns` (at or after the last command's start, or any instant since
    /// [`Self::keep_cut_history`]; work in flight then is torn or undone as `nand` and `nvm`
    /// describe; `seed` picks the torn bytes).
    pub fn power_cut(self, at_ns: u64, seed: u64) -> IftlPowerCut<M> {
        let (mut medium, mut nvm) = self.ftl.into_parts();
        medium.power_loss(at_ns, seed);
        nvm.power_loss(at_ns, seed);
        IftlPowerCut { medium, nvm, at_ns }
    }

    /// Power returns: Algorithm 1, then the device accepts commands at `at_ns` plus the
    /// modeled recovery time.
    pub fn recover(
        cut: IftlPowerCut<M>,
        profile: &Profile,
    ) -> Result<(IftlDevice<M>, IftlRecoveryReport), DeviceError> {
        let cfg = profile.iftl.clone().unwrap_or_default();
        let (ftl, report) = IFtl::recover(cut.medium, cut.nvm, cfg, &profile.ftl, cut.at_ns)?;
        let now = cut.at_ns + report.modeled_ns;
        Ok((Self::assemble(ftl, profile, now), report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_mapping_sub_page_units_is_refused() {
        let mut p = Profile::builtin("openssd-iftl").unwrap();
        p.ftl.mapping_unit_bytes = Some(p.geometry.page_bytes / 2);
        let e = IftlDevice::new(&p).unwrap_err();
        assert!(
            matches!(e, DeviceError::Ftl(FtlError::IftlNeedsPageMapping { .. })),
            "{e:?}"
        );
    }
}
