//! SQLite's wal-index header (`WalIndexHdr` of `wal.c`, the start of `<db>-shm`) and whether it
//! can be an index of a given WAL (`docs/formats/waldio.md`, "A wal-index a SQLite without
//! waldio built"): a stock SQLite rebuilds the shared wal-index from its own `-wal`, and SQLite
//! checks a header only against itself. Pure functions over words and bytes; the VFS reads the
//! shared memory and acts on the verdict.
//!
//! ```text
//! word   field (32-bit words in the machine's byte order; two copies, at words 0 and 12)
//! 0      iVersion, 3007000
//! 1      unused
//! 2      iChange
//! 3      bytes: isInit, bigEndCksum, szPage (u16, 1 = 65536)
//! 4      mxFrame: the last frame of the last commit indexed
//! 5      nPage
//! 6, 7   aFrameCksum: the running checksum after frame mxFrame
//! 8, 9   aSalt: bytes 16..24 of the WAL header, verbatim
//! 10, 11 aCksum: SQLite's checksum of words 0..10, in the machine's byte order
//! ```

use crate::layout::{FRAME_HEADER_BYTES, SQLITE_WAL_MAGIC, WAL_HEADER_BYTES};

const VERSION: usize = 0;
const UNUSED: usize = VERSION + 1;
const CHANGE: usize = UNUSED + 1;
const FLAGS: usize = CHANGE + 1;
const MX_FRAME: usize = FLAGS + 1;
const N_PAGE: usize = MX_FRAME + 1;
const FRAME_CKSUM: usize = N_PAGE + 1;
const SALT: usize = FRAME_CKSUM + 2;
const CKSUM: usize = SALT + 2;
/// Words of one copy of the header.
pub const HEADER_WORDS: usize = CKSUM + 2;
/// Words of both copies: what is read, and what is cleared to invalidate the header.
pub const BOTH_COPIES_WORDS: usize = 2 * HEADER_WORDS;
const _: () = assert!(HEADER_WORDS * 4 == 48 && SALT == 8 && CHANGE == 2 && N_PAGE == 5);

/// The only wal-index version SQLite has written (`WALINDEX_MAX_VERSION`).
pub const INDEX_VERSION: u32 = 3_007_000;

/// The header fields the judgement needs, from a header SQLite would accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexHeader {
    /// Frames of committed transactions indexed (`mxFrame`).
    pub max_frame: u32,
    /// Page size in bytes (0 before any commit was indexed).
    pub page_size: u32,
    /// The salts, as bytes 16..24 of the WAL header they were copied from.
    pub salts: [u8; 8],
}

impl IndexHeader {
    /// The header both copies in `words` (copy 0, then copy 1, read in that order around a
    /// barrier, as SQLite reads them) hold, if SQLite would accept it: the copies equal,
    /// initialised, of [`INDEX_VERSION`], with a matching checksum. `None`: SQLite finds it
    /// torn or unset and rebuilds it itself.
    pub fn from_words(words: &[u32; BOTH_COPIES_WORDS]) -> Option<IndexHeader> {
        let (a, b) = words.split_at(HEADER_WORDS);
        let flags = a[FLAGS].to_ne_bytes();
        let is_init = flags[0] != 0;
        if a != b || !is_init || a[VERSION] != INDEX_VERSION {
            return None;
        }
        if native_checksum(&a[..CKSUM], (0, 0)) != (a[CKSUM], a[CKSUM + 1]) {
            return None;
        }
        let sz = u32::from(u16::from_ne_bytes([flags[2], flags[3]]));
        let mut salts = [0u8; 8];
        salts[..4].copy_from_slice(&a[SALT].to_ne_bytes());
        salts[4..].copy_from_slice(&a[SALT + 1].to_ne_bytes());
        Some(IndexHeader {
            max_frame: a[MX_FRAME],
            page_size: (sz & 0xfe00) + ((sz & 1) << 16),
            salts,
        })
    }

