//! The joj-blocklog format (`docs/formats/blocklog.md`): a base image, then every write (with
//! its data), flush and workload mark a recording disk received, in order.
//!
//! Layout of version 2 (little-endian), each offset derived from the previous field:
//! ```text
//! MAGIC        0                     8   "JOJBLKLG"
//! VERSION      MAGIC + 8             4   u32 = 2
//! SECTOR       VERSION + 4           4   u32 = 512
//! BLOCK        SECTOR + 4            4   u32 = 4096
//! LABEL_BYTES  BLOCK + 4             4   u32 L ≤ 4096 (version 1: reserved, 0)
//! SIZE         LABEL_BYTES + 4       8   u64 device bytes
//! BASE_BLOCKS  SIZE + 8              8   u64 B
//! labels       BASE_BLOCKS + 8       L bytes: `key=value` lines, each ending in '\n'
//! base         labels + L            B × (u64 index, 4096 bytes)
//! records      'W' off u64 len u32 data | 'F' | 'M' kind u8 value u64 | 'E' count u64 crc u32
//! ```
//! Version 1 is the same without labels (its `LABEL_BYTES` is the reserved 0); it is still
//! read.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};

/// Unit of every write's offset and length: the loop device's logical block.
pub const SECTOR_BYTES: u64 = 512;
/// Unit of the base image.
pub const BLOCK_BYTES: u64 = 4096;
const MAGIC: &[u8; 8] = b"JOJBLKLG";
/// The largest device a log may describe: the largest scratch image joj makes (`--image-mib`
/// is at most 2^24 MiB, 16 TiB). A crash state is made as an image of this size.
pub const MAX_DEVICE_BYTES: u64 = 1 << 44;
/// The largest log read: it is held in memory whole, with every write's data (a recorded
/// `joj crash fs` run of a few hundred transactions is tens of MiB).
pub const MAX_LOG_BYTES: u64 = 1 << 30;
/// The most records a log may hold. Each is held in memory as a [`LogOp`] of 32 bytes beside
/// its data, so a log of 1-byte flush records would need 32 times its size (a 1 GiB log, 32
/// GiB). A write record takes at least [`MIN_WRITE_RECORD_BYTES`], so a log of
/// [`MAX_LOG_BYTES`] holds at most about 2 million writes; this allows as many flushes and marks
/// again beside them.
pub const MAX_RECORDS: u64 = 1 << 22;
/// The smallest write record: tag, offset, length and one sector of data.
const MIN_WRITE_RECORD_BYTES: u64 = 1 + 8 + 4 + SECTOR_BYTES;
const _: () = assert!(MAX_RECORDS >= 2 * (MAX_LOG_BYTES / MIN_WRITE_RECORD_BYTES));
const VERSION: u32 = 2;
const HEADER_BYTES: usize = 8 + 4 + 4 + 4 + 4 + 8 + 8;
/// Largest label block: a few dozen short lines say what a run was.
pub const MAX_LABEL_BYTES: usize = 4096;
/// Longest label key and value.
const MAX_KEY_BYTES: usize = 32;
const MAX_VALUE_BYTES: usize = 256;
const TAG_WRITE: u8 = b'W';
const TAG_FLUSH: u8 = b'F';
const TAG_MARK: u8 = b'M';
const TAG_END: u8 = b'E';

/// A workload event, logged where it happened among the device's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "event", content = "txn")]
pub enum Mark {
    /// Transaction `n` (from 1) is about to begin.
    Begun(u64),
    /// SQLite returned from transaction `n`'s commit.
    Acknowledged(u64),
}

/// One thing the device received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogOp {
    /// A write of whole sectors at `offset_bytes`.
    Write { offset_bytes: u64, data: Vec<u8> },
    /// A cache flush: every write before it is durable.
    Flush,
    /// A workload event.
    Mark(Mark),
}

/// A device image held as its non-zero 4 KiB blocks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SparseImage {
    pub size_bytes: u64,
    /// Block index → content; a block not present is zeros.
    pub blocks: BTreeMap<u64, Box<[u8]>>,
}

impl SparseImage {
    /// An all-zero image of `size_bytes` (a multiple of [`BLOCK_BYTES`]).
    pub fn zeroed(size_bytes: u64) -> Self {
        Self {
            size_bytes,
            blocks: BTreeMap::new(),
        }
    }

