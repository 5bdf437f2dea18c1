//! Unit tests of the logical WAL over an in-memory file.

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
    fn set_len(&mut self, len: u64) -> std::io::Result<()> {
        self.data.resize(len as usize, 0);
        Ok(())
    }
}

/// A [`MemIo`] whose writes `refuse` may fail with an errno (by offset and length), on a
/// filesystem that claims `free` bytes free (`None`: not known, as [`MemIo`]).
struct Refusing {
    mem: MemIo,
    refuse: Box<dyn Fn(u64, usize) -> Option<i32> + Send>,
    free: Option<u64>,
}

impl Refusing {
    fn new(refuse: impl Fn(u64, usize) -> Option<i32> + Send + 'static, free: Option<u64>) -> Self {
        Refusing {
            mem: MemIo {
                data: Vec::new(),
                align: 512,
                syncs: 0,
            },
            refuse: Box::new(refuse),
            free,
        }
    }
}

impl WalIo for Refusing {
    fn read_at(&mut self, buf: &mut [u8], off: u64) -> std::io::Result<usize> {
        self.mem.read_at(buf, off)
    }
    fn write_at(&mut self, buf: &[u8], off: u64, d: bool) -> std::io::Result<()> {
        match (self.refuse)(off, buf.len()) {
            Some(errno) => Err(std::io::Error::from_raw_os_error(errno)),
            None => self.mem.write_at(buf, off, d),
        }
    }
    fn sync_data(&mut self) -> std::io::Result<()> {
        self.mem.sync_data()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.mem.len()
    }
    fn dio_align(&self) -> u32 {
        self.mem.dio_align()
    }
    fn set_len(&mut self, len: u64) -> std::io::Result<()> {
        self.mem.set_len(len)
    }
    fn free_bytes(&self) -> std::io::Result<Option<u64>> {
        Ok(self.free)
    }
}

fn wal_header(page: u32) -> [u8; 32] {
    let mut h = [0u8; 32];
    h[..4].copy_from_slice(&0x377f_0682u32.to_be_bytes());
    h[8..12].copy_from_slice(&page.to_be_bytes());
    h
}

/// A WAL on an in-memory file with direct-I/O alignment `align` and options `opts`.
fn state_of(align: u32, opts: WaldioOptions) -> WalState<MemIo> {
    let io = MemIo {
        data: Vec::new(),
        align,
        syncs: 0,
    };
    WalState::open(io, opts, Arc::default()).unwrap()
}

/// 512-byte alignment, options `opts`.
fn state_with(opts: WaldioOptions) -> WalState<MemIo> {
    state_of(512, opts)
}

/// Alignment `align`, the default options.
fn state(align: u32) -> WalState<MemIo> {
    state_of(align, WaldioOptions::default())
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
    // Preallocated once with one explicit sync, before the first frame was written; then
    // the commit's own fdatasync (`full`), and the sync SQLite follows it with adds none.
    assert!(s.io.data.len() >= 1025 * 4096);
    assert_eq!(s.io.syncs, 2);
    s.commit_sync().unwrap();
    assert_eq!(s.io.syncs, 2);
}

/// Frame `n`'s 24-byte header (page number `pgno`; a commit frame if `commit`).
fn frame_header(pgno: u32, commit: bool) -> [u8; 24] {
    let mut fh = [0u8; 24];
    fh[..4].copy_from_slice(&pgno.to_be_bytes());
    if commit {
        fh[4..8].copy_from_slice(&9u32.to_be_bytes());
    }
    fh
}

fn write_frame<I: WalIo>(s: &mut WalState<I>, n: u64, pgno: u32, commit: bool, fill: u8) -> Wrote {
    let off = 32 + (n - 1) * (4096 + 24);
    s.write(off, &frame_header(pgno, commit)).unwrap();
    let mut page = vec![fill; 4096];
    page[4096 - 24..].fill(0);
    s.write(off + 24, &page).unwrap()
}

/// One in-memory file two states share, as two processes share the WAL file.
#[derive(Clone)]
struct SharedMem(Arc<std::sync::Mutex<MemIo>>);

impl WalIo for SharedMem {
    fn read_at(&mut self, buf: &mut [u8], off: u64) -> std::io::Result<usize> {
        self.0.lock().unwrap().read_at(buf, off)
    }
    fn write_at(&mut self, buf: &[u8], off: u64, dsync: bool) -> std::io::Result<()> {
        self.0.lock().unwrap().write_at(buf, off, dsync)
    }
    fn sync_data(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap().sync_data()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.0.lock().unwrap().len()
    }
    fn dio_align(&self) -> u32 {
        self.0.lock().unwrap().dio_align()
    }
    fn set_len(&mut self, len: u64) -> std::io::Result<()> {
        self.0.lock().unwrap().set_len(len)
    }
}

