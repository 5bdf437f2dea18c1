//! Import of blkparse's default text output, so traces taken on other machines (with
//! blktrace) can be classified, plotted and replayed like joj's own.
//!
//! An event line in blkparse's default format is
//!
//! ```text
//!   7,0    1        6     0.000004500  1234  D  WS 2048 + 8 [joj]
//!   dev   cpu     seq    secs.nanos     pid act rwbs sector + sectors [comm]
//! ```
//!
//! and a flush has no range, or `0 + 0`: `7,0 2 5 0.000401 321 D FN [jbd2/loop0-8]`.
//!
//! We keep `D` (issued to the driver) events, the same point at which joj's tracefs capture
//! records `block_rq_issue`; a trace with no `D` at all (e.g. captured with a `-a queue`
//! filter) falls back to `Q`. `C` (completed) events give the kept records their
//! `complete_ns` (a `C` line ends in `[error]` where the others have `[comm]`), and after an
//! `R` (requeued) event the next `D` of its request is the same request issued again, not
//! another ([`crate::completions`] says how they are matched). Lines whose first field is not
//! `major,minor` are blkparse's per-CPU and total summary (or blank) and are skipped; a line
//! that starts like an event but does not parse is an error naming its line, since silently
//! dropping requests would falsify every total computed from the trace.
//!
//! Completions are matched to requests as the text gives them ([`crate::completions`]), so
//! the records can be read one at a time in two passes over the text ([`scan_blkparse`], then
//! [`BlkparseRecords`]) as well as all at once ([`import_blkparse`]): both give the same
//! records. The second reading must find what the first found: every request of a device the
//! first found, within the sectors it found, and at the end the same events (a digest of every
//! `D`, `Q`, `C` and `R` event); anything else is `TraceError::ChangedWhileRead`.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{BufRead, BufReader, Read};

use serde_json::{Map, Value};

use crate::completions::{Completing, CompletionMatcher, Requeues};
use crate::error::TraceError;
use crate::format::{Clock, DeviceRole, MAX_TRACE_DEVICES, TraceDevice, TraceHeader, TraceSource};
use crate::input;
use crate::record::{BlockClass, Completion, Op, TraceRecord};

/// Which blkparse action the imported records are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlkparseAction {
    /// `D`: issued to the driver.
    Issue,
    /// `Q`: queued (used only when the trace has no `D` events).
    Queue,
}

/// The result of an import: records in blkparse's output order, with times relative to the
/// earliest of them and class `Unknown`.
#[derive(Debug, Clone, PartialEq)]
pub struct BlkparseImport {
    pub records: Vec<TraceRecord>,
    pub action: BlkparseAction,
    /// Every device seen in the records, `major:minor`, in order of first appearance.
    pub devices: Vec<String>,
}

impl BlkparseImport {
    /// A header for writing this import as a joj-trace file: relative clock, source blkparse,
    /// every device in the `main` role (blkparse text does not say which is a journal device;
    /// callers who know can change the roles).
    pub fn header(&self) -> TraceHeader {
        header_of(self.action, &self.devices)
    }
}

/// The joj-trace header of blkparse text of `action`'s requests on `devices`
/// ([`BlkparseImport::header`], [`BlkparseScan::header`]).
fn header_of(action: BlkparseAction, devices: &[String]) -> TraceHeader {
    let mut meta = Map::new();
    let action = match action {
        BlkparseAction::Issue => "D",
        BlkparseAction::Queue => "Q",
    };
    meta.insert("blkparse_action".to_owned(), Value::from(action));
    TraceHeader {
        clock: Clock::Relative,
        devices: devices
            .iter()
            .map(|d| TraceDevice {
                dev: d.clone(),
                role: DeviceRole::Main,
                name: d.clone(),
            })
            .collect(),
        source: TraceSource::Blkparse,
        meta,
    }
}

