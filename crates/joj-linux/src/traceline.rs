//! Parsing the text lines of a tracefs `trace` file into block records. Pure: no I/O.
//!
//! A line is `<task>-<pid> [<cpu>] <flags> <secs>.<usecs>: <event>: <payload>`, where the task
//! name may contain spaces, dashes and brackets, the flags column (`.....`, `.N...`, `d..1.`)
//! may be absent, and `(<tgid>)` may precede the cpu. The payloads follow the events' print
//! formats (see `events/block/<event>/format`):
//! - `block_rq_issue`:  `%d,%d %s %u (%s) %llu + %u %s,%u,%u [%s]` — dev, rwbs, bytes, cmd,
//!   sector, sectors, ioprio class/level/hint, comm;
//! - `block_bio_queue`: `%d,%d %s %llu + %u [%s]` — dev, rwbs, sector, sectors, comm.
//!
//! The comm at the end of the payload (the task that issued the request, at most 15 bytes) is
//! the one recorded; it is the last field, so everything between its brackets belongs to it.
//! Timestamps of the `mono` clock print as seconds with microseconds, so `time_ns` has
//! microsecond resolution.

use joj_trace::record::{BlockClass, Op, TraceRecord};

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
    /// `CPU:N [LOST M EVENTS]`: the ring buffer overwrote events before they were read.
    Lost { cpu: u32, events: u64 },
    /// A header comment, blank line, or another event.
    Other,
}

/// Parses one line of a tracefs `trace` file. The error is a short reason; callers add the
/// line and its number.
pub fn parse_trace_line(line: &str) -> Result<TraceLine, &'static str> {
    let line = line.trim_end_matches(['\n', '\r']);
    let trimmed = line.trim_start();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Ok(TraceLine::Other);
    }
    if let Some(rest) = trimmed.strip_prefix("CPU:") {
        return parse_lost(rest);
    }
    let after_cpu = &line[cpu_field_end(line).ok_or("no `-pid [cpu]` prefix")?..];
    let (first, rest) = after_cpu
        .trim_start()
        .split_once(' ')
        .ok_or("line ends after the cpu")?;
    // The flags column is optional (option `irq-info` off); the timestamp ends with ':'.
    let (stamp, rest) = if first.ends_with(':') {
        (first, rest)
    } else {
        rest.trim_start()
            .split_once(' ')
            .ok_or("line ends after the flags")?
    };
    let time_ns = parse_timestamp(stamp.strip_suffix(':').ok_or("timestamp without ':'")?)?;
    let (event, payload) = rest
        .trim_start()
        .split_once(": ")
        .ok_or("no `event: ` after the timestamp")?;
    match event {
        "block_rq_issue" => parse_rq_issue(time_ns, payload).map(TraceLine::Request),
        "block_bio_queue" => parse_bio_queue(time_ns, payload).map(TraceLine::Bio),
        _ => Ok(TraceLine::Other),
    }
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

fn parse_lost(rest: &str) -> Result<TraceLine, &'static str> {
    // "1 [LOST 123 EVENTS]"
    let (cpu, rest) = rest.split_once(' ').ok_or("bad LOST line")?;
    let events = rest
        .trim()
        .strip_prefix("[LOST ")
        .and_then(|r| r.strip_suffix(" EVENTS]"))
        .ok_or("bad LOST line")?;
    Ok(TraceLine::Lost {
        cpu: cpu.parse().map_err(|_| "bad cpu in LOST line")?,
        events: events
            .trim()
            .parse()
            .map_err(|_| "bad count in LOST line")?,
    })
}

/// `"245.305094"` → nanoseconds. Accepts up to nine fractional digits.
fn parse_timestamp(s: &str) -> Result<u64, &'static str> {
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err("bad timestamp fraction");
    }
    let secs: u64 = secs.trim().parse().map_err(|_| "bad timestamp seconds")?;
    let frac_ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| "bad timestamp")?
    };
    let frac_ns = frac_ns * 10u64.pow(9 - frac.len() as u32);
    secs.checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(frac_ns))
        .ok_or("timestamp overflows")
}

