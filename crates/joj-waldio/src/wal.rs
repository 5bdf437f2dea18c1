//! The logical WAL over its physical file: translation, pending blocks, commits, group sync,
//! preallocation with explicit journaling. Generic over [`WalIo`] so tests can tap or fake it.
//!
//! Invariants:
//! - `pending` holds whole blocks not yet written; a block's header and page parts are each
//!   either fully given by SQLite or filled from disk before they are written.
//! - Frames are written only inside the durable size: an extension is zero-filled and synced
//!   before any block past the old end is written.
//! - The page bytes `P-24..P` SQLite writes are zero (checked before anything is stored), and
//!   read back as zero.
//! - Without group sync, a commit frame's page write leaves nothing pending: the transaction is
//!   on disk (or in the device cache) when SQLite goes on to acknowledge it.

use crate::counters::{AtomicWaldioCounters, bump};
use crate::io::{AlignedBuf, WalIo};
use crate::layout::{
    self, Decoded, FRAME_HEADER_BYTES, HEADER_FIELDS_BYTES, HeaderBlock, Part, WAL_HEADER_BYTES,
};
use crate::options::{SyncOption, WaldioOptions, group_due};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// Why a WAL operation failed; the VFS turns these into SQLite codes and a message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WalError {
    #[error(
        "page {pgno} (WAL frame {frame}) has data in its last 24 bytes, which waldio needs for \
         the frame header: the reserved bytes belong to someone else (cksumvfs, a codec) or the \
         database has no reserve; convert it with `joj waldio convert DB`"
    )]
    ReserveInUse { frame: u64, pgno: u32 },
    #[error(
        "page size {page} is not a multiple of the direct-I/O alignment {align} of the WAL file; \
         create the database with PRAGMA page_size={align} (or larger) before its first write"
    )]
    Misaligned { page: u32, align: u32 },
    #[error(
        "the WAL file holds a stock SQLite WAL with frames waldio cannot read; checkpoint it \
         with the default VFS first: sqlite3 DB 'PRAGMA wal_checkpoint(TRUNCATE)'"
    )]
    StockWal,
    #[error("the WAL file is not a waldio WAL (unknown content); move it away if it is not needed")]
    Foreign,
    #[error(
        "two waldio WALs: {old} (the name waldio used before) and {new}; fix: keep the one \
         whose database you trust (normally the newer file, by modification time) and move the \
         other away"
    )]
    TwoWals {
        old: std::path::PathBuf,
        new: std::path::PathBuf,
    },
    #[error("the WAL file has waldio format version {0}; this build reads version 1 only")]
    NewerVersion(u32),
    #[error("the disk is full: no room to preallocate the WAL ({0}); free space and retry")]
    Full(std::io::Error),
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        source: std::io::Error,
    },
    #[error("an earlier write or sync of this WAL failed; close and reopen the database")]
    Failed,
}

impl WalError {
    fn io(what: &'static str, source: std::io::Error) -> WalError {
        if source.raw_os_error() == Some(libc::ENOSPC) {
            WalError::Full(source)
        } else {
            WalError::Io { what, source }
        }
    }
}

/// Result of a read: the bytes were all there, or the tail was past the end (zero-filled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOutcome {
    Full,
    Short,
}

struct Pending {
    data: AlignedBuf,
    have_header: bool,
    have_page: bool,
}

/// The state of one WAL file in this process (shared by every connection that opened it).
pub struct WalState<I: WalIo> {
    io: I,
    opts: WaldioOptions,
    counters: Arc<AtomicWaldioCounters>,
    /// Block size (= page size) in use; 0 until a header says.
    block: u32,
    /// The logical WAL header in effect on disk (`None`: logically absent or not yet read).
    header: Option<[u8; WAL_HEADER_BYTES]>,
    pending: BTreeMap<u64, Pending>,
    /// Commits in `pending` (group sync) and when the oldest of them was acknowledged.
    buffered_commits: u32,
    oldest_commit: Option<Instant>,
    /// Highest block written since the last WAL restart (blocks at or below are on disk).
    written_hwm: u64,
    /// File length as last seen by `fstat` or made by our own extension (a lower bound: waldio
    /// never shrinks the file), so a commit needs no `fstat` while the WAL has room.
    known_len_bytes: u64,
    /// A write or sync failed: refuse further I/O (the file's state is unknown).
    failed: bool,
}