/// Parse blkparse text (default output format). See the module documentation for which lines
/// are used, skipped, or rejected. The records are held whole: a caller that reads them once
/// in order reads the text twice instead, with [`scan_blkparse`] and [`BlkparseRecords`],
/// which give the same records holding a bounded number.
pub fn import_blkparse(r: impl Read) -> Result<BlkparseImport, TraceError> {
    let mut issued = false;
    let mut events: Vec<(BlkparseAction, Event)> = Vec::new();
    let mut scan = Scanning::default();
    each_event(BufReader::new(r), |event| {
        scan.see(&event)?;
        match &event {
            Event::Request(BlkparseAction::Issue, _) if !issued => {
                // Once a D exists the Q fallback can never be used: stop holding it in memory.
                issued = true;
                events.retain(|(a, _)| *a != BlkparseAction::Queue);
            }
            Event::Request(BlkparseAction::Queue, _) if issued => return Ok(()),
            _ => {}
        }
        let action = match &event {
            Event::Request(a, _) => *a,
            Event::Complete(_) | Event::Requeue(_) => BlkparseAction::Issue,
        };
        events.push((action, event));
        Ok(())
    })?;
    let scan = scan.finish()?;
    let mut matcher = CompletionMatcher::new(scan.completing.clone());
    let mut requeues = Requeues::default();
    let mut records = Vec::new();
    for (_, event) in events {
        if let Some(rec) = next_request(&mut matcher, &mut requeues, scan.action, event) {
            matcher.request(rec);
        }
        while let Some(r) = matcher.ready() {
            records.push(relative(r, scan.t0_ns)?);
        }
    }
    while let Some(r) = matcher.rest() {
        records.push(relative(r, scan.t0_ns)?);
    }
    Ok(BlkparseImport {
        records,
        action: scan.action,
        devices: scan.devices,
    })
}

/// What a first reading of blkparse text finds, for a second to give its records one at a
/// time ([`BlkparseRecords`]): which action the requests are (`D`, or `Q` when the text has no
/// `D`), the earliest of their times, their devices in order of first appearance (at most
/// [`MAX_TRACE_DEVICES`]), the end of each device's highest request and how many there are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlkparseScan {
    pub action: BlkparseAction,
    pub t0_ns: u64,
    pub devices: Vec<String>,
    /// Per device of `devices`, the highest end of its requests with an address
    /// ([`TraceRecord::addressed_end`]).
    pub end_sectors: Vec<u64>,
    /// Requests of `action` (`D` events, less those that issue a requeued request again).
    pub requests: u64,
    /// The devices and operations the text completes.
    pub completing: Completing,
    /// A digest of every `D`, `Q`, `C` and `R` event, in order, for a later reading to find
    /// the same text.
    pub digest: u64,
}

impl BlkparseScan {
    /// The header of a joj-trace file of the text's requests, as [`BlkparseImport::header`].
    pub fn header(&self) -> TraceHeader {
        header_of(self.action, &self.devices)
    }
}

/// Read blkparse text once, keeping what [`BlkparseScan`] says: a few numbers and the devices,
/// whatever the length of the text. Fails as [`import_blkparse`] fails.
pub fn scan_blkparse(r: impl BufRead) -> Result<BlkparseScan, TraceError> {
    let mut scan = Scanning::default();
    each_event(r, |event| scan.see(&event))?;
    scan.finish()
}

/// One action's requests seen so far: their earliest time, devices and number.
#[derive(Debug, Default)]
struct Seen {
    t0_ns: Option<u64>,
    devices: Vec<String>,
    end_sectors: Vec<u64>,
    /// Each device's place in the list: linear in the records however many devices they name.
    known: HashMap<String, usize>,
    /// The first device past [`MAX_TRACE_DEVICES`], if any.
    too_many: Option<String>,
    requests: u64,
}

impl Seen {
    fn see(&mut self, rec: &TraceRecord) {
        self.t0_ns = Some(self.t0_ns.map_or(rec.time_ns, |t| t.min(rec.time_ns)));
        self.requests += 1;
        let end = rec.addressed_end();
        if let Some(&i) = self.known.get(&rec.dev) {
            self.end_sectors[i] = self.end_sectors[i].max(end);
        } else if self.too_many.is_none() {
            if self.devices.len() == MAX_TRACE_DEVICES {
                self.too_many = Some(rec.dev.clone());
                return;
            }
            self.known.insert(rec.dev.clone(), self.devices.len());
            self.devices.push(rec.dev.clone());
            self.end_sectors.push(end);
        }
    }
}

#[derive(Debug, Default)]
struct Scanning {
    issued: Seen,
    queued: Seen,
    completing: Completing,
    requeues: Requeues,
    digest: DefaultHasher,
}