    /// Writes `data` at `offset_bytes`; blocks that become all zeros are dropped.
    /// Invariant: the range lies within the image (checked by the caller).
    pub fn write(&mut self, offset_bytes: u64, data: &[u8]) {
        let mut done = 0usize;
        while done < data.len() {
            let at = offset_bytes + done as u64;
            let (index, within) = (at / BLOCK_BYTES, (at % BLOCK_BYTES) as usize);
            let n = (BLOCK_BYTES as usize - within).min(data.len() - done);
            let block = self
                .blocks
                .entry(index)
                .or_insert_with(|| vec![0u8; BLOCK_BYTES as usize].into_boxed_slice());
            block[within..within + n].copy_from_slice(&data[done..done + n]);
            if block.iter().all(|&b| b == 0) {
                self.blocks.remove(&index);
            }
            done += n;
        }
    }

    /// Reads `buf.len()` bytes at `offset_bytes` (zeros where no block is held).
    pub fn read(&self, offset_bytes: u64, buf: &mut [u8]) {
        let mut done = 0usize;
        while done < buf.len() {
            let at = offset_bytes + done as u64;
            let (index, within) = (at / BLOCK_BYTES, (at % BLOCK_BYTES) as usize);
            let n = (BLOCK_BYTES as usize - within).min(buf.len() - done);
            match self.blocks.get(&index) {
                Some(b) => buf[done..done + n].copy_from_slice(&b[within..within + n]),
                None => buf[done..done + n].fill(0),
            }
            done += n;
        }
    }
}

/// What a log says about the run that made it (`fs=ext4`, `journal=wal`, …): keys of
/// lowercase letters, digits and `-`, values of printable ASCII. Empty for a version-1 log.
pub type Labels = BTreeMap<String, String>;

/// A recorded run: the device at the start and everything it received since.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockLog {
    pub base: SparseImage,
    pub ops: Vec<LogOp>,
    /// What the run was (written as the label block; see [`Labels`]).
    pub labels: Labels,
}

/// A file that is not a valid joj-blocklog.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    #[error("not a joj-blocklog (the magic is missing); fix: pass a file `joj crash fs` saved")]
    NotALog,
    #[error(
        "joj-blocklog version {0} is newer than this joj (it reads versions 1 and 2); fix: use the joj that wrote it"
    )]
    NewerVersion(u32),
    #[error("joj-blocklog labels are invalid: {0}")]
    BadLabels(String),
    #[error(
        "joj-blocklog header is invalid: {0}; fix: the file is damaged or not one joj wrote: \
         record the run again (joj crash fs --out)"
    )]
    BadHeader(String),
    #[error(
        "joj-blocklog header gives a device of {size_bytes} bytes, more than joj makes \
         ({MAX_DEVICE_BYTES} bytes, 16 TiB, the largest --image-mib); fix: the file is damaged \
         or not one joj wrote: record the run again"
    )]
    DeviceTooLarge { size_bytes: u64 },
    #[error(
        "joj-blocklog is larger than joj reads ({MAX_LOG_BYTES} bytes, 1 GiB: it is held in \
         memory whole); fix: check that it is the file meant (a log `joj crash fs` saved)"
    )]
    TooLarge,
    #[error(
        "joj-blocklog record {record} is invalid: {detail}; fix: the file is damaged: record the \
         run again (joj crash fs --out)"
    )]
    BadRecord { record: u64, detail: String },
    #[error(
        "joj-blocklog holds more than {max} records (writes, flushes and marks: each is held in \
         memory; a log of joj's largest readable size holds half as many writes); fix: the file \
         is not one joj wrote, or of a run too long to check again: record a shorter run"
    )]
    TooManyRecords { max: u64 },
    #[error(
        "joj-blocklog is cut short after record {0} (no end record); the run that wrote it did not finish"
    )]
    CutShort(u64),
    #[error(
        "joj-blocklog checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the file is damaged"
    )]
    Checksum { stored: u32, computed: u32 },
    #[error("reading or writing a joj-blocklog failed: {0}")]
    Io(#[from] io::Error),
    #[error(transparent)]
    Input(Box<joj_trace::InputError>),
}

/// A writer that keeps the CRC of everything written through it.
struct Crc<W> {
    inner: W,
    crc: crc32fast::Hasher,
}

