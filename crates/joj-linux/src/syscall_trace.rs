//! Seeing a command's system calls without stopping it: a private tracefs instance with the
//! kernel's syscall tracepoints (`events/syscalls/sys_enter_*`, `sys_exit_*`) for the calls that
//! make data durable, write, cut a file (`ftruncate`), or shape a process's descriptor table, and
//! the task events that create and exec processes, filtered to the command's process and its
//! descendants: each event's filter lists them ([`crate::syscall_pids`]; the supervisor adds
//! each new task while ptrace holds it at its first stop), and past a few dozen tasks the
//! instance's `set_event_pid` with option `event-fork` (a child added as it is forked, in the
//! kernel), whose hooks on every context switch cost a sync as much as the block events.
//!
//! The tracepoints record the call and its integer arguments; the calling task is never stopped
//! or woken. A path argument is only a pointer here, so the supervisor still stops at the calls
//! whose path it must read ([`crate::supervise`]). Events are read as the kernel stores them,
//! page by page from each CPU's `per_cpu/cpuN/trace_pipe_raw` ([`crate::raw_event`]), while
//! the command runs ([`SyscallTracer::drain`]): the text `trace_pipe` made the kernel format
//! every event with `vsnprintf`, most of what watching cost. A ring buffer that lost events
//! (a page's missed-events flag, or the per-CPU `stats`) makes the run fail, as the block
//! tracer does: a missed close or sync would make the counts wrong.
//!
//! The CPUs' pages are merged by time. A drain hands on only the events stamped before it
//! began: an event stamped later on one CPU may still be followed by an earlier one not yet
//! committed on another, but anything that caused it (a clone, the same thread's previous call)
//! was committed before it was stamped, so the order of related events is kept.
//!
//! The raw records carry the thread, not its process: the thread group is tracked from the
//! `task_newtask` events (`CLONE_THREAD` joins the creator's group) and `sched_process_exec`,
//! and read from `/proc` for a thread whose creation was not seen.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::cleanup;
use crate::prereq;
use crate::raw_cpus::{CpuReader, for_each_record, open_cpus, read_text, wait_for_pages};
use crate::raw_event::{Decoded, Decoder, Decoders, PageLayout, decode, parse_format};
use crate::syscall_line::{SysEvent, SysEventKind};
use crate::syscall_pids::PidFilter;
use crate::tracefs::{TraceError, create_instance, parse_lost_in_stats};

/// How full a CPU's buffer gets, in percent, before the kernel wakes a reader waiting for it
/// ([`SyscallTracer::wait`]): a quarter of it (2 MiB of the 8 MiB a CPU gets by default) is
/// far from a loss at any rate a reader keeps up with, and wakes it seldom.
const WAKE_PERCENT: &str = "25";

/// `clone(2)`'s flag that puts the new task in its creator's thread group.
const CLONE_THREAD: u64 = 0x10000;

/// The calls traced on entry and on exit (absent ones, e.g. `open` on aarch64, are skipped).
const CALLS: &[&str] = &[
    "fsync",
    "fdatasync",
    "sync_file_range",
    "syncfs",
    "sync",
    "write",
    "pwrite64",
    "writev",
    "pwritev",
    "pwritev2",
    // Writes into a file from another descriptor: the output is the first argument
    // (`sendfile64`) or the third (`copy_file_range`, `splice`; a `splice` into a pipe writes
    // no file).
    "sendfile64",
    "copy_file_range",
    "splice",
    "dup",
    "dup2",
    "dup3",
    "fcntl",
    "ftruncate",
];
/// Calls traced on exit only: the opens (their entry is a supervisor stop, which reads the
/// path; the exit gives the descriptor).
const EXIT_ONLY: &[&str] = &["openat", "open", "creat", "openat2"];
/// Calls traced on entry only: a close releases its descriptor whatever it returns.
const ENTER_ONLY: &[&str] = &["close", "close_range"];
/// fcntl's commands that copy a descriptor or change its close-on-exec flag: F_DUPFD,
/// F_SETFD, F_DUPFD_CLOEXEC. SQLite's many lock calls (F_SETLK) are filtered out in the kernel.
const FCNTL_FILTER: &str = "cmd == 0 || cmd == 2 || cmd == 1030";

