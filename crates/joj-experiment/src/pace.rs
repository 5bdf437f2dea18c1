//! Pacing: the host runs at the emulated device's speed (`joj bench --pace`).
//!
//! A traced run writes to a loop device in memory, so it finishes in a fraction of the time the
//! modeled device takes. Whatever the kernel does by the clock then happens as if the device
//! were that fast: ext4 takes an inode's new mtime once per clock tick (4 ms at HZ 250), so
//! `fsync` commits the inode to the journal only when a tick passed since the last change;
//! jbd2 commits on its own every 5 s; writeback wakes every 5 s. On the device the host would
//! see its own elapsed time instead.
//!
//! With pacing a device model runs alongside the run: a [`BlockStream`] hands it every request
//! the kernel issues, and after each sync call and each transaction the run waits until the
//! wall-clock time since the window began reaches the host's time so far plus the device
//! model's elapsed time: the run sleeps for the device's time, in pieces. The kernel then sees
//! time pass about as it would on the device: between the first and the second sync call of
//! one commit as much as between two commits. The host's time is this machine's, unscaled
//! (its split into CPU and waits is known only at the end of the window). The figures reported are still the replay of the whole captured
//! trace (`crate::replay`); the pacer's own total is reported next to them ([`PaceReport`]),
//! and differs only where the pacer has to guess ahead of the trace: it lays several traced
//! devices out by their sizes and puts the aged cold region above the whole image, where the
//! replay uses the highest sector the trace touched.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use joj_device::{AgingSpec, DataMode, Profile, ReplayError, Replayer};
use joj_linux::BlockStream;
use joj_trace::{Op, SECTOR_BYTES};

use crate::error::ExperimentError;
use crate::host::WindowCounts;

/// What pacing did, in a run result's `pace` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaceReport {
    /// The profile's name (`profile`) and where it came from (`profile_source`).
    #[serde(flatten)]
    pub profile: joj_device::ProfileRef,
    /// Elapsed time of the pacer's own device model at the end of the window.
    pub modeled_s: f64,
    /// Time the run's threads spent waiting for the model, summed over threads.
    pub waited_s: f64,
    /// Block requests the pacer saw.
    pub requests: u64,
    /// The host's time (this machine's) the pacer counted in.
    #[serde(default)]
    pub host_s: f64,
}

/// The device model that runs alongside a run, and the live feed of its requests.
pub(crate) struct Pacer {
    stream: BlockStream,
    replayer: Replayer,
    profile: joj_device::ProfileRef,
    /// Each traced device (`major:minor`) and its first sector on the one emulated device.
    offsets: Vec<(String, u64)>,
    start: Instant,
    waited: Duration,
    requests: u64,
}

/// Where each device starts when `devs` (name, size in bytes) are partitions of one device,
/// in the given order, each at a MiB boundary; and the end of the last.
pub(crate) fn partition_offsets(devs: &[(String, u64)]) -> (Vec<(String, u64)>, u64) {
    const MIB: u64 = 1 << 20;
    let mut next = 0u64;
    let offsets = devs
        .iter()
        .map(|(name, bytes)| {
            let at = next;
            next += bytes.div_ceil(MIB).max(1) * MIB;
            (name.clone(), at / SECTOR_BYTES)
        })
        .collect();
    (offsets, next)
}

impl Pacer {
    /// Age a fresh device of `profile` as the replay will (`aging` percent, `seed`), then
    /// start streaming the requests of `devs` (name, size in bytes).
    pub(crate) fn start(
        devs: &[(String, u64)],
        profile: &Profile,
        aging: Option<u32>,
        seed: u64,
        buffer_kb: u32,
    ) -> Result<Pacer, ExperimentError> {
        let (offsets, top) = partition_offsets(devs);
        let aging = aging.map(|validity_percent| AgingSpec {
            validity_percent,
            seed,
        });
        let replayer = Replayer::new(profile, DataMode::OobOnly, aging, top)
            .map_err(|source| ReplayError::Device { index: 0, source })?;
        let names: Vec<&str> = devs.iter().map(|(n, _)| n.as_str()).collect();
        let stream = BlockStream::start(&names, buffer_kb).map_err(joj_linux::Error::from)?;
        Ok(Pacer {
            stream,
            replayer,
            profile: joj_device::ProfileRef::from(profile),
            offsets,
            start: Instant::now(),
            waited: Duration::ZERO,
            requests: 0,
        })
    }

    /// Feed the model every request issued so far; return how long the run must wait for the
    /// wall clock to reach the device's elapsed time plus the host's time so far — the wall
    /// time less pacing's sleeps and joj's overhead (`counts`, summed over `threads`).
    pub(crate) fn catch_up(
        &mut self,
        counts: &WindowCounts,
        threads: u32,
    ) -> Result<Duration, ExperimentError> {
        let device_ns = self.feed()?;
        let (_, wait) = self.plan(device_ns, counts, threads);
        Ok(wait)
    }

    /// The host's time so far and how long to wait, at `device_ns` of device time.
    fn plan(&self, device_ns: u64, counts: &WindowCounts, threads: u32) -> (f64, Duration) {
        let n = f64::from(threads.max(1));
        let wall = self.start.elapsed().as_secs_f64();
        let sleeps = counts.sleep_ns as f64 / 1e9 / n;
        let overhead = counts.overhead_ns as f64 / 1e9 / n;
        let host = (wall - sleeps - overhead).max(0.0);
        // The wall clock should read: host + device + joj's overhead, which really passed and
        // cannot be taken back.
        let target = host + device_ns as f64 / 1e9 + overhead;
        (host, Duration::from_secs_f64((target - wall).max(0.0)))
    }

    /// Feed the model every request issued so far; the device's elapsed time.
    fn feed(&mut self) -> Result<u64, ExperimentError> {
        let records = self.stream.drain().map_err(joj_linux::Error::from)?;
        for mut r in records {
            let Some((_, at)) = self.offsets.iter().find(|(d, _)| *d == r.dev) else {
                continue;
            };
            if r.op != Op::Flush {
                r.sector += at;
            }
            self.replayer.apply(self.requests as usize, &r)?;
            self.requests += 1;
        }
        Ok(self.replayer.elapsed_ns())
    }

    /// Count time the run waited.
    pub(crate) fn waited(&mut self, d: Duration) {
        self.waited += d;
    }

    /// Take the last requests, stop the stream (failing if it lost events) and report.
    pub(crate) fn finish(
        mut self,
        counts: &WindowCounts,
        threads: u32,
    ) -> Result<PaceReport, ExperimentError> {
        let device_ns = self.feed()?;
        let (host_s, _) = self.plan(device_ns, counts, threads);
        let Pacer {
            stream,
            replayer,
            profile,
            waited,
            requests,
            ..
        } = self;
        stream.finish().map_err(joj_linux::Error::from)?;
        Ok(PaceReport {
            profile,
            modeled_s: replayer.finish().modeled_s,
            waited_s: waited.as_secs_f64(),
            requests,
            host_s,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_start_at_mib_boundaries_in_order() {
        let devs = [
            ("7:0".to_string(), (3 << 20) + 1),
            ("7:1".to_string(), 0),
            ("7:2".to_string(), 1 << 20),
        ];
        let (offsets, end) = partition_offsets(&devs);
        let sectors_per_mib = (1 << 20) / SECTOR_BYTES;
        assert_eq!(
            offsets,
            vec![
                ("7:0".to_string(), 0),
                ("7:1".to_string(), 4 * sectors_per_mib),
                ("7:2".to_string(), 5 * sectors_per_mib),
            ]
        );
        assert_eq!(end, 6 << 20);
    }
}
