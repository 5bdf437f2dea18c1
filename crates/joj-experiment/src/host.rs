//! Host time, measured in the run itself, and the modeled time of a run: the target host's
//! time for it plus the device model's (docs/device-model.md, "Time").
//!
//! A run on a scratch filesystem runs on a loop device backed by memory, whose service time is
//! a copy into the page cache: what the run's threads spend there is the host's part of each
//! transaction — SQLite's CPU, the system calls and the kernel's path (VFS, filesystem, jbd2's
//! commit and the wakeups around it, the block layer, completions). The window's wall time is
//! that, plus three things that are not the target host's and are taken out: the time the
//! threads waited on a run queue while another process held the CPU (`run_delay`), joj's own
//! measuring on the threads' path (extent snapshots at sync calls, the pacer's model), and the
//! sleeps of pacing. What is left is [`HostMeasured::host_s`], in two parts: CPU time (the
//! workload threads' less joj's measuring, which is CPU work on those threads, and the
//! filesystem journal thread's, [`JournalThreads`]) and the host's waits (the rest);
//! `joj_device::HostConfig` turns them into the target's host time and adds the device's.

use serde::{Deserialize, Serialize};

use joj_workload::ThreadUsage;

/// What the host spent in the measured window, from the run itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostMeasured {
    /// Workload threads.
    pub threads: u32,
    /// The window's wall time.
    pub elapsed_s: f64,
    /// CPU time of the workload threads (user + system, summed over threads), joj's measuring
    /// on them (`overhead_s`) included: the host's CPU is `cpu_s − overhead_s`.
    pub cpu_s: f64,
    /// CPU time of the filesystem's journal thread(s) (ext4's jbd2) in the window.
    #[serde(default)]
    pub journal_thread_cpu_s: f64,
    /// Time the workload threads, and the filesystem's journal thread, were runnable but waited
    /// for a CPU (summed).
    pub run_delay_s: f64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Sync calls (`fsync`, `fdatasync`, directory syncs) SQLite made through joj's VFSs.
    pub sync_calls: u64,
    /// Time inside them (summed over threads), pacing's sleeps excluded.
    pub sync_s: f64,
    /// joj's own measuring on the threads' path: extent snapshots, the pacer's model (summed).
    pub overhead_s: f64,
    /// Pacing's sleeps (summed over threads), as the wall clock measured them: a sleep's end
    /// includes the thread's wait for a CPU once woken.
    pub paced_sleep_s: f64,
    /// Of `run_delay_s`, what fell inside pacing's sleeps (already in `paced_sleep_s`, so not
    /// taken out twice; absent in documents made before 2026-11-27, when it was).
    #[serde(default)]
    pub run_delay_in_sleeps_s: f64,
    /// The journal thread's run-queue delay (in `run_delay_s`).
    #[serde(default)]
    pub journal_thread_run_delay_s: f64,
    /// Of the journal thread's run-queue delay, what was taken out: at most
    /// the time the workload threads were blocked (absent in documents made before 2026-11-27,
    /// when all of it was).
    #[serde(default)]
    pub journal_run_delay_taken_out_s: f64,
    /// The host's time: `elapsed_s − (the workload threads' run-queue delay −
    /// run_delay_in_sleeps_s + journal_run_delay_taken_out_s + overhead_s + paced_sleep_s) /
    /// threads`.
    pub host_s: f64,
    /// The part of `host_s` that is not CPU time (`cpu_s − overhead_s` and
    /// `journal_thread_cpu_s`, per thread): hand-offs between threads, wakeups, context
    /// switches.
    #[serde(default)]
    pub wait_s: f64,
}

/// What the window itself counted (sync calls, joj's overhead, pacing's sleeps).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WindowCounts {
    pub sync_calls: u64,
    pub sync_ns: u64,
    pub overhead_ns: u64,
    pub sleep_ns: u64,
    /// The workload threads' run-queue delay inside pacing's sleeps (in `sleep_ns` already).
    pub sleep_run_delay_ns: u64,
    /// CPU time of the filesystem's journal thread(s) in the window.
    pub journal_thread_cpu_ns: u64,
    /// Their run-queue delay in the window.
    pub journal_thread_run_delay_ns: u64,
}