/// A per-CPU buffer of 8 MiB: about 100 000 events per CPU between two drains.
pub const DEFAULT_SYSCALL_BUFFER_KB: u32 = 8 * 1024;

/// A running capture of one command's system calls.
#[derive(Debug)]
pub struct SyscallTracer {
    /// One reader per CPU; declared before the registry entry is released, so they are closed
    /// first: an instance with an open file cannot be removed.
    cpus: Vec<CpuReader>,
    id: u64,
    path: PathBuf,
    buffer_kb: u32,
    decoders: Decoders,
    merge: Merge,
    page: Vec<u8>,
    /// Each enabled event's filter file and its own condition, for [`PidFilter`].
    filters: Vec<(PathBuf, Option<&'static str>)>,
    /// Events read so far.
    pub events: u64,
}

/// The decoded events of every CPU, merged by time and handed on with their thread group.
#[derive(Debug, Default)]
struct Merge {
    /// Events read but not yet handed on, oldest first.
    held: Vec<(u64, Decoded)>,
    /// Thread group of each thread seen.
    tgids: HashMap<i32, i32>,
}

impl Merge {
    /// Add one read's events (each CPU's in order) and keep all in time order.
    fn add(&mut self, events: impl IntoIterator<Item = (u64, Decoded)>) {
        let before = self.held.len();
        self.held.extend(events);
        if self.held.len() > before {
            // A stable sort: events of one CPU with one time keep their order.
            self.held.sort_by_key(|(t, _)| *t);
        }
    }

    /// Move the events stamped at or before `until_ns` to `out`; a thread whose creation was
    /// not seen gets its group from `proc_tgid`, else its own id.
    fn hand_on(
        &mut self,
        out: &mut Vec<SysEvent>,
        until_ns: u64,
        proc_tgid: impl Fn(i32) -> Option<i32>,
    ) -> u64 {
        let n = self.held.partition_point(|(t, _)| *t <= until_ns);
        let ready: Vec<_> = self.held.drain(..n).collect();
        for (time_ns, d) in ready {
            let tgid = *self
                .tgids
                .entry(d.tid)
                .or_insert_with(|| proc_tgid(d.tid).unwrap_or(d.tid));
            match &d.kind {
                SysEventKind::NewTask { pid, clone_flags } => {
                    let group = if clone_flags & CLONE_THREAD != 0 {
                        tgid
                    } else {
                        *pid
                    };
                    self.tgids.insert(*pid, group);
                }
                SysEventKind::Exec { pid, old_pid } => {
                    self.tgids.remove(old_pid);
                    self.tgids.insert(*pid, *pid);
                }
                _ => {}
            }
            out.push(SysEvent {
                tid: d.tid,
                tgid,
                // Microseconds, as the block trace's times are.
                time_ns: time_ns / 1_000 * 1_000,
                kind: d.kind,
            });
        }
        n as u64
    }
}

impl SyscallTracer {
    /// Make the instance, not yet tracing (its [`marker_path`](Self::marker_path) can be given
    /// to the command before it starts).
    pub fn create(buffer_kb: u32) -> Result<Self, TraceError> {
        prereq::check_root()?;
        let root = prereq::ensure_tracefs()?;
        let id = cleanup::open_entry();
        let path = create_instance(id, &root.join("instances"))?;
        let mut me = Self {
            cpus: Vec::new(),
            id,
            path,
            buffer_kb,
            decoders: Decoders::new(),
            merge: Merge::default(),
            page: Vec::new(),
            filters: Vec::new(),
            events: 0,
        };
        let header = read_text(&me.path.join("events/header_page"))?;
        let layout = PageLayout::from_header_page(&header).map_err(TraceError::Raw)?;
        me.page = vec![0; layout.page_bytes];
        me.write("tracing_on", "0")?;
        me.write("trace_clock", "mono")?;
        me.write("buffer_size_kb", &buffer_kb.to_string())?;
        // Before Linux 6.1, `poll` ignores the watermark and reports a buffer readable as soon
        // as it holds anything (before 4.20 there is no `buffer_percent` at all): there the
        // reader's own spacing between reads (`supervise`) is what keeps it from waking at
        // every event.
        if me.path.join("buffer_percent").exists() {
            me.write("buffer_percent", WAKE_PERCENT)?;
        }
        let mut events: Vec<(&str, String)> = Vec::new();
        for call in CALLS {
            events.push(("syscalls", format!("sys_enter_{call}")));
            events.push(("syscalls", format!("sys_exit_{call}")));
        }
        for call in EXIT_ONLY {
            events.push(("syscalls", format!("sys_exit_{call}")));
        }
        for call in ENTER_ONLY {
            events.push(("syscalls", format!("sys_enter_{call}")));
        }
        events.push(("task", "task_newtask".into()));
        events.push(("sched", "sched_process_exec".into()));
        for (system, name) in &events {
            let dir = me.path.join("events").join(system).join(name);
            if !dir.exists() {
                continue;
            }
            me.learn(system, name)?;
            me.write(&format!("events/{system}/{name}/enable"), "1")?;
            let own = (name == "sys_enter_fcntl").then_some(FCNTL_FILTER);
            me.filters
                .push((PathBuf::from(format!("events/{system}/{name}/filter")), own));
        }
        me.learn("ftrace", "print")?;
        me.write("events/syscalls/sys_enter_fcntl/filter", FCNTL_FILTER)?;
        me.write("trace", "")?;
        me.cpus = open_cpus(&me.path)?;
        Ok(me)
    }

