//! Capturing every block request of chosen devices with a private tracefs instance.
//!
//! [`BlockTracer::start`] makes `/sys/kernel/tracing/instances/joj-<pid>-<n>` and configures
//! only that instance — global tracing settings are never touched, so other tracers (and other
//! joj runs) are unaffected: `trace_clock` = `mono` (timestamps on CLOCK_MONOTONIC, comparable
//! with [`now_mono_ns`]), the per-CPU buffer size, and on `block_rq_issue`, `block_rq_complete`
//! and `block_bio_queue` a filter `dev == <kernel dev_t>` OR'ed over the devices.
//!
//! `block_rq_issue` gives the requests the device really receives (after merging, splitting
//! and the block layer's flush machinery), `block_rq_complete` when each completed (the
//! record's `complete_ns`, which the device replay reads as "what was in flight together");
//! `block_bio_queue` gives what the filesystem asked for, including FUA intent that a device
//! without FUA support never sees.
//!
//! [`BlockTracer::stop`] turns tracing off, reads the whole `trace` file, and fails if the ring
//! buffer lost any event (per-CPU `overrun`, `dropped events`, or `[LOST]` markers): a trace
//! with holes would silently under-count. The instance is removed on stop, on drop, and by the
//! signal handler ([`crate::install_cleanup_handler`]).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use joj_trace::record::TraceRecord;

use crate::cleanup::{self, CleanupProblem};
use crate::dev::{BadDevNum, DevNum};
use crate::names;
use crate::prereq::{self, PrereqError};
use crate::traceline::{self, BioRecord, TraceLine, TraceLineError};

/// Events traced, under `events/block/`.
const EVENTS: [&str; 3] = ["block_rq_issue", "block_rq_complete", "block_bio_queue"];

/// A per-CPU buffer that holds about 200 000 block events per CPU.
pub const DEFAULT_BUFFER_KB: u32 = 16 * 1024;

static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(0);
/// Taken instance names skipped before giving up.
const INSTANCE_NAME_ATTEMPTS: u32 = 1000;

/// The current CLOCK_MONOTONIC time in nanoseconds — the clock of every trace timestamp.
pub fn now_mono_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec.unsigned_abs() * 1_000_000_000 + ts.tv_nsec.unsigned_abs()
}

/// Tracing failed, or the trace is incomplete.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    #[error(transparent)]
    Prereq(#[from] PrereqError),
    #[error(transparent)]
    BadDevice(#[from] BadDevNum),
    #[error("no device to trace; fix: pass the scratch filesystem's devices (ScratchFs::dev_ids)")]
    NoDevices,
    #[error(
        "cannot create tracefs instance {path}: {source}; fix: run as root with tracefs mounted read-write"
    )]
    CreateInstance {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "every tracefs instance name from {first} to {last} is taken; fix: `joj cleanup` removes \
         the instances of dead joj runs (`ls {}` lists them)",
        .first.parent().map_or_else(String::new, |p| p.display().to_string())
    )]
    InstanceNamesTaken { first: PathBuf, last: PathBuf },
    #[error(
        "cannot write `{value}` to {path}: {source}; fix: for buffer_size_kb use a smaller \
         buffer, otherwise check that the kernel has this tracefs file"
    )]
    Write {
        path: PathBuf,
        value: String,
        source: std::io::Error,
    },
    #[error(
        "cannot read {path}: {source}; fix: check that tracefs is mounted and the instance was not removed by hand"
    )]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot parse line {line_no} of the trace ({reason}): {line}; fix: report this line, the kernel's format changed"
    )]
    Parse {
        line_no: usize,
        line: String,
        #[source]
        reason: TraceLineError,
    },
    #[error(
        "cannot parse line {line_no} of the system call trace ({reason}): {line}; fix: report \
         this line, the kernel's format changed"
    )]
    SyscallLine {
        line_no: usize,
        line: String,
        #[source]
        reason: crate::syscall_line::SysLineError,
    },
    #[error(
        "cannot read a trace's binary pages ({0}); fix: report this kernel's \
         version (`uname -r`), its ring-buffer format is not the one joj reads"
    )]
    Raw(#[source] crate::raw_event::RawError),
    #[error(
        "the trace lost {lost} event(s): the {buffer_kb} KiB per-CPU buffer filled up; fix: a \
         bigger buffer (`joj trace --buffer-kib {}`: that much memory per CPU; `buffer_kb` for a \
         program using joj as a library) or a shorter run",
        .buffer_kb.saturating_mul(4)
    )]
    EventsLost { lost: u64, buffer_kb: u32 },
    #[error(
        "the tracefs instance was removed by the signal handler; fix: nothing — the process is exiting on SIGINT/SIGTERM"
    )]
    Interrupted,
    #[error(transparent)]
    Cleanup(#[from] CleanupProblem),
}