    fn salt1(&self) -> u32 {
        u32::from_be_bytes([self.salts[0], self.salts[1], self.salts[2], self.salts[3]])
    }
}

/// SQLite's checksum (`walChecksumBytes`) over words already in the order it adds them.
fn checksum_words(words: impl Iterator<Item = u32>, start: (u32, u32)) -> (u32, u32) {
    let (mut s1, mut s2) = start;
    let mut words = words;
    while let Some(x) = words.next() {
        let y = words.next().unwrap_or(0);
        s1 = s1.wrapping_add(x).wrapping_add(s2);
        s2 = s2.wrapping_add(y).wrapping_add(s1);
    }
    (s1, s2)
}

fn native_checksum(words: &[u32], start: (u32, u32)) -> (u32, u32) {
    checksum_words(words.iter().copied(), start)
}

/// The checksum of WAL bytes (a whole number of 8-byte pairs), words read big-endian when the
/// WAL header's magic says so (its low bit), else little-endian.
fn wal_checksum(big_endian: bool, bytes: &[u8], start: (u32, u32)) -> (u32, u32) {
    let word = |c: &[u8]| {
        let w = [c[0], c[1], c[2], c[3]];
        if big_endian {
            u32::from_be_bytes(w)
        } else {
            u32::from_le_bytes(w)
        }
    };
    checksum_words(bytes.chunks_exact(4).map(word), start)
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// A WAL header's page size (bytes 8..12).
fn wal_page_size(wal_header: &[u8; WAL_HEADER_BYTES]) -> u32 {
    be32(&wal_header[8..])
}

/// SQLite's recovery walking a WAL's frames (`walIndexRecover`, `walDecodeFrame`): each frame
/// must carry the header's salts and a page number, and its checksum must chain from the one
/// before (the first from the header's).
struct Chain<'h> {
    header: &'h [u8; WAL_HEADER_BYTES],
    big_endian: bool,
    page_bytes: usize,
    sum: (u32, u32),
}

