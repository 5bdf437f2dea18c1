//! Parsing the text lines of a tracefs instance that records system calls (`syscalls/sys_enter_*`,
//! `sys_exit_*`) and the task events that shape descriptor tables (`task:task_newtask`,
//! `sched:sched_process_exec`), and the events both forms give. Pure: no I/O. The live tracer
//! ([`crate::syscall_trace`]) decodes the binary pages into the same [`SysEvent`]s
//! ([`crate::raw_event`]); the text form is what `trace_pipe` shows a person.
//!
//! A line is `<task>-<tid> (<tgid>) [<cpu>] <secs>.<usecs>: <event>` with option `record-tgid`
//! on and `irq-info` off. The events print as (`events/syscalls/sys_enter_*/format`):
//!
//! ```text
//! sys_pwrite64(fd: 4, buf: 0x7ffc61379034, count: 0x1000, pos: 0x1208)   an entry
//! sys_pwrite64 -> 0x1000                                                 its exit
//! task_newtask: pid=22887 comm=python3 clone_flags=4100 oom_score_adj=0
//! sched_process_exec: filename=/usr/bin/true pid=22887 old_pid=22887
//! ```
//!
//! Argument values print in hexadecimal with `0x`, or in decimal below ten; a return value is
//! hexadecimal (a negative errno as its two's complement). A task name may hold any byte but a
//! newline, so fields are found from the right end of the prefix.

use crate::traceline::{TraceLine, TraceLineError, parse_trace_line_prefix};

/// One recorded system call event or task event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysEvent {
    /// The thread that made the call (for task events: the one the event ran in).
    pub tid: i32,
    /// Its process (thread group).
    pub tgid: i32,
    /// CLOCK_MONOTONIC nanoseconds (microsecond resolution).
    pub time_ns: u64,
    pub kind: SysEventKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SysEventKind {
    /// A call was entered with these arguments (`sys_<name>`, by position).
    Enter { call: String, args: Vec<u64> },
    /// A call returned `ret` (negative: an errno).
    Exit { call: String, ret: i64 },
    /// A task was created by `tid` (`clone_flags` as `clone(2)` takes them).
    NewTask { pid: i32, clone_flags: u64 },
    /// `old_pid` executed a new program and is now `pid` (a thread other than the leader
    /// takes the leader's id).
    Exec { pid: i32, old_pid: i32 },
    /// A line the task wrote to the instance's `trace_marker` (`joj_vfs::marker`).
    Marker(String),
}

/// A line of the instance's `trace_pipe`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SysLine {
    Event(SysEvent),
    /// `CPU:N [LOST M EVENTS]`.
    Lost {
        events: u64,
    },
    /// A comment, blank line or another event.
    Other,
}

/// Why a line is not one this parser reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SysLineError {
    #[error(transparent)]
    Prefix(#[from] TraceLineError),
    #[error("no (tgid) column before the cpu (option record-tgid off?)")]
    NoTgid,
    #[error("bad system call event {text:?}")]
    BadCall { text: String },
    #[error("bad value {text:?}")]
    BadValue { text: String },
    #[error("{event} without its {field}")]
    MissingField {
        event: &'static str,
        field: &'static str,
    },
}

/// Parse one line.
pub fn parse_sys_line(line: &str) -> Result<SysLine, SysLineError> {
    let prefix = match parse_trace_line_prefix(line)? {
        Err(TraceLine::Lost { events, .. }) => return Ok(SysLine::Lost { events }),
        Err(_) => return Ok(SysLine::Other),
        Ok(p) => p,
    };
    let tgid = prefix.tgid.ok_or(SysLineError::NoTgid)?;
    let rest = prefix.rest;
    let missing = |event, field| SysLineError::MissingField { event, field };
    let kind = if let Some(payload) = rest.strip_prefix("task_newtask: ") {
        SysEventKind::NewTask {
            pid: key_value(payload, "pid=").ok_or(missing("task_newtask", "pid"))? as i32,
            clone_flags: key_hex(payload, "clone_flags=")
                .ok_or(missing("task_newtask", "clone_flags"))?,
        }
    } else if let Some(payload) = rest.strip_prefix("sched_process_exec: ") {
        SysEventKind::Exec {
            pid: key_value(payload, " pid=").ok_or(missing("sched_process_exec", "pid"))? as i32,
            old_pid: key_value(payload, " old_pid=")
                .ok_or(missing("sched_process_exec", "old_pid"))? as i32,
        }
    } else if let Some(text) = rest.strip_prefix("tracing_mark_write: ") {
        SysEventKind::Marker(text.trim_end().to_string())
    } else if rest.starts_with("sys_") {
        parse_call(rest)?
    } else {
        return Ok(SysLine::Other);
    };
    Ok(SysLine::Event(SysEvent {
        tid: prefix.pid,
        tgid,
        time_ns: prefix.time_ns,
        kind,
    }))
}

