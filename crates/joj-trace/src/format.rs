//! The joj-trace file format, version 1 (`docs/formats/joj-trace.md` is the specification).
//!
//! ```text
//! line 1        {"format":"joj-trace","version":1,"records":N,"clock":..,"devices":[..],
//!                "source":..,"meta":{..}}\n
//! line 2..N+1   one TraceRecord as a JSON object\n
//! ```
//!
//! JSON Lines, UTF-8, every line ended by `\n`. The writer checks each record against the
//! format's rules before writing it and the reader checks it again after parsing, so a file that
//! reads without error satisfies them: flushes carry no sectors, every record's device is listed
//! in the header, and exactly `records` record lines follow the header. Truncation shows up as
//! `IncompleteLastLine` (cut inside a line) or `RecordCountMismatch` (cut at a line boundary).

use std::collections::HashSet;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::TraceError;
use crate::input;
use crate::output::{Existing, write_atomically};
use crate::record::{Op, TraceRecord};

/// Value of the header's `format` field.
pub const FORMAT_NAME: &str = "joj-trace";
/// The newest major version this crate reads, and the one it writes.
pub const FORMAT_VERSION: u32 = 1;
/// Every file this crate writes starts with these bytes (the writer emits `format` first).
pub const MAGIC_PREFIX: &str = "{\"format\":\"joj-trace\"";
/// The largest trace file (or blkparse text) joj reads; a traced run of a million requests
/// writes some 200 MiB. `joj trace plot` and `joj replay` read a trace one record at a time
/// ([`TraceReader`]); `joj trace show`, `joj trace import` and a replay with the optimized
/// journal hold its records whole, about as large as their text.
pub const MAX_TRACE_BYTES: u64 = 2 << 30;

/// The most devices a trace joj writes may list. A reader takes lines of at most
/// [`input::MAX_LINE_BYTES`], and the header lists every device; an imported device is
/// `major:minor` of two u32s, at most [`MAX_DEVICE_ENTRY_BYTES`] in the header, so 4,096 of
/// them (far more than any traced machine has) keep the header well inside the limit.
pub const MAX_TRACE_DEVICES: usize = 4096;
/// The header bytes of one imported device: `{"dev":"4294967295:4294967295","role":"journal",
/// "name":"4294967295:4294967295"},` is 81 bytes.
pub const MAX_DEVICE_ENTRY_BYTES: usize = 96;
const _: () =
    assert!(MAX_TRACE_DEVICES * MAX_DEVICE_ENTRY_BYTES + 64 * 1024 <= input::MAX_LINE_BYTES);

/// What `time_ns` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    /// Nanoseconds of CLOCK_MONOTONIC (tracefs `mono` clock).
    Mono,
    /// Nanoseconds since the earliest record of the trace.
    Relative,
}

/// What a traced device is to the filesystem under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceRole {
    /// The device holding the filesystem.
    Main,
    /// An external filesystem journal (ext4 `journal_dev`, xfs `logdev`).
    Journal,
}

/// One traced device as listed in the header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceDevice {
    /// `major:minor`, exactly as in the records' `dev`.
    pub dev: String,
    pub role: DeviceRole,
    /// Human-readable path or label (`/dev/loop0`); not used for matching.
    pub name: String,
}

/// How the requests were captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceSource {
    /// joj's own capture of `block_rq_issue` through tracefs.
    Tracefs,
    /// An import of blkparse's text output.
    Blkparse,
}

/// The header line, less the fields the writer derives itself (`format`, `version`,
/// `records`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceHeader {
    pub clock: Clock,
    pub devices: Vec<TraceDevice>,
    pub source: TraceSource,
    /// Free-form facts about the run; no key is required.
    #[serde(default)]
    pub meta: Map<String, Value>,
}

impl TraceHeader {
    /// Transactions of the run the trace captured, if its header says (`meta.transactions`,
    /// which `joj bench --trace` writes; 0 or anything but a number is not said).
    pub fn transactions(&self) -> Option<u64> {
        self.meta
            .get("transactions")
            .and_then(|v| v.as_u64())
            .filter(|&n| n > 0)
    }
}

/// The header as written: the fixed fields first, so the file starts with [`MAGIC_PREFIX`].
#[derive(Serialize)]
struct HeaderLine<'a> {
    format: &'static str,
    version: u32,
    records: u64,
    #[serde(flatten)]
    header: &'a TraceHeader,
}