/// What a tracer saw between start and stop, in time order.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CapturedTrace {
    /// `block_rq_issue` events: the requests the devices received. Class `Unknown`.
    pub requests: Vec<TraceRecord>,
    /// `block_bio_queue` events: what was submitted, before the block layer's rewriting.
    pub bios: Vec<BioRecord>,
    /// CLOCK_MONOTONIC when tracing was switched on and off.
    pub start_ns: u64,
    pub stop_ns: u64,
}

/// A running capture on a private tracefs instance.
#[derive(Debug)]
pub struct BlockTracer {
    /// Registry entry holding the instance directory.
    id: u64,
    path: PathBuf,
    buffer_kb: u32,
    start_ns: u64,
}

impl BlockTracer {
    /// Starts capturing block requests of `devs` (`"major:minor"`) with `buffer_kb` KiB of
    /// ring buffer per CPU (see [`DEFAULT_BUFFER_KB`]).
    pub fn start<S: AsRef<str>>(devs: &[S], buffer_kb: u32) -> Result<Self, TraceError> {
        Self::start_events(devs, buffer_kb, &EVENTS)
    }

    /// [`start`](Self::start) with only `events` (of [`EVENTS`]) enabled.
    pub(crate) fn start_events<S: AsRef<str>>(
        devs: &[S],
        buffer_kb: u32,
        events: &[&str],
    ) -> Result<Self, TraceError> {
        prereq::check_root()?;
        let root = prereq::ensure_tracefs()?;
        let devs: Vec<DevNum> = devs
            .iter()
            .map(|d| d.as_ref().parse())
            .collect::<Result<_, _>>()?;
        if devs.is_empty() {
            return Err(TraceError::NoDevices);
        }
        let id = cleanup::open_entry();
        let mut me = Self {
            id,
            path: PathBuf::new(),
            buffer_kb,
            start_ns: 0,
        };
        me.path = create_instance(id, &root.join("instances"))?;

        // A new instance starts with tracing on; configure it off, then clear and switch on.
        me.write("tracing_on", "0")?;
        me.write("trace_clock", "mono")?;
        me.write("buffer_size_kb", &buffer_kb.to_string())?;
        let filter = devs
            .iter()
            .map(|d| format!("dev == {}", d.kernel_dev_t()))
            .collect::<Vec<_>>()
            .join(" || ");
        for event in events {
            me.write(&format!("events/block/{event}/filter"), &filter)?;
            me.write(&format!("events/block/{event}/enable"), "1")?;
        }
        me.write("trace", "")?;
        me.start_ns = now_mono_ns();
        me.write("tracing_on", "1")?;
        Ok(me)
    }

    /// The per-CPU buffer size, KiB.
    pub(crate) fn buffer_kb(&self) -> u32 {
        self.buffer_kb
    }

    /// The instance directory, `/sys/kernel/tracing/instances/joj-<pid>-<n>`.
    pub fn instance_path(&self) -> &Path {
        &self.path
    }

    /// Stops tracing, reads and parses the trace, removes the instance. Fails if any event was
    /// lost.
    pub fn stop(self) -> Result<CapturedTrace, TraceError> {
        self.write("tracing_on", "0")?;
        let stop_ns = now_mono_ns();
        let lost_in_stats = self.lost_events()?;
        let (lost_markers, mut trace) = self.read_trace()?;
        trace.start_ns = self.start_ns;
        trace.stop_ns = stop_ns;
        let problems = cleanup::release(self.id);
        if let Some(problem) = problems.into_iter().next() {
            return Err(problem.into());
        }
        let lost = lost_in_stats.max(lost_markers);
        if lost > 0 {
            return Err(TraceError::EventsLost {
                lost,
                buffer_kb: self.buffer_kb,
            });
        }
        Ok(trace)
    }

    fn write(&self, file: &str, value: &str) -> Result<(), TraceError> {
        let path = self.path.join(file);
        std::fs::write(&path, value).map_err(|source| TraceError::Write {
            path,
            value: value.into(),
            source,
        })
    }