    /// Read an event's format and keep its decoder.
    fn learn(&mut self, system: &str, name: &str) -> Result<(), TraceError> {
        let text = read_text(
            &self
                .path
                .join("events")
                .join(system)
                .join(name)
                .join("format"),
        )?;
        let f = parse_format(name, &text).map_err(TraceError::Raw)?;
        let d = Decoder::for_event(system, name, &f).map_err(TraceError::Raw)?;
        self.decoders.insert(f.id, d);
        Ok(())
    }

    /// The instance's `trace_marker`: what a task writes there is recorded with the events.
    pub fn marker_path(&self) -> PathBuf {
        self.path.join("trace_marker")
    }

    /// Start tracing process `pid`, held before it runs; the filter returned takes each task
    /// it starts ([`PidFilter::add`], while ptrace holds the task at its first stop).
    pub fn follow(&mut self, pid: i32) -> Result<PidFilter, TraceError> {
        self.merge.tgids.insert(pid, pid);
        let mut f = PidFilter::new(self.path.clone(), self.filters.clone());
        f.add(pid)?;
        self.write("tracing_on", "1")?;
        Ok(f)
    }

    fn write(&self, file: &str, value: &str) -> Result<(), TraceError> {
        let path = self.path.join(file);
        std::fs::write(&path, value).map_err(|source| TraceError::Write {
            path,
            value: value.into(),
            source,
        })
    }

    /// Append the events recorded since the last call, in time order. Fails if the buffer
    /// lost events.
    pub fn drain(&mut self, out: &mut Vec<SysEvent>) -> Result<(), TraceError> {
        let began_ns = crate::tracefs::now_mono_ns();
        self.read_pages()?;
        self.hand_on(out, began_ns);
        Ok(())
    }

    /// Wait until a CPU's buffer is a quarter full, `wake` is readable, or `at_most` has
    /// passed: the reader sleeps through a run instead of waking every millisecond.
    pub fn wait(
        &self,
        wake: std::os::fd::BorrowedFd<'_>,
        at_most: std::time::Duration,
    ) -> Result<(), TraceError> {
        wait_for_pages(&self.cpus, wake, at_most)
    }

    /// Read every CPU's pages into the merge.
    fn read_pages(&mut self) -> Result<(), TraceError> {
        let mut read = Vec::new();
        let decoders = &self.decoders;
        for_each_record(
            &mut self.cpus,
            &mut self.page,
            self.buffer_kb,
            |time_ns, data| {
                if let Some(d) = decode(decoders, data).map_err(TraceError::Raw)? {
                    read.push((time_ns, d));
                }
                Ok(())
            },
        )?;
        self.merge.add(read);
        Ok(())
    }

