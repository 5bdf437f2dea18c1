//! The logical WAL over its physical file: translation, pending blocks, commits, group sync,
//! preallocation with explicit journaling. Generic over [`WalIo`] so tests can tap or fake it.
//!
//! Invariants:
//! - `pending` holds whole blocks not yet written; a block's header and page parts are each
//!   either fully given by SQLite or filled from disk before they are written. A block is
//!   `committed` once a commit frame was written after it; blocks of a write transaction that
//!   ended without one (rolled back after spilling) are dropped when SQLite releases the write
//!   lock, never written later over frames another process committed.
//! - Frames are written only inside the durable size: an extension is zero-filled and synced
//!   before any block past the old end is written; an extension that failed is cut off again.
//! - The page bytes `P-24..P` SQLite writes are zero (checked before anything is stored), and
//!   read back as zero; a page 1 SQLite writes keeps a reserve of at least 24 bytes (a backup
//!   from a database without it is refused before anything is stored).
//! - Without group sync, a commit frame's page write leaves nothing pending, and with `full`
//!   or `fua` it is durable, before the write returns: the option decides a commit's
//!   durability whatever `PRAGMA synchronous` the application runs.
//! - Nothing here outlives a failed call but what is on disk: the WAL is written with direct
//!   I/O (no page cache to distrust after an error), so after an error the state drops what it
//!   had in memory for the failed transaction and the next call works as stock SQLite's would.

use crate::counters::{AtomicWaldioCounters, bump};
use crate::io::{AlignedBuf, WalIo};
use crate::layout::{
    self, Decoded, FRAME_HEADER_BYTES, HEADER_FIELDS_BYTES, HeaderBlock, Part, RESERVE_NEEDED,
    WAL_HEADER_BYTES,
};
use crate::options::{SyncOption, WaldioOptions, group_due};
use crate::sqlite_header;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

mod prealloc;

/// Why a WAL operation failed; the VFS turns these into SQLite codes and a message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WalError {
    #[error(
        "page {pgno} (WAL frame {frame}) has data in its last 24 bytes, which waldio needs for \
         the frame header: the reserved bytes belong to someone else (cksumvfs, a codec), or \
         the page was laid out for fewer than 24 reserved bytes — a database without the \
         reserve, or another database's page copied in by a backup (sqlite3_backup_*, Python's \
         Connection.backup, the sqlite3 shell's .restore) from a database stock SQLite made; \
         nothing was written; convert that database with `joj waldio convert DB` (a backup's \
         source before the backup)"
    )]
    ReserveInUse { frame: u64, pgno: u32 },
    /// Page 1 of another database, copied over this one (SQLite's backup copies page 1's header
    /// verbatim): the database it would make could keep no frame header.
    #[error(
        "page 1 (WAL frame {frame}) says the database keeps {reserve} reserved bytes per page, \
         fewer than the 24 waldio keeps each frame's header in: it is another database's first \
         page, copied over this one by a backup (sqlite3_backup_*, Python's Connection.backup, \
         the sqlite3 shell's .restore) from a database without waldio's reserve (stock SQLite \
         makes 0); nothing was written and the database is as it was; fix: give the source the \
         reserve first with `joj waldio convert SRC` (it then opens only through waldio: \
         convert a copy to keep SRC as it is) and back up from it, or back up into a database \
         opened without waldio and convert that"
    )]
    BackupWithoutReserve { frame: u64, reserve: u8 },
    #[error(
        "page size {page} is not a multiple of the direct-I/O alignment {align} of the WAL file; \
         create the database with PRAGMA page_size={align} (or larger) before its first write"
    )]
    Misaligned { page: u32, align: u32 },
    #[error(
        "the WAL file holds a stock SQLite WAL with frames waldio cannot read; fix: checkpoint \
         it with the default VFS first: sqlite3 DB 'PRAGMA wal_checkpoint(TRUNCATE)' (if that \
         says `file is not a database`, a SQLite without waldio committed into it while waldio \
         had marked the database: recover it as docs/formats/waldio.md, \"A stock WAL beside a \
         marked database\", says)"
    )]
    StockWal,
    #[error(
        "a SQLite without waldio has it open in WAL mode (its {} is there and another \
         connection, of this process or another, holds the database open): waldio would mark \
         the database, and that connection's next commit would be left in its -wal, where \
         neither could read it; nothing was changed; fix: open a database through one VFS at a \
         time — close it in the other program or connection (or load joj's extension there and \
         open it with vfs=waldio); if no program has the -wal open (`fuser` names none), it is \
         a stock leftover without frames: remove it",
        .wal.display()
    )]
    StockWalInUse { wal: std::path::PathBuf },
    #[error(
        "another connection is opening the database at this moment (it holds a lock on it, and \
         no {} is there yet) while waldio must mark it before its WAL's first use; nothing was \
         changed; fix: retry — SQLite's busy handler does, given a busy timeout \
         (PRAGMA busy_timeout)",
        .wal.display()
    )]
    MarkBusy { wal: std::path::PathBuf },
    #[error("the WAL file is not a waldio WAL (unknown content); move it away if it is not needed")]
    Foreign,
    /// A header block with a matching checksum and a field waldio never writes.
    #[error(
        "the WAL file's header block has a matching checksum but its {field} is {value}, which \
         waldio never writes (damaged, or made by hand); nothing is read from it; fix: restore \
         the database and its log from a backup, or, if nothing needs the log, move it away"
    )]
    InvalidHeader { field: &'static str, value: u32 },
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
    #[error(
        "the disk is full: no room to preallocate the WAL for this write ({need} bytes needed, \
         {free} free); free space and retry"
    )]
    NoRoom { need: u64, free: u64 },
    #[error("{what}: {source}{}", direct_io_hint(*.op, .source))]
    Io {
        op: IoOp,
        what: &'static str,
        source: std::io::Error,
    },
}

