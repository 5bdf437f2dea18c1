//! What one thread cost the machine in a measured window: its voluntary and involuntary context
//! switches and its CPU time, read from `/proc/thread-self` (`status` and `schedstat`), the
//! figures `getrusage(RUSAGE_THREAD)` gives, with CPU time in nanoseconds instead of ticks.
//!
//! A voluntary switch is the thread giving up the CPU to wait (for a completion, a lock, a
//! journal commit); an involuntary one is the scheduler taking it away. ATC'13 Fig. 9 counts
//! both for the eMMC daemon under interrupt and polling completion. The time a thread spent
//! runnable but waiting for a CPU (`run_delay_ns`, schedstat's second field) is the shared
//! machine's contention, not work of the thread: modeled host time leaves it out
//! (docs/device-model.md, "Time").

use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;

/// Counts of one thread since it started (a snapshot) or over a window (a difference).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadUsage {
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Time on a CPU (user + system), from the scheduler's own account.
    pub cpu_ns: u64,
    /// Time runnable but waiting on a run queue for a CPU (schedstat's second field).
    #[serde(default)]
    pub run_delay_ns: u64,
}

/// schedstat's first two fields: time on a CPU and time runnable waiting for one (ns).
fn schedstat_times(text: &str) -> Option<(u64, u64)> {
    let mut fields = text.split_whitespace().map(|v| v.parse::<u64>().ok());
    Some((fields.next()??, fields.next()??))
}

impl ThreadUsage {
    /// The calling thread's counts so far.
    pub fn now() -> Result<ThreadUsage, WorkloadError> {
        let read = |name: &str| {
            std::fs::read_to_string(format!("/proc/thread-self/{name}")).map_err(|source| {
                WorkloadError::Io {
                    what: format!("reading /proc/thread-self/{name}"),
                    source,
                }
            })
        };
        let status = read("status")?;
        let schedstat = read("schedstat")?;
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
                .ok_or_else(|| WorkloadError::ThreadUsage {
                    what: format!("no `{key}` in /proc/thread-self/status"),
                })
        };
        let (cpu_ns, run_delay_ns) =
            schedstat_times(&schedstat).ok_or_else(|| WorkloadError::ThreadUsage {
                what: format!("/proc/thread-self/schedstat is `{}`", schedstat.trim()),
            })?;
        Ok(ThreadUsage {
            voluntary_switches: field("voluntary_ctxt_switches:")?,
            involuntary_switches: field("nonvoluntary_ctxt_switches:")?,
            cpu_ns,
            run_delay_ns,
        })
    }

    /// The calling thread's run-queue delay so far (schedstat's second field), from a
    /// descriptor of its own `/proc/thread-self/schedstat` kept open per thread and read again
    /// from offset 0 (a few microseconds, for the paced sleeps' accounting); `None` when the
    /// kernel keeps no schedstat.
    pub fn run_delay_now() -> Option<u64> {
        use std::os::unix::fs::FileExt;
        thread_local! {
            static SCHEDSTAT: Option<std::fs::File> =
                std::fs::File::open("/proc/thread-self/schedstat").ok();
        }
        // `try_with`: a sync from a thread-local's destructor at thread exit finds the
        // descriptor gone, and gets `None` rather than a panic inside SQLite's callback.
        SCHEDSTAT
            .try_with(|f| {
                let f = f.as_ref()?;
                let mut buf = [0u8; 128];
                let n = f.read_at(&mut buf, 0).ok()?;
                schedstat_times(std::str::from_utf8(&buf[..n]).ok()?).map(|(_, delay)| delay)
            })
            .ok()
            .flatten()
    }

    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(earlier.voluntary_switches),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(earlier.involuntary_switches),
            cpu_ns: self.cpu_ns.saturating_sub(earlier.cpu_ns),
            run_delay_ns: self.run_delay_ns.saturating_sub(earlier.run_delay_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_delay_read_alone_is_the_threads_own() {
        let a = ThreadUsage::run_delay_now().expect("schedstat");
        let full = ThreadUsage::now().unwrap().run_delay_ns;
        let b = ThreadUsage::run_delay_now().unwrap();
        assert!(a <= full && full <= b, "{a} {full} {b}");
        // Another thread reads its own, not this one's descriptor.
        let other = std::thread::spawn(ThreadUsage::run_delay_now)
            .join()
            .unwrap();
        assert!(other.is_some());
    }

    #[test]
    fn a_thread_that_sleeps_switches_voluntarily_and_one_that_spins_uses_cpu() {
        let before = ThreadUsage::now().unwrap();
        for _ in 0..3 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let slept = ThreadUsage::now().unwrap().since(&before);
        assert!(slept.voluntary_switches >= 3, "{slept:?}");

        let before = ThreadUsage::now().unwrap();
        let t0 = std::time::Instant::now();
        let mut x = 0u64;
        while t0.elapsed() < std::time::Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let spun = ThreadUsage::now().unwrap().since(&before);
        assert!(spun.cpu_ns > 0, "{spun:?}");
    }
}
