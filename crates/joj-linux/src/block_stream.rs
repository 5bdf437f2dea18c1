//! A live feed of the block requests of chosen devices, for a caller that acts on them while
//! the run goes (`joj bench --device`: the pacer keeps a device model in step with the kernel,
//! `joj_experiment::pace`).
//!
//! It is a second private instance with `block_rq_issue` alone (the pacer needs the requests,
//! not their completions or bios), read as the kernel stores it: page by page from each CPU's
//! `trace_pipe_raw` ([`crate::raw_cpus`]), decoded by the event's own `format`
//! ([`RqIssue`]). The run's own [`BlockTracer`] is a separate instance and sees every event
//! regardless. Reads never block: [`BlockStream::drain`] returns whatever was issued so far
//! (every request a finished `fsync` waited for was issued, so its event is already in a
//! page), the CPUs' records merged by time.
//!
//! Why binary: the pacer drains after every sync call, on the workload thread. Through the
//! text `trace_pipe` the kernel formatted each event with `vsnprintf` for it: on this VM a
//! zero-latency TRUNCATE run (2,000 transactions, 8,000 sync calls) spent 0.27 s draining, and
//! its sync calls took 0.1–0.25 s longer than those of the same run unpaced, time the host
//! measure could not take out; reading the same pages raw took 0.05 s and left the sync calls
//! as unpaced (docs/results/measurement-stack.md, "The pacer's reading").

use std::path::Path;

use joj_trace::record::TraceRecord;

use crate::raw_cpus::{CpuReader, for_each_record, open_cpus, read_text};
use crate::raw_event::{Field, Format, PageLayout, RawError, parse_format};
use crate::tracefs::{BlockTracer, TraceError};

/// The only event the stream records.
const EVENT: &str = "block_rq_issue";

/// Where a `block_rq_issue` record keeps what a [`TraceRecord`] needs, from its `format`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RqIssue {
    id: u16,
    dev: Field,
    sector: Field,
    nr_sector: Field,
    rwbs: Field,
    comm: Field,
}

/// A `dev_t` as the kernel keeps it: major above bit 20 (`MINORBITS`).
const MINOR_BITS: u32 = 20;

impl RqIssue {
    /// The decoder, from the event's `format` file as parsed.
    pub fn from_format(f: &Format) -> Result<RqIssue, RawError> {
        let need = |name: &str, sizes: &[usize]| {
            f.field(name)
                .filter(|x| sizes.contains(&x.size))
                .cloned()
                .ok_or_else(|| RawError::Format {
                    event: EVENT.into(),
                    reason: format!("no field {name} of {sizes:?} bytes"),
                })
        };
        Ok(RqIssue {
            id: f.id,
            dev: need("dev", &[4])?,
            sector: need("sector", &[8])?,
            nr_sector: need("nr_sector", &[4])?,
            rwbs: need("rwbs", &[8, 9, 10, 16])?,
            comm: need("comm", &[16])?,
        })
    }