/// Which kind of system call an I/O error came from (SQLite's extended code follows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    Open,
    Read,
    Write,
    Sync,
    Stat,
}

/// What an `EINVAL` from a read or write of the WAL means: every one is aligned for direct I/O,
/// so the filesystem refused `O_DIRECT` itself (a FUSE filesystem may take the open and fail
/// the transfer).
fn direct_io_hint(op: IoOp, source: &std::io::Error) -> &'static str {
    let transfer = matches!(op, IoOp::Read | IoOp::Write);
    if transfer && source.raw_os_error() == Some(libc::EINVAL) {
        " (the filesystem refuses the direct I/O (O_DIRECT) waldio writes its WAL with; fix: \
         keep the database on a filesystem that takes it (ext4, xfs, btrfs, tmpfs), or open it \
         without vfs=waldio)"
    } else {
        ""
    }
}

impl WalError {
    fn io(op: IoOp, what: &'static str, source: std::io::Error) -> WalError {
        if source.raw_os_error() == Some(libc::ENOSPC) {
            WalError::Full(source)
        } else {
            WalError::Io { op, what, source }
        }
    }
}

/// Check SQLite's write of `bytes` at offset `from` of a `page_bytes`-byte page, that of WAL
/// frame `frame` whose frame header is `frame_header`, before anything of it is stored: the
/// page's last [`FRAME_HEADER_BYTES`] are zero (waldio keeps the frame header there), and a
/// page 1 keeps a reserve of at least [`RESERVE_NEEDED`] (a backup copies another database's
/// header over this one's, reserve and all).
fn check_page_piece(
    (frame, frame_header): (u64, &[u8]),
    page_bytes: usize,
    from: usize,
    bytes: &[u8],
) -> Result<(), WalError> {
    let pgno = layout::frame_pgno(frame_header);
    let reserve_at = sqlite_header::RESERVE_OFFSET;
    if pgno == 1 && (from..from + bytes.len()).contains(&reserve_at) {
        let reserve = bytes[reserve_at - from];
        if reserve < RESERVE_NEEDED {
            return Err(WalError::BackupWithoutReserve { frame, reserve });
        }
    }
    let tail_start = page_bytes - FRAME_HEADER_BYTES;
    let skip = tail_start.saturating_sub(from).min(bytes.len());
    if bytes[skip..].iter().any(|&b| b != 0) {
        return Err(WalError::ReserveInUse { frame, pgno });
    }
    Ok(())
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
    /// A commit frame was written at or after this block (it belongs to a committed
    /// transaction, still buffered by group sync).
    committed: bool,
}