impl HostMeasured {
    /// From the window's wall time, each workload thread's usage (none for a workload that does
    /// not report it: then no run-queue delay is taken out) and the window's own counts.
    pub fn new(elapsed_s: f64, threads: &[ThreadUsage], n_threads: u32, w: &WindowCounts) -> Self {
        let sum = |f: fn(&ThreadUsage) -> u64| threads.iter().map(f).sum::<u64>();
        let n = f64::from(n_threads.max(1));
        let own_run_delay_s = sum(|t| t.run_delay_ns) as f64 / 1e9;
        let journal_run_delay_s = w.journal_thread_run_delay_ns as f64 / 1e9;
        let run_delay_s = own_run_delay_s + journal_run_delay_s;
        let overhead_s = w.overhead_ns as f64 / 1e9;
        let paced_sleep_s = w.sleep_ns as f64 / 1e9;
        let cpu_s = sum(|t| t.cpu_ns) as f64 / 1e9;
        let journal_thread_cpu_s = w.journal_thread_cpu_ns as f64 / 1e9;
        // A paced sleep is timed on the wall clock, the wait for a CPU after it included: that
        // part of the run-queue delay is taken out once, as sleep.
        let run_delay_in_sleeps_s = (w.sleep_run_delay_ns as f64 / 1e9).min(own_run_delay_s);
        let own_delay_out_s = own_run_delay_s - run_delay_in_sleeps_s;
        // The journal thread's wait for a CPU delays the workload only while a workload thread
        // is blocked (waiting on it); while the workload runs, that wait is the workload's own
        // CPU time. So at most the threads' blocked time comes out: their wall time less CPU,
        // run-queue delay, paced sleeps and joj's measuring (CPU on the threads in a run of
        // joj's workloads, already in `cpu_s`, so this bound is a little tighter there than it
        // need be; time a traced command stood stopped for joj, which is in no CPU time).
        let blocked_s =
            (elapsed_s * n - cpu_s - own_delay_out_s - paced_sleep_s - overhead_s).max(0.0);
        let journal_run_delay_taken_out_s = journal_run_delay_s.min(blocked_s);
        let host_s = (elapsed_s
            - (own_delay_out_s + journal_run_delay_taken_out_s + overhead_s + paced_sleep_s) / n)
            .max(0.0);
        let mut h = HostMeasured {
            threads: n_threads.max(1),
            elapsed_s,
            cpu_s,
            journal_thread_cpu_s,
            run_delay_s,
            voluntary_switches: sum(|t| t.voluntary_switches),
            involuntary_switches: sum(|t| t.involuntary_switches),
            sync_calls: w.sync_calls,
            sync_s: w.sync_ns as f64 / 1e9,
            overhead_s,
            paced_sleep_s,
            run_delay_in_sleeps_s,
            journal_thread_run_delay_s: journal_run_delay_s,
            journal_run_delay_taken_out_s,
            host_s,
            wait_s: 0.0,
        };
        h.wait_s = host_s - h.work_cpu_s();
        h
    }

    /// The run-queue delay taken out of the wall time (summed over threads): the workload
    /// threads' outside pacing's sleeps and what of the journal thread's fell while they were
    /// blocked — what the formula of `host_s` subtracted besides joj's measuring and the sleeps.
    pub fn run_delay_taken_out_s(&self) -> f64 {
        let n = f64::from(self.threads.max(1));
        ((self.elapsed_s - self.host_s) * n - self.overhead_s - self.paced_sleep_s).max(0.0)
    }

    /// The host's CPU time, per thread's worth of wall time: the workload threads' less joj's
    /// measuring on them (extent snapshots, the pacer's model: CPU work taken out of the wall
    /// time already, and not the target's to scale), and the journal thread's; at most the
    /// host time.
    fn work_cpu_s(&self) -> f64 {
        let n = f64::from(self.threads.max(1));
        let own = (self.cpu_s - self.overhead_s).max(0.0);
        ((own + self.journal_thread_cpu_s) / n).min(self.host_s)
    }

    /// The two parts the host model scales apart, per thread's worth of wall time: CPU (the
    /// workload threads' and the journal thread's, shared out over the threads) and waits.
    pub fn here(&self) -> joj_device::HostHere {
        let cpu_s = self.work_cpu_s();
        joj_device::HostHere {
            cpu_s,
            wait_s: (self.host_s - cpu_s).max(0.0),
            sync_calls: self.sync_calls,
        }
    }
}

/// The filesystem's journal thread(s) of the run's devices (ext4: `jbd2/loopN-8`), whose CPU
/// time is the host's: each commit of a sync call runs there while the caller waits.
pub(crate) struct JournalThreads {
    pids: Vec<u32>,
}