/// Write a complete trace: the header line, then one line per record, in slice order (which
/// must be issue order). Fails with `InvalidRecord` on the first record that breaks the format's
/// rules; what was written up to then is not a valid trace, which is why callers writing a file
/// should use [`write_trace_file`].
pub fn write_trace(
    w: impl Write,
    header: &TraceHeader,
    records: &[TraceRecord],
) -> Result<(), TraceError> {
    write_trace_records(w, header, records.len() as u64, records.iter().map(Ok))
}

/// [`write_trace`] of records given one at a time, `count` of them (the header says how many
/// before the first is written): what is held does not grow with the trace. Fails on the first
/// error of `records`, and if they are not `count`.
pub fn write_trace_records<R: std::borrow::Borrow<TraceRecord>>(
    w: impl Write,
    header: &TraceHeader,
    count: u64,
    records: impl Iterator<Item = Result<R, TraceError>>,
) -> Result<(), TraceError> {
    let mut w = BufWriter::new(w);
    let line = HeaderLine {
        format: FORMAT_NAME,
        version: FORMAT_VERSION,
        records: count,
        header,
    };
    let header_line = serde_json::to_vec(&line).map_err(std::io::Error::from)?;
    // A header the reader would refuse is not written.
    if header_line.len() >= input::MAX_LINE_BYTES {
        return Err(TraceError::HeaderTooLong {
            devices: header.devices.len(),
            line_bytes: header_line.len(),
            limit_bytes: input::MAX_LINE_BYTES,
        });
    }
    w.write_all(&header_line)?;
    w.write_all(b"\n")?;
    let devs = header_devs(header);
    let mut written = 0u64;
    for rec in records {
        let rec = rec?;
        let rec = rec.borrow();
        check_record(rec, |d| devs.contains(d), written as usize + 2)?;
        serde_json::to_writer(&mut w, rec).map_err(std::io::Error::from)?;
        w.write_all(b"\n")?;
        written += 1;
    }
    if written != count {
        return Err(TraceError::RecordCountMismatch {
            expected: count,
            found: written,
        });
    }
    w.flush()?;
    Ok(())
}

/// Write a trace to `path` atomically (temporary file, sync, rename), replacing any regular file
/// there: a reader finds either the old file or the complete new one. Callers that must not
/// replace a file use [`crate::output::write_atomically`] with [`Existing::Keep`] and
/// [`write_trace`].
pub fn write_trace_file(
    path: &Path,
    header: &TraceHeader,
    records: &[TraceRecord],
) -> Result<(), TraceError> {
    write_atomically(path, Existing::Replace, |w| write_trace(w, header, records))
}

/// A trace read one record at a time: the header is parsed when it is opened, each record is
/// checked as it is read (the same checks [`read_trace`] makes), and the record count is checked
/// once the file ends. What it holds is one line and the header's devices, whatever the number of
/// records: the plot and the replay read traces through it.
pub struct TraceReader<R: BufRead> {
    r: R,
    buf: Vec<u8>,
    header: TraceHeader,
    expected: u64,
    devs: HashSet<String>,
    /// The line last read (the header is line 1).
    line: usize,
    found: u64,
    done: bool,
}

impl<R: BufRead> TraceReader<R> {
    /// Read and check the header of the trace `r` holds.
    pub fn new(mut r: R) -> Result<TraceReader<R>, TraceError> {
        let (header, expected) = read_header(&mut r)?;
        Ok(TraceReader::after_header(r, header, expected))
    }

    fn after_header(r: R, header: TraceHeader, expected: u64) -> TraceReader<R> {
        let devs = header_devs(&header)
            .into_iter()
            .map(str::to_owned)
            .collect();
        TraceReader {
            r,
            buf: Vec::new(),
            header,
            expected,
            devs,
            line: 1,
            found: 0,
            done: false,
        }
    }

    /// What the records are read from.
    pub fn get_ref(&self) -> &R {
        &self.r
    }

    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    /// The record count the header announces (checked against the file once it ends; never
    /// trusted for an allocation).
    pub fn announced(&self) -> u64 {
        self.expected
    }