/// What a logical write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Wrote {
    /// It completed a commit frame: a sync that follows at once is the commit's.
    pub commit: bool,
}

/// Which side of an `fdatasync` of the WAL the sync hook is told about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncEdge {
    Before,
    After,
}

/// Told around every `fdatasync` of the WAL (joj's measurement records the file's extents).
pub type SyncHook = Box<dyn FnMut(SyncEdge) + Send>;

/// Pending blocks beyond this many bytes are written before the commit: a transaction that
/// spills a large change into the WAL must not hold all of it in memory. Frames written before
/// their commit frame are ignored by recovery until it follows (format doc, case 1).
const PENDING_LIMIT_BYTES: usize = 16 << 20;

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
    /// The salts of the log `written_hwm` counts blocks of (from the frame headers SQLite
    /// writes): frames with other salts are of a log another process restarted since, in which
    /// this process has written nothing yet.
    hwm_salts: Option<[u8; 8]>,
    /// File length as last seen by `fstat` or made by our own extension (a lower bound: waldio
    /// only shrinks the file to remove an extension that failed), so a commit needs no `fstat`
    /// while the WAL has room.
    known_len_bytes: u64,
    /// Commit frames were written (or buffered) that no sync has made durable yet (`normal`,
    /// group sync): a checkpoint syncs them before it copies a page.
    unsynced_commits: bool,
    /// The last thing done to the WAL was an `xSync`'s `fdatasync` (not a commit's): every frame
    /// written before it, by any process, is durable (a checkpoint's own `xSync` just made them
    /// so, after the last frame it copies was written).
    just_synced: bool,
    sync_hook: Option<SyncHook>,
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
            hwm_salts: None,
            known_len_bytes: 0,
            unsynced_commits: false,
            just_synced: false,
            sync_hook: None,
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

    /// Be told around every `fdatasync` of the WAL.
    pub fn set_sync_hook(&mut self, hook: SyncHook) {
        self.sync_hook = Some(hook);
    }

    /// Forget what memory held of the write transaction under way (after an error, SQLite
    /// rolls it back): the pending blocks not yet committed, and the cached length.
    fn forget_transaction(&mut self) {
        self.pending.retain(|_, pb| pb.committed);
        self.known_len_bytes = 0;
    }

    /// Re-read the header block from disk (another process may have restarted the WAL).
    fn refresh_header(&mut self) -> Result<(), WalError> {
        if self.pending.contains_key(&0) {
            return Ok(());
        }
        let len = self
            .io
            .len()
            .map_err(|e| WalError::io(IoOp::Stat, "fstat of the WAL", e))?;
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
            .map_err(|e| WalError::io(IoOp::Read, "reading the WAL header block", e))?;
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
            Decoded::Invalid { field, value } => {
                return Err(WalError::InvalidHeader { field, value });
            }
        }
        Ok(())
    }

    fn count_read(&self, n: usize) {
        bump(&self.counters.direct_read_bytes, n as u64);
    }

    fn blocks_on_disk(&mut self) -> Result<u64, WalError> {
        if self.block == 0 {
            return Ok(0);
        }
        let len = self
            .io
            .len()
            .map_err(|e| WalError::io(IoOp::Stat, "fstat of the WAL", e))?;
        self.known_len_bytes = len;
        Ok(len / u64::from(self.block))
    }

    /// The logical size SQLite sees.
    pub fn logical_size(&mut self) -> Result<u64, WalError> {
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
    pub fn write(&mut self, off: u64, data: &[u8]) -> Result<Wrote, WalError> {
        self.just_synced = false;
        let r = self.write_pieces(off, data);
        if r.is_err() {
            self.forget_transaction();
        }
        r
    }

    /// A write at `off` past the WAL header needs a log under way in this file: SQLite writes
    /// the header of a new WAL before any frame.
    fn check_a_log_is_under_way(&mut self, off: u64) -> Result<(), WalError> {
        if off >= WAL_HEADER_BYTES as u64 && (self.block == 0 || self.current_header().is_none()) {
            // Another waldio process may have started the WAL since this one read its header
            // (this one may have read none: its pages came from the database file).
            self.refresh_header()?;
        }
        if self.block == 0 || (off >= WAL_HEADER_BYTES as u64 && self.current_header().is_none()) {
            // SQLite appends to a WAL it believes exists (the wal-index says so) that this file
            // does not hold: another connection's, through another VFS (stock SQLite's
            // `-wal`). No recovery would find these frames; refuse, so that the commit fails
            // rather than being acknowledged and lost.
            return Err(WalError::Io {
                op: IoOp::Write,
                what: "writing a WAL frame",
                source: std::io::Error::other(
                    "no WAL header written yet in this WAL file, while SQLite appends to a WAL \
                     it believes exists: another connection writes this database through \
                     another VFS (stock SQLite's -wal); fix: open the database through one VFS \
                     at a time",
                ),
            });
        }
        Ok(())
    }

    fn write_pieces(&mut self, off: u64, data: &[u8]) -> Result<Wrote, WalError> {
        if off == 0 && data.len() >= WAL_HEADER_BYTES {
            self.begin_epoch(&data[..WAL_HEADER_BYTES])?;
        }
        self.check_a_log_is_under_way(off)?;
        let p = self.block as usize;
        let mut commit_block = None;
        let mut touched_written = false;
        // A commit frame's header written again (`walRewriteChecksums`, after the commit
        // frame): the commit is complete only now.
        let mut rewrote_commit = false;
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
                    let full = from == 0 && piece.len == FRAME_HEADER_BYTES;
                    if full {
                        self.frame_of_log(layout::frame_salts(bytes));
                    }
                    touched_written |=
                        frame <= self.written_hwm && !self.pending.contains_key(&frame);
                    let pb = self.pending_block(frame, !full, false)?;
                    pb.data
                        [p - FRAME_HEADER_BYTES + from..p - FRAME_HEADER_BYTES + from + piece.len]
                        .copy_from_slice(bytes);
                    pb.have_header = true;
                    rewrote_commit |= pb.have_page
                        && pb.committed
                        && layout::frame_commit_size(&pb.data[p - FRAME_HEADER_BYTES..]) != 0;
                }
                Part::Page { frame, from } => {
                    let tail_start = p - FRAME_HEADER_BYTES;
                    let end = from + piece.len;
                    touched_written |=
                        frame <= self.written_hwm && !self.pending.contains_key(&frame);
                    let full = from == 0 && piece.len == p;
                    // The piece that ends the page decides whether the frame is a commit, so
                    // it needs the frame's header: pending, or on disk if a flush (the group
                    // timer, the memory limit) wrote it between SQLite's two writes. So does
                    // the piece with page 1's reserve byte, to know the page is page 1. Nothing
                    // is stored before `check_page_piece`: a refused write leaves the block as
                    // it was (dropped with the failed transaction unless a commit holds it).
                    let has_reserve_byte = (from..end).contains(&sqlite_header::RESERVE_OFFSET);
                    let pb = self.pending_block(frame, end == p || has_reserve_byte, !full)?;
                    check_page_piece((frame, &pb.data[tail_start..]), p, from, bytes)?;
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
        if commit_block.is_some() {
            bump(&self.counters.commits, 1);
            self.on_commit()?;
            return Ok(Wrote { commit: true });
        }
        if touched_written || self.pending.len() * p > PENDING_LIMIT_BYTES {
            // A rewrite of blocks already written (walRewriteChecksums, an overwritten page of
            // the open transaction): write through now so nothing acknowledged waits in memory.
            // Or a transaction larger than memory should hold: its frames go out early.
            self.flush()?;
        }
        if rewrote_commit && self.opts.group.is_none() {
            // The rewritten commit frame is the one recovery checks: it gets the commit's
            // durability again, and the sync SQLite may follow with is that commit's.
            self.make_commit_durable()?;
            return Ok(Wrote { commit: true });
        }
        Ok(Wrote::default())
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

    /// SQLite writes a frame header carrying `salts`: in a log with other salts than the
    /// blocks `written_hwm` counts (another process restarted it), this process has written
    /// nothing yet. SQLite never rewrites another log's frames, and a transaction's own frames
    /// all carry its log's salts.
    fn frame_of_log(&mut self, salts: [u8; 8]) {
        if self.hwm_salts != Some(salts) {
            self.hwm_salts = Some(salts);
            self.written_hwm = 0;
        }
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
                committed: false,
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
            committed: false,
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
            .map_err(|e| WalError::io(IoOp::Read, "reading a WAL block back", e))?;
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
            None => {
                self.flush()?;
                self.make_commit_durable()
            }
            Some(g) => {
                // Acknowledged, in memory until the group is written: kept through errors and
                // the end of the write transaction.
                for pb in self.pending.values_mut() {
                    pb.committed = true;
                }
                self.unsynced_commits = true;
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

    /// A commit's frames are written (no group sync): make them durable as the option says —
    /// `full` with `fdatasync` now, `fua` already (its writes were `RWF_DSYNC`), `normal` at the
    /// next checkpoint (`sync_owed`).
    fn make_commit_durable(&mut self) -> Result<(), WalError> {
        match self.opts.sync {
            SyncOption::Full => self.sync_data(),
            SyncOption::Fua if !self.opts.canary_skip_sync => Ok(()),
            SyncOption::Fua | SyncOption::Normal => {
                self.unsynced_commits = true;
                Ok(())
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
        // Contiguous runs of blocks, each one write; a block leaves `pending` once its run is
        // written (a failed write leaves the rest, so buffered commits are never lost).
        let keys: Vec<u64> = self.pending.keys().copied().collect();
        let mut start = 0;
        while start < keys.len() {
            let mut end = start + 1;
            while end < keys.len() && keys[end] == keys[end - 1] + 1 {
                end += 1;
            }
            let run = &keys[start..end];
            self.write_run(run, dsync)?;
            for b in run {
                self.pending.remove(b);
            }
            start = end;
        }
        let mut synced = false;
        if self.buffered_commits > 0 {
            bump(&self.counters.group_writes, 1);
            self.buffered_commits = 0;
            self.oldest_commit = None;
            match self.opts.sync {
                SyncOption::Full => {
                    self.sync_data()?;
                    synced = true;
                }
                SyncOption::Fua if !self.opts.canary_skip_sync => self.unsynced_commits = false,
                _ => {}
            }
        }
        Ok(synced)
    }

    /// Write the pending blocks `run` (contiguous block numbers) in one direct write.
    fn write_run(&mut self, run: &[u64], dsync: bool) -> Result<(), WalError> {
        self.just_synced = false;
        let p = self.block as usize;
        let first = run[0];
        let mut buf = AlignedBuf::zeroed(run.len() * p);
        for (i, b) in run.iter().enumerate() {
            buf[i * p..(i + 1) * p].copy_from_slice(&self.pending[b].data);
        }
        self.io
            .write_at(&buf, first * p as u64, dsync)
            .map_err(|e| WalError::io(IoOp::Write, "direct write of WAL blocks", e))?;
        bump(&self.counters.direct_writes, 1);
        bump(&self.counters.direct_write_bytes, buf.len() as u64);
        if dsync {
            bump(&self.counters.dsync_writes, 1);
        }
        if first == 0 {
            bump(&self.counters.header_writes, 1);
            if let Decoded::Waldio(hb) = HeaderBlock::decode(&buf[..p]) {
                self.header = hb.wal_header;
                // A new epoch: frames of the old one are stale from here on.
                self.written_hwm = 0;
            }
        }
        let last = run[run.len() - 1];
        self.written_hwm = self.written_hwm.max(last);
        Ok(())
    }

    /// `fdatasync` of the WAL, with the sync hook told before and after.
    fn fdatasync(&mut self) -> std::io::Result<()> {
        if let Some(h) = self.sync_hook.as_mut() {
            h(SyncEdge::Before);
        }
        let r = if self.opts.canary_flush_only {
            self.io.flush_cache_only()
        } else {
            self.io.sync_data()
        };
        if let Some(h) = self.sync_hook.as_mut() {
            h(SyncEdge::After);
        }
        r
    }

    fn sync_data(&mut self) -> Result<(), WalError> {
        if self.opts.canary_skip_sync {
            return Ok(());
        }
        self.fdatasync()
            .map_err(|e| WalError::io(IoOp::Sync, "fdatasync of the WAL", e))?;
        self.unsynced_commits = false;
        bump(&self.counters.wal_syncs, 1);
        Ok(())
    }

    /// `xSync`: write what is pending and make the WAL durable.
    pub fn sync(&mut self) -> Result<(), WalError> {
        let mut synced = self.flush()?;
        if !synced && (self.opts.sync != SyncOption::Fua || self.opts.canary_skip_sync) {
            self.sync_data()?;
            synced = !self.opts.canary_skip_sync;
        }
        self.just_synced = synced;
        Ok(())
    }

    /// `xSync` right after a commit frame, on the committing connection's handle: the commit's
    /// sync, which the durability option has already decided (`full`: synced in the commit;
    /// `fua`: its write was durable; `normal` and group sync: no sync per commit).
    pub fn commit_sync(&mut self) -> Result<(), WalError> {
        Ok(())
    }

    /// Before a checkpoint copies frames into the database: sync the commits whose sync the
    /// option skipped (`normal`, group sync), with any group still buffered. Under `full` and
    /// `fua` this process's commits are durable, but the frames copied may be another
    /// process's, and processes may differ in their option: a `normal` process's frames are
    /// made durable here (one `fdatasync`; a `fua` commit flushes only its own writes, and
    /// another process may commit between this one's commit and its checkpoint) — unless the
    /// checkpoint's own `xSync` just did: the frames it copies were all written before it.
    pub fn sync_owed(&mut self) -> Result<(), WalError> {
        if self.unsynced_commits || self.buffered_commits > 0 {
            return self.sync();
        }
        // Good for one checkpoint: at `synchronous=OFF` the next one has no `xSync` of its own.
        let just_synced = std::mem::take(&mut self.just_synced);
        if self.opts.sync != SyncOption::Normal && !just_synced {
            self.sync_data()?;
        }
        Ok(())
    }

    /// SQLite released the WAL write lock: the blocks of a transaction that ended without a
    /// commit frame (rolled back after spilling frames) are dropped, never written later.
    pub fn drop_uncommitted(&mut self) {
        self.pending.retain(|_, pb| pb.committed);
    }

    /// A logical read. Bytes past the end read as zero and give `Short`.
    pub fn read(&mut self, off: u64, buf: &mut [u8]) -> Result<ReadOutcome, WalError> {
        bump(&self.counters.read_calls, 1);
        self.read_logical(off, buf)
    }

    /// The logical WAL header SQLite would read now (`None`: the WAL is logically absent): the
    /// one staged in this process, else the header block as last read — read again from disk
    /// with `refresh` (another process may have started a new epoch since).
    pub fn logical_header(
        &mut self,
        refresh: bool,
    ) -> Result<Option<[u8; WAL_HEADER_BYTES]>, WalError> {
        if refresh {
            self.refresh_header()?;
        }
        Ok(self.current_header())
    }

    /// Frame `i` (from 1: its 24-byte header, then the page) as SQLite would read it now, for
    /// a check made outside SQLite's reads (not counted as one); `None` while the WAL is absent,
    /// and for a frame past the end of the file.
    pub fn frame(&mut self, i: u64) -> Result<Option<Vec<u8>>, WalError> {
        if i == 0 || self.current_header().is_none() || self.block == 0 {
            return Ok(None);
        }
        let p = u64::from(self.block);
        let off = WAL_HEADER_BYTES as u64 + (i - 1) * (p + FRAME_HEADER_BYTES as u64);
        let mut frame = vec![0u8; FRAME_HEADER_BYTES + self.block as usize];
        Ok(match self.read_logical(off, &mut frame)? {
            ReadOutcome::Full => Some(frame),
            ReadOutcome::Short => None,
        })
    }

    fn read_logical(&mut self, off: u64, buf: &mut [u8]) -> Result<ReadOutcome, WalError> {
        if off < WAL_HEADER_BYTES as u64 || self.block == 0 || self.current_header().is_none() {
            // Another process may have started the WAL since this one last read its header
            // block: SQLite reads a frame because the wal-index (shared memory) says it is
            // there, whatever this process saw of the file before.
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
                        .map_err(|e| WalError::io(IoOp::Read, "direct read of a WAL block", e))?;
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
        self.flush().map(|_| ())
    }
}

#[cfg(test)]
mod tests;
