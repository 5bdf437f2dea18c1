//! Parsing the text lines of a tracefs `trace` file into block records. Pure: no I/O.
//!
//! A line is `<task>-<pid> [<cpu>] <flags> <secs>.<usecs>: <event>: <payload>`, where the task
//! name may contain spaces, dashes and brackets, the flags column (`.....`, `.N...`, `d..1.`)
//! may be absent, and `(<tgid>)` may precede the cpu. The payloads follow the events' print
//! formats (see `events/block/<event>/format`):
//! - `block_rq_issue`:  `%d,%d %s %u (%s) %llu + %u %s,%u,%u [%s]` — dev, rwbs, bytes, cmd,
//!   sector, sectors, ioprio class/level/hint, comm;
//! - `block_bio_queue`: `%d,%d %s %llu + %u [%s]` — dev, rwbs, sector, sectors, comm;
//! - `block_rq_complete`: `%d,%d %s (%s) %llu + %u %s,%u,%u [%d]` — dev, rwbs, cmd, sector,
//!   sectors, ioprio (absent before Linux 6.x), error.
//!
//! The comm at the end of the payload (the task that issued the request, at most 15 bytes) is
//! the one recorded; it is the last field, so everything between its brackets belongs to it.
//! Timestamps of the `mono` clock print as seconds with microseconds, so `time_ns` has
//! microsecond resolution.

use joj_trace::record::{Completion, Op, TraceRecord};

/// A bio as the filesystem submitted it (`block_bio_queue`), before the block layer split,
/// merged or rewrote it. On a device without FUA support the block layer turns a FUA write into
/// write + flush before `block_rq_issue`, so only here is the filesystem's FUA intent visible.
/// An empty preflush bio (`FWS 0 + 0`, from an fsync of a raw device) has `op == Write`,
/// `preflush` set and zero sectors.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BioRecord {
    /// Queue time, nanoseconds on CLOCK_MONOTONIC.
    pub time_ns: u64,
    /// Device as `major:minor`.
    pub dev: String,
    pub op: Op,
    pub preflush: bool,
    pub fua: bool,
    pub sync: bool,
    pub meta: bool,
    /// First sector (512-byte units).
    pub sector: u64,
    pub sectors: u64,
    /// Task that submitted the bio.
    pub comm: String,
}

/// What one line of a `trace` file holds.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceLine {
    /// A `block_rq_issue` event: a request as issued to the device driver.
    Request(TraceRecord),
    /// A `block_bio_queue` event.
    Bio(BioRecord),
    /// A `block_rq_complete` event: a request completed.
    Complete(Completion),
    /// `CPU:N [LOST M EVENTS]`: the ring buffer overwrote events before they were read.
    Lost { cpu: u32, events: u64 },
    /// A header comment, blank line, or another event.
    Other,
}

/// Why a line of a tracefs `trace` file is not an event this parser can read. Each variant names
/// what was malformed and carries the offending text; the caller adds the line and its number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceLineError {
    /// No `<task>-<pid> [<cpu>]` prefix: not an event line.
    #[error("no `<task>-<pid> [<cpu>]` prefix")]
    NoTaskPidCpu,
    /// Nothing but `rest` after the `[<cpu>]` column.
    #[error("line ends after the cpu: {rest:?}")]
    EndsAfterCpu { rest: String },
    /// Nothing but `rest` after the flags column.
    #[error("line ends after the flags: {rest:?}")]
    EndsAfterFlags { rest: String },
    /// Where the timestamp belongs, `text` does not end with `:`.
    #[error("timestamp without ':': {text:?}")]
    TimestampWithoutColon { text: String },
    /// The timestamp is not `<seconds>.<at most nine digits>`.
    #[error("bad timestamp {text:?}: want <seconds>.<at most 9 digits>")]
    BadTimestamp { text: String },
    /// The timestamp does not fit `u64` nanoseconds.
    #[error("timestamp {text:?} overflows u64 nanoseconds")]
    TimestampOverflows { text: String },
    /// No `<event>: ` after the timestamp; `text` is what follows it.
    #[error("no `<event>: ` after the timestamp: {text:?}")]
    NoEvent { text: String },
    /// A line starting `CPU:` that is not `CPU:<n> [LOST <m> EVENTS]`.
    #[error("bad LOST marker: {text:?}")]
    BadLostMarker { text: String },
    /// The payload stops before its `missing` field.
    #[error("payload ends before its {missing}")]
    PayloadEndsEarly { missing: &'static str },
    /// The device is not `<major>,<minor>`.
    #[error("bad device {text:?}: want <major>,<minor>")]
    BadDevice { text: String },
    /// The rwbs field (`WSM`, `FF`, …) holds a letter of no known meaning or no operation.
    #[error("bad rwbs {text:?}")]
    BadRwbs { text: String },
    /// `block_rq_issue` without its `(<cmd>)` field; `text` is where it should start.
    #[error("no (cmd) field: {text:?}")]
    NoCmd { text: String },
    /// The `(<cmd>)` field of `block_rq_issue` is not closed by `) `.
    #[error("unterminated (cmd) field: {text:?}")]
    UnterminatedCmd { text: String },
    /// `found` stands where the `+` between sector and length belongs.
    #[error("no `+` between sector and length: found {found:?}")]
    NoPlus { found: String },
    #[error("bad sector {text:?}")]
    BadSector { text: String },
    #[error("bad sector count {text:?}")]
    BadSectorCount { text: String },
    /// The payload does not end with `[<comm>]`.
    #[error("no [comm] at the end: {text:?}")]
    NoComm { text: String },
}

