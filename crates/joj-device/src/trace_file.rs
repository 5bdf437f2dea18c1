//! A block trace file replayed from the file ([`TraceFile`]): either input joj knows, a
//! joj-trace file or blkparse text (told apart by the first byte: a joj-trace file starts with
//! its JSON header), read once when it is opened — every record checked, the devices and how
//! high their requests reach noted — and once more for each pass of a replay, one record at a
//! time. Its records are held whole only when asked ([`TraceFile::load`], for the optimized
//! journal's transformation), and then at most [`MAX_HELD_RECORDS`].
//!
//! Invariants: the file is the one opened (read again through the descriptor opened first,
//! never by its name); a pass that does not find what the first found is an error
//! (`TraceError::ChangedWhileRead`): at once for a request outside what the first pass found
//! (another device, a higher sector) or a joj-trace header that differs, and at the end of the
//! pass for other requests (a digest of every record; blkparse text's events are compared by
//! `joj_trace::BlkparseRecords`).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{BufRead, Seek, SeekFrom};
use std::path::Path;

use joj_trace::input::{self, Input};
use joj_trace::{BlkparseRecords, BlkparseScan, TraceError, TraceHeader, TraceReader, TraceRecord};

use crate::error::ReplayError;
use crate::requests::{Requests, Scan, scan_of};

/// The most records a replay holds in memory at once ([`TraceFile::load`]): with the optimized
/// journal's transformation, some 210 bytes each (measured: 842 MB for 4,000,000). A plain
/// replay reads any number from the file.
pub const MAX_HELD_RECORDS: u64 = 4_000_000;

/// A trace file, opened and read once: see the module header.
#[derive(Debug)]
pub struct TraceFile {
    /// `joj-trace` or `blkparse`.
    pub format: &'static str,
    /// The joj-trace header (blkparse text gets the importer's header).
    pub header: TraceHeader,
    input: Input,
    shown: String,
    /// What a pass over the requests found, once one has been made.
    scan: std::cell::OnceCell<Scan>,
    /// The first reading of blkparse text, for the next ones.
    blkparse: Option<BlkparseScan>,
    /// A digest of a joj-trace file's records, once a pass has read them all.
    digest: std::cell::OnceCell<u64>,
    /// The requests the file holds: as a joj-trace header announces them (checked once the
    /// file is read), as blkparse text's first reading counted them.
    announced: u64,
}

impl TraceFile {
    /// Open and read the trace at `path` (at most `joj_trace::format::MAX_TRACE_BYTES`). A
    /// joj-trace file may hold no request (a run that did no block I/O); blkparse text with no
    /// request in it is an error.
    pub fn open(path: &Path) -> Result<TraceFile, ReplayError> {
        let shown = path.display().to_string();
        let err = |source| ReplayError::Trace {
            path: shown.clone(),
            source,
        };
        let input = input::open(
            path,
            joj_trace::format::MAX_TRACE_BYTES,
            "a block trace (joj-trace or blkparse text)",
        )
        .map_err(|e| err(e.into()))?;
        let mut file = TraceFile {
            format: "joj-trace",
            header: TraceHeader {
                clock: joj_trace::Clock::Relative,
                devices: Vec::new(),
                source: joj_trace::TraceSource::Blkparse,
                meta: serde_json::Map::new(),
            },
            input,
            shown: shown.clone(),
            scan: std::cell::OnceCell::new(),
            blkparse: None,
            digest: std::cell::OnceCell::new(),
            announced: 0,
        };
        let mut reader = file.reader()?;
        // A read past the file's limit (it grew while being read) is said as such.
        let first = match reader.fill_buf() {
            Ok(b) => b.first().copied(),
            Err(e) => return Err(err(reader.input_error(e).into())),
        };
        if first == Some(b'{') {
            let header = TraceReader::new(&mut reader).map(|t| (t.header().clone(), t.announced()));
            let (header, announced) = header.map_err(|e| match e {
                TraceError::Io(io) => err(reader.input_error(io).into()),
                e => err(e),
            })?;
            file.header = header;
            file.announced = announced;
        } else {
            let scan = joj_trace::scan_blkparse(&mut reader).map_err(|e| match e {
                TraceError::Io(io) => err(reader.input_error(io).into()),
                e => err(e),
            })?;
            // Text with no blkparse event in it is not a trace at all.
            if scan.requests == 0 {
                return Err(ReplayError::NoRequests {
                    path: file.shown.clone(),
                });
            }
            file.format = "blkparse";
            file.header = scan.header();
            file.announced = scan.requests;
            let _ = file.scan.set(Scan {
                devices: scan.devices.clone(),
                end_sectors: scan.end_sectors.clone(),
                records: scan.requests,
            });
            file.blkparse = Some(scan);
        }
        Ok(file)
    }

