//! Host completion model: how the host learns that a device command finished, and what that
//! costs it — interrupt-driven completion against polling (Jeong et al., ATC'13, §6.4).
//!
//! The eMMC of the paper's phone has no command queue: its I/O daemon (`mmcqd`) issues one
//! command, waits for it, then issues the next. Each completion therefore sits on the critical
//! path of the next command:
//!
//! - **Interrupt**: the daemon sleeps while the device works (the CPU is free), and each
//!   completion costs one wakeup — interrupt handling, the scheduler, and the context switch
//!   back to the daemon — before the next command can go out. `wakeup_ns` is that cost, added
//!   once per completion to the modeled time and to the CPU's busy time; each completion is two
//!   context switches (the daemon switches out to sleep and back in when woken).
//! - **Poll**: the daemon spins on the device's status while the device works: no wakeup and no
//!   context switch, but the CPU is busy for the whole device time.
//!
//! What stays true (tests pin it): polling never adds time or context switches and its CPU-busy
//! time equals the device time; interrupt adds exactly one `wakeup_ns` per completion. The model
//! is applied after a back-to-back replay, whose modeled time is all device time (the device is
//! never idle), so the device time is the replay's modeled time.
//!
//! Parameters: no published measurement of the wakeup cost on the paper's phone (Exynos 4412,
//! Cortex-A9 at 1.4 GHz) was found; [`HostCompletion::DEFAULT_WAKEUP_NS`] says where its value
//! comes from, and `docs/results/atc13.md` shows how the result moves with it.

use serde::{Deserialize, Serialize};

/// How the host learns a command completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Completion {
    Interrupt,
    Poll,
}

/// The host side of completion: the mode and the cost of one interrupt-driven wakeup.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HostCompletion {
    pub completion: Completion,
    /// Interrupt handling + wakeup + context switch back to the waiting thread, per completion.
    /// Unused under polling.
    pub wakeup_ns: u64,
}

impl HostCompletion {
    /// 10 µs: an assumption, not a measurement. The only published figure found is for server
    /// CPUs: "on the order of a microsecond to respond to an interrupt and switch to the
    /// appropriate thread context" (AMD/Xilinx Onload User Guide UG1586, "Polling vs.
    /// Interrupts"). A 2012 phone core (Cortex-A9, 1.4 GHz) is slower by a factor no
    /// source here gives; 10 µs is one order of magnitude above the server figure. Sweep it
    /// (`--wakeup-us`) rather than trust it.
    pub const DEFAULT_WAKEUP_NS: u64 = 10_000;

    /// Account `completions` device commands that kept the device busy for `device_ns` (back to
    /// back), of which `ops` are the application's operations (transactions or requests).
    pub fn account(&self, device_ns: u64, completions: u64, ops: u64) -> CompletionReport {
        let (wakeups, host_overhead_ns, cpu_busy_ns) = match self.completion {
            Completion::Interrupt => {
                let overhead = completions * self.wakeup_ns;
                (completions, overhead, overhead)
            }
            Completion::Poll => (0, 0, device_ns),
        };
        let modeled_ns = device_ns + host_overhead_ns;
        let per = |total: u64, n: u64| {
            if n == 0 {
                0.0
            } else {
                total as f64 / n as f64 / 1e3
            }
        };
        CompletionReport {
            completion: self.completion,
            wakeup_ns: self.wakeup_ns,
            completions,
            wakeups,
            context_switches: 2 * wakeups,
            device_s: device_ns as f64 / 1e9,
            host_overhead_s: host_overhead_ns as f64 / 1e9,
            modeled_s: modeled_ns as f64 / 1e9,
            cpu_busy_s: cpu_busy_ns as f64 / 1e9,
            cpu_busy_fraction: if modeled_ns == 0 {
                0.0
            } else {
                cpu_busy_ns as f64 / modeled_ns as f64
            },
            latency_per_completion_us: per(modeled_ns, completions),
            latency_per_op_us: per(modeled_ns, ops),
            ops,
            modeled_ops_per_sec: if modeled_ns == 0 {
                0.0
            } else {
                ops as f64 / (modeled_ns as f64 / 1e9)
            },
        }
    }
}

/// What the completion model adds to a replay (the `completion` part of a `device` section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionReport {
    pub completion: Completion,
    pub wakeup_ns: u64,
    /// Device commands completed (reads, writes, flushes, discards).
    pub completions: u64,
    /// Interrupt-driven wakeups of the waiting thread (0 under polling).
    pub wakeups: u64,
    /// Two per wakeup: out to sleep, back in when woken.
    pub context_switches: u64,
    /// The device's own time (the back-to-back replay's modeled time).
    pub device_s: f64,
    /// Time the host adds on the critical path: wakeups × `wakeup_ns`.
    pub host_overhead_s: f64,
    /// Device time plus host overhead: what the host sees.
    pub modeled_s: f64,
    /// CPU time spent on completion: the wakeups (interrupt) or the whole device time (poll).
    pub cpu_busy_s: f64,
    /// `cpu_busy_s / modeled_s`, of one core.
    pub cpu_busy_fraction: f64,
    pub latency_per_completion_us: f64,
    pub latency_per_op_us: f64,
    /// The application's operations (the summary's `ops`).
    pub ops: u64,
    pub modeled_ops_per_sec: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(completion: Completion, wakeup_ns: u64) -> HostCompletion {
        HostCompletion {
            completion,
            wakeup_ns,
        }
    }

    #[test]
    fn polling_adds_no_time_no_switch_and_burns_the_device_time() {
        let r = host(Completion::Poll, 25_000).account(7_000_000, 300, 100);
        assert_eq!(r.wakeups, 0);
        assert_eq!(r.context_switches, 0);
        assert_eq!(r.host_overhead_s, 0.0);
        assert_eq!(r.modeled_s, r.device_s);
        assert_eq!(r.cpu_busy_s, r.device_s);
        assert_eq!(r.cpu_busy_fraction, 1.0);
    }

    #[test]
    fn interrupt_adds_exactly_one_wakeup_per_completion() {
        let r = host(Completion::Interrupt, 25_000).account(7_000_000, 300, 100);
        assert_eq!(r.wakeups, 300);
        assert_eq!(r.context_switches, 600);
        assert!((r.host_overhead_s - 300.0 * 25e-6).abs() < 1e-12);
        assert!((r.modeled_s - (7e-3 + 300.0 * 25e-6)).abs() < 1e-12);
        assert_eq!(r.cpu_busy_s, r.host_overhead_s);
        assert!((r.latency_per_op_us - r.modeled_s / 100.0 * 1e6).abs() < 1e-6);
    }

    #[test]
    fn nothing_completed_costs_nothing() {
        for c in [Completion::Interrupt, Completion::Poll] {
            let r = host(c, 10_000).account(0, 0, 0);
            assert_eq!(r.modeled_s, 0.0);
            assert_eq!(r.modeled_ops_per_sec, 0.0);
            assert_eq!(r.latency_per_completion_us, 0.0);
        }
    }
}