/// Two processes open a WAL while it is empty; B starts it and commits frame 1; A, which
/// read nothing of it (its pages came from the database file), appends frame 2 because the
/// wal-index says frame 1 is there. A's commit is a frame of B's WAL and must be written.
#[test]
fn a_process_that_opened_the_wal_empty_appends_to_one_another_started() {
    let file = SharedMem(Arc::new(std::sync::Mutex::new(MemIo {
        data: Vec::new(),
        align: 512,
        syncs: 0,
    })));
    let open = || WalState::open(file.clone(), WaldioOptions::default(), Arc::default()).unwrap();
    let (mut a, mut b) = (open(), open());
    b.write(0, &wal_header(4096)).unwrap();
    assert!(write_frame(&mut b, 1, 2, true, 0x11).commit);
    assert!(write_frame(&mut a, 2, 3, true, 0x22).commit);
    let mut back = vec![0u8; 24 + 4096];
    assert_eq!(
        b.read(32 + (4096 + 24), &mut back).unwrap(),
        ReadOutcome::Full
    );
    assert_eq!(back[24], 0x22);
}

/// After another process restarted the log (new salts), this process's next commit is one direct
/// write without read-backs: the blocks it wrote before were of the old log, not blocks of this
/// one already on disk. They used to count as such until this process itself wrote a header
/// block, so each frame's header and page went out apart with a read-back between (a probe,
/// 2026-11-28: 6 writes and 6 reads for a 3-page commit, for good).
#[test]
fn after_another_process_restarts_the_log_a_commit_is_one_write() {
    let file = SharedMem(Arc::new(std::sync::Mutex::new(MemIo {
        data: Vec::new(),
        align: 512,
        syncs: 0,
    })));
    let counters = Arc::new(AtomicWaldioCounters::default());
    let mut a = WalState::open(file.clone(), WaldioOptions::default(), counters.clone()).unwrap();
    let mut b = WalState::open(file, WaldioOptions::default(), Arc::default()).unwrap();
    a.write(0, &wal_header(4096)).unwrap();
    for n in 1..=4 {
        write_frame(&mut a, n, n as u32 + 1, n == 4, 0x11);
    }
    let salts = [1, 2, 3, 4, 5, 6, 7, 8];
    let mut restarted = wal_header(4096);
    restarted[16..24].copy_from_slice(&salts);
    b.write(0, &restarted).unwrap();
    let frame = |s: &mut WalState<SharedMem>, n: u64, pgno: u32, commit: bool| {
        let off = 32 + (n - 1) * (4096 + 24);
        let mut fh = frame_header(pgno, commit);
        fh[8..16].copy_from_slice(&salts);
        s.write(off, &fh).unwrap();
        let mut page = vec![0x22; 4096];
        page[4096 - 24..].fill(0);
        s.write(off + 24, &page).unwrap()
    };
    assert!(frame(&mut b, 1, 2, true).commit);
    let io = |c: &AtomicWaldioCounters| {
        let get = |f: &std::sync::atomic::AtomicU64| f.load(std::sync::atomic::Ordering::Relaxed);
        (get(&c.direct_writes), get(&c.rmw_reads))
    };
    let before = io(&counters);
    frame(&mut a, 2, 3, false);
    frame(&mut a, 3, 4, false);
    assert!(frame(&mut a, 4, 5, true).commit);
    let after = io(&counters);
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (1, 0),
        "direct writes and read-backs of one 3-frame commit"
    );
}

/// A log made absent (state 0: `journal_mode` handed back, or truncated) keeps its block
/// size; frames written into it with no WAL header are frames SQLite appends to a WAL it
/// believes exists elsewhere — another connection's, through another VFS, sharing this
/// database's wal-index. No recovery would find them: the write is refused, so the commit
/// fails instead of being acknowledged and lost.
#[test]
fn frames_into_a_log_with_no_header_are_refused_not_acknowledged() {
    let mut s = state(512);
    s.write(0, &wal_header(4096)).unwrap();
    write_frame(&mut s, 1, 2, true, 0x11);
    s.mark_absent().unwrap();
    assert!(!s.exists().unwrap());
    let off = 32 + (4096 + 24);
    let err = s.write(off, &frame_header(3, false)).unwrap_err();
    assert!(err.to_string().contains("no WAL header"), "{err}");
    // A new WAL (its header first) is written as ever.
    s.write(0, &wal_header(4096)).unwrap();
    assert!(write_frame(&mut s, 1, 2, true, 0x22).commit);
}

