//! The target host of a profile (its `host` section) and how modeled time composes host and
//! device time (docs/device-model.md, "Time").
//!
//! A run measures, on this machine, what the host spent on its transactions apart from waiting
//! for the device (on a loop device in memory, whose own service stands in for the driver's),
//! in two parts: CPU time — SQLite's, the system calls' and the kernel's path in the workload
//! threads, and the filesystem's journal thread (jbd2) — and the rest, the host's *waits*: the
//! hand-offs of a sync call between threads (to jbd2, to the block layer and back), their
//! wakeups and context switches. The target spends `cpu_factor` times the CPU part; its waits
//! are `sync_wait_ns` per sync call where a profile gives that cost, else this machine's as
//! measured. The device model gives the device's time; a single-threaded SQLite commit waits
//! for each of its requests, so the two add up:
//!
//! `modeled_s = host_s + device_s`,
//! `host_s = cpu_factor × cpu_here_s + (sync_calls × sync_wait_ns, or wait_here_s)`.
//!
//! What stays true (tests pin it): a device of zero latency leaves exactly the host time; a
//! profile without a `host` section models this machine (`cpu_factor` 1, its own waits), and
//! says so.

use serde::{Deserialize, Serialize};

use crate::error::ProfileError;

/// The host of a profile: how much slower (or faster) than this machine kind it runs the host's
/// part of a transaction, with the sources of each number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// The target host, e.g. `Galaxy S5: Qualcomm MSM8974AC, Krait 400 at 2.5 GHz`.
    pub name: String,
    /// CPU time on the target over CPU time on this machine kind for the same work (1: this
    /// machine; 3: three times slower). From a benchmark run on both (sources).
    pub cpu_factor: f64,
    /// The host's waits in one sync call (`fsync`, `fdatasync`) on the target, apart from CPU
    /// time and the device: hand-offs to the journal thread and the block layer, wakeups,
    /// context switches. `None`: this machine's, as measured in the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_wait_ns: Option<u64>,
    /// Where each number comes from (or that it has no source, and where its sensitivity table is).
    pub sources: Vec<String>,
}

impl HostConfig {
    /// This machine: every measured host second counts as one.
    pub fn this_machine() -> HostConfig {
        HostConfig {
            name: "this machine (the profile has no host section)".into(),
            cpu_factor: 1.0,
            sync_wait_ns: None,
            sources: vec!["measured in the run itself".into()],
        }
    }

    pub fn validate(&self) -> Result<(), ProfileError> {
        crate::profile_text::check_host_name(&self.name)?;
        crate::profile_text::check_sources("host.sources", &self.sources)?;
        // Below 0.01 a target CPU would be a hundred times this machine's: the host's time
        // vanishes from every figure (1e-300 printed "host 0.0000 s (0 %)" under a phone's name).
        if !(self.cpu_factor.is_finite() && (0.01..=1000.0).contains(&self.cpu_factor)) {
            return Err(ProfileError::Invalid {
                reason: format!(
                    "host.cpu_factor is {:e}; it must be from 0.01 to 1000 (1: this machine, 3: \
                     three times slower, 0.5: twice as fast); fix: give the target's speed \
                     against this machine's from a published benchmark of both CPUs",
                    self.cpu_factor
                ),
            });
        }
        if self.sources.is_empty() {
            return Err(ProfileError::Invalid {
                reason: "host.sources is empty: every host number needs a source, or a \
                         sentence saying it has none"
                    .into(),
            });
        }
        Ok(())
    }

    /// The target's host time for `here` (measured on this machine).
    pub fn host_s(&self, here: &HostHere) -> f64 {
        let waits = match self.sync_wait_ns {
            Some(ns) => here.sync_calls as f64 * ns as f64 / 1e9,
            None => here.wait_s.max(0.0),
        };
        self.cpu_factor * here.cpu_s.max(0.0) + waits
    }

    /// Compose host and device time for `ops` operations.
    pub fn compose(&self, here: &HostHere, device_s: f64, ops: u64) -> Composed {
        let host_s = self.host_s(here);
        let device_s = device_s.max(0.0);
        let modeled_s = host_s + device_s;
        Composed {
            host: self.name.clone(),
            cpu_factor: self.cpu_factor,
            sync_wait_ns: self.sync_wait_ns,
            host_here_s: here.cpu_s.max(0.0) + here.wait_s.max(0.0),
            host_s,
            device_s,
            modeled_s,
            ops,
            modeled_ops_per_sec: if modeled_s > 0.0 {
                ops as f64 / modeled_s
            } else {
                0.0
            },
            host_share: if modeled_s > 0.0 {
                host_s / modeled_s
            } else {
                0.0
            },
        }
    }
}

/// A run's host time as measured on this machine, in the two parts the host model scales apart.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostHere {
    /// CPU time: the workload threads' and the filesystem journal thread's.
    pub cpu_s: f64,
    /// The rest of the host's time: waits between threads, wakeups, context switches.
    pub wait_s: f64,
    /// Sync calls the workload made.
    pub sync_calls: u64,
}

/// Host and device time of a modeled run (the `modeled` section's figures).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Composed {
    /// The target host's name.
    pub host: String,
    pub cpu_factor: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_wait_ns: Option<u64>,
    /// Host time measured on this machine (device waits, run-queue waits and joj's own
    /// measuring taken out).
    pub host_here_s: f64,
    /// The target's host time.
    pub host_s: f64,
    /// The device model's time.
    pub device_s: f64,
    /// `host_s + device_s`.
    pub modeled_s: f64,
    pub ops: u64,
    pub modeled_ops_per_sec: f64,
    /// `host_s / modeled_s`.
    pub host_share: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_of_zero_latency_leaves_the_host_time() {
        let h = HostConfig {
            cpu_factor: 2.5,
            sync_wait_ns: Some(1000),
            ..HostConfig::this_machine()
        };
        let here = HostHere {
            cpu_s: 0.4,
            wait_s: 0.3,
            sync_calls: 100,
        };
        let c = h.compose(&here, 0.0, 1000);
        assert_eq!(c.modeled_s, c.host_s);
        assert!((c.host_s - (2.5 * 0.4 + 100.0 * 1e-6)).abs() < 1e-12);
        assert_eq!(c.host_share, 1.0);
        assert!((c.modeled_ops_per_sec - 1000.0 / c.host_s).abs() < 1e-9);
    }

    #[test]
    fn host_and_device_time_add_up() {
        let here = HostHere {
            cpu_s: 0.125,
            wait_s: 0.125,
            sync_calls: 7,
        };
        let c = HostConfig::this_machine().compose(&here, 0.75, 500);
        assert_eq!(
            c.host_s, 0.25,
            "this machine: its own CPU and waits, unscaled"
        );
        assert_eq!(c.modeled_s, 1.0);
        assert_eq!(c.host_share, 0.25);
        assert_eq!(c.modeled_ops_per_sec, 500.0);
    }

    #[test]
    fn a_factor_outside_its_range_or_no_source_is_refused() {
        for f in [0.0, -1.0, f64::NAN, 1e6] {
            let h = HostConfig {
                cpu_factor: f,
                ..HostConfig::this_machine()
            };
            assert!(h.validate().is_err(), "{f}");
        }
        let h = HostConfig {
            sources: vec![],
            ..HostConfig::this_machine()
        };
        assert!(h.validate().is_err());
    }
}
