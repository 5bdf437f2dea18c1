//! Decoding the binary ring-buffer pages a tracefs instance hands out through
//! `per_cpu/cpuN/trace_pipe_raw`, for the events of a syscall trace ([`crate::syscall_trace`])
//! (the block feed decodes its one event itself, [`crate::block_stream`]).
//! Pure: no I/O; the caller reads the `format` files and the pages.
//!
//! Why not text `trace_pipe`: the kernel formats every event with `vsnprintf` for it, which
//! `perf record` showed as most of what watching a command cost. Why hand-written: no
//! maintained Rust crate reads live per-CPU pages (libtracecmd's wrapper reads `trace.dat`
//! files through C libraries); the layout is small and described by the kernel itself
//! (`events/header_page`, `events/header_event`, each event's `format`).
//!
//! A page (`events/header_page`, checked against what this module assumes):
//!
//! ```text
//! offset 0   u64 timestamp        the time of the page's first event
//! offset 8   u64 commit           bytes of events (low 27 bits); bit 31: events were lost
//!                                 before this page; bit 30: their count follows the events
//! offset 16  events, commit bytes
//! ```
//!
//! An event (`events/header_event`) starts with a little-endian u32: `type_len` in its low 5
//! bits, `time_delta` (added to the running timestamp) in the high 27. `type_len` 1..=28: a
//! record of `4 * type_len` bytes follows; 0: a u32 length (itself included) and the record;
//! 29: padding whose u32 length follows (a zero delta: the rest of the page is empty); 30: a
//! time extension, `u32 << 27` more delta; 31: an absolute timestamp. A record starts with the
//! common fields (`common_type` u16 at 0: the event's ID; `common_pid` i32 at 4: the thread).
//!
//! Every length read from a page is checked against the page before it is used: a malformed
//! page is an error, never a read out of bounds or a loop.

use std::collections::HashMap;

/// Why a format file or a page cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RawError {
    #[error("format of {event}: {reason}")]
    Format { event: String, reason: String },
    #[error("ring-buffer page: {reason}")]
    Page { reason: String },
}

/// One field of an event's `format` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub offset: usize,
    pub size: usize,
}

/// An event's ID and its fields, in the order the `format` file lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    pub id: u16,
    pub fields: Vec<Field>,
}

impl Format {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// Parse an event's `format` file (or `events/header_page`, which has no ID: `id` 0).
pub fn parse_format(event: &str, text: &str) -> Result<Format, RawError> {
    let bad = |reason: String| RawError::Format {
        event: event.to_string(),
        reason,
    };
    let mut id = 0u16;
    let mut fields = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("ID:") {
            id = v.trim().parse().map_err(|_| bad(format!("bad ID {v:?}")))?;
        } else if let Some(decl) = line.strip_prefix("field:") {
            // `field:unsigned int fd;	offset:16;	size:8;	signed:0;`
            let mut parts = decl.split(';').map(str::trim);
            let declared = parts.next().unwrap_or_default();
            let name = declared
                .rsplit([' ', '*'])
                .next()
                .unwrap_or_default()
                .split('[')
                .next()
                .unwrap_or_default()
                .to_string();
            let (mut offset, mut size) = (None, None);
            for p in parts {
                if let Some(v) = p.strip_prefix("offset:") {
                    offset = v.parse().ok();
                } else if let Some(v) = p.strip_prefix("size:") {
                    size = v.parse().ok();
                }
            }
            match (offset, size) {
                (Some(offset), Some(size)) if !name.is_empty() => {
                    fields.push(Field { name, offset, size })
                }
                _ => return Err(bad(format!("bad field line {line:?}"))),
            }
        }
    }
    Ok(Format { id, fields })
}

/// Where a page keeps its parts, from `events/header_page`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    /// Bytes of a page as `trace_pipe_raw` returns it.
    pub page_bytes: usize,
}

/// Bytes before a page's events: the u64 timestamp and the u64 commit.
const PAGE_HEADER_BYTES: usize = 16;
/// `commit`'s low bits that count bytes of events (the kernel's flags are above).
const COMMIT_MASK: u64 = (1 << 27) - 1;
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
const TS_SHIFT: u32 = 27;
/// A page larger than this is not one this module was written for.
const MAX_PAGE_BYTES: usize = 1 << 20;