    /// The next record, `None` once the file ends with as many records as its header announced.
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        if self.done {
            return Ok(None);
        }
        if !next_line(&mut self.r, &mut self.buf, self.line + 1)? {
            self.done = true;
            if self.found != self.expected {
                return Err(TraceError::RecordCountMismatch {
                    expected: self.expected,
                    found: self.found,
                });
            }
            return Ok(None);
        }
        self.line += 1;
        let line = self.line;
        let complete = self.buf.last() == Some(&b'\n');
        let text = if complete {
            &self.buf[..self.buf.len() - 1]
        } else {
            &self.buf[..]
        };
        let rec: TraceRecord = match serde_json::from_slice(text) {
            Ok(rec) => rec,
            Err(_) if !complete => return Err(TraceError::IncompleteLastLine { line }),
            Err(e) => {
                return Err(TraceError::MalformedLine {
                    line,
                    message: e.to_string(),
                });
            }
        };
        check_record(&rec, |d| self.devs.contains(d), line)?;
        self.found += 1;
        Ok(Some(rec))
    }

    /// The header, once the records have been read.
    pub fn into_header(self) -> TraceHeader {
        self.header
    }
}

/// Line 1 of `r`, parsed: the header and the record count it announces.
fn read_header(r: &mut impl BufRead) -> Result<(TraceHeader, u64), TraceError> {
    let mut buf = Vec::new();
    if !next_line(r, &mut buf, 1)? {
        return Err(TraceError::NotJojTrace {
            found: "an empty file".to_owned(),
        });
    }
    parse_header(&buf)
}

/// The next line of `r` into `buf`: `false` at the end of the file. No line of a trace is near
/// [`input::MAX_LINE_BYTES`] long: a longer one is refused before it fills memory.
fn next_line(r: &mut impl BufRead, buf: &mut Vec<u8>, line: usize) -> Result<bool, TraceError> {
    match input::read_line(r, buf, input::MAX_LINE_BYTES)? {
        input::Line::End => Ok(false),
        input::Line::Read => Ok(true),
        input::Line::TooLong => Err(TraceError::LineTooLong {
            line,
            limit_bytes: input::MAX_LINE_BYTES,
        }),
    }
}

/// Read a complete trace, checking the header, every record and the record count. The records
/// are held whole: a caller that needs only what they add up to reads with [`TraceReader`].
pub fn read_trace(r: impl Read) -> Result<(TraceHeader, Vec<TraceRecord>), TraceError> {
    let mut reader = TraceReader::new(BufReader::new(r))?;
    // Never trust the announced count for an allocation: a corrupt header must not abort us.
    let mut records =
        Vec::with_capacity(usize::try_from(reader.announced().min(1 << 20)).unwrap_or(0));
    while let Some(rec) = reader.next_record()? {
        records.push(rec);
    }
    Ok((reader.into_header(), records))
}

/// Open the trace stored at `path`, a regular file of at most [`MAX_TRACE_BYTES`], to be read one
/// record at a time. A read error of the reader is said as the file's with
/// [`TraceReader::named`].
pub fn open_trace_file(path: &Path) -> Result<TraceReader<input::Limited>, TraceError> {
    let input = input::open(path, MAX_TRACE_BYTES, "a joj-trace file")?;
    let mut limited = input.reader();
    let (header, expected) = read_header(&mut limited).map_err(|e| match e {
        TraceError::Io(io) => TraceError::Input(limited.input_error(io)),
        e => e,
    })?;
    Ok(TraceReader::after_header(limited, header, expected))
}

impl TraceReader<input::Limited> {
    /// `e` with a read error said as the input's: which file, and that it grew past its limit.
    pub fn named(&self, e: TraceError) -> TraceError {
        match e {
            TraceError::Io(io) => TraceError::Input(self.r.input_error(io)),
            e => e,
        }
    }
}

/// Read the trace stored at `path`: a regular file of at most [`MAX_TRACE_BYTES`].
pub fn read_trace_file(path: &Path) -> Result<(TraceHeader, Vec<TraceRecord>), TraceError> {
    let input = input::open(path, MAX_TRACE_BYTES, "a joj-trace file")?;
    let mut reader = input.reader();
    read_trace(&mut reader).map_err(|e| match e {
        TraceError::Io(io) => TraceError::Input(reader.input_error(io)),
        e => e,
    })
}