impl Scanning {
    fn see(&mut self, event: &Event) -> Result<(), TraceError> {
        event.hash_into(&mut self.digest);
        match event {
            Event::Complete(c) => self.completing.see(c),
            Event::Requeue(c) => self.requeues.requeue(c),
            Event::Request(BlkparseAction::Issue, rec) if self.requeues.is_reissue(rec) => {}
            Event::Request(BlkparseAction::Issue, rec) => self.issued.see(rec),
            Event::Request(BlkparseAction::Queue, rec) if self.issued.requests == 0 => {
                self.queued.see(rec)
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(self) -> Result<BlkparseScan, TraceError> {
        let (action, seen) = if self.issued.requests > 0 {
            (BlkparseAction::Issue, self.issued)
        } else {
            (BlkparseAction::Queue, self.queued)
        };
        if let Some(dev) = seen.too_many {
            return Err(TraceError::TooManyDevices {
                limit: MAX_TRACE_DEVICES,
                dev,
            });
        }
        Ok(BlkparseScan {
            action,
            // blkparse sorts events by time, but CPUs' clocks can disagree by a few ns: the
            // minimum rather than the first, so that no time underflows.
            t0_ns: seen.t0_ns.unwrap_or(0),
            devices: seen.devices,
            end_sectors: seen.end_sectors,
            requests: seen.requests,
            completing: self.completing,
            digest: self.digest.finish(),
        })
    }
}

/// `rec` with its times counted from `t0_ns`; an error if it is earlier (the text changed
/// since it was scanned).
fn relative(mut rec: TraceRecord, t0_ns: u64) -> Result<TraceRecord, TraceError> {
    let changed = || TraceError::ChangedWhileRead {
        change: format!(
            "a request at {} ns, before the earliest of the first reading ({t0_ns} ns)",
            rec.time_ns
        ),
    };
    rec.time_ns = rec.time_ns.checked_sub(t0_ns).ok_or_else(changed)?;
    rec.complete_ns = rec.complete_ns.map(|c| c.saturating_sub(t0_ns));
    Ok(rec)
}

/// Call `f` with every `D`, `Q`, `C` and `R` event of `r`, in order.
fn each_event(
    mut r: impl BufRead,
    mut f: impl FnMut(Event) -> Result<(), TraceError>,
) -> Result<(), TraceError> {
    let mut buf = Vec::new();
    let mut line_no = 0;
    while let Some(event) = next_event(&mut r, &mut buf, &mut line_no)? {
        f(event)?;
    }
    Ok(())
}

/// The next `D`, `Q`, `C` or `R` event of `r`, `None` at the end of the text; `line_no` counts the
/// lines read.
fn next_event(
    r: &mut impl BufRead,
    buf: &mut Vec<u8>,
    line_no: &mut usize,
) -> Result<Option<Event>, TraceError> {
    loop {
        match input::read_line(r, buf, input::MAX_LINE_BYTES)? {
            input::Line::End => return Ok(None),
            input::Line::Read => {}
            input::Line::TooLong => {
                return Err(TraceError::LineTooLong {
                    line: *line_no + 1,
                    limit_bytes: input::MAX_LINE_BYTES,
                });
            }
        }
        *line_no += 1;
        let text = String::from_utf8_lossy(buf);
        if let Some(event) = parse_line(&text, *line_no)? {
            return Ok(Some(event));
        }
    }
}

/// The records of blkparse text, one at a time, as [`import_blkparse`] gives them: read a
/// second time after [`scan_blkparse`], holding at most the requests that wait for their
/// completion ([`crate::completions`]).
pub struct BlkparseRecords<R: BufRead> {
    r: R,
    scan: BlkparseScan,
    matcher: CompletionMatcher,
    buf: Vec<u8>,
    line_no: usize,
    ended: bool,
    given: u64,
    /// The events read so far, as `scan.digest` is of the first reading's.
    digest: DefaultHasher,
    /// Each device of `scan.devices` and its place there.
    known: HashMap<String, usize>,
    requeues: Requeues,
}

impl<R: BufRead> BlkparseRecords<R> {
    /// The records of `r`, the text `scan` was made of.
    pub fn new(r: R, scan: BlkparseScan) -> BlkparseRecords<R> {
        let known = scan
            .devices
            .iter()
            .enumerate()
            .map(|(i, d)| (d.clone(), i))
            .collect();
        BlkparseRecords {
            r,
            matcher: CompletionMatcher::new(scan.completing.clone()),
            scan,
            buf: Vec::new(),
            line_no: 0,
            ended: false,
            given: 0,
            digest: DefaultHasher::new(),
            known,
            requeues: Requeues::default(),
        }
    }

    /// What is read from.
    pub fn get_ref(&self) -> &R {
        &self.r
    }

    /// The next record; `None` at the end. An error as soon as a request lies outside what the
    /// first reading found (another device, higher sectors), and at the end if the text no
    /// longer holds the events it held then.
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            let next = if self.ended {
                self.matcher.rest()
            } else {
                self.matcher.ready()
            };
            if let Some(rec) = next {
                self.given += 1;
                return relative(rec, self.scan.t0_ns).map(Some);
            }
            if self.ended {
                if self.given != self.scan.requests {
                    return Err(TraceError::ChangedWhileRead {
                        change: format!(
                            "{} requests, where the first reading found {}",
                            self.given, self.scan.requests
                        ),
                    });
                }
                if self.digest.finish() != self.scan.digest {
                    return Err(TraceError::ChangedWhileRead {
                        change: "as many requests as the first reading, but not the same \
                                 requests and completions"
                            .to_owned(),
                    });
                }
                return Ok(None);
            }
            let Some(event) = next_event(&mut self.r, &mut self.buf, &mut self.line_no)? else {
                self.ended = true;
                continue;
            };
            event.hash_into(&mut self.digest);
            let next = next_request(
                &mut self.matcher,
                &mut self.requeues,
                self.scan.action,
                event,
            );
            if let Some(rec) = next {
                self.check(&rec)?;
                self.matcher.request(rec);
            }
        }
    }

    /// Refuse a request the first reading cannot have found: of a device it did not find, or
    /// past the highest sector it found on its device.
    fn check(&self, rec: &TraceRecord) -> Result<(), TraceError> {
        let line = self.line_no;
        let Some(&i) = self.known.get(&rec.dev) else {
            return Err(TraceError::ChangedWhileRead {
                change: format!(
                    "a request of device {} on line {line}, a device the first reading did not \
                     find",
                    rec.dev
                ),
            });
        };
        let end = rec.addressed_end();
        if end > self.scan.end_sectors[i] {
            return Err(TraceError::ChangedWhileRead {
                change: format!(
                    "a request of device {} on line {line} that ends at sector {end}, past the \
                     {} the first reading found",
                    rec.dev, self.scan.end_sectors[i]
                ),
            });
        }
        Ok(())
    }
}

/// Take in `event`: a completion goes to `matcher`, a requeue to `requeues`; a request of
/// `action` is returned, unless it is a requeued request issued again.
fn next_request(
    matcher: &mut CompletionMatcher,
    requeues: &mut Requeues,
    action: BlkparseAction,
    event: Event,
) -> Option<TraceRecord> {
    match event {
        Event::Request(BlkparseAction::Issue, rec)
            if action == BlkparseAction::Issue && requeues.is_reissue(&rec) =>
        {
            None
        }
        Event::Request(a, rec) if a == action => Some(rec),
        Event::Request(..) => None,
        Event::Complete(c) => {
            matcher.completion(&c);
            None
        }
        Event::Requeue(c) => {
            requeues.requeue(&c);
            None
        }
    }
}

/// A line the importer uses.
enum Event {
    /// A `D` or `Q` event.
    Request(BlkparseAction, TraceRecord),
    /// A `C` event: a request completed.
    Complete(Completion),
    /// An `R` event: a request issued was taken back, to be issued again (its completion's
    /// fields name it).
    Requeue(Completion),
}

impl Event {
    /// Add what the event says to `h` (the digest that tells two readings apart).
    fn hash_into(&self, h: &mut DefaultHasher) {
        match self {
            Event::Request(a, r) => {
                (*a == BlkparseAction::Issue).hash(h);
                (r.time_ns, &r.dev, r.op, r.sector, r.sectors).hash(h);
                (r.preflush, r.fua, r.sync, r.meta, &r.comm).hash(h);
            }
            Event::Complete(c) | Event::Requeue(c) => {
                matches!(self, Event::Requeue(_)).hash(h);
                (c.time_ns, &c.dev, c.op, c.sector, c.sectors).hash(h);
            }
        }
    }
}

/// `Ok(None)` for lines that are not a `D`, `Q`, `C` or `R` event (summary text, other actions);
/// `Ok(Some)` for one of those; `Err` for an event line that does not parse.
fn parse_line(line: &str, line_no: usize) -> Result<Option<Event>, TraceError> {
    let text = line.trim_end_matches(['\n', '\r']);
    // The comm is the only field that may contain spaces: cut it off first.
    let (head, comm) = match text.find('[') {
        Some(open) => {
            let close = text.rfind(']').filter(|&c| c > open);
            (&text[..open], close.map(|c| &text[open + 1..c]))
        }
        None => (text, None),
    };
    let mut fields = head.split_whitespace();
    let Some(dev_field) = fields.next() else {
        return Ok(None);
    };
    if !dev_field.starts_with(|c: char| c.is_ascii_digit()) || !dev_field.contains(',') {
        return Ok(None);
    }
    let err = |reason: &str| TraceError::BlkparseLine {
        line: line_no,
        reason: reason.to_owned(),
        text: input::quoted(text),
    };

    let dev = parse_dev(dev_field).ok_or_else(|| err("bad device, expected major,minor"))?;
    let _cpu: u32 = parse_num(fields.next()).ok_or_else(|| err("bad cpu"))?;
    let _seq: u64 = parse_num(fields.next()).ok_or_else(|| err("bad sequence number"))?;
    let time_ns = fields
        .next()
        .and_then(parse_time_ns)
        .ok_or_else(|| err("bad time, expected seconds.nanoseconds"))?;
    let _pid: u32 = parse_num(fields.next()).ok_or_else(|| err("bad pid"))?;
    let act = fields.next();
    let requeue = act == Some("R");
    let action = match act {
        Some("D") => Some(BlkparseAction::Issue),
        Some("Q") => Some(BlkparseAction::Queue),
        Some("C" | "R") => None,
        Some(_) => return Ok(None),
        None => return Err(err("missing action")),
    };

    let rwbs = fields.next().ok_or_else(|| err("missing rwbs"))?;
    let (mut op, preflush, fua, sync, meta) =
        TraceRecord::parse_rwbs(rwbs).ok_or_else(|| err("bad rwbs"))?;
    let rest: Vec<&str> = fields.collect();
    let (sector, sectors) = match rest.as_slice() {
        [] => (0, 0),
        [sector, "+", sectors] => (
            parse_num(Some(sector)).ok_or_else(|| err("bad sector"))?,
            parse_num(Some(sectors)).ok_or_else(|| err("bad sector count"))?,
        ),
        _ => return Err(err("expected `sector + sectors [comm]` or `[comm]`")),
    };
    // A `C` line ends in `[error]`, not `[comm]`.
    let comm = comm.ok_or_else(|| err("missing [comm]"))?;

    // blkparse spells a flush "FN": the preflush bit over no data op. The kernel's own rwbs
    // for the same request is "FF", which parses as a flush carrying REQ_PREFLUSH; record both
    // the same way so imported and captured traces agree.
    if op == Op::Other && preflush && sectors == 0 {
        op = Op::Flush;
    }
    if op == Op::Flush && sectors != 0 {
        return Err(err("flush with a nonzero length"));
    }
    let Some(action) = action else {
        let c = Completion {
            time_ns,
            dev,
            op,
            sector,
            sectors,
        };
        return Ok(Some(if requeue {
            Event::Requeue(c)
        } else {
            Event::Complete(c)
        }));
    };
    Ok(Some(Event::Request(
        action,
        TraceRecord {
            time_ns,
            dev,
            op,
            preflush,
            fua,
            sync,
            meta,
            sector,
            sectors,
            comm: comm.to_owned(),
            class: BlockClass::Unknown,
            file: None,
            complete_ns: None,
        },
    )))
}

fn parse_num<T: std::str::FromStr>(field: Option<&str>) -> Option<T> {
    field?.parse().ok()
}

/// `"7,0"` → `"7:0"`, the notation of tracefs and of joj-trace files.
fn parse_dev(field: &str) -> Option<String> {
    let (major, minor) = field.split_once(',')?;
    let major: u32 = major.parse().ok()?;
    let minor: u32 = minor.parse().ok()?;
    Some(format!("{major}:{minor}"))
}

/// `"12.000004500"` → 12_000_004_500, in integers so no precision is lost to floats.
fn parse_time_ns(field: &str) -> Option<u64> {
    let (secs, frac) = field.split_once('.').unwrap_or((field, ""));
    if secs.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let mut nanos: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..9 {
        nanos *= 10;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `blkparse -i loop0` prints for a short WAL commit on ext4, with its summary.
    const SAMPLE: &str = "\
  7,0    1        1     0.000100000  1234  Q  WS 2048 + 8 [joj]
  7,0    1        2     0.000101200  1234  G  WS 2048 + 8 [joj]
  7,0    1        3     0.000102000  1234  P   N [joj]
  7,0    1        4     0.000103100  1234  I  WS 2048 + 8 [joj]
  7,0    1        5     0.000103900  1234  U   N [joj] 1
  7,0    1        6     0.000104500  1234  D  WS 2048 + 8 [joj]
  7,0    0        1     0.000250000     0  C  WS 2048 + 8 [0]
  7,0    0        0     0.000260000     0  m   N cfq1234 alloced
  8,0    3        1     0.000270000   697  A  WS 1024 + 8 <- (8,1) 0
  7,0    2        1     0.000300000   321  Q  WS 526336 + 24 [jbd2/loop0-8]
  7,0    2        2     0.000301000   321  G  WS 526336 + 24 [jbd2/loop0-8]
  7,0    2        3     0.000303000   321  D  WS 526336 + 24 [jbd2/loop0-8]
  7,0    2        4     0.000400000   321  Q FWFS 526360 + 8 [jbd2/loop0-8]
  7,0    2        5     0.000401000   321  D  FN [jbd2/loop0-8]
  7,0    2        6     0.000650000   321  D WFS 526360 + 8 [jbd2/loop0-8]
  7,0    0        2     0.000900000     0  C WFS 526360 + 8 [0]
  7,1    1        7     0.001000000  1234  Q   R 4096 + 16 [sqlite worker]
  7,1    1        8     0.001002000  1234  D  RM 4096 + 16 [sqlite worker]
  7,0    3        1     0.002000000    77  D  FN 0 + 0 [kworker/3:1H]
  7,0    3        2     0.003000000    77  D   D 8192 + 2048 [fstrim]
CPU0 (7,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           0,        0KiB
 Read Dispatches:        0,        0KiB\t Write Dispatches:        0,        0KiB
 Reads Completed:        0,        0KiB\t Writes Completed:        2,       16KiB

Total (7,0):
 Reads Queued:           1,        8KiB\t Writes Queued:           3,       20KiB
 IO unplugs:             1        \t Timer unplugs:           0

Throughput (R/W): 8000KiB/s / 20000KiB/s
Events (7,0): 20 entries
Skips: 0 forward (0 -   0.0%)
";

    #[test]
    fn issue_events_are_imported_with_relative_times_and_flags() {
        let imp = import_blkparse(SAMPLE.as_bytes()).expect("import");
        assert_eq!(imp.action, BlkparseAction::Issue);
        assert_eq!(imp.devices, vec!["7:0".to_owned(), "7:1".to_owned()]);
        let r = &imp.records;
        assert_eq!(r.len(), 7);

        assert_eq!(r[0].time_ns, 0);
        assert_eq!((r[0].op, r[0].sector, r[0].sectors), (Op::Write, 2048, 8));
        assert!(r[0].sync && !r[0].fua && !r[0].preflush);
        assert_eq!(r[0].comm, "joj");
        assert_eq!(r[0].class, BlockClass::Unknown);

        assert_eq!(r[1].time_ns, 303_000 - 104_500);
        assert_eq!(r[1].comm, "jbd2/loop0-8");

        // "FN" is a flush.
        assert_eq!((r[2].op, r[2].sectors), (Op::Flush, 0));
        assert!(r[2].preflush);

        // The commit block: FUA write.
        assert_eq!((r[3].op, r[3].sector, r[3].sectors), (Op::Write, 526360, 8));
        assert!(r[3].fua);

        // A comm with a space, and a metadata read on a second device.
        assert_eq!(r[4].comm, "sqlite worker");
        assert_eq!(r[4].dev, "7:1");
        assert!(r[4].meta);
        assert_eq!(r[4].op, Op::Read);

        // "FN 0 + 0" is a flush too.
        assert_eq!((r[5].op, r[5].sector, r[5].sectors), (Op::Flush, 0, 0));

        assert_eq!((r[6].op, r[6].sectors), (Op::Discard, 2048));
        assert_eq!(r[6].time_ns, 3_000_000 - 104_500);
    }

    #[test]
    fn completion_events_give_the_issued_requests_their_completion_times() {
        let imp = import_blkparse(SAMPLE.as_bytes()).unwrap();
        let done: Vec<(u64, Option<u64>)> = imp
            .records
            .iter()
            .map(|r| (r.sector, r.complete_ns))
            .collect();
        // Times are relative to the first issue (0.000104500).
        assert_eq!(done[0], (2048, Some(250_000 - 104_500)));
        assert_eq!(done[1], (526336, None), "no C for it in the sample");
        assert_eq!(done[3], (526360, Some(900_000 - 104_500)));
        assert!(done[4..].iter().all(|d| d.1.is_none()));
    }

    #[test]
    fn a_trace_without_issue_events_falls_back_to_queue_events() {
        let text: String = SAMPLE
            .lines()
            .filter(|l| !l.contains(" D "))
            .map(|l| format!("{l}\n"))
            .collect();
        let imp = import_blkparse(text.as_bytes()).expect("import");
        assert_eq!(imp.action, BlkparseAction::Queue);
        let r = &imp.records;
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].time_ns, 0);
        assert_eq!((r[2].op, r[2].preflush, r[2].fua), (Op::Write, true, true));
        assert_eq!(imp.header().meta["blkparse_action"], "Q");
    }

    #[test]
    fn a_malformed_event_line_names_its_line_number() {
        let mut text = SAMPLE.to_owned();
        text.insert_str(
            0,
            "  7,0    1        9     0.000000000  1234  D  WS 2048 + [joj]\n",
        );
        let err = import_blkparse(text.as_bytes()).expect_err("malformed");
        assert!(
            matches!(err, TraceError::BlkparseLine { line: 1, .. }),
            "{err}"
        );

        let text = SAMPLE.replace("0.000303000", "0.0003x3000");
        let err = import_blkparse(text.as_bytes()).expect_err("bad time");
        assert!(
            matches!(err, TraceError::BlkparseLine { line: 12, .. }),
            "{err}"
        );
    }

    #[test]
    fn an_empty_input_imports_no_records() {
        let imp = import_blkparse(&b""[..]).expect("import");
        assert!(imp.records.is_empty());
        assert!(imp.devices.is_empty());
    }

    #[test]
    fn times_parse_exactly() {
        assert_eq!(parse_time_ns("0.000000000"), Some(0));
        assert_eq!(parse_time_ns("12.5"), Some(12_500_000_000));
        assert_eq!(parse_time_ns("3.000000001"), Some(3_000_000_001));
        assert_eq!(parse_time_ns("3"), Some(3_000_000_000));
        assert_eq!(parse_time_ns("3.0000000001"), None);
        assert_eq!(parse_time_ns(".5"), None);
        assert_eq!(parse_time_ns("1.-5"), None);
    }

    #[test]
    fn an_import_writes_as_a_valid_joj_trace() {
        let imp = import_blkparse(SAMPLE.as_bytes()).expect("import");
        let mut out = Vec::new();
        crate::format::write_trace(&mut out, &imp.header(), &imp.records).expect("write");
        let (h, recs) = crate::format::read_trace(&out[..]).expect("read");
        assert_eq!(h.source, TraceSource::Blkparse);
        assert_eq!(recs, imp.records);
    }

    /// The records of `text` read in two passes, one at a time.
    fn streamed(text: &str) -> Result<Vec<TraceRecord>, TraceError> {
        let scan = scan_blkparse(text.as_bytes())?;
        let mut r = BlkparseRecords::new(text.as_bytes(), scan);
        let mut out = Vec::new();
        while let Some(rec) = r.next_record()? {
            out.push(rec);
        }
        Ok(out)
    }

    #[test]
    fn records_read_one_at_a_time_are_those_of_the_whole_import() {
        let without_d: String = SAMPLE
            .lines()
            .filter(|l| !l.contains(" D "))
            .map(|l| format!("{l}\n"))
            .collect();
        // Requests of one shape again and again, some completions lost or late.
        let mut many = String::new();
        for i in 0..3000u64 {
            let t = 1_000_000 + i * 1000;
            many.push_str(&format!(
                "  8,0 0 {i} 0.{t:09} 1 D WS {} + 8 [x]\n",
                (i % 5) * 8
            ));
            if i % 7 != 0 {
                let c = t + 500 + (i % 3) * 1500;
                many.push_str(&format!(
                    "  8,0 1 {i} 0.{c:09} 0 C WS {} + 8 [0]\n",
                    (i % 5) * 8
                ));
            }
        }
        let mut sorted: Vec<&str> = many.lines().collect();
        sorted.sort_by_key(|l| l.split_whitespace().nth(3).map(str::to_owned));
        let many: String = sorted.iter().map(|l| format!("{l}\n")).collect();
        for text in [SAMPLE, &without_d, &many] {
            let whole = import_blkparse(text.as_bytes()).unwrap();
            assert_eq!(streamed(text).unwrap(), whole.records);
            let scan = scan_blkparse(text.as_bytes()).unwrap();
            assert_eq!((scan.action, scan.devices), (whole.action, whole.devices));
        }
        assert!(
            import_blkparse(many.as_bytes())
                .unwrap()
                .records
                .iter()
                .filter(|r| r.complete_ns.is_some())
                .count()
                > 2000
        );
    }

    #[test]
    fn text_that_changed_between_the_readings_is_said_to_have_changed() {
        let scan = scan_blkparse(SAMPLE.as_bytes()).unwrap();
        let shorter: String = SAMPLE.lines().take(12).map(|l| format!("{l}\n")).collect();
        let mut r = BlkparseRecords::new(shorter.as_bytes(), scan);
        let err = loop {
            match r.next_record() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("the change went unseen"),
                Err(e) => break e,
            }
        };
        assert!(matches!(err, TraceError::ChangedWhileRead { .. }), "{err}");
    }