impl PageLayout {
    /// Check `events/header_page` against the layout above; the page is `data`'s offset plus
    /// its size.
    pub fn from_header_page(text: &str) -> Result<PageLayout, RawError> {
        let f = parse_format("header_page", text)?;
        let bad = |reason: &str| RawError::Format {
            event: "header_page".into(),
            reason: reason.into(),
        };
        let at = |name: &str| f.field(name).map(|x| (x.offset, x.size));
        if at("timestamp") != Some((0, 8)) || at("commit") != Some((8, 8)) {
            return Err(bad(
                "timestamp and commit are not two u64 at offsets 0 and 8",
            ));
        }
        let data = f.field("data").ok_or_else(|| bad("no data field"))?;
        if data.offset != PAGE_HEADER_BYTES {
            return Err(bad("events do not start at offset 16"));
        }
        let page_bytes = data.offset + data.size;
        if page_bytes > MAX_PAGE_BYTES {
            return Err(bad("page larger than 1 MiB"));
        }
        Ok(PageLayout { page_bytes })
    }
}

/// One event record of a page: its time and its bytes (common fields first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub time_ns: u64,
    pub data: &'a [u8],
}

/// What a page held.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Page<'a> {
    pub records: Vec<Record<'a>>,
    /// Events the ring buffer lost before this page: `Some(0)` when it lost some without
    /// saying how many.
    pub missed: Option<u64>,
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// Split a page (`page.len()` bytes as `read` returned them) into its records.
pub fn parse_page(page: &[u8]) -> Result<Page<'_>, RawError> {
    let bad = |reason: String| RawError::Page { reason };
    let base = u64_at(page, 0).ok_or_else(|| bad(format!("{} bytes", page.len())))?;
    let commit = u64_at(page, 8).ok_or_else(|| bad(format!("{} bytes", page.len())))?;
    let len = (commit & COMMIT_MASK) as usize;
    let end = PAGE_HEADER_BYTES
        .checked_add(len)
        .filter(|&e| e <= page.len())
        .ok_or_else(|| bad(format!("commit {len} beyond the page's {}", page.len())))?;
    let missed = if commit & MISSED_EVENTS == 0 {
        None
    } else if commit & MISSED_STORED != 0 {
        Some(u64_at(page, end).unwrap_or(0))
    } else {
        Some(0)
    };
    let mut out = Page {
        records: Vec::new(),
        missed,
    };
    let mut ts = base;
    let mut at = PAGE_HEADER_BYTES;
    while at < end {
        let head = u32_at(page, at).ok_or_else(|| bad(format!("event header at {at}")))?;
        let type_len = head & 0x1f;
        let delta = u64::from(head >> 5);
        let (record, next) = match type_len {
            // A discarded event's delta is not time (the kernel's reader skips it too).
            TYPE_PADDING => {
                if delta == 0 {
                    break;
                }
                let skip = u32_at(page, at + 4).ok_or_else(|| bad(format!("padding at {at}")))?;
                (None, (at + 4).checked_add(skip as usize))
            }
            TYPE_TIME_EXTEND => {
                let hi = u32_at(page, at + 4).ok_or_else(|| bad(format!("extend at {at}")))?;
                ts = ts.wrapping_add((u64::from(hi) << TS_SHIFT) + delta);
                (None, Some(at + 8))
            }
            TYPE_TIME_STAMP => {
                let hi = u32_at(page, at + 4).ok_or_else(|| bad(format!("stamp at {at}")))?;
                // The stamp holds the low 59 bits of the clock; the rest are the running
                // time's.
                let abs = (u64::from(hi) << TS_SHIFT) | delta;
                ts = (ts & !((1u64 << 59) - 1)) | abs;
                (None, Some(at + 8))
            }
            0 => {
                let n = u32_at(page, at + 4).ok_or_else(|| bad(format!("length at {at}")))?;
                let n = (n as usize)
                    .checked_sub(4)
                    .ok_or_else(|| bad(format!("length {n} at {at}")))?;
                ts = ts.wrapping_add(delta);
                let start = at + 8;
                (Some((start, n)), start.checked_add((n + 3) & !3))
            }
            small => {
                ts = ts.wrapping_add(delta);
                let start = at + 4;
                let n = small as usize * 4;
                (Some((start, n)), Some(start + n))
            }
        };
        let next = next
            .filter(|&n| n > at && n <= end)
            .ok_or_else(|| bad(format!("event at {at} runs past the page's events ({end})")))?;
        if let Some((start, n)) = record {
            let data = page
                .get(start..start + n)
                .filter(|_| start + n <= end)
                .ok_or_else(|| bad(format!("record at {start} of {n} bytes")))?;
            out.records.push(Record { time_ns: ts, data });
        }
        at = next;
    }
    Ok(out)
}