/// Splits off the next space-separated field.
fn field(s: &str) -> Result<(&str, &str), &'static str> {
    let s = s.trim_start();
    match s.split_once(' ') {
        Some((f, rest)) => Ok((f, rest)),
        None if !s.is_empty() => Ok((s, "")),
        None => Err("payload ends early"),
    }
}

/// `"7,0"` → `"7:0"`.
fn parse_dev(s: &str) -> Result<String, &'static str> {
    let (major, minor) = s.split_once(',').ok_or("bad device")?;
    let major: u32 = major.parse().map_err(|_| "bad device major")?;
    let minor: u32 = minor.parse().map_err(|_| "bad device minor")?;
    Ok(format!("{major}:{minor}"))
}

/// `"[comm]"` at the end of a payload. The comm may itself contain brackets and spaces.
fn parse_comm(s: &str) -> Result<String, &'static str> {
    let s = s.trim_start();
    let inner = s
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or("no [comm] at the end")?;
    Ok(inner.to_string())
}

/// `"229440 + 8"` → (sector, sectors, rest).
fn parse_range(s: &str) -> Result<(u64, u64, &str), &'static str> {
    let (sector, rest) = field(s)?;
    let (plus, rest) = field(rest)?;
    if plus != "+" {
        return Err("no `+` between sector and length");
    }
    let (sectors, rest) = field(rest)?;
    Ok((
        sector.parse().map_err(|_| "bad sector")?,
        sectors.parse().map_err(|_| "bad sector count")?,
        rest,
    ))
}

/// `7,0 WSM 4096 () 229440 + 8 be,0,3 [jbd2/loop0-8]`
fn parse_rq_issue(time_ns: u64, payload: &str) -> Result<TraceRecord, &'static str> {
    let (dev, rest) = field(payload)?;
    let (rwbs, rest) = field(rest)?;
    let (_bytes, rest) = field(rest)?;
    // The cmd of a passthrough request is hex bytes in parentheses; empty for others.
    let rest = rest
        .trim_start()
        .strip_prefix('(')
        .ok_or("no (cmd) field")?;
    let close = rest.find(") ").ok_or("unterminated (cmd) field")?;
    let (sector, sectors, rest) = parse_range(&rest[close + 2..])?;
    let (_ioprio, rest) = field(rest)?;
    let (op, preflush, fua, sync, meta) = TraceRecord::parse_rwbs(rwbs).ok_or("bad rwbs")?;
    Ok(TraceRecord {
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
        class: BlockClass::Unknown,
        file: None,
    })
}

/// `7,0 WFS 229448 + 2 [jbd2/loop0-8]`
fn parse_bio_queue(time_ns: u64, payload: &str) -> Result<BioRecord, &'static str> {
    let (dev, rest) = field(payload)?;
    let (rwbs, rest) = field(rest)?;
    let (sector, sectors, rest) = parse_range(rest)?;
    let (op, preflush, fua, sync, meta) = TraceRecord::parse_rwbs(rwbs).ok_or("bad rwbs")?;
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
                "   bash-1 [000] ..... 1.000001: block_rq_complete: 7,0 W () 8 + 8 [0]"
            ),
            Ok(TraceLine::Other)
        );
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
        assert!(parse_trace_line("garbage").is_err());
        assert!(
            parse_trace_line(
                "   x-1 [000] ..... 1.0: block_rq_issue: 7,0 WS 4096 0 + 8 be,0,4 [x]"
            )
            .is_err()
        );
        assert!(
            parse_trace_line("   x-1 [000] ..... 1.0: block_bio_queue: 7,0 WS 0 - 8 [x]").is_err()
        );
        assert!(
            parse_trace_line("   x-1 [000] ..... 1.0: block_bio_queue: 7,0 WS 0 + 8 x").is_err()
        );
    }
}