/// Parses one line of a tracefs `trace` file.
pub fn parse_trace_line(line: &str) -> Result<TraceLine, TraceLineError> {
    let p = match parse_trace_line_prefix(line)? {
        Ok(p) => p,
        Err(other) => return Ok(other),
    };
    let (event, payload) = p
        .rest
        .split_once(": ")
        .ok_or_else(|| TraceLineError::NoEvent {
            text: p.rest.to_string(),
        })?;
    match event {
        "block_rq_issue" => parse_rq_issue(p.time_ns, payload).map(TraceLine::Request),
        "block_bio_queue" => parse_bio_queue(p.time_ns, payload).map(TraceLine::Bio),
        "block_rq_complete" => parse_rq_complete(p.time_ns, payload).map(TraceLine::Complete),
        _ => Ok(TraceLine::Other),
    }
}

/// The columns every event line starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LinePrefix<'a> {
    /// The task (thread) id after `<task>-`.
    pub(crate) pid: i32,
    /// The `(<tgid>)` column, when option `record-tgid` prints it with a number.
    pub(crate) tgid: Option<i32>,
    pub(crate) time_ns: u64,
    /// What follows `<secs>.<usecs>: `: the event and its payload.
    pub(crate) rest: &'a str,
}

/// The task, time and the rest of an event line; `Err` with a [`TraceLine::Lost`] or
/// [`TraceLine::Other`] for a line that is no event.
pub(crate) fn parse_trace_line_prefix(
    line: &str,
) -> Result<Result<LinePrefix<'_>, TraceLine>, TraceLineError> {
    let line = line.trim_end_matches(['\n', '\r']);
    let trimmed = line.trim_start();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Ok(Err(TraceLine::Other));
    }
    if let Some(rest) = trimmed.strip_prefix("CPU:") {
        return parse_lost(rest)
            .map(Err)
            .ok_or_else(|| TraceLineError::BadLostMarker {
                text: trimmed.to_string(),
            });
    }
    let cpu_end = cpu_field_end(line).ok_or(TraceLineError::NoTaskPidCpu)?;
    let (pid, tgid) = task_ids(&line[..cpu_end]).ok_or(TraceLineError::NoTaskPidCpu)?;
    let after_cpu = &line[cpu_end..];
    let (first, rest) =
        after_cpu
            .trim_start()
            .split_once(' ')
            .ok_or_else(|| TraceLineError::EndsAfterCpu {
                rest: after_cpu.to_string(),
            })?;
    // The flags column is optional (option `irq-info` off); the timestamp ends with ':'.
    let (stamp, rest) = if first.ends_with(':') {
        (first, rest)
    } else {
        rest.trim_start()
            .split_once(' ')
            .ok_or_else(|| TraceLineError::EndsAfterFlags {
                rest: rest.to_string(),
            })?
    };
    let stamp = stamp
        .strip_suffix(':')
        .ok_or_else(|| TraceLineError::TimestampWithoutColon {
            text: stamp.to_string(),
        })?;
    let time_ns = parse_timestamp(stamp)?;
    Ok(Ok(LinePrefix {
        pid,
        tgid,
        time_ns,
        rest: rest.trim_start(),
    }))
}