    /// The file from its first byte, through the descriptor opened first.
    fn reader(&self) -> Result<input::Limited, ReplayError> {
        let err = |source| ReplayError::Trace {
            path: self.shown.clone(),
            source: TraceError::Input(input::InputError::Read {
                path: self.input.path.clone(),
                source,
            }),
        };
        let mut file = self.input.file.try_clone().map_err(err)?;
        file.seek(SeekFrom::Start(0)).map_err(err)?;
        Ok(Input {
            file,
            path: self.input.path.clone(),
            size_bytes: self.input.size_bytes,
            limit_bytes: self.input.limit_bytes,
            what: self.input.what,
        }
        .reader())
    }

    /// Transactions of the run the trace captured, if its header says (`meta.transactions`,
    /// which `joj bench --trace` writes).
    pub fn transactions(&self) -> Option<u64> {
        self.header.transactions()
    }

    /// Requests in the trace (a joj-trace file's as its header announces them, checked when it
    /// is read).
    pub fn records(&self) -> u64 {
        self.announced
    }

    /// Every record, in memory, without its command name: at most [`MAX_HELD_RECORDS`],
    /// refused before any is held past it (by the count a joj-trace header announces, checked
    /// as the file is read; by the count of blkparse text's first reading). `what` says what
    /// needs them, for the error.
    pub fn load(&self, what: &'static str) -> Result<Vec<TraceRecord>, ReplayError> {
        let too_many = |records| ReplayError::TooManyToHold {
            path: self.shown.clone(),
            records,
            limit: MAX_HELD_RECORDS,
            what,
        };
        if self.announced > MAX_HELD_RECORDS {
            return Err(too_many(self.announced));
        }
        // The announced count is checked once the file has been read: it sizes nothing.
        let mut out = Vec::with_capacity(self.announced.min(1 << 20) as usize);
        self.each_owned(&mut |_, mut r| {
            if out.len() as u64 == MAX_HELD_RECORDS {
                return Err(too_many(MAX_HELD_RECORDS + 1));
            }
            // The command name is not held: no replay reads it, and a hostile trace's names
            // (up to a line's length each) made the held records several times their count.
            r.comm = String::new();
            out.push(r);
            Ok(())
        })?;
        Ok(out)
    }

    /// Call `f` with each record and its index, in trace order.
    fn each_owned(
        &self,
        f: &mut dyn FnMut(usize, TraceRecord) -> Result<(), ReplayError>,
    ) -> Result<(), ReplayError> {
        match &self.blkparse {
            Some(scan) => self.each_blkparse(scan, f),
            None => self.each_jsonl(f),
        }
    }