/// What to read from the records of one event ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoder {
    /// A call's entry: its arguments, by position.
    Enter {
        call: String,
        args: Vec<Field>,
    },
    Exit {
        call: String,
        ret: Field,
    },
    NewTask {
        pid: Field,
        clone_flags: Field,
    },
    Exec {
        pid: Field,
        old_pid: Field,
    },
    /// `ftrace:print`, what a task wrote to the instance's `trace_marker`.
    Print {
        buf: Field,
    },
}

impl Decoder {
    /// The decoder for an event of system `system` named `name` from its format.
    pub fn for_event(system: &str, name: &str, f: &Format) -> Result<Decoder, RawError> {
        let need = |field: &str| {
            f.field(field).cloned().ok_or_else(|| RawError::Format {
                event: name.to_string(),
                reason: format!("no field {field}"),
            })
        };
        Ok(match (system, name) {
            ("task", "task_newtask") => Decoder::NewTask {
                pid: need("pid")?,
                clone_flags: need("clone_flags")?,
            },
            ("sched", "sched_process_exec") => Decoder::Exec {
                pid: need("pid")?,
                old_pid: need("old_pid")?,
            },
            ("ftrace", "print") => Decoder::Print { buf: need("buf")? },
            (_, n) if n.starts_with("sys_exit_") => Decoder::Exit {
                call: n["sys_exit_".len()..].to_string(),
                ret: need("ret")?,
            },
            (_, n) if n.starts_with("sys_enter_") => {
                let after = f
                    .fields
                    .iter()
                    .position(|x| x.name == "__syscall_nr")
                    .map_or(f.fields.len(), |i| i + 1);
                Decoder::Enter {
                    call: n["sys_enter_".len()..].to_string(),
                    args: f.fields[after..].to_vec(),
                }
            }
            _ => {
                return Err(RawError::Format {
                    event: name.to_string(),
                    reason: "not an event joj reads".into(),
                });
            }
        })
    }
}

/// The decoders by event ID.
pub type Decoders = HashMap<u16, Decoder>;

/// An event decoded from a record, without its thread group (the caller tracks that).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub tid: i32,
    pub kind: crate::syscall_line::SysEventKind,
}

/// An unsigned field of up to 8 bytes (a signed one is sign-extended by the caller).
fn unsigned(data: &[u8], f: &Field) -> Option<u64> {
    let b = data.get(f.offset..f.offset.checked_add(f.size)?)?;
    Some(match f.size {
        1 => u64::from(b[0]),
        2 => u64::from(u16::from_le_bytes(b.try_into().ok()?)),
        4 => u64::from(u32::from_le_bytes(b.try_into().ok()?)),
        8 => u64::from_le_bytes(b.try_into().ok()?),
        _ => return None,
    })
}

fn signed(data: &[u8], f: &Field) -> Option<i64> {
    let v = unsigned(data, f)?;
    Some(match f.size {
        1 => v as u8 as i8 as i64,
        2 => v as u16 as i16 as i64,
        4 => v as u32 as i32 as i64,
        _ => v as i64,
    })
}

