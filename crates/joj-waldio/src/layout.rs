//! The physical layout of a waldio WAL (`docs/formats/waldio.md`), as pure functions.
//!
//! ```text
//! logical (what SQLite reads and writes)      physical (what is on disk), P = page size
//! [0, 32)            WAL header               block 0: header block (magic, version, P,
//!                                                      state, the 32-byte WAL header, CRC)
//! frame i (i >= 1) at 32 + (i-1)(P+24):       block i at i*P:
//!   [0, 24)   frame header                      [P-24, P)  frame header
//!   [24, P+24) page                             [0, P-24)  page bytes 0..P-24
//!                                               (page bytes P-24..P are the reserved area
//!                                                and are zero on the logical side)
//! ```
//!
//! Header block fields (little-endian), each offset derived from the previous one:

/// Bytes of SQLite's WAL header.
pub const WAL_HEADER_BYTES: usize = 32;
/// Bytes of SQLite's WAL frame header.
pub const FRAME_HEADER_BYTES: usize = 24;
/// Reserved bytes per page the embedding needs.
pub const RESERVE_NEEDED: u8 = FRAME_HEADER_BYTES as u8;

pub const MAGIC: [u8; 8] = *b"jojWALDI";
pub const FORMAT_VERSION: u32 = 1;

const OFF_MAGIC: usize = 0;
const OFF_VERSION: usize = OFF_MAGIC + 8;
const OFF_BLOCK: usize = OFF_VERSION + 4;
const OFF_STATE: usize = OFF_BLOCK + 4;
const OFF_ZERO: usize = OFF_STATE + 4;
const OFF_WAL_HEADER: usize = OFF_ZERO + 4;
const OFF_CRC: usize = OFF_WAL_HEADER + WAL_HEADER_BYTES;
/// Bytes of the header block that carry fields; all of them lie in the first 512-byte sector.
pub const HEADER_FIELDS_BYTES: usize = OFF_CRC + 4;
const _: () = assert!(OFF_WAL_HEADER == 24 && OFF_CRC == 56 && HEADER_FIELDS_BYTES <= 512);

/// SQLite's WAL magic numbers (big- and little-endian checksum variants).
pub const SQLITE_WAL_MAGIC: [u32; 2] = [0x377f_0682, 0x377f_0683];

/// The decoded header block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderBlock {
    /// Block size in bytes: the page size of the WAL laid out in this file.
    pub block_bytes: u32,
    /// The logical WAL header, or `None` when the WAL is logically absent (state 0).
    pub wal_header: Option<[u8; WAL_HEADER_BYTES]>,
}

/// What the first bytes of a physical WAL file turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    Waldio(HeaderBlock),
    /// Our magic, but the CRC does not match: a torn header-block write (reads as absent).
    Torn,
    /// Our magic and a matching CRC, but a field waldio never writes (a block size that is no
    /// SQLite page size, a state other than 0 or 1): damaged or made by hand, never a torn
    /// write. Refused, as foreign content is: reading it as no WAL would drop its commits.
    Invalid {
        field: &'static str,
        value: u32,
    },
    /// Our magic with a format version this build does not know.
    NewerVersion(u32),
    /// A stock SQLite WAL (its magic at offset 0).
    SqliteWal,
    /// The first sector is all zeros: preallocated blocks whose header block was never
    /// written (a crash between the zero fill and the first header write). Logically absent.
    Zero,
    /// Anything else.
    Foreign,
}

impl std::fmt::Display for Decoded {
    /// What a reader of `joj waldio inspect` needs to know about a header block it is not.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Decoded::Waldio(h) => write!(f, "a waldio header block ({} B blocks)", h.block_bytes),
            Decoded::Torn => f.write_str(
                "a waldio header block whose checksum does not match (a torn write): it reads \
                 as no WAL, so the database is what its last checkpoint left",
            ),
            Decoded::Invalid { field, value } => write!(
                f,
                "a waldio header block whose checksum matches but whose {field} is {value}, \
                 which waldio never writes (damaged, or made by hand, not a torn write), so \
                 waldio refuses to open the database; fix: restore the database and its log \
                 from a backup, or, if nothing needs the log, move it away"
            ),
            Decoded::NewerVersion(v) => write!(
                f,
                "waldio format version {v}, newer than this build reads ({FORMAT_VERSION}); \
                 fix: use the joj that wrote it"
            ),
            Decoded::SqliteWal => f.write_str(
                "a stock SQLite WAL, not written through waldio; fix: checkpoint it with the \
                 default VFS (sqlite3 DB 'PRAGMA wal_checkpoint(TRUNCATE)'; if the database is \
                 marked for waldio, as docs/formats/waldio.md, \"A stock WAL beside a marked \
                 database\", says)",
            ),
            Decoded::Zero => f.write_str(
                "preallocated blocks whose header block was never written: it reads as no WAL",
            ),
            Decoded::Foreign => f.write_str(
                "neither a waldio nor a SQLite WAL (unknown content), so waldio refuses to open \
                 the database; fix: if nothing needs it, move it away",
            ),
        }
    }
}