/// `<task>-<pid> [(<tgid>)] [<cpu>]` (the text up to the cpu column's end): the pid and tgid.
fn task_ids(head: &str) -> Option<(i32, Option<i32>)> {
    let open = head.rfind('[')?;
    let mut before = head[..open].trim_end();
    let mut tgid = None;
    if before.ends_with(')') {
        let p = before.rfind('(')?;
        tgid = before[p + 1..before.len() - 1].trim().parse().ok();
        before = head[..p].trim_end();
    }
    let digits = before.bytes().rev().take_while(u8::is_ascii_digit).count();
    let pid = before[before.len() - digits..].parse().ok()?;
    Some((pid, tgid))
}

/// Index just past the `[cpu]` field that follows `<task>-<pid>` (and an optional `(<tgid>)`).
fn cpu_field_end(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(off) = line[from..].find('[') {
        let open = from + off;
        from = open + 1;
        let digits = bytes[open + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 || bytes.get(open + 1 + digits) != Some(&b']') {
            continue;
        }
        let mut before = line[..open].trim_end();
        if before.ends_with(')') {
            // `(tgid)` column: `(  123)` or `(-------)`.
            let Some(p) = before.rfind('(') else { continue };
            before = line[..p].trim_end();
        }
        let pid_digits = before.bytes().rev().take_while(u8::is_ascii_digit).count();
        if pid_digits > 0 && before[..before.len() - pid_digits].ends_with('-') {
            return Some(open + digits + 2);
        }
    }
    None
}

/// `"1 [LOST 123 EVENTS]"`, what follows `CPU:`.
fn parse_lost(rest: &str) -> Option<TraceLine> {
    let (cpu, rest) = rest.split_once(' ')?;
    let events = rest
        .trim()
        .strip_prefix("[LOST ")
        .and_then(|r| r.strip_suffix(" EVENTS]"))?;
    Some(TraceLine::Lost {
        cpu: cpu.parse().ok()?,
        events: events.trim().parse().ok()?,
    })
}

/// `"245.305094"` → nanoseconds. Accepts up to nine fractional digits.
fn parse_timestamp(s: &str) -> Result<u64, TraceLineError> {
    let bad = || TraceLineError::BadTimestamp {
        text: s.to_string(),
    };
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let secs: u64 = secs.trim().parse().map_err(|_| bad())?;
    let frac_ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| bad())?
    };
    let frac_ns = frac_ns * 10u64.pow(9 - frac.len() as u32);
    secs.checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(frac_ns))
        .ok_or_else(|| TraceLineError::TimestampOverflows {
            text: s.to_string(),
        })
}

/// Splits off the next space-separated field, the payload's `name`.
fn field<'a>(s: &'a str, name: &'static str) -> Result<(&'a str, &'a str), TraceLineError> {
    let s = s.trim_start();
    match s.split_once(' ') {
        Some((f, rest)) => Ok((f, rest)),
        None if !s.is_empty() => Ok((s, "")),
        None => Err(TraceLineError::PayloadEndsEarly { missing: name }),
    }
}

/// `"7,0"` → `"7:0"`.
fn parse_dev(s: &str) -> Result<String, TraceLineError> {
    let numbers = s
        .split_once(',')
        .and_then(|(major, minor)| Some((major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?)));
    match numbers {
        Some((major, minor)) => Ok(format!("{major}:{minor}")),
        None => Err(TraceLineError::BadDevice {
            text: s.to_string(),
        }),
    }
}

/// `"WSM"` → (op, preflush, fua, sync, meta).
fn parse_rwbs(s: &str) -> Result<(Op, bool, bool, bool, bool), TraceLineError> {
    TraceRecord::parse_rwbs(s).ok_or_else(|| TraceLineError::BadRwbs {
        text: s.to_string(),
    })
}

/// `"[comm]"` at the end of a payload. The comm may itself contain brackets and spaces.
fn parse_comm(s: &str) -> Result<String, TraceLineError> {
    let s = s.trim_start();
    let inner = s
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or_else(|| TraceLineError::NoComm {
            text: s.to_string(),
        })?;
    Ok(inner.to_string())
}

/// `"229440 + 8"` → (sector, sectors, rest).
fn parse_range(s: &str) -> Result<(u64, u64, &str), TraceLineError> {
    let (sector, rest) = field(s, "sector")?;
    let (plus, rest) = field(rest, "`+`")?;
    if plus != "+" {
        return Err(TraceLineError::NoPlus {
            found: plus.to_string(),
        });
    }
    let (sectors, rest) = field(rest, "sector count")?;
    Ok((
        sector.parse().map_err(|_| TraceLineError::BadSector {
            text: sector.to_string(),
        })?,
        sectors
            .parse()
            .map_err(|_| TraceLineError::BadSectorCount {
                text: sectors.to_string(),
            })?,
        rest,
    ))
}