    /// Call `f` with each record of joj-trace text.
    fn each_jsonl(
        &self,
        f: &mut dyn FnMut(usize, TraceRecord) -> Result<(), ReplayError>,
    ) -> Result<(), ReplayError> {
        let err = |source| ReplayError::Trace {
            path: self.shown.clone(),
            source,
        };
        let changed = |change: String| err(TraceError::ChangedWhileRead { change });
        let mut trace = TraceReader::new(self.reader()?).map_err(err)?;
        if trace.header() != &self.header || trace.announced() != self.announced {
            return Err(changed(
                "another header than the first reading (its devices, count or labels)".to_owned(),
            ));
        }
        // What an earlier pass found, if one did: each device's place and highest sector.
        let found: Option<HashMap<&str, u64>> = self.scan.get().map(|scan| {
            scan.devices
                .iter()
                .zip(&scan.end_sectors)
                .map(|(d, &e)| (d.as_str(), e))
                .collect()
        });
        let mut digest = DefaultHasher::new();
        let mut index = 0;
        while let Some(r) = trace.next_record().map_err(|e| err(trace.named(e)))? {
            if let Some(ends) = &found {
                let end = r.addressed_end();
                match ends.get(r.dev.as_str()) {
                    None => {
                        return Err(changed(format!(
                            "a record of device {} on line {}, a device the first reading did \
                             not find",
                            r.dev,
                            index + 2
                        )));
                    }
                    Some(&high) if end > high => {
                        return Err(changed(format!(
                            "a record of device {} on line {} that ends at sector {end}, past \
                             the {high} the first reading found",
                            r.dev,
                            index + 2
                        )));
                    }
                    Some(_) => {}
                }
            }
            r.hash(&mut digest);
            f(index, r)?;
            index += 1;
        }
        let digest = digest.finish();
        match self.digest.get() {
            Some(&first) if first != digest => Err(changed(
                "as many records as the first reading, but not the same records".to_owned(),
            )),
            Some(_) => Ok(()),
            None => {
                let _ = self.digest.set(digest);
                Ok(())
            }
        }
    }

    /// Call `f` with each record of blkparse text, as its first reading found it.
    fn each_blkparse(
        &self,
        scan: &BlkparseScan,
        f: &mut dyn FnMut(usize, TraceRecord) -> Result<(), ReplayError>,
    ) -> Result<(), ReplayError> {
        let mut records = BlkparseRecords::new(self.reader()?, scan.clone());
        let mut index = 0;
        loop {
            let next = records.next_record().map_err(|e| ReplayError::Trace {
                path: self.shown.clone(),
                source: match e {
                    TraceError::Io(io) => records.get_ref().input_error(io).into(),
                    e => e,
                },
            })?;
            let Some(r) = next else {
                return Ok(());
            };
            f(index, r)?;
            index += 1;
        }
    }
}

impl Requests for TraceFile {
    fn each(
        &self,
        f: &mut dyn FnMut(usize, &TraceRecord) -> Result<(), ReplayError>,
    ) -> Result<(), ReplayError> {
        self.each_owned(&mut |i, r| f(i, &r))
    }

    /// What the first pass found (opening blkparse text makes it; a joj-trace file's is made
    /// the first time it is asked for).
    fn scan(&self) -> Result<Scan, ReplayError> {
        if let Some(scan) = self.scan.get() {
            return Ok(scan.clone());
        }
        let scan = scan_of(self)?;
        let _ = self.scan.set(scan.clone());
        Ok(scan)
    }

    /// A joj-trace file whose header lists one device: its records are that device's (the
    /// reader refuses a record of a device the header does not list).
    fn known(&self) -> Option<Scan> {
        if let Some(scan) = self.scan.get() {
            return Some(scan.clone());
        }
        match self.header.devices.as_slice() {
            [one] => Some(Scan {
                devices: if self.announced > 0 {
                    vec![one.dev.clone()]
                } else {
                    Vec::new()
                },
                end_sectors: Vec::new(),
                records: self.announced,
            }),
            _ => None,
        }
    }
}

/// A block trace as read from a file, whichever format it was in, its records in memory.
#[derive(Debug, Clone)]
pub struct LoadedTrace {
    /// `joj-trace` or `blkparse`.
    pub format: &'static str,
    /// The joj-trace header (a blkparse import gets the importer's header).
    pub header: TraceHeader,
    pub records: Vec<TraceRecord>,
}

impl LoadedTrace {
    /// Transactions of the run the trace captured, if its header says (`meta.transactions`,
    /// which `joj bench --trace` writes).
    pub fn transactions(&self) -> Option<u64> {
        self.header.transactions()
    }
}

