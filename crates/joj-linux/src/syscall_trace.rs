//! Seeing a command's system calls without stopping it: a private tracefs instance with the
//! kernel's syscall tracepoints (`events/syscalls/sys_enter_*`, `sys_exit_*`) for the calls that
//! make data durable, write, or shape a process's descriptor table, and the task events that
//! create and exec processes, filtered to the command's process and its descendants
//! (`set_event_pid` with option `event-fork`: a child is added as it is forked, in the kernel).
//!
//! The tracepoints record the call and its integer arguments; the calling task is never stopped
//! or woken. A path argument is only a pointer here, so the supervisor still stops at the calls
//! whose path it must read ([`crate::supervise`]). Events are read through `trace_pipe` while
//! the command runs ([`SyscallTracer::drain`]); a ring buffer that lost events makes the run
//! fail, as the block tracer does: a missed close or sync would make the counts wrong.

use std::path::PathBuf;

use crate::cleanup;
use crate::prereq;
use crate::syscall_line::{SysEvent, SysLine, parse_sys_line};
use crate::tracefs::{TraceError, create_instance, parse_lost_in_stats};

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
    "dup",
    "dup2",
    "dup3",
    "fcntl",
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
    /// Declared before the registry entry is released, so it is closed first: an instance with
    /// an open file cannot be removed.
    pipe: Option<std::fs::File>,
    id: u64,
    path: PathBuf,
    buffer_kb: u32,
    partial: Vec<u8>,
    lines: usize,
    /// Events read so far.
    pub events: u64,
}

impl SyscallTracer {
    /// Make the instance, not yet tracing (its [`marker_path`](Self::marker_path) can be given
    /// to the command before it starts).
    pub fn create(buffer_kb: u32) -> Result<Self, TraceError> {
        use std::os::unix::fs::OpenOptionsExt;
        prereq::check_root()?;
        let root = prereq::ensure_tracefs()?;
        let id = cleanup::open_entry();
        let path = create_instance(id, &root.join("instances"))?;
        let mut me = Self {
            pipe: None,
            id,
            path,
            buffer_kb,
            partial: Vec::new(),
            lines: 0,
            events: 0,
        };
        me.write("tracing_on", "0")?;
        me.write("trace_clock", "mono")?;
        me.write("buffer_size_kb", &buffer_kb.to_string())?;
        me.write("options/record-tgid", "1")?;
        me.write("options/irq-info", "0")?;
        me.write("options/event-fork", "1")?;
        let syscalls = me.path.join("events/syscalls");
        let enable = |event: String| -> Result<(), TraceError> {
            if syscalls.join(&event).exists() {
                me.write(&format!("events/syscalls/{event}/enable"), "1")?;
            }
            Ok(())
        };
        for call in CALLS {
            enable(format!("sys_enter_{call}"))?;
            enable(format!("sys_exit_{call}"))?;
        }
        for call in EXIT_ONLY {
            enable(format!("sys_exit_{call}"))?;
        }
        for call in ENTER_ONLY {
            enable(format!("sys_enter_{call}"))?;
        }
        me.write("events/syscalls/sys_enter_fcntl/filter", FCNTL_FILTER)?;
        me.write("events/task/task_newtask/enable", "1")?;
        me.write("events/sched/sched_process_exec/enable", "1")?;
        me.write("trace", "")?;
        let pipe_path = me.path.join("trace_pipe");
        me.pipe = Some(
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&pipe_path)
                .map_err(|source| TraceError::Read {
                    path: pipe_path,
                    source,
                })?,
        );
        Ok(me)
    }

    /// The instance's `trace_marker`: what a task writes there is recorded with the events.
    pub fn marker_path(&self) -> PathBuf {
        self.path.join("trace_marker")
    }

    /// Start tracing process `pid` and every process it forks from now on.
    pub fn follow(&mut self, pid: i32) -> Result<(), TraceError> {
        self.write("set_event_pid", &pid.to_string())?;
        self.write("tracing_on", "1")
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
        use std::io::Read;
        let Some(pipe) = self.pipe.as_mut() else {
            return Ok(());
        };
        let mut chunk = vec![0u8; 256 * 1024];
        loop {
            let n = match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(TraceError::Read {
                        path: self.path.join("trace_pipe"),
                        source,
                    });
                }
            };
            self.partial.extend_from_slice(&chunk[..n]);
            let Some(last_nl) = self.partial.iter().rposition(|&b| b == b'\n') else {
                continue;
            };
            let rest = self.partial.split_off(last_nl + 1);
            let complete = std::mem::replace(&mut self.partial, rest);
            for line in String::from_utf8_lossy(&complete).lines() {
                self.lines += 1;
                match parse_sys_line(line) {
                    Ok(SysLine::Event(e)) => {
                        self.events += 1;
                        out.push(e);
                    }
                    Ok(SysLine::Lost { events }) => {
                        return Err(TraceError::EventsLost {
                            lost: events,
                            buffer_kb: self.buffer_kb,
                        });
                    }
                    Ok(SysLine::Other) => {}
                    Err(reason) => {
                        return Err(TraceError::SyscallLine {
                            line_no: self.lines,
                            line: line.to_string(),
                            reason,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Close the pipe (a signal cleanup is removing the instance); later drains read nothing.
    pub fn close_pipe(&mut self) {
        self.pipe = None;
    }

    /// Stop tracing, read what is left into `out`, and remove the instance; fails if any event
    /// was lost.
    pub fn stop(mut self, out: &mut Vec<SysEvent>) -> Result<(), TraceError> {
        self.write("tracing_on", "0")?;
        self.drain(out)?;
        let mut lost = 0;
        let per_cpu = self.path.join("per_cpu");
        if let Ok(entries) = std::fs::read_dir(&per_cpu) {
            for e in entries.flatten() {
                if let Ok(text) = std::fs::read_to_string(e.path().join("stats")) {
                    lost += parse_lost_in_stats(&text);
                }
            }
        }
        self.pipe = None;
        let problems = cleanup::take(self.id)
            .map(cleanup::Resources::release)
            .unwrap_or_default();
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
        self.pipe = None;
        if let Some(res) = cleanup::take(self.id) {
            for p in res.release() {
                eprintln!("joj-linux: warning: {p}");
            }
        }
    }
}