impl<W: Write> Write for Crc<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl BlockLog {
    /// Writes the log in the joj-blocklog format.
    pub fn write_to(&self, out: impl Write) -> Result<(), LogError> {
        let mut w = Crc {
            inner: io::BufWriter::new(out),
            crc: crc32fast::Hasher::new(),
        };
        let labels = encode_labels(&self.labels)?;
        w.write_all(MAGIC)?;
        w.write_all(&VERSION.to_le_bytes())?;
        w.write_all(&(SECTOR_BYTES as u32).to_le_bytes())?;
        w.write_all(&(BLOCK_BYTES as u32).to_le_bytes())?;
        w.write_all(&(labels.len() as u32).to_le_bytes())?;
        w.write_all(&self.base.size_bytes.to_le_bytes())?;
        w.write_all(&(self.base.blocks.len() as u64).to_le_bytes())?;
        w.write_all(&labels)?;
        for (index, data) in &self.base.blocks {
            w.write_all(&index.to_le_bytes())?;
            w.write_all(data)?;
        }
        for op in &self.ops {
            match op {
                LogOp::Write { offset_bytes, data } => {
                    w.write_all(&[TAG_WRITE])?;
                    w.write_all(&offset_bytes.to_le_bytes())?;
                    w.write_all(&(data.len() as u32).to_le_bytes())?;
                    w.write_all(data)?;
                }
                LogOp::Flush => w.write_all(&[TAG_FLUSH])?,
                LogOp::Mark(m) => {
                    let (kind, value) = match m {
                        Mark::Begun(n) => (1u8, *n),
                        Mark::Acknowledged(n) => (2u8, *n),
                    };
                    w.write_all(&[TAG_MARK, kind])?;
                    w.write_all(&value.to_le_bytes())?;
                }
            }
        }
        w.write_all(&[TAG_END])?;
        w.write_all(&(self.ops.len() as u64).to_le_bytes())?;
        let crc = w.crc.clone().finalize();
        let mut inner = w.inner;
        inner.write_all(&crc.to_le_bytes())?;
        inner.flush()?;
        Ok(())
    }