impl JournalThreads {
    /// The journal threads of devices `devs` (`major:minor`), found by name in `/proc`.
    pub(crate) fn find(devs: &[String]) -> JournalThreads {
        let names: Vec<String> = devs
            .iter()
            .filter_map(|d| {
                let uevent = std::fs::read_to_string(format!("/sys/dev/block/{d}/uevent")).ok()?;
                let name = uevent.lines().find_map(|l| l.strip_prefix("DEVNAME="))?;
                Some(format!("jbd2/{name}-"))
            })
            .collect();
        let mut pids = Vec::new();
        if let Ok(entries) = std::fs::read_dir("/proc") {
            for e in entries.flatten() {
                let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                    continue;
                };
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                if names.iter().any(|n| comm.trim().starts_with(n.as_str())) {
                    pids.push(pid);
                }
            }
        }
        JournalThreads { pids }
    }

    /// Their CPU time so far, in nanoseconds (schedstat's first field).
    pub(crate) fn cpu_ns(&self) -> u64 {
        self.schedstat(0)
    }

    /// Their time runnable but waiting for a CPU so far (schedstat's second field): while a
    /// sync call waits for the journal thread, the thread's run-queue delay is the shared
    /// machine's, as the workload thread's own is.
    pub(crate) fn run_delay_ns(&self) -> u64 {
        self.schedstat(1)
    }

    fn schedstat(&self, field: usize) -> u64 {
        self.pids
            .iter()
            .filter_map(|pid| {
                let s = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?;
                s.split_whitespace().nth(field)?.parse::<u64>().ok()
            })
            .sum()
    }
}

/// The modeled time of a run on a profile: its host's time and its device's (the `modeled`
/// section of a result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Modeled {
    /// The device profile (its `host` section, or this machine).
    /// The profile's name (`profile`) and where it came from (`profile_source`).
    #[serde(flatten)]
    pub profile: joj_device::ProfileRef,
    #[serde(flatten)]
    pub time: joj_device::Composed,
    /// Whether the kernel ran at the modeled speed while the trace was made (`--pace`).
    pub paced: bool,
    /// Why it was or was not paced, as the output says it.
    pub pacing: String,
}

impl Modeled {
    /// Compose `host` (measured) with the device's time `device_s` for `ops` operations on
    /// `profile`'s host.
    pub fn compose(
        profile: &joj_device::Profile,
        host: &HostMeasured,
        device_s: f64,
        ops: u64,
        pacing: &Pacing,
    ) -> Modeled {
        Modeled {
            profile: joj_device::ProfileRef::from(profile),
            time: profile
                .host_or_this_machine()
                .compose(&host.here(), device_s, ops),
            paced: pacing.paced(),
            pacing: pacing.to_string(),
        }
    }
}

/// Whether a modeled run was paced, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pacing {
    /// Paced because `--pace` asked for it.
    Asked,
    /// Paced by default: every modeled figure of a SQLite run on a kernel filesystem is.
    Default,
    /// Not paced, for this reason.
    Not(String),
    /// A replay of a recording: how the recording was made (paced on a profile, or not).
    Recorded { paced_on: Option<String> },
}

impl Pacing {
    pub fn paced(&self) -> bool {
        match self {
            Pacing::Asked | Pacing::Default => true,
            Pacing::Not(_) => false,
            Pacing::Recorded { paced_on } => paced_on.is_some(),
        }
    }
}