impl<I: WalIo> WalState<I> {
    /// Take over `io`, checking what the file holds.
    pub fn open(
        io: I,
        opts: WaldioOptions,
        counters: Arc<AtomicWaldioCounters>,
    ) -> Result<Self, WalError> {
        let mut s = WalState {
            io,
            opts,
            counters,
            block: 0,
            header: None,
            pending: BTreeMap::new(),
            buffered_commits: 0,
            oldest_commit: None,
            written_hwm: 0,
            known_len_bytes: 0,
            failed: false,
        };
        s.refresh_header()?;
        Ok(s)
    }

    pub fn options(&self) -> &WaldioOptions {
        &self.opts
    }

    pub fn io(&self) -> &I {
        &self.io
    }

    /// Re-read the header block from disk (another process may have restarted the WAL).
    fn refresh_header(&mut self) -> Result<(), WalError> {
        if self.pending.contains_key(&0) {
            return Ok(());
        }
        let len = self
            .io
            .len()
            .map_err(|e| WalError::io("fstat of the WAL", e))?;
        if len == 0 {
            self.header = None;
            return Ok(());
        }
        let align = self.io.dio_align() as usize;
        let n = 512usize.max(HEADER_FIELDS_BYTES).div_ceil(align) * align;
        let mut buf = AlignedBuf::zeroed(n);
        let got = self
            .io
            .read_at(&mut buf, 0)
            .map_err(|e| WalError::io("reading the WAL header block", e))?;
        self.count_read(got);
        match HeaderBlock::decode(&buf[..got]) {
            Decoded::Waldio(hb) => {
                self.block = hb.block_bytes;
                self.header = hb.wal_header;
            }
            // A torn header write, or preallocated zeros never headed: logically absent
            // (format doc, cases 3 and 5).
            Decoded::Torn | Decoded::Zero => self.header = None,
            Decoded::NewerVersion(v) => return Err(WalError::NewerVersion(v)),
            Decoded::SqliteWal if len <= WAL_HEADER_BYTES as u64 => self.header = None,
            Decoded::SqliteWal => return Err(WalError::StockWal),
            Decoded::Foreign => return Err(WalError::Foreign),
        }
        Ok(())
    }

    fn count_read(&self, n: usize) {
        bump(&self.counters.direct_read_bytes, n as u64);
    }

    fn check(&self) -> Result<(), WalError> {
        if self.failed {
            Err(WalError::Failed)
        } else {
            Ok(())
        }
    }

    fn blocks_on_disk(&mut self) -> Result<u64, WalError> {
        if self.block == 0 {
            return Ok(0);
        }
        let len = self
            .io
            .len()
            .map_err(|e| WalError::io("fstat of the WAL", e))?;
        self.known_len_bytes = len;
        Ok(len / u64::from(self.block))
    }

    /// The logical size SQLite sees.
    pub fn logical_size(&mut self) -> Result<u64, WalError> {
        self.check()?;
        self.refresh_header()?;
        if self.header.is_none() || self.block == 0 {
            return Ok(0);
        }
        let mut blocks = self.blocks_on_disk()?;
        if let Some((&last, _)) = self.pending.iter().next_back() {
            blocks = blocks.max(last + 1);
        }
        Ok(layout::logical_size(blocks, self.block))
    }

    /// Whether the WAL logically exists (for `xAccess`).
    pub fn exists(&mut self) -> Result<bool, WalError> {
        self.refresh_header()?;
        Ok(self.header.is_some())
    }