    /// Reads and checks a whole joj-blocklog (see the format's *Validity*), refused past
    /// [`MAX_LOG_BYTES`] before more is held.
    pub fn read_from(input: impl Read) -> Result<Self, LogError> {
        let mut bytes = Vec::new();
        input.take(MAX_LOG_BYTES + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > MAX_LOG_BYTES {
            return Err(LogError::TooLarge);
        }
        Self::decode(&bytes)
    }

    /// Reads and checks the joj-blocklog in the file `path`: a regular file (a device or FIFO
    /// is refused unread) of at most [`MAX_LOG_BYTES`].
    pub fn read_file(path: &std::path::Path) -> Result<Self, LogError> {
        let bytes = joj_trace::input::read_all(path, MAX_LOG_BYTES, "a joj-blocklog")
            .map_err(|e| LogError::Input(Box::new(e)))?;
        Self::decode(&bytes)
    }

    /// Reads only the header and the labels of a joj-blocklog (the first few KiB): what the
    /// log says it is, before reading it whole. The checksum is not checked here.
    pub fn read_labels(input: impl Read) -> Result<Labels, LogError> {
        let mut head = Vec::with_capacity(HEADER_BYTES + MAX_LABEL_BYTES);
        input
            .take((HEADER_BYTES + MAX_LABEL_BYTES) as u64)
            .read_to_end(&mut head)?;
        let mut r = Cursor {
            bytes: &head,
            at: 0,
        };
        Ok(Header::read(&mut r)?.labels)
    }

    fn decode(bytes: &[u8]) -> Result<Self, LogError> {
        let mut r = Cursor { bytes, at: 0 };
        let Header {
            size_bytes,
            base_blocks,
            labels,
        } = Header::read(&mut r)?;
        let mut base = SparseImage::zeroed(size_bytes);
        let mut last = None;
        for _ in 0..base_blocks {
            let index = r.u64().ok_or(LogError::CutShort(0))?;
            let data = r.take(BLOCK_BYTES as usize).ok_or(LogError::CutShort(0))?;
            if last.is_some_and(|l| index <= l) || index >= size_bytes / BLOCK_BYTES {
                return Err(LogError::BadHeader(format!(
                    "base block index {index}, out of order or past the device's {} blocks",
                    size_bytes / BLOCK_BYTES
                )));
            }
            last = Some(index);
            base.blocks.insert(index, data.into());
        }
        let mut ops = Vec::new();
        loop {
            let record = ops.len() as u64;
            let bad = |detail: String| LogError::BadRecord { record, detail };
            let tag_at = r.at;
            let tag = r.u8().ok_or(LogError::CutShort(record))?;
            if tag != TAG_END && record >= MAX_RECORDS {
                return Err(LogError::TooManyRecords { max: MAX_RECORDS });
            }
            match tag {
                TAG_WRITE => {
                    let offset_bytes = r.u64().ok_or(LogError::CutShort(record))?;
                    let len = r.u32().ok_or(LogError::CutShort(record))? as u64;
                    if len == 0
                        || !offset_bytes.is_multiple_of(SECTOR_BYTES)
                        || !len.is_multiple_of(SECTOR_BYTES)
                        || offset_bytes
                            .checked_add(len)
                            .is_none_or(|end| end > size_bytes)
                    {
                        return Err(bad(format!("write of {len} bytes at {offset_bytes}")));
                    }
                    let data = r.take(len as usize).ok_or(LogError::CutShort(record))?;
                    ops.push(LogOp::Write {
                        offset_bytes,
                        data: data.to_vec(),
                    });
                }
                TAG_FLUSH => ops.push(LogOp::Flush),
                TAG_MARK => {
                    let kind = r.u8().ok_or(LogError::CutShort(record))?;
                    let value = r.u64().ok_or(LogError::CutShort(record))?;
                    ops.push(LogOp::Mark(match kind {
                        1 => Mark::Begun(value),
                        2 => Mark::Acknowledged(value),
                        k => return Err(bad(format!("mark kind {k}"))),
                    }));
                }
                TAG_END => {
                    let count = r.u64().ok_or(LogError::CutShort(record))?;
                    let stored = r.u32().ok_or(LogError::CutShort(record))?;
                    let computed = crc32fast::hash(&bytes[..tag_at + 9]);
                    if stored != computed {
                        return Err(LogError::Checksum { stored, computed });
                    }
                    if count != record || r.at != bytes.len() {
                        return Err(bad(format!(
                            "end record counts {count} records, {record} read, {} bytes after it",
                            bytes.len() - r.at
                        )));
                    }
                    return Ok(BlockLog { base, ops, labels });
                }
                t => return Err(bad(format!("unknown tag {t:#04x}"))),
            }
        }
    }
}

/// The fixed header and the labels.
struct Header {
    size_bytes: u64,
    base_blocks: u64,
    labels: Labels,
}

impl Header {
    fn read(r: &mut Cursor<'_>) -> Result<Header, LogError> {
        if r.bytes.len() < HEADER_BYTES || &r.bytes[..8] != MAGIC {
            return Err(LogError::NotALog);
        }
        r.at = 8;
        let version = r.u32().ok_or(LogError::NotALog)?;
        if version > VERSION {
            return Err(LogError::NewerVersion(version));
        }
        for (field, expected) in [("sector size", SECTOR_BYTES), ("block size", BLOCK_BYTES)] {
            let found = r.u32().ok_or(LogError::CutShort(0))?;
            if u64::from(found) != expected {
                return Err(LogError::BadHeader(format!(
                    "{field} {found}, where joj-blocklog version {version} has {expected}"
                )));
            }
        }
        let label_bytes = r.u32().ok_or(LogError::CutShort(0))?;
        let labels_ok = match version {
            1 => label_bytes == 0,
            _ => label_bytes as usize <= MAX_LABEL_BYTES,
        };
        if !labels_ok {
            return Err(LogError::BadHeader(format!(
                "{label_bytes} label bytes, where version {version} has {}",
                if version == 1 {
                    "0".to_string()
                } else {
                    format!("at most {MAX_LABEL_BYTES}")
                }
            )));
        }
        let size_bytes = r.u64().ok_or(LogError::CutShort(0))?;
        if size_bytes > MAX_DEVICE_BYTES {
            return Err(LogError::DeviceTooLarge { size_bytes });
        }
        if size_bytes == 0 || !size_bytes.is_multiple_of(BLOCK_BYTES) {
            return Err(LogError::BadHeader(format!(
                "a device of {size_bytes} bytes, not a whole number of {BLOCK_BYTES}-byte blocks"
            )));
        }
        let base_blocks = r.u64().ok_or(LogError::CutShort(0))?;
        let text = r.take(label_bytes as usize).ok_or(LogError::CutShort(0))?;
        Ok(Header {
            size_bytes,
            base_blocks,
            labels: decode_labels(text)?,
        })
    }
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= MAX_KEY_BYTES
        && k.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn valid_value(v: &str) -> bool {
    v.len() <= MAX_VALUE_BYTES && v.bytes().all(|b| (0x20..0x7f).contains(&b))
}

fn encode_labels(labels: &Labels) -> Result<Vec<u8>, LogError> {
    let mut out = Vec::new();
    for (k, v) in labels {
        if !valid_key(k) || !valid_value(v) {
            return Err(LogError::BadLabels(format!("{k:?}={v:?}")));
        }
        out.extend_from_slice(format!("{k}={v}\n").as_bytes());
    }
    if out.len() > MAX_LABEL_BYTES {
        return Err(LogError::BadLabels(format!(
            "{} bytes, more than {MAX_LABEL_BYTES}",
            out.len()
        )));
    }
    Ok(out)
}

fn decode_labels(text: &[u8]) -> Result<Labels, LogError> {
    let bad = |why: String| LogError::BadLabels(why);
    let text = std::str::from_utf8(text).map_err(|_| bad("not UTF-8".into()))?;
    let mut labels = Labels::new();
    if text.is_empty() {
        return Ok(labels);
    }
    let Some(body) = text.strip_suffix('\n') else {
        return Err(bad("the last line has no newline".into()));
    };
    for line in body.split('\n') {
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| bad(format!("line {line:?} is not key=value")))?;
        if !valid_key(k) || !valid_value(v) {
            return Err(bad(format!("line {line:?}")));
        }
        if labels.insert(k.to_string(), v.to_string()).is_some() {
            return Err(bad(format!("key {k} given twice")));
        }
    }
    Ok(labels)
}

/// Reads little-endian fields off a byte slice.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BlockLog {
        let mut base = SparseImage::zeroed(16 * BLOCK_BYTES);
        base.write(4096, &[7u8; 512]);
        BlockLog {
            labels: [("fs", "ext4"), ("journal", "wal")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
            base,
            ops: vec![
                LogOp::Mark(Mark::Begun(1)),
                LogOp::Write {
                    offset_bytes: 1024,
                    data: vec![9u8; 1536],
                },
                LogOp::Flush,
                LogOp::Mark(Mark::Acknowledged(1)),
            ],
        }
    }