/// Read a joj-trace file or blkparse text whole ([`TraceFile::open`], then
/// [`TraceFile::load`]: at most [`MAX_HELD_RECORDS`]).
pub fn load_trace(path: &Path) -> Result<LoadedTrace, ReplayError> {
    let file = TraceFile::open(path)?;
    let records = file.load("a trace read whole")?;
    Ok(LoadedTrace {
        format: file.format,
        header: file.header,
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use joj_trace::{Clock, DeviceRole, Op, TraceDevice, TraceSource};
    use std::io::Write;

    fn text(devs: [&str; 2], records: &[TraceRecord]) -> Vec<u8> {
        let header = TraceHeader {
            clock: Clock::Relative,
            devices: devs
                .iter()
                .map(|d| TraceDevice {
                    dev: (*d).to_owned(),
                    role: DeviceRole::Main,
                    name: format!("/dev/x{d}"),
                })
                .collect(),
            source: TraceSource::Tracefs,
            meta: serde_json::Map::new(),
        };
        let mut out = Vec::new();
        joj_trace::write_trace(&mut out, &header, records).expect("write");
        out
    }

    /// A change to a trace's records; the devices its header then lists.
    type Change = fn(&mut Vec<TraceRecord>) -> [&'static str; 2];

    /// A pass after the first over a file rewritten in place, at the same length, as `change`
    /// says; the error it ends with.
    fn pass_after_rewrite(change: Change) -> Option<String> {
        let records = vec![
            TraceRecord::new(10, "7:0", Op::Write, 800, 8),
            TraceRecord::new(20, "7:1", Op::Write, 1600, 8),
            TraceRecord::new(30, "7:0", Op::Write, 808, 8),
        ];
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.jsonl");
        let first = text(["7:0", "7:1"], &records);
        std::fs::write(&path, &first).expect("write");
        let file = TraceFile::open(&path).expect("open");
        file.scan().expect("a first pass");
        let mut changed = records.clone();
        let devs = change(&mut changed);
        let second = text(devs, &changed);
        assert_eq!(second.len(), first.len(), "a rewrite at the same length");
        let mut w = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open to rewrite");
        w.write_all(&second).expect("rewrite");
        file.each(&mut |_, _| Ok(())).err().map(|e| e.to_string())
    }

    #[test]
    fn blkparse_text_with_a_requeue_is_read_as_its_first_reading_counted_it() {
        // D, R, D, C of one write, then a read: two requests in every reading (a replay used to
        // refuse it: "its first reading found 3 requests, the second 2").
        let text = "\
  8,0    1        1     0.000100000  1234  D  WS 2048 + 8 [joj]
  8,0    1        2     0.000150000  1234  R  WS 2048 + 8 [0]
  8,0    1        3     0.000200000  1234  D  WS 2048 + 8 [joj]
  8,0    0        4     0.000300000     0  C  WS 2048 + 8 [0]
  8,0    1        5     0.000400000  1234  D   R 16 + 8 [joj]
  8,0    1        6     0.000500000  1234  D  FN [joj]
  8,0    1        7     0.000550000  1234  R  FN [0]
  8,0    1        8     0.000600000  1234  D  FN [joj]
";
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.txt");
        std::fs::write(&path, text).expect("write");
        let file = TraceFile::open(&path).expect("open");
        assert_eq!(file.scan().expect("scan").records, 3);
        let mut seen = Vec::new();
        file.each(&mut |_, r| {
            seen.push((r.op, r.time_ns, r.complete_ns));
            Ok(())
        })
        .expect("a second reading");
        assert_eq!(
            seen,
            [
                (Op::Write, 0, Some(200_000)),
                (Op::Read, 300_000, None),
                (Op::Flush, 400_000, None)
            ]
        );
    }

    #[test]
    fn a_joj_trace_file_rewritten_in_place_between_passes_is_said_to_have_changed() {
        assert_eq!(pass_after_rewrite(|_| ["7:0", "7:1"]), None);
        let cases: [(&str, Change); 4] = [
            (
                "a record of device 7:0 on line 3 that ends at sector 1608, past the 816",
                |r| {
                    r[1].dev = "7:0".into();
                    ["7:0", "7:1"]
                },
            ),
            ("another header", |r| {
                r[1].dev = "7:2".into();
                ["7:0", "7:2"]
            }),
            ("not the same records", |r| {
                r[2].sector = 792;
                ["7:0", "7:1"]
            }),
            ("not the same records", |r| {
                r[1].time_ns = 21;
                ["7:0", "7:1"]
            }),
        ];
        for (want, change) in cases {
            let err = pass_after_rewrite(change).unwrap_or_else(|| panic!("unseen: {want}"));
            assert!(err.contains("changed while it was read"), "{err}");
            assert!(err.contains(want), "{want}: {err}");
        }
    }
}