    /// A logical write from SQLite.
    pub fn write(&mut self, off: u64, data: &[u8]) -> Result<(), WalError> {
        self.check()?;
        if off == 0 && data.len() >= WAL_HEADER_BYTES {
            self.begin_epoch(&data[..WAL_HEADER_BYTES])?;
        }
        if self.block == 0 {
            // Frames before any header: SQLite never does this; refuse rather than guess.
            return Err(WalError::Io {
                what: "writing a WAL frame",
                source: std::io::Error::other("no WAL header written yet"),
            });
        }
        let p = self.block as usize;
        let mut commit_block = None;
        let mut touched_written = false;
        for piece in layout::split(off, data.len(), self.block) {
            let bytes = &data[piece.buf_off..piece.buf_off + piece.len];
            match piece.part {
                Part::WalHeader { from } => {
                    let mut h = self.header.unwrap_or([0u8; WAL_HEADER_BYTES]);
                    if let Some(pb) = self.pending.get(&0) {
                        if let Decoded::Waldio(hb) = HeaderBlock::decode(&pb.data) {
                            h = hb.wal_header.unwrap_or(h);
                        }
                    }
                    h[from..from + piece.len].copy_from_slice(bytes);
                    self.stage_header(Some(h));
                }
                Part::FrameHeader { frame, from } => {
                    touched_written |=
                        frame <= self.written_hwm && !self.pending.contains_key(&frame);
                    let full = from == 0 && piece.len == FRAME_HEADER_BYTES;
                    let pb = self.pending_block(frame, !full, false)?;
                    pb.data
                        [p - FRAME_HEADER_BYTES + from..p - FRAME_HEADER_BYTES + from + piece.len]
                        .copy_from_slice(bytes);
                    pb.have_header = true;
                }
                Part::Page { frame, from } => {
                    // The reserved tail must be ours: zero in what SQLite writes.
                    let tail_start = p - FRAME_HEADER_BYTES;
                    let end = from + piece.len;
                    if end > tail_start {
                        let skip = tail_start.saturating_sub(from);
                        if bytes[skip..].iter().any(|&b| b != 0) {
                            let pgno = self.pending.get(&frame).map_or(0, |pb| {
                                let h = &pb.data[p - FRAME_HEADER_BYTES..];
                                u32::from_be_bytes([h[0], h[1], h[2], h[3]])
                            });
                            return Err(WalError::ReserveInUse { frame, pgno });
                        }
                    }
                    touched_written |=
                        frame <= self.written_hwm && !self.pending.contains_key(&frame);
                    let full = from == 0 && piece.len == p;
                    let pb = self.pending_block(frame, false, !full)?;
                    let copy_end = end.min(tail_start);
                    if copy_end > from {
                        pb.data[from..copy_end].copy_from_slice(&bytes[..copy_end - from]);
                    }
                    pb.have_page = true;
                    if end == p
                        && pb.have_header
                        && layout::frame_commit_size(&pb.data[tail_start..]) != 0
                    {
                        commit_block = Some(frame);
                    }
                }
            }
        }
        if touched_written {
            // A rewrite of blocks already written (walRewriteChecksums, an overwritten page of
            // the open transaction): write through now so nothing acknowledged waits in memory.
            self.flush()?;
        }
        if commit_block.is_some() {
            bump(&self.counters.commits, 1);
            self.on_commit()?;
        }
        Ok(())
    }

    /// A WAL header at offset 0 starts a new epoch; adopt its page size as the block size.
    fn begin_epoch(&mut self, wal_header: &[u8]) -> Result<(), WalError> {
        let page = layout::wal_header_page_size(wal_header);
        if !layout::valid_page_size(page) {
            return Ok(()); // SQLite never writes this; the bytes are stored as given.
        }
        let align = self.io.dio_align();
        if !page.is_multiple_of(align) {
            return Err(WalError::Misaligned { page, align });
        }
        if page != self.block {
            // Re-layout: only blocks of the old epoch could be pending, and none are
            // committed frames of the new one. Write what is pending first.
            self.flush()?;
            self.block = page;
        }
        Ok(())
    }

    /// Put a header block with `wal_header` into `pending` (block 0).
    fn stage_header(&mut self, wal_header: Option<[u8; WAL_HEADER_BYTES]>) {
        let mut data = AlignedBuf::zeroed(self.block as usize);
        HeaderBlock {
            block_bytes: self.block,
            wal_header,
        }
        .encode_into(&mut data);
        self.pending.insert(
            0,
            Pending {
                data,
                have_header: true,
                have_page: true,
            },
        );
    }