/// Decode one record: `Ok(None)` for an event ID without a decoder.
pub fn decode(decoders: &Decoders, data: &[u8]) -> Result<Option<Decoded>, RawError> {
    use crate::syscall_line::SysEventKind;
    let bad = |what: &str| RawError::Page {
        reason: format!("record of {} bytes without its {what}", data.len()),
    };
    let id = data
        .get(0..2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .ok_or_else(|| bad("type"))?;
    let Some(decoder) = decoders.get(&id) else {
        return Ok(None);
    };
    let tid = u32_at(data, 4).ok_or_else(|| bad("pid"))? as i32;
    let field = |f: &Field| unsigned(data, f).ok_or_else(|| bad(&f.name));
    let kind = match decoder {
        Decoder::Enter { call, args } => SysEventKind::Enter {
            call: call.clone(),
            args: args.iter().map(field).collect::<Result<_, _>>()?,
        },
        Decoder::Exit { call, ret } => SysEventKind::Exit {
            call: call.clone(),
            ret: signed(data, ret).ok_or_else(|| bad("ret"))?,
        },
        Decoder::NewTask { pid, clone_flags } => SysEventKind::NewTask {
            pid: signed(data, pid).ok_or_else(|| bad("pid"))? as i32,
            clone_flags: field(clone_flags)?,
        },
        Decoder::Exec { pid, old_pid } => SysEventKind::Exec {
            pid: signed(data, pid).ok_or_else(|| bad("pid"))? as i32,
            old_pid: signed(data, old_pid).ok_or_else(|| bad("old_pid"))? as i32,
        },
        Decoder::Print { buf } => {
            let text = data.get(buf.offset..).ok_or_else(|| bad("buf"))?;
            let text = text.split(|&b| b == 0).next().unwrap_or_default();
            SysEventKind::Marker(String::from_utf8_lossy(text).trim_end().to_string())
        }
    };
    Ok(Some(Decoded { tid, kind }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscall_line::SysEventKind;

    const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
        \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
        \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
        \tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

    const PWRITE: &str = "name: sys_enter_pwrite64\nID: 836\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
        \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
        \tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n\
        \tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n\
        \tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n\
        \tfield:loff_t pos;\toffset:40;\tsize:8;\tsigned:0;\n\n\
        print fmt: \"fd: 0x%08lx\"\n";

    const EXIT: &str = "name: sys_exit_fdatasync\nID: 700\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
        \tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
        \tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n";

    fn decoders() -> Decoders {
        let mut d = Decoders::new();
        for (name, text) in [("sys_enter_pwrite64", PWRITE), ("sys_exit_fdatasync", EXIT)] {
            let f = parse_format(name, text).unwrap();
            d.insert(f.id, Decoder::for_event("syscalls", name, &f).unwrap());
        }
        d
    }

    /// A record of event `id` by thread `pid` with u64 fields from offset 16 on.
    fn record(id: u16, pid: i32, fields: &[u64]) -> Vec<u8> {
        let mut r = vec![0u8; 16];
        r[0..2].copy_from_slice(&id.to_le_bytes());
        r[4..8].copy_from_slice(&pid.to_le_bytes());
        for f in fields {
            r.extend_from_slice(&f.to_le_bytes());
        }
        r
    }

    /// A page of 4096 bytes at time `base` holding `events` (delta, record).
    fn page(base: u64, events: &[(u32, Vec<u8>)], flags: u64) -> Vec<u8> {
        let mut body = Vec::new();
        for (delta, r) in events {
            assert_eq!(r.len() % 4, 0);
            let type_len = (r.len() / 4) as u32;
            assert!(type_len <= 28);
            body.extend_from_slice(&(type_len | (delta << 5)).to_le_bytes());
            body.extend_from_slice(r);
        }
        let mut p = Vec::new();
        p.extend_from_slice(&base.to_le_bytes());
        p.extend_from_slice(&(body.len() as u64 | flags).to_le_bytes());
        p.extend_from_slice(&body);
        p.resize(4096, 0);
        p
    }

    #[test]
    fn formats_give_ids_and_field_offsets_and_the_page_layout() {
        let f = parse_format("sys_enter_pwrite64", PWRITE).unwrap();
        assert_eq!(f.id, 836);
        assert_eq!(f.field("buf").unwrap().offset, 24);
        assert_eq!(f.field("common_pid").unwrap().size, 4);
        let layout = PageLayout::from_header_page(HEADER_PAGE).unwrap();
        assert_eq!(layout.page_bytes, 4096);
        assert!(
            PageLayout::from_header_page("\tfield: u64 timestamp;\toffset:4;\tsize:8;").is_err()
        );
        match Decoder::for_event("syscalls", "sys_enter_pwrite64", &f).unwrap() {
            Decoder::Enter { call, args } => {
                assert_eq!(call, "pwrite64");
                let names: Vec<_> = args.iter().map(|a| a.name.as_str()).collect();
                assert_eq!(names, ["fd", "buf", "count", "pos"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_page_gives_its_records_with_running_times_and_they_decode() {
        let p = page(
            1_000,
            &[
                (5, record(836, 42, &[4, 0xdead, 0x1000, 0x120c])),
                (7, record(700, 42, &[(-5i64) as u64])),
            ],
            0,
        );
        let got = parse_page(&p).unwrap();
        assert_eq!(got.missed, None);
        let times: Vec<_> = got.records.iter().map(|r| r.time_ns).collect();
        assert_eq!(times, [1_005, 1_012]);
        let d = decoders();
        let first = decode(&d, got.records[0].data).unwrap().unwrap();
        assert_eq!(first.tid, 42);
        assert_eq!(
            first.kind,
            SysEventKind::Enter {
                call: "pwrite64".into(),
                args: vec![4, 0xdead, 0x1000, 0x120c]
            }
        );
        let second = decode(&d, got.records[1].data).unwrap().unwrap();
        assert_eq!(
            second.kind,
            SysEventKind::Exit {
                call: "fdatasync".into(),
                ret: -5
            }
        );
        assert_eq!(decode(&d, &record(9, 1, &[])).unwrap(), None);
    }

    #[test]
    fn time_extensions_long_records_and_padding_are_stepped_over() {
        let mut body = Vec::new();
        // A time extension of (1 << 27) + 3.
        body.extend_from_slice(&(TYPE_TIME_EXTEND | (3 << 5)).to_le_bytes());
        body.extend_from_slice(&1u32.to_le_bytes());
        // A record with an explicit length (type_len 0).
        let r = record(700, 7, &[0]);
        body.extend_from_slice(&(2u32 << 5).to_le_bytes());
        body.extend_from_slice(&(r.len() as u32 + 4).to_le_bytes());
        body.extend_from_slice(&r);
        // A discarded event (padding with a delta; its length counts itself).
        body.extend_from_slice(&(TYPE_PADDING | (1 << 5)).to_le_bytes());
        body.extend_from_slice(&8u32.to_le_bytes());
        body.extend_from_slice(&[0; 4]);
        let mut p = 10u64.to_le_bytes().to_vec();
        p.extend_from_slice(&(body.len() as u64).to_le_bytes());
        p.extend_from_slice(&body);
        p.resize(4096, 0);
        let got = parse_page(&p).unwrap();
        assert_eq!(got.records.len(), 1);
        assert_eq!(got.records[0].time_ns, 10 + (1 << 27) + 3 + 2);
        assert_eq!(got.records[0].data, &r[..]);
    }

    #[test]
    fn lost_events_are_reported_with_their_count_when_the_page_has_it() {
        let mut p = page(
            0,
            &[(1, record(700, 1, &[0]))],
            MISSED_EVENTS | MISSED_STORED,
        );
        let end = 16 + 4 + 24;
        p[end..end + 8].copy_from_slice(&17u64.to_le_bytes());
        assert_eq!(parse_page(&p).unwrap().missed, Some(17));
        let p = page(0, &[], MISSED_EVENTS);
        assert_eq!(parse_page(&p).unwrap().missed, Some(0));
    }

    #[test]
    fn malformed_pages_are_errors_not_reads_past_the_end() {
        assert!(parse_page(&[0; 8]).is_err());
        let mut p = page(0, &[], 0);
        p[8..16].copy_from_slice(&5000u64.to_le_bytes());
        assert!(parse_page(&p).is_err());
        // A long record whose length runs past the committed bytes.
        let mut p = page(0, &[], 0);
        p[8..16].copy_from_slice(&8u64.to_le_bytes());
        p[16..20].copy_from_slice(&0u32.to_le_bytes());
        p[20..24].copy_from_slice(&4000u32.to_le_bytes());
        assert!(parse_page(&p).is_err());
        // A zero length cannot loop.
        p[20..24].copy_from_slice(&0u32.to_le_bytes());
        assert!(parse_page(&p).is_err());
        // A record too short for the fields its ID declares.
        assert!(decode(&decoders(), &record(836, 1, &[4])).is_err());
    }
}