    /// Read every record of `text` after a first reading of `first`; the error, if any.
    fn second_reading(first: &str, text: &str) -> Option<TraceError> {
        let scan = scan_blkparse(first.as_bytes()).unwrap();
        let mut r = BlkparseRecords::new(text.as_bytes(), scan);
        loop {
            match r.next_record() {
                Ok(Some(_)) => {}
                Ok(None) => return None,
                Err(e) => return Some(e),
            }
        }
    }

    #[test]
    fn text_rewritten_at_the_same_length_is_said_to_have_changed() {
        assert!(second_reading(SAMPLE, SAMPLE).is_none());
        // robustness.md H108: one request's device changed, the text as long as before.
        let other_dev = SAMPLE.replacen("  7,1    1        8", "  7,2    1        8", 1);
        assert_eq!(other_dev.len(), SAMPLE.len());
        let err = second_reading(SAMPLE, &other_dev).expect("the change went unseen");
        assert!(
            err.to_string()
                .contains("a request of device 7:2 on line 18"),
            "{err}"
        );
        // A request moved higher on its device.
        let higher = SAMPLE.replacen("D  RM 4096 + 16", "D  RM 9096 + 16", 1);
        let err = second_reading(SAMPLE, &higher).expect("the change went unseen");
        assert!(
            err.to_string()
                .contains("ends at sector 9112, past the 4112"),
            "{err}"
        );
        // Lower, or a completion's time: only the digest tells.
        for changed in [
            SAMPLE.replacen("D  RM 4096 + 16", "D  RM 4000 + 16", 1),
            SAMPLE.replacen("0.000250000     0  C", "0.000250001     0  C", 1),
        ] {
            let err = second_reading(SAMPLE, &changed).expect("the change went unseen");
            assert!(
                err.to_string()
                    .contains("not the same requests and completions"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_requeued_issue_is_replayed_once_with_its_completion() {
        let text = "\
  8,0    1        1     0.000100000  1234  D  WS 2048 + 8 [joj]
  8,0    1        2     0.000150000  1234  R  WS 2048 + 8 [0]
  8,0    1        3     0.000200000  1234  D  WS 2048 + 8 [joj]
  8,0    0        4     0.000300000     0  C  WS 2048 + 8 [0]
  8,0    1        5     0.000400000  1234  D   R 16 + 8 [joj]
";
        let imp = import_blkparse(text.as_bytes()).unwrap();
        let got: Vec<_> = imp
            .records
            .iter()
            .map(|r| (r.op, r.time_ns, r.complete_ns))
            .collect();
        assert_eq!(
            got,
            [(Op::Write, 0, Some(200_000)), (Op::Read, 300_000, None)]
        );
        // Read a second time, a record at a time: the same, and the count agrees.
        let scan = scan_blkparse(text.as_bytes()).unwrap();
        assert_eq!(scan.requests, 2);
        let mut r = BlkparseRecords::new(text.as_bytes(), scan);
        let mut again = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            again.push(rec);
        }
        assert_eq!(again, imp.records);
    }
}