    /// The pending block `frame`, created if needed; parts not fully given are read from disk.
    fn pending_block(
        &mut self,
        frame: u64,
        need_header: bool,
        need_page: bool,
    ) -> Result<&mut Pending, WalError> {
        let p = self.block as usize;
        self.pending.entry(frame).or_insert_with(|| Pending {
            data: AlignedBuf::zeroed(p),
            have_header: false,
            have_page: false,
        });
        let (missing_header, missing_page) = {
            let pb = &self.pending[&frame];
            (need_header && !pb.have_header, need_page && !pb.have_page)
        };
        if missing_header || missing_page {
            self.fill_from_disk(frame, missing_header, missing_page)?;
        }
        Ok(self.pending.get_mut(&frame).expect("inserted above"))
    }

    /// Read block `frame` from disk into the missing parts of its pending copy.
    fn fill_from_disk(&mut self, frame: u64, header: bool, page: bool) -> Result<(), WalError> {
        let p = self.block as usize;
        let mut disk = AlignedBuf::zeroed(p);
        let got = self
            .io
            .read_at(&mut disk, frame * p as u64)
            .map_err(|e| WalError::io("reading a WAL block back", e))?;
        self.count_read(got);
        bump(&self.counters.rmw_reads, 1);
        let pb = self.pending.get_mut(&frame).expect("caller inserted it");
        let tail = p - FRAME_HEADER_BYTES;
        if header {
            pb.data[tail..].copy_from_slice(&disk[tail..]);
            pb.have_header = true;
        }
        if page {
            pb.data[..tail].copy_from_slice(&disk[..tail]);
            pb.have_page = true;
        }
        Ok(())
    }