impl std::fmt::Display for Pacing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pacing::Asked => f.write_str("paced (--pace): the kernel ran at the modeled speed"),
            Pacing::Default => f.write_str(
                "paced (the default with --device): the kernel ran at the modeled speed",
            ),
            Pacing::Not(why) => write!(f, "unpaced: {why}"),
            Pacing::Recorded { paced_on: Some(p) } => write!(
                f,
                "a recording made paced on {p} (the kernel ran at {p}'s modeled speed)"
            ),
            Pacing::Recorded { paced_on: None } => f.write_str(
                "a recording made unpaced: clock-driven journaling followed the recording \
                 machine's speed",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_time_leaves_out_run_queue_waits_joj_overhead_and_pacing_sleeps() {
        let t = ThreadUsage {
            voluntary_switches: 10,
            involuntary_switches: 2,
            cpu_ns: 300_000_000,
            run_delay_ns: 100_000_000,
        };
        let w = WindowCounts {
            sync_calls: 4,
            sync_ns: 50_000_000,
            overhead_ns: 200_000_000,
            sleep_ns: 500_000_000,
            journal_thread_cpu_ns: 50_000_000,
            journal_thread_run_delay_ns: 0,
            sleep_run_delay_ns: 0,
        };
        let h = HostMeasured::new(1.0, &[t], 1, &w);
        assert!((h.host_s - 0.2).abs() < 1e-12, "{h:?}");
        let here = h.here();
        // 0.3 s of CPU on the thread, 0.2 s of it joj's measuring: the host's is 0.1 s, and
        // the journal thread's 0.05 s.
        assert!((here.cpu_s - 0.15).abs() < 1e-12, "{here:?}");
        assert!((here.wait_s - 0.05).abs() < 1e-12, "{here:?}");
        assert!((h.wait_s - 0.05).abs() < 1e-12, "{h:?}");
        // CPU is capped at the host time.
        let busy = ThreadUsage {
            cpu_ns: 900_000_000,
            ..t
        };
        let here = HostMeasured::new(1.0, &[busy], 1, &w).here();
        assert!((here.cpu_s - 0.2).abs() < 1e-12, "{here:?}");
        assert_eq!(here.wait_s, 0.0);
        // Two threads: each thread's share of the waits comes out of the one wall time.
        let h2 = HostMeasured::new(1.0, &[t, t], 2, &w);
        assert!(
            (h2.host_s - (1.0 - (0.2 + 0.2 + 0.5) / 2.0)).abs() < 1e-12,
            "{h2:?}"
        );
    }

    #[test]
    fn the_journal_threads_wait_for_a_cpu_is_taken_out_only_while_the_workload_was_blocked() {
        // 10 ms of wall time, 8 ms of it the workload thread's own CPU: it was blocked 2 ms at
        // most. jbd2 waited 6 ms for a CPU, mostly while the workload ran (it held the CPU);
        // only what fell while the workload was blocked can have delayed it, so the host time
        // is never below the thread's own CPU time.
        let t = ThreadUsage {
            cpu_ns: 8_000_000,
            ..Default::default()
        };
        let w = WindowCounts {
            journal_thread_run_delay_ns: 6_000_000,
            ..Default::default()
        };
        let h = HostMeasured::new(0.010, &[t], 1, &w);
        assert!((h.host_s - 0.008).abs() < 1e-12, "{h:?}");
        assert!(
            (h.journal_run_delay_taken_out_s - 0.002).abs() < 1e-12,
            "{h:?}"
        );
        // A journal thread's short wait while the workload slept on it comes out whole.
        let w = WindowCounts {
            journal_thread_run_delay_ns: 1_000_000,
            ..w
        };
        let h = HostMeasured::new(0.010, &[t], 1, &w);
        assert!((h.host_s - 0.009).abs() < 1e-12, "{h:?}");
        // Paced sleeps and the thread's own run-queue delay are not blocked time either.
        let t = ThreadUsage {
            cpu_ns: 4_000_000,
            run_delay_ns: 2_000_000,
            ..Default::default()
        };
        let w = WindowCounts {
            sleep_ns: 3_000_000,
            journal_thread_run_delay_ns: 6_000_000,
            ..Default::default()
        };
        let h = HostMeasured::new(0.010, &[t], 1, &w);
        assert!(
            (h.journal_run_delay_taken_out_s - 0.001).abs() < 1e-12,
            "{h:?}"
        );
        assert!((h.host_s - 0.004).abs() < 1e-12, "{h:?}");
    }

    /// A traced command's "measuring" is time it stood stopped for joj, in no CPU time: it is
    /// not blocked time either, and the host time stays at or above the command's CPU.
    #[test]
    fn time_stopped_for_joj_is_not_time_the_journal_thread_delayed() {
        let t = ThreadUsage {
            cpu_ns: 5_000_000,
            ..Default::default()
        };
        let w = WindowCounts {
            overhead_ns: 3_000_000,
            journal_thread_run_delay_ns: 6_000_000,
            ..Default::default()
        };
        let h = HostMeasured::new(0.010, &[t], 1, &w);
        assert!(
            (h.journal_run_delay_taken_out_s - 0.002).abs() < 1e-12,
            "{h:?}"
        );
        assert!(h.host_s >= 0.005 - 1e-12, "{h:?}");
    }

    #[test]
    fn a_wait_for_a_cpu_after_a_paced_sleep_is_taken_out_once() {
        // 1 s of wall time: 0.5 s of paced sleep as the wall clock timed it, 0.1 s of which
        // the thread was runnable waiting for a CPU after a sleep's end, and 0.05 s more of run
        // delay elsewhere. The host's time is what is left: 1 − 0.5 − 0.05 = 0.45 s.
        let t = ThreadUsage {
            cpu_ns: 300_000_000,
            run_delay_ns: 150_000_000,
            ..Default::default()
        };
        let w = WindowCounts {
            sleep_ns: 500_000_000,
            sleep_run_delay_ns: 100_000_000,
            ..Default::default()
        };
        let h = HostMeasured::new(1.0, &[t], 1, &w);
        assert!((h.host_s - 0.45).abs() < 1e-12, "{h:?}");
        assert!((h.run_delay_in_sleeps_s - 0.1).abs() < 1e-12, "{h:?}");
        // Never more than the run delay measured (the two are read at different moments).
        let w = WindowCounts {
            sleep_run_delay_ns: 900_000_000,
            ..w
        };
        let h = HostMeasured::new(1.0, &[t], 1, &w);
        assert!((h.host_s - 0.5).abs() < 1e-12, "{h:?}");
    }
}