    /// Hand on the events stamped at or before `until_ns`.
    fn hand_on(&mut self, out: &mut Vec<SysEvent>, until_ns: u64) {
        self.events += self.merge.hand_on(out, until_ns, proc_tgid);
    }

    /// Close the readers (a signal cleanup is removing the instance); later drains read nothing.
    pub fn close_pipe(&mut self) {
        self.cpus.clear();
    }

    /// Stop tracing, read what is left into `out`, and remove the instance; fails if any event
    /// was lost.
    pub fn stop(mut self, out: &mut Vec<SysEvent>) -> Result<(), TraceError> {
        self.write("tracing_on", "0")?;
        self.read_pages()?;
        self.hand_on(out, u64::MAX);
        let mut lost = 0;
        let per_cpu = self.path.join("per_cpu");
        if let Ok(entries) = std::fs::read_dir(&per_cpu) {
            for e in entries.flatten() {
                if let Ok(text) = std::fs::read_to_string(e.path().join("stats")) {
                    lost += parse_lost_in_stats(&text);
                }
            }
        }
        self.cpus.clear();
        let problems = cleanup::release(self.id);
        if let Some(problem) = problems.into_iter().next() {
            return Err(problem.into());
        }
        if lost > 0 {
            return Err(TraceError::EventsLost {
                lost,
                buffer_kb: self.buffer_kb,
            });
        }
        Ok(())
    }
}

impl Drop for SyscallTracer {
    fn drop(&mut self) {
        self.cpus.clear();
        for p in cleanup::release(self.id) {
            eprintln!("joj-linux: warning: {p}");
        }
    }
}

/// The thread group of thread `tid`, as `/proc` says while it lives.
pub(crate) fn proc_tgid(tid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|t| t.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(tid: i32, kind: SysEventKind) -> Decoded {
        Decoded { tid, kind }
    }

    fn close(fd: u64) -> SysEventKind {
        SysEventKind::Enter {
            call: "close".into(),
            args: vec![fd],
        }
    }

    #[test]
    fn cpus_are_merged_by_time_and_later_events_wait_for_the_next_read() {
        let mut m = Merge::default();
        m.tgids.insert(1, 1);
        m.add([(3_000, ev(1, close(3))), (9_000, ev(1, close(9)))]);
        m.add([(5_000, ev(1, close(5)))]);
        let mut out = Vec::new();
        assert_eq!(m.hand_on(&mut out, 6_000, |_| None), 2);
        let fds: Vec<_> = out.iter().map(|e| e.time_ns).collect();
        assert_eq!(fds, [3_000, 5_000]);
        // An event of another CPU stamped before the one held comes first at the next read.
        m.add([(7_000, ev(1, close(7)))]);
        out.clear();
        m.hand_on(&mut out, u64::MAX, |_| None);
        let fds: Vec<_> = out.iter().map(|e| e.time_ns).collect();
        assert_eq!(fds, [7_000, 9_000]);
    }

    #[test]
    fn thread_groups_follow_clones_and_execs_and_else_proc() {
        let mut m = Merge::default();
        m.tgids.insert(10, 10);
        let new = |pid, clone_flags| SysEventKind::NewTask { pid, clone_flags };
        m.add([
            (1, ev(10, new(11, CLONE_THREAD | 0x400))),
            (2, ev(10, new(12, 0))),
            (3, ev(11, close(3))),
            (4, ev(12, close(3))),
            (
                5,
                ev(
                    10,
                    SysEventKind::Exec {
                        pid: 10,
                        old_pid: 11,
                    },
                ),
            ),
            (6, ev(10, close(4))),
            (7, ev(99, close(5))),
            (8, ev(98, close(5))),
        ]);
        let mut out = Vec::new();
        m.hand_on(&mut out, u64::MAX, |tid| (tid == 99).then_some(42));
        let groups: Vec<_> = out.iter().map(|e| (e.tid, e.tgid)).collect();
        assert_eq!(
            groups,
            [
                (10, 10),
                (10, 10),
                (11, 10),
                (12, 12),
                (10, 10),
                (10, 10),
                (99, 42),
                (98, 98)
            ]
        );
        assert!(!m.tgids.contains_key(&11));
    }
}