    /// The request a record holds, issued at `time_ns`; `None` for a record of another event.
    pub fn decode(&self, time_ns: u64, data: &[u8]) -> Result<Option<TraceRecord>, RawError> {
        let bad = |what: &str| RawError::Page {
            reason: format!("{EVENT} record of {} bytes: {what}", data.len()),
        };
        let bytes = |f: &Field| {
            f.offset
                .checked_add(f.size)
                .and_then(|end| data.get(f.offset..end))
                .ok_or_else(|| bad(&format!("no {}", f.name)))
        };
        let id = data
            .get(0..2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .ok_or_else(|| bad("no type"))?;
        if id != self.id {
            return Ok(None);
        }
        let u32_of = |f: &Field| -> Result<u32, RawError> {
            let b = bytes(f)?;
            Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let text = |f: &Field| -> Result<String, RawError> {
            let b = bytes(f)?;
            let b = b.split(|&c| c == 0).next().unwrap_or_default();
            Ok(String::from_utf8_lossy(b).into_owned())
        };
        let dev = u32_of(&self.dev)?;
        let sector = bytes(&self.sector)?;
        let sector = u64::from_le_bytes(sector.try_into().map_err(|_| bad("sector"))?);
        let rwbs = text(&self.rwbs)?;
        let dev = format!("{}:{}", dev >> MINOR_BITS, dev & ((1 << MINOR_BITS) - 1));
        let sectors = u64::from(u32_of(&self.nr_sector)?);
        TraceRecord::issued(time_ns, dev, &rwbs, (sector, sectors), text(&self.comm)?)
            .map(Some)
            .ok_or_else(|| bad(&format!("rwbs {rwbs:?}")))
    }
}

/// The live feed (module header).
#[derive(Debug)]
pub struct BlockStream {
    /// Declared before `tracer`, so they are closed first: an instance with an open file
    /// cannot be removed.
    cpus: Vec<CpuReader>,
    tracer: BlockTracer,
    issue: RqIssue,
    page: Vec<u8>,
}

impl BlockStream {
    /// Start streaming the block requests of `devs` (`"major:minor"`).
    pub fn start<S: AsRef<str>>(devs: &[S], buffer_kb: u32) -> Result<Self, TraceError> {
        let tracer = BlockTracer::start_events(devs, buffer_kb, &[EVENT])?;
        let at = tracer.instance_path().to_path_buf();
        let layout = PageLayout::from_header_page(&read_text(&at.join("events/header_page"))?)
            .map_err(TraceError::Raw)?;
        let issue = RqIssue::from_format(&format_of(&at, EVENT)?).map_err(TraceError::Raw)?;
        // Opened last: on an error before, the tracer's drop removes an instance nobody reads.
        let cpus = open_cpus(&at)?;
        Ok(Self {
            cpus,
            tracer,
            issue,
            page: vec![0; layout.page_bytes],
        })
    }

    /// The requests issued since the last call, in time order within the call (a request
    /// stamped just before it on another CPU may come with the next call). Fails if the buffer
    /// lost events (a caller that drains too rarely). Each call reads every CPU's buffer once
    /// at least: on a host with many CPUs that is as many reads per sync call.
    pub fn drain(&mut self) -> Result<Vec<TraceRecord>, TraceError> {
        let mut records = Vec::new();
        let issue = &self.issue;
        let buffer_kb = self.tracer.buffer_kb();
        for_each_record(
            &mut self.cpus,
            &mut self.page,
            buffer_kb,
            |time_ns, data| {
                if let Some(rec) = issue.decode(time_ns, data).map_err(TraceError::Raw)? {
                    records.push(rec);
                }
                Ok(())
            },
        )?;
        records.sort_by_key(|r| r.time_ns);
        Ok(records)
    }

    /// Stop: fails if any event was lost; removes the instance.
    pub fn finish(self) -> Result<(), TraceError> {
        let Self { cpus, tracer, .. } = self;
        drop(cpus);
        tracer.stop().map(|_| ())
    }
}

fn format_of(instance: &Path, event: &str) -> Result<Format, TraceError> {
    let text = read_text(&instance.join("events/block").join(event).join("format"))?;
    parse_format(event, &text).map_err(TraceError::Raw)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a test: a failed unwrap is the failure

    use super::*;
    use crate::traceline::{TraceLine, parse_trace_line};

    /// This machine's format of `block_rq_issue` (Linux 6.18).
    const FORMAT: &str = "name: block_rq_issue\nID: 2104\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
        \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n\
        \tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n\
        \tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n\
        \tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;\n\
        \tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;\n\
        \tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n\
        \tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;\n\
        \tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;\n";

    fn record(id: u16, dev: u32, sector: u64, nr: u32, rwbs: &str, comm: &str) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[0..2].copy_from_slice(&id.to_le_bytes());
        b[4..8].copy_from_slice(&77i32.to_le_bytes());
        b[8..12].copy_from_slice(&dev.to_le_bytes());
        b[16..24].copy_from_slice(&sector.to_le_bytes());
        b[24..28].copy_from_slice(&nr.to_le_bytes());
        b[28..32].copy_from_slice(&(nr * 512).to_le_bytes());
        b[34..34 + rwbs.len()].copy_from_slice(rwbs.as_bytes());
        b[44..44 + comm.len()].copy_from_slice(comm.as_bytes());
        b
    }

    fn decoder() -> RqIssue {
        RqIssue::from_format(&parse_format(EVENT, FORMAT).unwrap()).unwrap()
    }

    #[test]
    fn a_raw_issue_decodes_to_the_request_its_text_line_gives() {
        let d = decoder();
        let cases = [
            ((7 << 20) | 3, 229_440, 8, "WSM", "jbd2/loop3-8"),
            ((259 << 20) | 1, 0, 0, "FF", "kworker/1:1H"),
            ((7 << 20), 1 << 33, 256, "FWFS", "joj bench [x]"),
        ];
        for (dev, sector, nr, rwbs, comm) in cases {
            let raw = d
                .decode(12_345_678_000, &record(2104, dev, sector, nr, rwbs, comm))
                .unwrap()
                .unwrap();
            let line = format!(
                "  {comm}-77  [001] ..... 12.345678: block_rq_issue: {},{} {rwbs} {} () {sector} + {nr} be,0,4 [{comm}]",
                dev >> 20,
                dev & 0xfffff,
                nr * 512
            );
            let Ok(TraceLine::Request(text)) = parse_trace_line(&line) else {
                panic!("{line}")
            };
            assert_eq!(raw, text, "{line}");
        }
    }

    #[test]
    fn other_events_are_skipped_and_bad_records_are_errors() {
        let d = decoder();
        assert_eq!(d.decode(0, &record(9, 1, 0, 8, "W", "x")).unwrap(), None);
        assert!(d.decode(0, &record(2104, 1, 0, 8, "Q", "x")).is_err());
        assert!(d.decode(0, &record(2104, 1, 0, 8, "W", "x")[..30]).is_err());
        assert!(d.decode(0, &[1]).is_err());
    }

    #[test]
    fn a_format_without_a_needed_field_is_refused() {
        let f = FORMAT.replace("nr_sector", "nr_sectors");
        assert!(RqIssue::from_format(&parse_format(EVENT, &f).unwrap()).is_err());
    }
}