/// Parse line 1 (with its newline, if any) into the header and the announced record count.
fn parse_header(buf: &[u8]) -> Result<(TraceHeader, u64), TraceError> {
    let complete = buf.last() == Some(&b'\n');
    let text = if complete { &buf[..buf.len() - 1] } else { buf };
    let value: Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        // A header cut short still starts with the magic: report truncation, not "not ours".
        Err(_) if !complete && text.starts_with(MAGIC_PREFIX.as_bytes()) => {
            return Err(TraceError::IncompleteLastLine { line: 1 });
        }
        Err(_) => {
            return Err(TraceError::NotJojTrace {
                found: "a first line that is not JSON".to_owned(),
            });
        }
    };
    let Some(obj) = value.as_object() else {
        return Err(TraceError::NotJojTrace {
            found: "a first line that is not a JSON object".to_owned(),
        });
    };
    match obj.get("format").and_then(Value::as_str) {
        Some(FORMAT_NAME) => {}
        Some(other) => {
            return Err(TraceError::NotJojTrace {
                found: format!("format {}", input::quoted(other)),
            });
        }
        None => {
            return Err(TraceError::NotJojTrace {
                found: "a header without a \"format\" string".to_owned(),
            });
        }
    }
    let malformed = |message: String| TraceError::MalformedLine { line: 1, message };
    let version = obj
        .get("version")
        .and_then(Value::as_u64)
        .ok_or_else(|| malformed("\"version\" is missing or not an unsigned integer".into()))?;
    if version == 0 || version > u64::from(FORMAT_VERSION) {
        return Err(TraceError::UnsupportedVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let records = obj
        .get("records")
        .and_then(Value::as_u64)
        .ok_or_else(|| malformed("\"records\" is missing or not an unsigned integer".into()))?;
    let header = TraceHeader::deserialize(&value).map_err(|e| malformed(e.to_string()))?;
    Ok((header, records))
}

fn header_devs(header: &TraceHeader) -> HashSet<&str> {
    header.devices.iter().map(|d| d.dev.as_str()).collect()
}

/// The format's rules for one record (see "What a reader may rely on" in the spec).
fn check_record(
    rec: &TraceRecord,
    listed: impl Fn(&str) -> bool,
    line: usize,
) -> Result<(), TraceError> {
    let invalid = |reason: String| TraceError::InvalidRecord { line, reason };
    if rec.op == Op::Flush && rec.sectors != 0 {
        return Err(invalid(format!(
            "flush with {} sectors (flushes carry none)",
            rec.sectors
        )));
    }
    if !listed(rec.dev.as_str()) {
        return Err(invalid(format!(
            "device {} is not listed in the header",
            input::quoted(&rec.dev)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{BlockClass, FileRole};

    fn header() -> TraceHeader {
        let mut meta = Map::new();
        meta.insert("fs".into(), Value::from("ext4"));
        TraceHeader {
            clock: Clock::Mono,
            devices: vec![
                TraceDevice {
                    dev: "7:0".into(),
                    role: DeviceRole::Main,
                    name: "/dev/loop0".into(),
                },
                TraceDevice {
                    dev: "7:1".into(),
                    role: DeviceRole::Journal,
                    name: "/dev/loop1".into(),
                },
            ],
            source: TraceSource::Tracefs,
            meta,
        }
    }

    fn rec(time_ns: u64, dev: &str, op: Op, sector: u64, sectors: u64) -> TraceRecord {
        TraceRecord::new(time_ns, dev, op, sector, sectors)
    }

    fn records() -> Vec<TraceRecord> {
        let mut a = rec(100, "7:0", Op::Write, 2048, 8);
        a.class = BlockClass::Data;
        a.file = Some(FileRole::Wal);
        let mut b = rec(200, "7:1", Op::Write, 16, 24);
        b.class = BlockClass::FsJournal;
        b.comm = "jbd2/loop0-8".into();
        let mut c = rec(300, "7:1", Op::Flush, 0, 0);
        c.preflush = true;
        c.class = BlockClass::Flush;
        vec![a, b, c]
    }

    fn encode(recs: &[TraceRecord]) -> Vec<u8> {
        let mut out = Vec::new();
        write_trace(&mut out, &header(), recs).expect("write");
        out
    }

    #[test]
    fn a_written_trace_reads_back_equal() {
        let bytes = encode(&records());
        assert!(bytes.starts_with(MAGIC_PREFIX.as_bytes()));
        assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 4);
        let (h, recs) = read_trace(&bytes[..]).expect("read");
        assert_eq!(h, header());
        assert_eq!(recs, records());
    }

    #[test]
    fn a_file_round_trips_through_write_trace_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.jsonl");
        write_trace_file(&path, &header(), &records()).expect("write");
        let (_, recs) = read_trace_file(&path).expect("read");
        assert_eq!(recs, records());
    }

    #[test]
    fn foreign_files_are_not_joj_traces() {
        for text in [
            "",
            "  7,0    1        1     0.000000000  1234  Q  WS 2048 + 8 [joj]\n",
            "[1,2,3]\n",
            "{\"format\":\"other\",\"version\":1}\n",
        ] {
            let err = read_trace(text.as_bytes()).expect_err(text);
            assert!(
                matches!(err, TraceError::NotJojTrace { .. }),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn newer_and_zero_versions_are_refused() {
        for v in [0u64, 2, 17] {
            let text = format!(
                "{{\"format\":\"joj-trace\",\"version\":{v},\"records\":0,\"clock\":\"mono\",\
                 \"devices\":[],\"source\":\"tracefs\"}}\n"
            );
            let err = read_trace(text.as_bytes()).expect_err("version");
            assert!(
                matches!(err, TraceError::UnsupportedVersion { found, supported: 1 } if found == v),
                "{err}"
            );
        }
    }

    #[test]
    fn unknown_fields_are_ignored_and_meta_is_optional() {
        let text = "{\"format\":\"joj-trace\",\"version\":1,\"records\":1,\"clock\":\"relative\",\
            \"devices\":[{\"dev\":\"8:0\",\"role\":\"main\",\"name\":\"sda\",\"extra\":1}],\
            \"source\":\"blkparse\",\"future\":true}\n\
            {\"time_ns\":0,\"dev\":\"8:0\",\"op\":\"read\",\"preflush\":false,\"fua\":false,\
            \"sync\":false,\"meta\":true,\"sector\":8,\"sectors\":8,\"comm\":\"x\",\
            \"class\":\"unknown\",\"later\":[1]}\n";
        let (h, recs) = read_trace(text.as_bytes()).expect("read");
        assert!(h.meta.is_empty());
        assert_eq!(h.clock, Clock::Relative);
        assert_eq!(recs.len(), 1);
        assert!(recs[0].meta);
    }

    #[test]
    fn a_file_cut_inside_a_line_reports_the_incomplete_last_line() {
        let bytes = encode(&records());
        let cut = bytes.len() - 10;
        let err = read_trace(&bytes[..cut]).expect_err("truncated");
        assert!(
            matches!(err, TraceError::IncompleteLastLine { line: 4 }),
            "{err}"
        );

        // Cut inside the header too.
        let err = read_trace(&bytes[..40]).expect_err("truncated header");
        assert!(
            matches!(err, TraceError::IncompleteLastLine { line: 1 }),
            "{err}"
        );
    }

    #[test]
    fn a_file_cut_at_a_line_boundary_reports_the_missing_records() {
        let bytes = encode(&records());
        let last_line_start = bytes[..bytes.len() - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .expect("newline")
            + 1;
        let err = read_trace(&bytes[..last_line_start]).expect_err("truncated");
        assert!(
            matches!(
                err,
                TraceError::RecordCountMismatch {
                    expected: 3,
                    found: 2
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_malformed_record_names_its_line() {
        let mut bytes = encode(&records());
        // Turn the second record's op into something unknown.
        let text = String::from_utf8(bytes.clone()).expect("utf8");
        let broken = text.replacen("\"op\":\"write\",\"preflush\":false,\"fua\":false,\"sync\":true,\"meta\":false,\"sector\":16", "\"op\":\"scribble\",\"preflush\":false,\"fua\":false,\"sync\":true,\"meta\":false,\"sector\":16", 1);
        assert_ne!(text, broken);
        bytes = broken.into_bytes();
        let err = read_trace(&bytes[..]).expect_err("malformed");
        match err {
            TraceError::MalformedLine { line, message } => {
                assert_eq!(line, 3);
                assert!(message.contains("scribble"), "{message}");
            }
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn rule_breaking_records_are_refused_on_write_and_on_read() {
        let mut bad = records();
        bad[2].sectors = 8;
        let mut out = Vec::new();
        let err = write_trace(&mut out, &header(), &bad).expect_err("flush with sectors");
        assert!(
            matches!(err, TraceError::InvalidRecord { line: 4, .. }),
            "{err}"
        );

        let mut bad = records();
        bad[0].dev = "9:9".into();
        let err = write_trace(Vec::new(), &header(), &bad).expect_err("unlisted dev");
        assert!(
            matches!(err, TraceError::InvalidRecord { line: 2, .. }),
            "{err}"
        );

        let text = String::from_utf8(encode(&records())).expect("utf8");
        let broken = text.replacen("\"dev\":\"7:0\",\"op\"", "\"dev\":\"9:9\",\"op\"", 1);
        let err = read_trace(broken.as_bytes()).expect_err("unlisted dev");
        assert!(
            matches!(err, TraceError::InvalidRecord { line: 2, .. }),
            "{err}"
        );
    }
}