    #[test]
    fn a_log_reads_back_as_written() {
        let mut bytes = Vec::new();
        sample().write_to(&mut bytes).unwrap();
        assert_eq!(BlockLog::read_from(&bytes[..]).unwrap(), sample());
    }

    #[test]
    fn a_damaged_or_cut_log_is_refused_with_its_reason() {
        let mut bytes = Vec::new();
        sample().write_to(&mut bytes).unwrap();
        let cut = BlockLog::read_from(&bytes[..bytes.len() - 13]).unwrap_err();
        assert!(matches!(cut, LogError::CutShort(_)), "{cut}");
        let mut flipped = bytes.clone();
        let at = flipped.len() - 20;
        flipped[at] ^= 1;
        let e = BlockLog::read_from(&flipped[..]).unwrap_err();
        assert!(matches!(e, LogError::Checksum { .. }), "{e}");
        let e = BlockLog::read_from(&b"SQLite format 3\0................................"[..]);
        assert!(matches!(e, Err(LogError::NotALog)));
        let mut newer = bytes.clone();
        newer[8] = 3;
        assert!(matches!(
            BlockLog::read_from(&newer[..]),
            Err(LogError::NewerVersion(3))
        ));
    }

    #[test]
    fn the_labels_read_back_alone_and_a_version_1_log_has_none() {
        let mut bytes = Vec::new();
        sample().write_to(&mut bytes).unwrap();
        assert_eq!(BlockLog::read_labels(&bytes[..]).unwrap(), sample().labels);
        // Version 1: the same log without the label block, its length field zero.
        let label_bytes = u32::from_le_bytes(bytes[20..24].try_into().unwrap()) as usize;
        let mut v1 = bytes[..HEADER_BYTES].to_vec();
        v1[8] = 1;
        v1[20..24].fill(0);
        v1.extend_from_slice(&bytes[HEADER_BYTES + label_bytes..bytes.len() - 4]);
        let crc = crc32fast::hash(&v1);
        v1.extend_from_slice(&crc.to_le_bytes());
        let old = BlockLog::read_from(&v1[..]).unwrap();
        assert!(old.labels.is_empty());
        assert_eq!(old.ops, sample().ops);
    }