/// What follows the `(<cmd>)` field: the cmd of a passthrough request is hex bytes in
/// parentheses, empty for others.
fn after_cmd(rest: &str) -> Result<&str, TraceLineError> {
    let rest = rest.trim_start();
    let cmd = rest
        .strip_prefix('(')
        .ok_or_else(|| TraceLineError::NoCmd {
            text: rest.to_string(),
        })?;
    let close = cmd
        .find(") ")
        .ok_or_else(|| TraceLineError::UnterminatedCmd {
            text: rest.to_string(),
        })?;
    Ok(&cmd[close + 2..])
}

/// `7,0 WSM 4096 () 229440 + 8 be,0,3 [jbd2/loop0-8]`
fn parse_rq_issue(time_ns: u64, payload: &str) -> Result<TraceRecord, TraceLineError> {
    let (dev, rest) = field(payload, "device")?;
    let (rwbs, rest) = field(rest, "rwbs")?;
    let (_bytes, rest) = field(rest, "bytes")?;
    let (sector, sectors, rest) = parse_range(after_cmd(rest)?)?;
    let (_ioprio, rest) = field(rest, "ioprio")?;
    let (dev, comm) = (parse_dev(dev)?, parse_comm(rest)?);
    TraceRecord::issued(time_ns, dev, rwbs, (sector, sectors), comm).ok_or_else(|| {
        TraceLineError::BadRwbs {
            text: rwbs.to_string(),
        }
    })
}

/// `7,0 WS () 229440 + 8 be,0,3 [0]`: what identifies the request (the ioprio and error
/// fields that follow are not needed).
fn parse_rq_complete(time_ns: u64, payload: &str) -> Result<Completion, TraceLineError> {
    let (dev, rest) = field(payload, "device")?;
    let (rwbs, rest) = field(rest, "rwbs")?;
    let (sector, sectors, _rest) = parse_range(after_cmd(rest)?)?;
    let (op, ..) = parse_rwbs(rwbs)?;
    Ok(Completion {
        time_ns,
        dev: parse_dev(dev)?,
        op,
        sector,
        sectors,
    })
}