impl HeaderBlock {
    /// Encode into the first `HEADER_FIELDS_BYTES` of `block` (the rest is zeroed).
    pub fn encode_into(&self, block: &mut [u8]) {
        assert!(block.len() >= HEADER_FIELDS_BYTES);
        block.fill(0);
        block[OFF_MAGIC..OFF_VERSION].copy_from_slice(&MAGIC);
        block[OFF_VERSION..OFF_BLOCK].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        block[OFF_BLOCK..OFF_STATE].copy_from_slice(&self.block_bytes.to_le_bytes());
        let state: u32 = u32::from(self.wal_header.is_some());
        block[OFF_STATE..OFF_ZERO].copy_from_slice(&state.to_le_bytes());
        if let Some(h) = &self.wal_header {
            block[OFF_WAL_HEADER..OFF_CRC].copy_from_slice(h);
        }
        let crc = crc32fast::hash(&block[..OFF_CRC]);
        block[OFF_CRC..HEADER_FIELDS_BYTES].copy_from_slice(&crc.to_le_bytes());
    }

    /// Decode the first bytes of a physical WAL file.
    pub fn decode(bytes: &[u8]) -> Decoded {
        if bytes.len() >= 4 {
            let be = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            if SQLITE_WAL_MAGIC.contains(&be) {
                return Decoded::SqliteWal;
            }
        }
        if bytes.len() >= 512 && bytes[..512].iter().all(|&b| b == 0) {
            return Decoded::Zero;
        }
        if bytes.len() < HEADER_FIELDS_BYTES || bytes[OFF_MAGIC..OFF_VERSION] != MAGIC {
            return Decoded::Foreign;
        }
        let version = le32(&bytes[OFF_VERSION..]);
        if version > FORMAT_VERSION {
            return Decoded::NewerVersion(version);
        }
        let crc = le32(&bytes[OFF_CRC..]);
        if crc != crc32fast::hash(&bytes[..OFF_CRC]) {
            return Decoded::Torn;
        }
        let block_bytes = le32(&bytes[OFF_BLOCK..]);
        if !valid_page_size(block_bytes) {
            return Decoded::Invalid {
                field: "block size",
                value: block_bytes,
            };
        }
        let wal_header = match le32(&bytes[OFF_STATE..]) {
            0 => None,
            1 => {
                let mut h = [0u8; WAL_HEADER_BYTES];
                h.copy_from_slice(&bytes[OFF_WAL_HEADER..OFF_CRC]);
                Some(h)
            }
            state => {
                return Decoded::Invalid {
                    field: "state",
                    value: state,
                };
            }
        };
        Decoded::Waldio(HeaderBlock {
            block_bytes,
            wal_header,
        })
    }
}

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// SQLite's page sizes: powers of two from 512 to 65536.
pub fn valid_page_size(p: u32) -> bool {
    (512..=65536).contains(&p) && p.is_power_of_two()
}

/// The page size a logical WAL header declares (bytes 8..12, big-endian; 1 means 65536).
pub fn wal_header_page_size(h: &[u8]) -> u32 {
    let v = u32::from_be_bytes([h[8], h[9], h[10], h[11]]);
    if v == 1 { 65536 } else { v }
}

/// The salts a frame header carries (bytes 8..16: the log's, when it was written).
pub fn frame_salts(frame_header: &[u8]) -> [u8; 8] {
    let mut s = [0u8; 8];
    s.copy_from_slice(&frame_header[8..16]);
    s
}

/// The page number a frame header carries (bytes 0..4).
pub fn frame_pgno(frame_header: &[u8]) -> u32 {
    u32::from_be_bytes([
        frame_header[0],
        frame_header[1],
        frame_header[2],
        frame_header[3],
    ])
}

/// The commit-size field of a frame header (non-zero only on a commit frame).
pub fn frame_commit_size(frame_header: &[u8]) -> u32 {
    u32::from_be_bytes([
        frame_header[4],
        frame_header[5],
        frame_header[6],
        frame_header[7],
    ])
}

/// Logical size of a WAL whose file holds `blocks` physical blocks of `p` bytes.
pub fn logical_size(blocks: u64, p: u32) -> u64 {
    if blocks == 0 {
        return 0;
    }
    WAL_HEADER_BYTES as u64 + (blocks - 1) * (u64::from(p) + FRAME_HEADER_BYTES as u64)
}

/// One piece of a logical byte range, mapped to where it lives physically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// Offset of this piece within the caller's buffer.
    pub buf_off: usize,
    pub len: usize,
    pub part: Part,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Bytes `from..from+len` of the logical WAL header (in block 0).
    WalHeader { from: usize },
    /// Bytes `from..` of frame `frame`'s 24-byte header, stored at `P-24+from` of its block.
    FrameHeader { frame: u64, from: usize },
    /// Bytes `from..` of frame `frame`'s page, stored at `from` of its block.
    Page { frame: u64, from: usize },
}