    #[test]
    fn bad_labels_are_refused() {
        for (k, v) in [("Fs", "ext4"), ("fs", "a\nb"), ("", "x")] {
            let mut log = sample();
            log.labels.insert(k.into(), v.into());
            assert!(matches!(
                log.write_to(Vec::new()),
                Err(LogError::BadLabels(_))
            ));
        }
        let mut bytes = Vec::new();
        sample().write_to(&mut bytes).unwrap();
        // The label block's length beyond its bound.
        bytes[20..24].copy_from_slice(&(MAX_LABEL_BYTES as u32 + 1).to_le_bytes());
        assert!(matches!(
            BlockLog::read_labels(&bytes[..]),
            Err(LogError::BadHeader(_))
        ));
    }

    #[test]
    fn a_bad_header_is_named_field_by_field_and_a_huge_device_refused() {
        let mut bytes = Vec::new();
        sample().write_to(&mut bytes).unwrap();
        // The sector size field (after magic and version) says 4096.
        let mut sector = bytes.clone();
        sector[12..16].copy_from_slice(&4096u32.to_le_bytes());
        let e = BlockLog::read_from(&sector[..]).unwrap_err().to_string();
        assert!(
            e.contains("sector size 4096, where joj-blocklog version 2 has 512")
                && e.contains("fix:")
                && !e.contains("Some("),
            "{e}"
        );
        // A device of 2^62 bytes: refused before any image of it is made.
        let mut huge = bytes.clone();
        huge[24..32].copy_from_slice(&(1u64 << 62).to_le_bytes());
        let e = BlockLog::read_from(&huge[..]).unwrap_err();
        assert!(
            matches!(e, LogError::DeviceTooLarge { size_bytes } if size_bytes == 1 << 62),
            "{e}"
        );
        assert!(e.to_string().contains("16 TiB"), "{e}");
        // /dev/zero never ends: refused unread as a file, bounded as a reader.
        let e = BlockLog::read_file(std::path::Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("a character device"), "{e}");
    }

    /// A log of `n` flush records after `sample()`'s header and image, checksummed.
    fn flushes(n: u64) -> Vec<u8> {
        let mut bytes = Vec::new();
        BlockLog {
            ops: Vec::new(),
            ..sample()
        }
        .write_to(&mut bytes)
        .unwrap();
        // Its end record: the tag, the count (0) and the checksum.
        bytes.truncate(bytes.len() - 13);
        bytes.resize(bytes.len() + n as usize, TAG_FLUSH);
        bytes.push(TAG_END);
        bytes.extend_from_slice(&n.to_le_bytes());
        let crc = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        bytes
    }

    /// Regression (2026-11-28): 20 million 1-byte flush records (21 MB) were read into 640 MB
    /// of records, and a log of the largest size read would have needed 32 GiB.
    #[test]
    fn a_log_of_more_records_than_joj_holds_is_refused() {
        let most = BlockLog::read_from(&flushes(MAX_RECORDS)[..]).unwrap();
        assert_eq!(most.ops.len() as u64, MAX_RECORDS);
        drop(most);
        let e = BlockLog::read_from(&flushes(MAX_RECORDS + 1)[..]).unwrap_err();
        assert!(
            matches!(e, LogError::TooManyRecords { max } if max == MAX_RECORDS),
            "{e}"
        );
        assert!(e.to_string().contains("fix:"), "{e}");
    }

    #[test]
    fn a_sparse_image_drops_blocks_written_back_to_zero() {
        let mut img = SparseImage::zeroed(4 * BLOCK_BYTES);
        img.write(4000, &[1u8; 200]);
        assert_eq!(img.blocks.len(), 2);
        img.write(4000, &[0u8; 200]);
        assert!(img.blocks.is_empty());
        let mut buf = [5u8; 10];
        img.read(0, &mut buf);
        assert_eq!(buf, [0u8; 10]);
    }
}