/// `7,0 WFS 229448 + 2 [jbd2/loop0-8]`
fn parse_bio_queue(time_ns: u64, payload: &str) -> Result<BioRecord, TraceLineError> {
    let (dev, rest) = field(payload, "device")?;
    let (rwbs, rest) = field(rest, "rwbs")?;
    let (sector, sectors, rest) = parse_range(rest)?;
    let (op, preflush, fua, sync, meta) = parse_rwbs(rwbs)?;
    Ok(BioRecord {
        time_ns,
        dev: parse_dev(dev)?,
        op,
        preflush,
        fua,
        sync,
        meta,
        sector,
        sectors,
        comm: parse_comm(rest)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use joj_trace::record::BlockClass;

    fn request(line: &str) -> TraceRecord {
        match parse_trace_line(line) {
            Ok(TraceLine::Request(r)) => r,
            other => panic!("{line:?} gave {other:?}"),
        }
    }

    fn bio(line: &str) -> BioRecord {
        match parse_trace_line(line) {
            Ok(TraceLine::Bio(b)) => b,
            other => panic!("{line:?} gave {other:?}"),
        }
    }

    // Lines below were captured on this machine (Linux 6.18, loop devices, `mono` clock).

    #[test]
    fn jbd2_metadata_write_request_parses() {
        let r = request(
            "    jbd2/loop0-8-5901    [000] .....   245.305421: block_rq_issue: 7,0 WSM 28672 () 262464 + 56 be,0,3 [jbd2/loop0-8]",
        );
        assert_eq!(r.time_ns, 245_305_421_000);
        assert_eq!(r.dev, "7:0");
        assert_eq!(
            (r.op, r.preflush, r.fua, r.sync, r.meta),
            (Op::Write, false, false, true, true)
        );
        assert_eq!((r.sector, r.sectors), (262464, 56));
        assert_eq!(r.comm, "jbd2/loop0-8");
        assert_eq!(r.class, BlockClass::Unknown);
    }

    #[test]
    fn flush_request_from_kworker_parses() {
        let r = request(
            "    kworker/0:1H-58      [000] .....   245.305449: block_rq_issue: 7,0 FF 0 () 0 + 0 none,0,0 [kworker/0:1H]",
        );
        assert_eq!(r.op, Op::Flush);
        assert!(r.is_flush());
        assert_eq!((r.sector, r.sectors), (0, 0));
        assert_eq!(r.comm, "kworker/0:1H");
    }

    #[test]
    fn fua_intent_is_visible_on_the_bio() {
        let b = bio(
            "    jbd2/loop0-8-5901    [000] .....   245.305442: block_bio_queue: 7,0 FWFSM 262520 + 8 [jbd2/loop0-8]",
        );
        assert_eq!(
            (b.op, b.preflush, b.fua, b.sync, b.meta),
            (Op::Write, true, true, true, true)
        );
        assert_eq!((b.sector, b.sectors), (262520, 8));
        assert_eq!(b.time_ns, 245_305_442_000);
    }

    #[test]
    fn readahead_bio_parses() {
        let b = bio(
            "         python3-5909    [001] .....   245.305246: block_bio_queue: 7,0 RAM 320 + 8 [python3]",
        );
        assert_eq!(
            (b.op, b.meta, b.sector, b.sectors),
            (Op::Read, true, 320, 8)
        );
        assert_eq!(b.comm, "python3");
    }

    #[test]
    fn comm_names_with_spaces_dashes_and_brackets_parse() {
        let r = request(
            "   my worker-1 x-7254    [001] .....   323.136893: block_rq_issue: 7,0 WS 4096 () 0 + 8 be,0,4 [my worker-1 x]",
        );
        assert_eq!(r.comm, "my worker-1 x");
        let r = request(
            "         sp ace]-7255    [001] .....   323.136847: block_rq_issue: 7,0 WS 4096 () 0 + 8 be,0,4 [sp ace]]",
        );
        assert_eq!(r.comm, "sp ace]");
        let b = bio(
            "           a-b-c-7256    [000] .....   323.140227: block_bio_queue: 7,0 WS 131072 + 8 [a-b-c]",
        );
        assert_eq!(b.comm, "a-b-c");
        let b = bio(
            "               x-7257    [000] .....   323.141122: block_bio_queue: 7,0 FWS 0 + 0 [x]",
        );
        assert_eq!(
            (b.op, b.preflush, b.sectors, b.comm.as_str()),
            (Op::Write, true, 0, "x")
        );
    }

    #[test]
    fn flag_column_variants_parse() {
        // `.N...` and `.n...` were captured here; the others are the kernel's other flag letters
        // (irqs off, hardirq, softirq, preempt depth) spliced into the same real line.
        for flags in [".N...", ".n...", "d..1.", "dNh2.", "..s1."] {
            let line = format!(
                "           a-b-c-7256    [000] {flags}   323.176615: block_bio_queue: 7,0 WS 166272 + 8 [a-b-c]"
            );
            assert_eq!(bio(&line).sector, 166272, "{line}");
        }
        // Without the flags column (option irq-info off) and with the tgid column.
        let b = bio(
            "           a-b-c-7256    [000]   323.176615: block_bio_queue: 7,0 WS 166272 + 8 [a-b-c]",
        );
        assert_eq!(b.time_ns, 323_176_615_000);
        let b = bio(
            "           a-b-c-7256    (   7250) [000] .N...   1.5: block_bio_queue: 7,0 WS 1 + 8 [a-b-c]",
        );
        assert_eq!(b.time_ns, 1_500_000_000);
    }

    #[test]
    fn headers_other_events_and_lost_markers_are_recognised() {
        assert_eq!(parse_trace_line("# tracer: nop"), Ok(TraceLine::Other));
        assert_eq!(parse_trace_line(""), Ok(TraceLine::Other));
        assert_eq!(
            parse_trace_line(
                "   bash-1 [000] ..... 1.000001: block_rq_insert: 7,0 W 4096 () 8 + 8 [x]"
            ),
            Ok(TraceLine::Other)
        );
        let complete = |line| match parse_trace_line(line) {
            Ok(TraceLine::Complete(c)) => c,
            other => panic!("{other:?}"),
        };
        // Before Linux 6.x the ioprio field is absent; a flush completes as `FF 0 + 0`.
        let c = complete("   bash-1 [000] ..... 1.000001: block_rq_complete: 7,0 WS () 8 + 8 [0]");
        assert_eq!(
            (c.time_ns, c.dev.as_str(), c.op, c.sector, c.sectors),
            (1_000_001_000, "7:0", Op::Write, 8, 8)
        );
        let c = complete(
            "  kworker/0:1H-58 [000] ..... 245.305449: block_rq_complete: 7,0 FF () 0 + 0 none,0,0 [0]",
        );
        assert_eq!((c.op, c.sector, c.sectors), (Op::Flush, 0, 0));
        assert_eq!(
            parse_trace_line("CPU:1 [LOST 123 EVENTS]"),
            Ok(TraceLine::Lost {
                cpu: 1,
                events: 123
            })
        );
    }

    #[test]
    fn malformed_lines_are_errors_not_guesses() {
        assert_eq!(
            parse_trace_line("garbage"),
            Err(TraceLineError::NoTaskPidCpu)
        );
        assert_eq!(
            parse_trace_line(
                "   x-1 [000] ..... 1.0: block_rq_issue: 7,0 WS 4096 0 + 8 be,0,4 [x]"
            ),
            Err(TraceLineError::NoCmd {
                text: "0 + 8 be,0,4 [x]".into()
            })
        );
        assert_eq!(
            parse_trace_line("   x-1 [000] ..... 1.0: block_bio_queue: 7,0 WS 0 - 8 [x]"),
            Err(TraceLineError::NoPlus { found: "-".into() })
        );
        assert_eq!(
            parse_trace_line("   x-1 [000] ..... 1.0: block_bio_queue: 7,0 WS 0 + 8 x"),
            Err(TraceLineError::NoComm { text: "x".into() })
        );
    }

    #[test]
    fn each_malformed_part_is_named_with_its_text() {
        let bio = |payload: &str| {
            parse_trace_line(&format!(
                "   x-1 [000] ..... 1.0: block_bio_queue: {payload}"
            ))
        };
        assert_eq!(
            bio("7;0 WS 0 + 8 [x]"),
            Err(TraceLineError::BadDevice { text: "7;0".into() })
        );
        assert_eq!(
            bio("7,0 QQ 0 + 8 [x]"),
            Err(TraceLineError::BadRwbs { text: "QQ".into() })
        );
        assert_eq!(
            bio("7,0 WS x + 8 [x]"),
            Err(TraceLineError::BadSector { text: "x".into() })
        );
        assert_eq!(
            bio("7,0 WS 0 + y [x]"),
            Err(TraceLineError::BadSectorCount { text: "y".into() })
        );
        assert_eq!(
            bio("7,0 WS 0 +"),
            Err(TraceLineError::PayloadEndsEarly {
                missing: "sector count"
            })
        );
        assert_eq!(
            parse_trace_line(
                "   x-1 [000] ..... 1.0: block_rq_issue: 7,0 WS 4096 (00 0 + 8 be,0,4 [x]"
            ),
            Err(TraceLineError::UnterminatedCmd {
                text: "(00 0 + 8 be,0,4 [x]".into()
            })
        );
        assert_eq!(
            parse_trace_line("   x-1 [000] ..... 1.x5: block_bio_queue: 7,0 WS 0 + 8 [x]"),
            Err(TraceLineError::BadTimestamp {
                text: "1.x5".into()
            })
        );
        assert_eq!(
            parse_trace_line(
                "   x-1 [000] ..... 99999999999999999.0: block_bio_queue: 7,0 WS 0 + 8 [x]"
            ),
            Err(TraceLineError::TimestampOverflows {
                text: "99999999999999999.0".into()
            })
        );
        assert_eq!(
            parse_trace_line("   x-1 [000] ..... 1.0 block_bio_queue: 7,0 WS 0 + 8 [x]"),
            Err(TraceLineError::TimestampWithoutColon { text: "1.0".into() })
        );
        assert_eq!(
            parse_trace_line("   x-1 [000] ..... 1.0: no-event-here"),
            Err(TraceLineError::NoEvent {
                text: "no-event-here".into()
            })
        );
        assert_eq!(
            parse_trace_line("   x-1 [000]"),
            Err(TraceLineError::EndsAfterCpu { rest: "".into() })
        );
        assert_eq!(
            parse_trace_line("CPU:1 [LOST many EVENTS]"),
            Err(TraceLineError::BadLostMarker {
                text: "CPU:1 [LOST many EVENTS]".into()
            })
        );
    }
}