/// `sys_x(a: 1, b: 0x2)` (an entry) or `sys_x -> 0x0` (an exit).
fn parse_call(text: &str) -> Result<SysEventKind, SysLineError> {
    let bad = || SysLineError::BadCall {
        text: text.to_string(),
    };
    if let Some((name, ret)) = text.split_once(" -> ") {
        let ret = value(ret.trim())?;
        return Ok(SysEventKind::Exit {
            call: name.trim_start_matches("sys_").to_string(),
            ret: ret as i64,
        });
    }
    let (name, args) = text.split_once('(').ok_or_else(bad)?;
    let args = args.trim_end().strip_suffix(')').ok_or_else(bad)?;
    let mut values = Vec::new();
    if !args.trim().is_empty() {
        for a in args.split(", ") {
            let (_, v) = a.split_once(": ").ok_or_else(bad)?;
            values.push(value(v.trim())?);
        }
    }
    Ok(SysEventKind::Enter {
        call: name.trim_start_matches("sys_").to_string(),
        args: values,
    })
}

/// `0x1f` or `7`.
fn value(s: &str) -> Result<u64, SysLineError> {
    let parsed = match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse::<u64>().ok(),
    };
    parsed.ok_or_else(|| SysLineError::BadValue {
        text: s.to_string(),
    })
}

/// The decimal number after `key` in `payload`.
fn key_value(payload: &str, key: &str) -> Option<u64> {
    let at = payload.find(key)? + key.len();
    let digits: String = payload[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The hexadecimal number (without `0x`) after `key`.
fn key_hex(payload: &str, key: &str) -> Option<u64> {
    let at = payload.find(key)? + key.len();
    let digits: String = payload[at..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    u64::from_str_radix(&digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(line: &str) -> SysEvent {
        match parse_sys_line(line).unwrap() {
            SysLine::Event(e) => e,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn entries_and_exits_of_calls_are_read_with_their_task_and_time() {
        let e = event(
            "         python3-22415   (  22415) [001]   6505.076058: sys_pwrite64(fd: 4, buf: 0x29be9480, count: 0x1000, pos: 0x120c)",
        );
        assert_eq!(
            (e.tid, e.tgid, e.time_ns),
            (22415, 22415, 6_505_076_058_000)
        );
        assert_eq!(
            e.kind,
            SysEventKind::Enter {
                call: "pwrite64".into(),
                args: vec![4, 0x29be9480, 0x1000, 0x120c]
            }
        );
        let x = event("  a b-c-7 (   5) [000]   1.000002: sys_fdatasync -> 0xfffffffffffffffb");
        assert_eq!((x.tid, x.tgid), (7, 5));
        assert_eq!(
            x.kind,
            SysEventKind::Exit {
                call: "fdatasync".into(),
                ret: -5
            }
        );
        assert_eq!(
            event("x-1 (1) [0] 2.5: sys_sync()").kind,
            SysEventKind::Enter {
                call: "sync".into(),
                args: vec![]
            }
        );
    }

    #[test]
    fn task_events_give_the_new_task_and_exec_ids() {
        let n = event(
            "python3-22415 (22415) [001] 6505.081146: task_newtask: pid=22887 comm=python3 clone_flags=3d0f00 oom_score_adj=0",
        );
        assert_eq!(
            n.kind,
            SysEventKind::NewTask {
                pid: 22887,
                clone_flags: 0x3d0f00
            }
        );
        let x = event(
            "true-22887 (22887) [001] 6505.084982: sched_process_exec: filename=/usr/bin/true pid=22887 old_pid=22890",
        );
        assert_eq!(
            x.kind,
            SysEventKind::Exec {
                pid: 22887,
                old_pid: 22890
            }
        );
    }

    #[test]
    fn a_marker_written_by_the_command_is_read_with_its_writer() {
        let m = event("python3-9 (9) [000] 5.000001: tracing_mark_write: joj commit /p/a.db");
        assert_eq!(m.tid, 9);
        assert_eq!(m.kind, SysEventKind::Marker("joj commit /p/a.db".into()));
    }

    #[test]
    fn lost_markers_are_counted_and_bad_lines_named() {
        assert_eq!(
            parse_sys_line("CPU:1 [LOST 12 EVENTS]").unwrap(),
            SysLine::Lost { events: 12 }
        );
        assert_eq!(parse_sys_line("# tracer: nop").unwrap(), SysLine::Other);
        assert!(matches!(
            parse_sys_line("x-1 [000] 1.0: sys_close(fd: 3)"),
            Err(SysLineError::NoTgid)
        ));
        assert!(matches!(
            parse_sys_line("x-1 (1) [000] 1.0: sys_close(fd: zz)"),
            Err(SysLineError::BadValue { .. })
        ));
    }
}