    fn on_commit(&mut self) -> Result<(), WalError> {
        match self.opts.group {
            None => self.flush().map(|_| ()),
            Some(g) => {
                self.buffered_commits += 1;
                let oldest = *self.oldest_commit.get_or_insert_with(Instant::now);
                let bytes = self.pending.len() * self.block as usize;
                if group_due(bytes, oldest.elapsed().as_nanos() as u64, &g) {
                    self.group_write()
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Group sync: write the buffered commits and make them durable per the sync option.
    fn group_write(&mut self) -> Result<(), WalError> {
        self.flush().map(|_| ())
    }

    /// The group timer: write the buffer if its oldest commit is older than the interval.
    pub fn group_tick(&mut self) -> Result<(), WalError> {
        let (Some(g), Some(oldest)) = (self.opts.group, self.oldest_commit) else {
            return Ok(());
        };
        if self.failed {
            return Ok(());
        }
        let bytes = self.pending.len() * self.block as usize;
        if group_due(bytes, oldest.elapsed().as_nanos() as u64, &g) {
            self.group_write()?;
        }
        Ok(())
    }

    /// Write every pending block: one direct write per contiguous run (`RWF_DSYNC` with fua).
    /// If the blocks carry group-sync commits, they get their durability here too (`full`:
    /// `fdatasync`). Returns whether an `fdatasync` was issued.
    fn flush(&mut self) -> Result<bool, WalError> {
        if self.pending.is_empty() {
            return Ok(false);
        }
        self.check()?;
        let last = *self.pending.keys().next_back().expect("non-empty");
        self.ensure_capacity(last + 1)?;
        // Complete partial blocks from disk (a block past the old end reads as zeros).
        let partial: Vec<(u64, bool, bool)> = self
            .pending
            .iter()
            .filter(|(_, pb)| !pb.have_header || !pb.have_page)
            .map(|(&b, pb)| (b, !pb.have_header, !pb.have_page))
            .collect();
        for (b, h, pg) in partial {
            self.fill_from_disk(b, h, pg)?;
        }
        let dsync = self.opts.sync == SyncOption::Fua && !self.opts.canary_skip_sync;
        let pending = std::mem::take(&mut self.pending);
        let mut run: Vec<(u64, Pending)> = Vec::new();
        let mut result = Ok(());
        for (b, pb) in pending {
            if let Some((last_b, _)) = run.last() {
                if *last_b + 1 != b {
                    if let Err(e) = self.write_run(&run, dsync) {
                        result = Err(e);
                        break;
                    }
                    run.clear();
                }
            }
            run.push((b, pb));
        }
        if result.is_ok() && !run.is_empty() {
            result = self.write_run(&run, dsync);
        }
        if let Err(e) = result {
            self.failed = true;
            return Err(e);
        }
        let mut synced = false;
        if self.buffered_commits > 0 {
            bump(&self.counters.group_writes, 1);
            self.buffered_commits = 0;
            self.oldest_commit = None;
            if self.opts.sync == SyncOption::Full {
                self.sync_data()?;
                synced = true;
            }
        }
        Ok(synced)
    }

    fn write_run(&mut self, run: &[(u64, Pending)], dsync: bool) -> Result<(), WalError> {
        let p = self.block as usize;
        let first = run[0].0;
        let mut buf = AlignedBuf::zeroed(run.len() * p);
        for (i, (_, pb)) in run.iter().enumerate() {
            buf[i * p..(i + 1) * p].copy_from_slice(&pb.data);
        }
        self.io
            .write_at(&buf, first * p as u64, dsync)
            .map_err(|e| WalError::io("direct write of WAL blocks", e))?;
        bump(&self.counters.direct_writes, 1);
        bump(&self.counters.direct_write_bytes, buf.len() as u64);
        if dsync {
            bump(&self.counters.dsync_writes, 1);
        }
        if first == 0 {
            bump(&self.counters.header_writes, 1);
            if let Decoded::Waldio(hb) = HeaderBlock::decode(&run[0].1.data) {
                self.header = hb.wal_header;
                // A new epoch: frames of the old one are stale from here on.
                self.written_hwm = 0;
            }
        }
        let last = run[run.len() - 1].0;
        self.written_hwm = self.written_hwm.max(last);
        Ok(())
    }

    /// Preallocation with explicit journaling: grow the file to hold `blocks` blocks with
    /// zero-filled (written) blocks, then one `fdatasync` makes size and extents durable.
    fn ensure_capacity(&mut self, blocks: u64) -> Result<(), WalError> {
        if blocks * u64::from(self.block) <= self.known_len_bytes {
            return Ok(());
        }
        let have = self.blocks_on_disk()?;
        if blocks <= have {
            return Ok(());
        }
        let target = if have <= 1 {
            blocks.max(u64::from(self.opts.prealloc_frames) + 1)
        } else {
            let step = u64::from(self.opts.extend_frames.max(1));
            have + (blocks - have).div_ceil(step) * step
        };
        let p = u64::from(self.block);
        let align = u64::from(self.io.dio_align());
        // `blocks_on_disk` above has just read the length.
        let mut pos = self.known_len_bytes / align * align;
        let end = target * p;
        if self.opts.canary_fallocate {
            if let Err(e) = self.io.preallocate_unwritten(end) {
                self.failed = true;
                return Err(WalError::io("fallocate of the WAL (canary)", e));
            }
            self.known_len_bytes = self.known_len_bytes.max(end);
            return Ok(());
        }
        const CHUNK: u64 = 1 << 20;
        let zeros = AlignedBuf::zeroed(CHUNK as usize);
        while pos < end {
            let n = (end - pos).min(CHUNK) as usize;
            if let Err(e) = self.io.write_at(&zeros[..n], pos, false) {
                self.failed = true;
                return Err(WalError::io("preallocating the WAL", e));
            }
            bump(&self.counters.prealloc_bytes, n as u64);
            pos += n as u64;
        }
        if let Err(e) = self.io.sync_data() {
            self.failed = true;
            return Err(WalError::io("fdatasync after preallocating the WAL", e));
        }
        self.known_len_bytes = self.known_len_bytes.max(end);
        bump(&self.counters.prealloc_syncs, 1);
        Ok(())
    }

    fn sync_data(&mut self) -> Result<(), WalError> {
        if self.opts.canary_skip_sync {
            return Ok(());
        }
        let synced = if self.opts.canary_flush_only {
            self.io.flush_cache_only()
        } else {
            self.io.sync_data()
        };
        if let Err(e) = synced {
            self.failed = true;
            return Err(WalError::io("fdatasync of the WAL", e));
        }
        bump(&self.counters.wal_syncs, 1);
        Ok(())
    }

    /// `xSync`: write what is pending and make the WAL durable.
    pub fn sync(&mut self) -> Result<(), WalError> {
        self.check()?;
        let synced = self.flush()?;
        if !synced && (self.opts.sync != SyncOption::Fua || self.opts.canary_skip_sync) {
            self.sync_data()?;
        }
        Ok(())
    }

    /// A logical read. Bytes past the end read as zero and give `Short`.
    pub fn read(&mut self, off: u64, buf: &mut [u8]) -> Result<ReadOutcome, WalError> {
        self.check()?;
        bump(&self.counters.read_calls, 1);
        if off < WAL_HEADER_BYTES as u64 || self.block == 0 {
            self.refresh_header()?;
        }
        let Some(header) = self.current_header() else {
            buf.fill(0);
            return Ok(ReadOutcome::Short);
        };
        let p = self.block as usize;
        let mut short = false;
        let mut cached: Option<(u64, AlignedBuf, usize)> = None;
        for piece in layout::split(off, buf.len(), self.block) {
            let out = &mut buf[piece.buf_off..piece.buf_off + piece.len];
            let frame = match piece.part {
                Part::WalHeader { from } => {
                    out.copy_from_slice(&header[from..from + piece.len]);
                    continue;
                }
                Part::FrameHeader { frame, .. } | Part::Page { frame, .. } => frame,
            };
            let block: &[u8] = if let Some(pb) = self.pending.get(&frame) {
                if !pb.have_header || !pb.have_page {
                    self.fill_from_disk(frame, !pb.have_header, !pb.have_page)?;
                }
                &self.pending[&frame].data
            } else {
                // Past the end of the file the read comes back short and the block reads as zeros.
                if cached.as_ref().map(|c| c.0) != Some(frame) {
                    let mut b = AlignedBuf::zeroed(p);
                    let got = self
                        .io
                        .read_at(&mut b, frame * p as u64)
                        .map_err(|e| WalError::io("direct read of a WAL block", e))?;
                    self.count_read(got);
                    cached = Some((frame, b, got));
                }
                let (_, b, got) = cached.as_ref().expect("just set");
                if *got < p {
                    short = true;
                }
                b
            };
            let tail = p - FRAME_HEADER_BYTES;
            match piece.part {
                Part::FrameHeader { from, .. } => {
                    out.copy_from_slice(&block[tail + from..tail + from + piece.len]);
                }
                Part::Page { from, .. } => {
                    let end = from + piece.len;
                    let copy_end = end.min(tail);
                    if copy_end > from {
                        out[..copy_end - from].copy_from_slice(&block[from..copy_end]);
                    }
                    if end > tail {
                        let z = tail.max(from) - from;
                        out[z..].fill(0);
                    }
                }
                Part::WalHeader { .. } => unreachable!("handled above"),
            }
        }
        Ok(if short {
            ReadOutcome::Short
        } else {
            ReadOutcome::Full
        })
    }

    fn current_header(&self) -> Option<[u8; WAL_HEADER_BYTES]> {
        if let Some(pb) = self.pending.get(&0) {
            if let Decoded::Waldio(hb) = HeaderBlock::decode(&pb.data) {
                return hb.wal_header;
            }
        }
        self.header
    }

    /// `xTruncate(0)` and `xDelete`: make the WAL logically absent (blocks stay allocated).
    pub fn mark_absent(&mut self) -> Result<(), WalError> {
        self.check()?;
        if self.block == 0 {
            return Ok(()); // never written: nothing on disk to hide
        }
        // Everything was backfilled before SQLite truncates or deletes; write what is pending
        // anyway (it can only be frames of this epoch), then the state-0 header block.
        self.flush()?;
        self.stage_header(None);
        self.flush().map(|_| ())
    }

    /// Close: write what is buffered (group sync: a last group write with its sync).
    pub fn close(&mut self) -> Result<(), WalError> {
        if self.failed {
            return Ok(());
        }
        self.flush().map(|_| ())
    }

    /// Is the file in the failed state?
    pub fn failed(&self) -> bool {
        self.failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory file with a chosen direct-I/O alignment.
    struct MemIo {
        data: Vec<u8>,
        align: u32,
        syncs: u32,
    }

    impl WalIo for MemIo {
        fn read_at(&mut self, buf: &mut [u8], off: u64) -> std::io::Result<usize> {
            assert!(off.is_multiple_of(u64::from(self.align)), "misaligned read");
            let off = off as usize;
            let n = self.data.len().saturating_sub(off).min(buf.len());
            buf[..n].copy_from_slice(&self.data[off..off + n]);
            Ok(n)
        }
        fn write_at(&mut self, buf: &[u8], off: u64, _dsync: bool) -> std::io::Result<()> {
            assert!(
                off.is_multiple_of(u64::from(self.align)),
                "misaligned write"
            );
            assert!((buf.len() as u64).is_multiple_of(u64::from(self.align)));
            let end = off as usize + buf.len();
            if self.data.len() < end {
                self.data.resize(end, 0);
            }
            self.data[off as usize..end].copy_from_slice(buf);
            Ok(())
        }
        fn sync_data(&mut self) -> std::io::Result<()> {
            self.syncs += 1;
            Ok(())
        }
        fn len(&self) -> std::io::Result<u64> {
            Ok(self.data.len() as u64)
        }
        fn dio_align(&self) -> u32 {
            self.align
        }
    }

    fn wal_header(page: u32) -> [u8; 32] {
        let mut h = [0u8; 32];
        h[..4].copy_from_slice(&0x377f_0682u32.to_be_bytes());
        h[8..12].copy_from_slice(&page.to_be_bytes());
        h
    }

    fn state(align: u32) -> WalState<MemIo> {
        let io = MemIo {
            data: Vec::new(),
            align,
            syncs: 0,
        };
        WalState::open(io, WaldioOptions::default(), Arc::default()).unwrap()
    }

    #[test]
    fn a_page_smaller_than_the_dio_alignment_is_refused() {
        let mut s = state(4096);
        let err = s.write(0, &wal_header(1024)).unwrap_err();
        assert!(
            matches!(
                err,
                WalError::Misaligned {
                    page: 1024,
                    align: 4096
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn frames_translate_both_ways_and_the_reserve_reads_as_zero() {
        let mut s = state(512);
        s.write(0, &wal_header(4096)).unwrap();
        let mut fh = [0u8; 24];
        fh[..4].copy_from_slice(&7u32.to_be_bytes());
        fh[4..8].copy_from_slice(&9u32.to_be_bytes()); // a commit frame
        let mut page = vec![0xabu8; 4096];
        page[4096 - 24..].fill(0);
        s.write(32, &fh).unwrap();
        s.write(56, &page).unwrap();
        // The commit went to disk: header block, then frame 1 at block 1 with its header at the end.
        assert!(s.pending.is_empty());
        assert_eq!(
            &s.io.data[4096 + 4096 - 24..4096 + 4096 - 20],
            &7u32.to_be_bytes()
        );
        let mut back = vec![0u8; 24 + 4096];
        assert_eq!(s.read(32, &mut back).unwrap(), ReadOutcome::Full);
        assert_eq!(&back[..24], &fh);
        assert_eq!(&back[24..], &page[..]);
        let mut hdr = [0u8; 32];
        s.read(0, &mut hdr).unwrap();
        assert_eq!(hdr, wal_header(4096));
        // Preallocated once with one explicit sync, before the first frame was written.
        assert!(s.io.data.len() >= 1025 * 4096);
        assert_eq!(s.io.syncs, 1);
    }

    #[test]
    fn a_page_using_the_reserved_tail_is_refused_before_anything_is_written() {
        let mut s = state(512);
        s.write(0, &wal_header(4096)).unwrap();
        s.sync().unwrap();
        let before = s.io.data.clone();
        let mut fh = [0u8; 24];
        fh[..4].copy_from_slice(&3u32.to_be_bytes());
        s.write(32, &fh).unwrap();
        let page = vec![0x11u8; 4096];
        let err = s.write(56, &page).unwrap_err();
        assert!(
            matches!(err, WalError::ReserveInUse { frame: 1, pgno: 3 }),
            "{err}"
        );
        assert_eq!(s.io.data, before);
    }
}