/// Split the logical range `[off, off+len)` into pieces, each inside one part of one frame.
pub fn split(off: u64, len: usize, p: u32) -> Vec<Piece> {
    let mut out = Vec::with_capacity(3);
    let frame_bytes = u64::from(p) + FRAME_HEADER_BYTES as u64;
    let mut pos = off;
    let end = off + len as u64;
    while pos < end {
        let buf_off = (pos - off) as usize;
        let remaining = end - pos;
        if pos < WAL_HEADER_BYTES as u64 {
            let n = remaining.min(WAL_HEADER_BYTES as u64 - pos);
            out.push(Piece {
                buf_off,
                len: n as usize,
                part: Part::WalHeader { from: pos as usize },
            });
            pos += n;
            continue;
        }
        let rel = pos - WAL_HEADER_BYTES as u64;
        let frame = rel / frame_bytes + 1;
        let within = rel % frame_bytes;
        if within < FRAME_HEADER_BYTES as u64 {
            let n = remaining.min(FRAME_HEADER_BYTES as u64 - within);
            out.push(Piece {
                buf_off,
                len: n as usize,
                part: Part::FrameHeader {
                    frame,
                    from: within as usize,
                },
            });
            pos += n;
        } else {
            let from = within - FRAME_HEADER_BYTES as u64;
            let n = remaining.min(u64::from(p) - from);
            out.push(Piece {
                buf_off,
                len: n as usize,
                part: Part::Page {
                    frame,
                    from: from as usize,
                },
            });
            pos += n;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_block_round_trips_and_detects_tearing() {
        let mut block = vec![0u8; 4096];
        let mut h = [0u8; 32];
        h[0..4].copy_from_slice(&0x377f_0682u32.to_be_bytes());
        h[8..12].copy_from_slice(&4096u32.to_be_bytes());
        let hb = HeaderBlock {
            block_bytes: 4096,
            wal_header: Some(h),
        };
        hb.encode_into(&mut block);
        assert_eq!(HeaderBlock::decode(&block), Decoded::Waldio(hb));
        block[30] ^= 1;
        assert_eq!(HeaderBlock::decode(&block), Decoded::Torn);
        let absent = HeaderBlock {
            block_bytes: 8192,
            wal_header: None,
        };
        absent.encode_into(&mut block);
        assert_eq!(HeaderBlock::decode(&block), Decoded::Waldio(absent));
        // A matching checksum over a field waldio never writes is damage, not a torn write:
        // refused, never read as no WAL (probe of 2026-11-28).
        for (off, value, field) in [
            (12, 3u32, "block size"),
            (12, 1 << 17, "block size"),
            (16, 2, "state"),
        ] {
            absent.encode_into(&mut block);
            block[off..off + 4].copy_from_slice(&value.to_le_bytes());
            let crc = crc32fast::hash(&block[..OFF_CRC]);
            block[OFF_CRC..HEADER_FIELDS_BYTES].copy_from_slice(&crc.to_le_bytes());
            assert_eq!(
                HeaderBlock::decode(&block),
                Decoded::Invalid { field, value }
            );
        }
        // A stock WAL and random bytes are told apart from ours.
        assert_eq!(HeaderBlock::decode(&h), Decoded::SqliteWal);
        assert_eq!(HeaderBlock::decode(&[7u8; 600]), Decoded::Foreign);
        assert_eq!(HeaderBlock::decode(&[0u8; 4096]), Decoded::Zero);
        block[OFF_VERSION..OFF_BLOCK].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(HeaderBlock::decode(&block), Decoded::NewerVersion(2));
    }

    #[test]
    fn split_maps_a_frame_to_its_header_and_page() {
        let p = 4096;
        // Frame 1 header, then its page.
        assert_eq!(
            split(32, 24, p),
            vec![Piece {
                buf_off: 0,
                len: 24,
                part: Part::FrameHeader { frame: 1, from: 0 }
            }]
        );
        assert_eq!(
            split(56, 4096, p),
            vec![Piece {
                buf_off: 0,
                len: 4096,
                part: Part::Page { frame: 1, from: 0 }
            }]
        );
        // A whole frame 3 read at once (recovery), and the WAL header.
        let f3 = 32 + 2 * (4096 + 24);
        let pieces = split(f3, 4120, p);
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[0].part, Part::FrameHeader { frame: 3, from: 0 });
        assert_eq!(pieces[1].part, Part::Page { frame: 3, from: 0 });
        assert_eq!(pieces[1].buf_off, 24);
        assert_eq!(split(0, 32, p)[0].part, Part::WalHeader { from: 0 });
        // The checksum fields of frame 2's header (walRewriteChecksums reads 8 bytes at +16).
        let f2 = 32 + (4096 + 24) + 16;
        assert_eq!(
            split(f2, 8, p)[0].part,
            Part::FrameHeader { frame: 2, from: 16 }
        );
        // A range crossing header, frame 1 and frame 2.
        let all = split(0, 32 + 2 * 4120, p);
        assert_eq!(all.len(), 5);
        assert_eq!(all.iter().map(|x| x.len).sum::<usize>(), 32 + 2 * 4120);
    }

    #[test]
    fn logical_size_counts_frames_after_the_header_block() {
        assert_eq!(logical_size(0, 4096), 0);
        assert_eq!(logical_size(1, 4096), 32);
        assert_eq!(logical_size(3, 4096), 32 + 2 * 4120);
    }
}