#[test]
fn normal_leaves_the_commit_unsynced_until_a_checkpoint_asks() {
    let mut s = state_with(WaldioOptions {
        sync: SyncOption::Normal,
        ..WaldioOptions::default()
    });
    s.write(0, &wal_header(4096)).unwrap();
    assert!(write_frame(&mut s, 1, 2, true, 0x11).commit);
    assert_eq!(s.io.syncs, 1, "the preallocation's sync only");
    s.commit_sync().unwrap();
    assert_eq!(s.io.syncs, 1, "no sync per commit with normal");
    s.sync_owed().unwrap();
    assert_eq!(s.io.syncs, 2, "the checkpoint's backfill waits for a sync");
    s.sync_owed().unwrap();
    assert_eq!(s.io.syncs, 2, "nothing owed twice");
}

#[test]
fn frames_of_a_rolled_back_transaction_are_dropped_at_the_end_of_it() {
    let mut s = state(512);
    s.write(0, &wal_header(4096)).unwrap();
    assert!(write_frame(&mut s, 1, 2, true, 0x11).commit);
    // A spill: frames 2 and 3 without a commit frame, then SQLite rolls back.
    assert!(!write_frame(&mut s, 2, 3, false, 0x22).commit);
    assert!(!write_frame(&mut s, 3, 4, false, 0x33).commit);
    assert_eq!(s.pending.len(), 2);
    s.drop_uncommitted();
    assert!(s.pending.is_empty());
    // Another process commits frame 2; this one's next flush writes nothing over it.
    let theirs = 2 * 4096;
    s.io.data[theirs..theirs + 4].copy_from_slice(&[0x44; 4]);
    s.close().unwrap();
    assert_eq!(&s.io.data[theirs..theirs + 4], &[0x44; 4]);
}

#[test]
fn a_failed_write_leaves_no_state_behind() {
    // Every write but the first block's fails, as a file-size limit refuses an extension.
    let io = Refusing::new(|off, _| (off > 0).then_some(libc::EFBIG), None);
    let mut s = WalState::open(io, WaldioOptions::default(), Arc::default()).unwrap();
    s.write(0, &wal_header(4096)).unwrap();
    let off = 32;
    s.write(off, &frame_header(2, true)).unwrap();
    let mut page = vec![0x55u8; 4096];
    page[4096 - 24..].fill(0);
    assert!(s.write(off + 24, &page).is_err(), "the preallocation fails");
    assert_eq!(
        s.io.mem.data.len(),
        0,
        "what the failed extension wrote is removed"
    );
    // The limit passes: the same connection commits, as stock SQLite would.
    s.io.refuse = Box::new(|_, _| None);
    s.write(0, &wal_header(4096)).unwrap();
    assert!(write_frame(&mut s, 1, 2, true, 0x66).commit);
    let mut back = vec![0u8; 4096];
    assert_eq!(s.read(off + 24, &mut back).unwrap(), ReadOutcome::Full);
    assert_eq!(back[0], 0x66);
}

/// A filesystem that counts as free blocks it will not give (as root, ext4's reserved
/// clusters: `f_bfree` holds them, and root cannot allocate them either): the first
/// preallocation's 4 MiB fails with ENOSPC, and the commit must still be made in what the write
/// needs, as stock SQLite's would. (A probe of 2026-11-28: as root on an ext4 with 600 KiB or
/// 3,000 KiB truly free, stock made 92 and 488 commits, waldio 0.)
#[test]
fn a_preallocation_refused_for_space_is_cut_to_the_write_and_the_commit_made() {
    /// Bytes the file may hold; the filesystem claims ten times as much free.
    const ROOM: u64 = 64 << 10;
    let io = Refusing::new(
        |off, len| (off + len as u64 > ROOM).then_some(libc::ENOSPC),
        Some(10 * ROOM + (64 << 20)),
    );
    let mut s = WalState::open(io, WaldioOptions::default(), Arc::default()).unwrap();
    s.write(0, &wal_header(4096)).unwrap();
    assert!(write_frame(&mut s, 1, 2, true, 0x66).commit, "committed");
    let mut back = vec![0u8; 4096];
    assert_eq!(s.read(32 + 24, &mut back).unwrap(), ReadOutcome::Full);
    assert_eq!(back[0], 0x66);
    assert!(
        s.io.mem.data.len() as u64 <= ROOM,
        "within what the disk gives"
    );
    let short = &s.counters.short_extensions;
    assert_eq!(short.load(std::sync::atomic::Ordering::Relaxed), 1);
}