    /// Events lost in any CPU's ring buffer: overwritten (`overrun`, `commit overrun`) or
    /// refused (`dropped events`).
    fn lost_events(&self) -> Result<u64, TraceError> {
        let per_cpu = self.path.join("per_cpu");
        let read_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| TraceError::Read { path, source }
        };
        let mut lost = 0;
        for entry in std::fs::read_dir(&per_cpu).map_err(read_err(&per_cpu))? {
            let stats = entry.map_err(read_err(&per_cpu))?.path().join("stats");
            let text = std::fs::read_to_string(&stats).map_err(read_err(&stats))?;
            lost += parse_lost_in_stats(&text);
        }
        Ok(lost)
    }

    /// Parses the `trace` file; returns the `[LOST]` marker total and the records.
    fn read_trace(&self) -> Result<(u64, CapturedTrace), TraceError> {
        let path = self.path.join("trace");
        let read_err = |source| TraceError::Read {
            path: path.clone(),
            source,
        };
        let file = std::fs::File::open(&path).map_err(read_err)?;
        let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
        let mut trace = CapturedTrace::default();
        let mut completions = Vec::new();
        let mut lost = 0;
        let mut buf = Vec::new();
        for line_no in 1.. {
            buf.clear();
            if reader.read_until(b'\n', &mut buf).map_err(read_err)? == 0 {
                break;
            }
            let line = String::from_utf8_lossy(&buf);
            match traceline::parse_trace_line(&line) {
                Ok(TraceLine::Request(r)) => trace.requests.push(r),
                Ok(TraceLine::Bio(b)) => trace.bios.push(b),
                Ok(TraceLine::Complete(c)) => completions.push(c),
                Ok(TraceLine::Lost { events, .. }) => lost += events,
                Ok(_) => {}
                Err(reason) => {
                    return Err(TraceError::Parse {
                        line_no,
                        line: line.trim_end().to_string(),
                        reason,
                    });
                }
            }
        }
        joj_trace::attach_completions(&mut trace.requests, &completions);
        Ok((lost, trace))
    }
}

/// Makes this process's next free instance `joj-<pid>-<n>` in `instances`, recorded in
/// registry entry `id`. A name that exists already (left by a dead process that had our pid,
/// or made by hand) is skipped for the next `n`: it is not ours to reuse or remove.
pub(crate) fn create_instance(id: u64, instances: &Path) -> Result<PathBuf, TraceError> {
    let pid = std::process::id();
    let (mut first, mut last) = (None, None);
    for _ in 0..INSTANCE_NAME_ATTEMPTS {
        let n = NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed);
        let path = instances.join(names::trace_instance(pid, n, names::own_pid_namespace()));
        let made = cleanup::track(id, |res| match std::fs::create_dir(&path) {
            Ok(()) => {
                res.trace_instances.push(path.clone());
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(source) => Err(TraceError::CreateInstance {
                path: path.clone(),
                source,
            }),
        })
        .unwrap_or(Err(TraceError::Interrupted))?;
        if made {
            return Ok(path);
        }
        first.get_or_insert_with(|| path.clone());
        last = Some(path);
    }
    Err(TraceError::InstanceNamesTaken {
        first: first.unwrap_or_default(),
        last: last.unwrap_or_default(),
    })
}

impl Drop for BlockTracer {
    fn drop(&mut self) {
        for p in cleanup::release(self.id) {
            eprintln!("joj-linux: warning: {p}");
        }
    }
}

/// Sum of `overrun`, `commit overrun` and `dropped events` in a per-CPU `stats` file.
pub fn parse_lost_in_stats(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| matches!(k.trim(), "overrun" | "commit overrun" | "dropped events"))
        .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_events_are_summed_from_stats() {
        let stats = "entries: 14\noverrun: 3\ncommit overrun: 1\nbytes: 900\n\
                     oldest event ts:   245.305376\nnow ts:   245.324983\ndropped events: 2\nread events: 0\n";
        assert_eq!(parse_lost_in_stats(stats), 6);
        assert_eq!(
            parse_lost_in_stats("entries: 0\noverrun: 0\ndropped events: 0\n"),
            0
        );
    }

    #[test]
    fn monotonic_clock_advances() {
        let a = now_mono_ns();
        let b = now_mono_ns();
        assert!(b >= a && a > 0);
    }
}