impl<'h> Chain<'h> {
    /// The walk over the WAL after `header`, if recovery would read any frame of it: the magic,
    /// a page size and a matching header checksum.
    fn start(header: &'h [u8; WAL_HEADER_BYTES]) -> Option<Chain<'h>> {
        let magic = be32(header);
        let page_bytes = wal_page_size(header) as usize;
        if !SQLITE_WAL_MAGIC.contains(&magic) || page_bytes == 0 {
            return None;
        }
        let big_endian = magic & 1 == 1;
        let sum = wal_checksum(big_endian, &header[..24], (0, 0));
        (sum == (be32(&header[24..]), be32(&header[28..]))).then_some(Chain {
            header,
            big_endian,
            page_bytes,
            sum,
        })
    }

    /// The next frame (its 24-byte header, then the page): `None` if recovery stops at it,
    /// else whether it ends a transaction (a commit frame: a database size in its header).
    fn next(&mut self, frame: &[u8]) -> Option<bool> {
        if frame.len() != FRAME_HEADER_BYTES + self.page_bytes {
            return None;
        }
        let (fh, data) = frame.split_at(FRAME_HEADER_BYTES);
        if fh[8..16] != self.header[16..24] || be32(fh) == 0 {
            return None;
        }
        let sum = wal_checksum(self.big_endian, &fh[..8], self.sum);
        let sum = wal_checksum(self.big_endian, data, sum);
        if sum != (be32(&fh[16..]), be32(&fh[20..])) {
            return None;
        }
        self.sum = sum;
        Some(be32(&fh[4..]) != 0)
    }
}

/// Whether SQLite's recovery would index a transaction of the WAL whose logical header is
/// `wal_header`: frames 1, 2, … (`frame(i)`: its 24-byte header and page as SQLite reads them,
/// `None` past the log) are walked while valid; true at the first commit frame. Frames a
/// transaction wrote before rolling back (a spill) are valid but end without one.
pub fn holds_a_commit<E>(
    wal_header: &[u8; WAL_HEADER_BYTES],
    mut frame: impl FnMut(u64) -> Result<Option<Vec<u8>>, E>,
) -> Result<bool, E> {
    let Some(mut chain) = Chain::start(wal_header) else {
        return Ok(false);
    };
    for i in 1.. {
        let Some(bytes) = frame(i)? else {
            return Ok(false);
        };
        match chain.next(&bytes) {
            None => return Ok(false),
            Some(true) => return Ok(true),
            Some(false) => {}
        }
    }
    Ok(false)
}

/// Whether `index` is the header SQLite writes when a writer restarts the log whose header is
/// `wal_header` (`walRestartHdr`) and has not yet written the new log header: 0 frames, salt-1
/// one more than the log's, the log's page size (kept from the commits before the restart).
pub fn restarts(index: &IndexHeader, wal_header: &[u8; WAL_HEADER_BYTES]) -> bool {
    index.max_frame == 0
        && index.salt1() == be32(&wal_header[16..]).wrapping_add(1)
        && index.page_size == wal_page_size(wal_header)
}

/// Whether a wal-index header can index a WAL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It can: SQLite may act on it.
    OfThisWal,
    /// It cannot (why, for the log): SQLite must rebuild it from the WAL.
    Foreign(&'static str),
}

/// Whether the valid wal-index header `index` can be an index of the WAL whose logical header
/// is `wal_header` (`None`: the WAL is logically absent). `holds_commit` says whether that WAL
/// holds a transaction recovery would index ([`holds_a_commit`]); it is asked only when the
/// answer depends on it (an index of 0 frames whose salts are not the WAL's). The table in the
/// format doc: salts equal — of this WAL; frames indexed under other salts, or under any with
/// no WAL — foreign; 0 frames with salt-1 one more than the WAL's and its page size — a restart
/// not yet written, of this WAL; 0 frames with other salts — foreign if the WAL holds a
/// commit, else nothing in it to lose.
pub fn judge<E>(
    index: &IndexHeader,
    wal_header: Option<&[u8; WAL_HEADER_BYTES]>,
    holds_commit: impl FnOnce() -> Result<bool, E>,
) -> Result<Verdict, E> {
    let Some(w) = wal_header else {
        return Ok(if index.max_frame > 0 {
            Verdict::Foreign("it indexes frames of a WAL that is logically absent")
        } else {
            Verdict::OfThisWal
        });
    };
    if index.salts[..] == w[16..24] {
        return Ok(Verdict::OfThisWal);
    }
    if index.max_frame > 0 {
        return Ok(Verdict::Foreign(
            "it indexes frames under salts the WAL's header does not have",
        ));
    }
    if restarts(index, w) || !holds_commit()? {
        return Ok(Verdict::OfThisWal);
    }
    Ok(Verdict::Foreign(
        "it says the WAL holds no transaction, under salts not the WAL's, while the WAL holds one",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    /// Both copies of a header SQLite would write with these fields.
    fn words(max_frame: u32, page_size: u32, salts: [u8; 8]) -> [u32; BOTH_COPIES_WORDS] {
        let mut h = [0u32; HEADER_WORDS];
        h[VERSION] = INDEX_VERSION;
        h[CHANGE] = 7;
        let sz = ((page_size & 0xff00) | (page_size >> 16)) as u16;
        let szb = sz.to_ne_bytes();
        h[FLAGS] = u32::from_ne_bytes([1, 0, szb[0], szb[1]]);
        h[MX_FRAME] = max_frame;
        h[N_PAGE] = 3;
        h[SALT] = u32::from_ne_bytes([salts[0], salts[1], salts[2], salts[3]]);
        h[SALT + 1] = u32::from_ne_bytes([salts[4], salts[5], salts[6], salts[7]]);
        let (c1, c2) = native_checksum(&h[..CKSUM], (0, 0));
        h[CKSUM] = c1;
        h[CKSUM + 1] = c2;
        let mut both = [0u32; BOTH_COPIES_WORDS];
        both[..HEADER_WORDS].copy_from_slice(&h);
        both[HEADER_WORDS..].copy_from_slice(&h);
        both
    }

    /// A WAL header as SQLite writes it on a little-endian machine (magic 0x377f0682).
    fn wal_header(page: u32, salts: [u8; 8]) -> [u8; WAL_HEADER_BYTES] {
        let mut h = [0u8; WAL_HEADER_BYTES];
        h[..4].copy_from_slice(&0x377f_0682u32.to_be_bytes());
        h[4..8].copy_from_slice(&3_007_000u32.to_be_bytes());
        h[8..12].copy_from_slice(&page.to_be_bytes());
        h[16..24].copy_from_slice(&salts);
        let (c1, c2) = wal_checksum(false, &h[..24], (0, 0));
        h[24..28].copy_from_slice(&c1.to_be_bytes());
        h[28..32].copy_from_slice(&c2.to_be_bytes());
        h
    }

    /// Frames after `header` for `pages` (page number 2, 3, …), the last a commit of that many
    /// pages when `commit`.
    fn frames(header: &[u8; WAL_HEADER_BYTES], pages: &[Vec<u8>], commit: bool) -> Vec<Vec<u8>> {
        let mut sum = (be32(&header[24..]), be32(&header[28..]));
        let mut out = Vec::new();
        for (i, page) in pages.iter().enumerate() {
            let mut f = vec![0u8; FRAME_HEADER_BYTES];
            f[..4].copy_from_slice(&(i as u32 + 2).to_be_bytes());
            if commit && i + 1 == pages.len() {
                f[4..8].copy_from_slice(&(pages.len() as u32 + 1).to_be_bytes());
            }
            f[8..16].copy_from_slice(&header[16..24]);
            sum = wal_checksum(false, &f[..8], sum);
            sum = wal_checksum(false, page, sum);
            f[16..20].copy_from_slice(&sum.0.to_be_bytes());
            f[20..24].copy_from_slice(&sum.1.to_be_bytes());
            f.extend_from_slice(page);
            out.push(f);
        }
        out
    }

    fn walk(header: &[u8; WAL_HEADER_BYTES], frames: &[Vec<u8>]) -> bool {
        let r: Result<bool, Infallible> =
            holds_a_commit(header, |i| Ok(frames.get(i as usize - 1).cloned()));
        r.unwrap()
    }

    const OURS: [u8; 8] = [0x12, 0x34, 0x56, 0x78, 9, 8, 7, 6];

    fn never() -> Result<bool, Infallible> {
        panic!("frame 1 is not needed for this verdict")
    }

    #[test]
    fn a_header_sqlite_would_accept_is_read_and_any_other_is_not() {
        let w = words(100, 4096, OURS);
        let h = IndexHeader::from_words(&w).expect("valid");
        assert_eq!((h.max_frame, h.page_size, h.salts), (100, 4096, OURS));
        let big = IndexHeader::from_words(&words(1, 65536, OURS)).expect("valid");
        assert_eq!(big.page_size, 65536);
        let mut torn = w;
        torn[HEADER_WORDS + MX_FRAME] = 101;
        assert_eq!(IndexHeader::from_words(&torn), None, "copies differ");
        let mut bad = w;
        bad[MX_FRAME] = 101;
        bad[HEADER_WORDS + MX_FRAME] = 101;
        assert_eq!(IndexHeader::from_words(&bad), None, "checksum");
        assert_eq!(IndexHeader::from_words(&[0; BOTH_COPIES_WORDS]), None);
    }

    #[test]
    fn a_commit_counts_only_at_the_end_of_a_chain_of_valid_frames() {
        let header = wal_header(512, OURS);
        let pages: Vec<Vec<u8>> = (0..3).map(|i| vec![0x50 + i; 512]).collect();
        let committed = frames(&header, &pages, true);
        assert!(walk(&header, &committed));
        // A spill rolled back: valid frames, no commit frame after them.
        assert!(!walk(&header, &frames(&header, &pages, false)));
        let mut flipped = committed.clone();
        flipped[1][FRAME_HEADER_BYTES + 100] ^= 1;
        assert!(!walk(&header, &flipped), "a changed page breaks the chain");
        let other = wal_header(512, [1; 8]);
        assert!(!walk(&other, &committed), "another epoch's frames");
        assert!(!walk(&header, &[vec![0; 536]]), "zeros: no page number");
        let mut short = committed.clone();
        short[2].truncate(100);
        assert!(!walk(&header, &short));
        let mut no_magic = header;
        no_magic[0] = 0;
        assert!(!walk(&no_magic, &committed));
    }

    #[test]
    fn an_index_of_the_wals_salts_is_of_this_wal() {
        let h = IndexHeader::from_words(&words(100, 4096, OURS)).unwrap();
        let w = wal_header(4096, OURS);
        assert_eq!(judge(&h, Some(&w), never), Ok(Verdict::OfThisWal));
        let empty = IndexHeader::from_words(&words(0, 0, OURS)).unwrap();
        assert_eq!(judge(&empty, Some(&w), never), Ok(Verdict::OfThisWal));
    }

    #[test]
    fn frames_under_other_salts_or_of_an_absent_wal_are_foreign() {
        let h = IndexHeader::from_words(&words(3, 4096, [0; 8])).unwrap();
        let w = wal_header(4096, OURS);
        assert!(matches!(
            judge(&h, Some(&w), never),
            Ok(Verdict::Foreign(_))
        ));
        assert!(matches!(judge(&h, None, never), Ok(Verdict::Foreign(_))));
        let empty = IndexHeader::from_words(&words(0, 0, [0; 8])).unwrap();
        assert_eq!(judge(&empty, None, never), Ok(Verdict::OfThisWal));
    }

    #[test]
    fn a_restart_not_yet_written_is_of_this_wal() {
        // walRestartHdr: salt-1 plus one (big-endian), a new salt-2, 0 frames, the page size
        // kept from the commits before.
        let mut next = OURS;
        next[..4].copy_from_slice(&0x1234_5679u32.to_be_bytes());
        next[4..].copy_from_slice(&[0xaa; 4]);
        let h = IndexHeader::from_words(&words(0, 4096, next)).unwrap();
        let w = wal_header(4096, OURS);
        assert_eq!(judge(&h, Some(&w), never), Ok(Verdict::OfThisWal));
        // What a stock recovery of a frame-less -wal leaves: salts 0, no page size.
        let stock = IndexHeader::from_words(&words(0, 0, [0; 8])).unwrap();
        let wrapped = wal_header(4096, [0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4]);
        let r: Result<_, Infallible> = judge(&stock, Some(&wrapped), || Ok(true));
        assert!(
            matches!(r, Ok(Verdict::Foreign(_))),
            "salt-1 0 after 0xffffffff is no restart without the page size"
        );
    }

    #[test]
    fn an_empty_index_under_other_salts_is_foreign_only_if_the_wal_holds_a_commit() {
        let stock = IndexHeader::from_words(&words(0, 0, [0; 8])).unwrap();
        let w = wal_header(4096, OURS);
        let holds: Result<_, Infallible> = judge(&stock, Some(&w), || Ok(true));
        assert!(matches!(holds, Ok(Verdict::Foreign(_))));
        // No commit (nothing written yet, or only a rolled-back spill): nothing to lose.
        let none: Result<_, Infallible> = judge(&stock, Some(&w), || Ok(false));
        assert_eq!(none, Ok(Verdict::OfThisWal));
        let failed = judge(&stock, Some(&w), || Err("read failed"));
        assert_eq!(failed, Err("read failed"));
    }
}