/// The group timer (another thread) can write the buffer between SQLite's two writes of
/// one frame, its header and its page: the page must still complete the commit.
#[test]
fn a_group_write_between_a_commit_frames_header_and_page_keeps_the_commit() {
    let mut s = state_with(WaldioOptions {
        sync: SyncOption::Normal,
        group: Some(crate::options::GroupSync {
            frame_buffer_bytes: 1 << 20,
            interval_ms: 60_000,
        }),
        ..WaldioOptions::default()
    });
    s.write(0, &wal_header(4096)).unwrap();
    assert!(write_frame(&mut s, 1, 2, true, 0x11).commit);
    assert_eq!(s.buffered_commits, 1);
    let off = 32 + (4096 + 24);
    s.write(off, &frame_header(3, true)).unwrap();
    // The interval passes now, before the page: the timer writes what is buffered.
    s.oldest_commit = Instant::now().checked_sub(std::time::Duration::from_secs(120));
    s.group_tick().unwrap();
    assert_eq!(s.buffered_commits, 0, "the first commit was written");
    let mut page = vec![0x22u8; 4096];
    page[4096 - 24..].fill(0);
    let wrote = s.write(off + 24, &page).unwrap();
    assert!(wrote.commit, "the page completes frame 2, a commit frame");
    assert_eq!(
        s.buffered_commits, 1,
        "the second commit waits for its group"
    );
    assert_eq!(
        s.counters
            .commits
            .load(std::sync::atomic::Ordering::Relaxed),
        2
    );
    s.oldest_commit = Instant::now().checked_sub(std::time::Duration::from_secs(120));
    s.group_tick().unwrap();
    assert!(s.pending.is_empty());
    let mut back = vec![0u8; 24 + 4096];
    assert_eq!(s.read(off, &mut back).unwrap(), ReadOutcome::Full);
    assert_eq!(&back[..24], &frame_header(3, true));
    assert_eq!(&back[24..], &page[..]);
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

#[test]
fn a_first_page_without_the_reserve_is_refused_before_anything_is_written() {
    let mut s = state(512);
    s.write(0, &wal_header(4096)).unwrap();
    s.sync().unwrap();
    let before = s.io.data.clone();
    // Page 1 of a database stock SQLite made, as a backup copies it: reserve 0, its last 24
    // bytes zero (no cell reaches them), so only the header tells.
    let fh = frame_header(1, true);
    s.write(32, &fh).unwrap();
    let mut page = vec![0u8; 4096];
    page[..16].copy_from_slice(b"SQLite format 3\0");
    page[16..18].copy_from_slice(&4096u16.to_be_bytes());
    page[20] = 0;
    let err = s.write(56, &page).unwrap_err();
    assert!(
        matches!(
            err,
            WalError::BackupWithoutReserve {
                frame: 1,
                reserve: 0
            }
        ),
        "{err}"
    );
    assert!(s.pending.is_empty(), "the refused frame is dropped");
    assert_eq!(s.io.data, before);
    // The same page with waldio's reserve is taken.
    page[20] = 24;
    s.write(32, &fh).unwrap();
    assert!(s.write(56, &page).unwrap().commit);
}

#[test]
fn an_einval_from_a_direct_transfer_says_the_filesystem_refuses_direct_io() {
    let einval = || std::io::Error::from_raw_os_error(libc::EINVAL);
    let write = WalError::io(IoOp::Write, "preallocating the WAL", einval()).to_string();
    assert!(
        write.contains("O_DIRECT") && write.contains("fix:"),
        "{write}"
    );
    // Not for other calls, nor other errors.
    let stat = WalError::io(IoOp::Stat, "fstat of the WAL", einval()).to_string();
    assert!(!stat.contains("O_DIRECT"), "{stat}");
    let eio = std::io::Error::from_raw_os_error(libc::EIO);
    let other = WalError::io(IoOp::Write, "writing a WAL frame", eio).to_string();
    assert!(!other.contains("O_DIRECT"), "{other}");
}
