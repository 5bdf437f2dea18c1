//! The recording disk's filesystem: one root directory of regular files held in memory as
//! [`SparseImage`]s (all-zero 4 KiB blocks are not stored, so a 1 GiB sparse image costs
//! nothing until written), served over FUSE by one thread.
//!
//! While a file is *logged* ([`Store::start_log`]) every write to it is appended to the log
//! with its data before it is applied, and every `fsync` of it is appended as a flush; nothing
//! else is logged. The daemon answers one request at a time and appends under the store's
//! mutex, which the workload's marks take too, so the log holds one total order: the order in
//! which the requests reached the daemon.
//!
//! The filesystem never touches any other file: it cannot block on the filesystem under test
//! above it, except through memory reclaim, which `PR_SET_IO_FLUSHER` keeps off that path.
//! A request it cannot satisfy is answered with an error (`EIO` for a logged write the log
//! format cannot hold), never with a panic.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

use super::log::{BLOCK_BYTES, BlockLog, LogOp, Mark, SECTOR_BYTES, SparseImage};

/// How long the kernel may cache names and attributes: only the kernel changes them, through
/// us, so its caches stay right.
const TTL: Duration = Duration::from_secs(1);
/// What statfs reports as the filesystem's size: the images are sparse and in memory, so this
/// only has to exceed any image joj makes.
const REPORTED_TOTAL_BYTES: u64 = 1 << 50;

/// One regular file.
#[derive(Debug)]
struct Node {
    /// Content; `size_bytes` is the file's length (any value, not only whole blocks).
    data: SparseImage,
    mode: u16,
    mtime: SystemTime,
    /// Names pointing at it (0 or 1: no hard links).
    nlink: u32,
    /// Open handles; an unlinked node is freed when the last one is released.
    open: u32,
}

/// The logged file and its log so far.
#[derive(Debug)]
struct Logging {
    ino: u64,
    log: BlockLog,
}

/// Everything the filesystem holds, shared by the daemon and the [`super::RecordingDisk`].
#[derive(Debug)]
pub(crate) struct Store {
    nodes: BTreeMap<u64, Node>,
    names: BTreeMap<OsString, u64>,
    next_ino: u64,
    logging: Option<Logging>,
    root_mtime: SystemTime,
}

/// Why the store refused to start or stop a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LogRefusal {
    NoSuchFile,
    AlreadyLogging,
    NotLogging,
    /// The file's length is not a whole number of blocks.
    NotBlockMultiple(u64),
}

pub(crate) type SharedStore = Arc<Mutex<Store>>;

/// Locks the store; a panic elsewhere while holding it leaves every field consistent (each
/// change is one insert, remove or write), so a poisoned lock is still used.
pub(crate) fn lock(store: &SharedStore) -> MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Store {
    pub(crate) fn new() -> SharedStore {
        Arc::new(Mutex::new(Store {
            nodes: BTreeMap::new(),
            names: BTreeMap::new(),
            next_ino: INodeNo::ROOT.0 + 1,
            logging: None,
            root_mtime: SystemTime::now(),
        }))
    }

    /// Starts logging file `name`: its current content becomes the log's base.
    pub(crate) fn start_log(&mut self, name: &OsStr) -> Result<(), LogRefusal> {
        if self.logging.is_some() {
            return Err(LogRefusal::AlreadyLogging);
        }
        let ino = *self.names.get(name).ok_or(LogRefusal::NoSuchFile)?;
        let base = self.nodes[&ino].data.clone();
        if !base.size_bytes.is_multiple_of(BLOCK_BYTES) {
            return Err(LogRefusal::NotBlockMultiple(base.size_bytes));
        }
        self.logging = Some(Logging {
            ino,
            log: BlockLog {
                base,
                ..BlockLog::default()
            },
        });
        Ok(())
    }

    /// Appends a workload mark; without a log running there is nothing to mark.
    pub(crate) fn mark(&mut self, m: Mark) {
        if let Some(l) = &mut self.logging {
            l.log.ops.push(LogOp::Mark(m));
        }
    }

    pub(crate) fn take_log(&mut self) -> Result<BlockLog, LogRefusal> {
        self.logging
            .take()
            .map(|l| l.log)
            .ok_or(LogRefusal::NotLogging)
    }

    /// The current content of file `name`, if it exists.
    pub(crate) fn content(&self, name: &OsStr) -> Option<SparseImage> {
        Some(self.nodes[self.names.get(name)?].data.clone())
    }

    /// Bytes of file data held (stored blocks) and of logged write data.
    pub(crate) fn held_bytes(&self) -> (u64, u64) {
        let data = self
            .nodes
            .values()
            .map(|n| n.data.blocks.len() as u64 * BLOCK_BYTES)
            .sum();
        let logged = self.logging.as_ref().map_or(0, |l| {
            l.log
                .ops
                .iter()
                .map(|op| match op {
                    LogOp::Write { data, .. } => data.len() as u64,
                    _ => 0,
                })
                .sum::<u64>()
                + l.log.base.blocks.len() as u64 * BLOCK_BYTES
        });
        (data, logged)
    }

    fn logged(&self, ino: u64) -> bool {
        self.logging.as_ref().is_some_and(|l| l.ino == ino)
    }

    fn attr(&self, ino: u64) -> Option<FileAttr> {
        if ino == INodeNo::ROOT.0 {
            return Some(attr(
                ino,
                0,
                0,
                FileType::Directory,
                0o755,
                2,
                self.root_mtime,
            ));
        }
        let n = self.nodes.get(&ino)?;
        Some(attr(
            ino,
            n.data.size_bytes,
            n.data.blocks.len() as u64 * (BLOCK_BYTES / 512),
            FileType::RegularFile,
            n.mode,
            n.nlink,
            n.mtime,
        ))
    }

    /// Applies a write from the kernel, logging it first when its file is logged.
    fn write(&mut self, ino: u64, offset: u64, data: &[u8]) -> Result<(), Errno> {
        let end = offset.checked_add(data.len() as u64).ok_or(Errno::EFBIG)?;
        let logged = self.logged(ino);
        let node = self.nodes.get_mut(&ino).ok_or(Errno::ENOENT)?;
        if logged {
            // The loop driver writes whole sectors within the device; anything else cannot be
            // a device write and the log format cannot hold it.
            let whole = offset.is_multiple_of(SECTOR_BYTES)
                && (data.len() as u64).is_multiple_of(SECTOR_BYTES);
            if !whole || data.is_empty() || end > node.data.size_bytes {
                return Err(Errno::EIO);
            }
            if let Some(l) = &mut self.logging {
                l.log.ops.push(LogOp::Write {
                    offset_bytes: offset,
                    data: data.to_vec(),
                });
            }
        }
        node.data.write(offset, data);
        node.data.size_bytes = node.data.size_bytes.max(end);
        node.mtime = SystemTime::now();
        Ok(())
    }

    fn set_len(&mut self, ino: u64, len: u64) -> Result<(), Errno> {
        if self.logged(ino) {
            // A device does not change size under its filesystem.
            return Err(Errno::EIO);
        }
        let node = self.nodes.get_mut(&ino).ok_or(Errno::ENOENT)?;
        let d = &mut node.data;
        if len < d.size_bytes {
            d.blocks.retain(|&i, _| i * BLOCK_BYTES < len);
            let tail = len % BLOCK_BYTES;
            if tail != 0 {
                d.write(len, &vec![0u8; (BLOCK_BYTES - tail) as usize]);
            }
        }
        d.size_bytes = len;
        node.mtime = SystemTime::now();
        Ok(())
    }

    fn flush_device(&mut self, ino: u64) -> Result<(), Errno> {
        if !self.nodes.contains_key(&ino) {
            return Err(Errno::ENOENT);
        }
        if let Some(l) = self.logging.as_mut().filter(|l| l.ino == ino) {
            l.log.ops.push(LogOp::Flush);
        }
        Ok(())
    }

    /// Drops a node nobody names or has open.
    fn reap(&mut self, ino: u64) {
        if self
            .nodes
            .get(&ino)
            .is_some_and(|n| n.nlink == 0 && n.open == 0)
        {
            self.nodes.remove(&ino);
        }
    }
}

fn attr(
    ino: u64,
    size: u64,
    blocks: u64,
    kind: FileType,
    perm: u16,
    nlink: u32,
    mtime: SystemTime,
) -> FileAttr {
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks,
        atime: mtime,
        mtime,
        ctime: mtime,
        crtime: mtime,
        kind,
        perm,
        nlink,
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: BLOCK_BYTES as u32,
        flags: 0,
    }
}

/// The FUSE side of a [`Store`].
pub(crate) struct MemFs {
    store: SharedStore,
    /// Whether files are opened with `FOPEN_DIRECT_IO` (no FUSE page cache for them).
    direct_io: bool,
}

impl MemFs {
    pub(crate) fn new(store: SharedStore, direct_io: bool) -> Self {
        Self { store, direct_io }
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        become_io_flusher();
        lock(&self.store)
    }

    fn open_flags(&self) -> FopenFlags {
        if self.direct_io {
            FopenFlags::FOPEN_DIRECT_IO
        } else {
            FopenFlags::empty()
        }
    }
}

thread_local! {
    static IO_FLUSHER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the serving thread as an I/O flusher (`PR_SET_IO_FLUSHER`, Linux 5.6): its memory
/// allocations then never wait for writeback, which could be the filesystem above the loop
/// device waiting for this very thread. Best effort: without it the deadlock needs memory
/// pressure severe enough to reclaim dirty pages.
fn become_io_flusher() {
    const PR_SET_IO_FLUSHER: libc::c_int = 57;
    IO_FLUSHER.with(|done| {
        if !done.get() {
            // SAFETY: prctl with integer arguments only; it changes flags of this thread.
            unsafe { libc::prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) };
            done.set(true);
        }
    });
}

fn reply_attr(store: &Store, ino: INodeNo, reply: ReplyAttr) {
    match store.attr(ino.0) {
        Some(a) => reply.attr(&TTL, &a),
        None => reply.error(Errno::ENOENT),
    }
}

impl Filesystem for MemFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let store = self.store();
        let found = (parent == INodeNo::ROOT)
            .then(|| store.names.get(name))
            .flatten()
            .and_then(|&ino| store.attr(ino));
        match found {
            Some(a) => reply.entry(&TTL, &a, Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        reply_attr(&self.store(), ino, reply);
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut store = self.store();
        if let Some(len) = size
            && let Err(e) = store.set_len(ino.0, len)
        {
            return reply.error(e);
        }
        if let (Some(m), Some(n)) = (mode, store.nodes.get_mut(&ino.0)) {
            n.mode = (m & 0o7777) as u16;
        }
        reply_attr(&store, ino, reply);
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut store = self.store();
        let Some(ino) = (parent == INodeNo::ROOT)
            .then(|| store.names.remove(name))
            .flatten()
        else {
            return reply.error(Errno::ENOENT);
        };
        if let Some(n) = store.nodes.get_mut(&ino) {
            n.nlink = 0;
        }
        store.reap(ino);
        store.root_mtime = SystemTime::now();
        reply.ok();
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let mut store = self.store();
        match store.nodes.get_mut(&ino.0) {
            Some(n) => {
                n.open += 1;
                reply.opened(FileHandle(ino.0), self.open_flags());
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let mut store = self.store();
        if parent != INodeNo::ROOT {
            return reply.error(Errno::ENOENT);
        }
        if mode & libc::S_IFMT != libc::S_IFREG {
            return reply.error(Errno::EPERM);
        }
        if store.names.contains_key(name) {
            return reply.error(Errno::EEXIST);
        }
        let ino = store.next_ino;
        store.next_ino += 1;
        let now = SystemTime::now();
        store.nodes.insert(
            ino,
            Node {
                data: SparseImage::zeroed(0),
                mode: (mode & !umask & 0o7777) as u16,
                mtime: now,
                nlink: 1,
                open: 1,
            },
        );
        store.names.insert(name.to_os_string(), ino);
        store.root_mtime = now;
        match store.attr(ino) {
            Some(a) => reply.created(&TTL, &a, Generation(0), FileHandle(ino), self.open_flags()),
            None => reply.error(Errno::EIO),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let store = self.store();
        let Some(n) = store.nodes.get(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let end = offset
            .saturating_add(u64::from(size))
            .min(n.data.size_bytes);
        let mut buf = vec![0u8; end.saturating_sub(offset) as usize];
        n.data.read(offset, &mut buf);
        reply.data(&buf);
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let Ok(len) = u32::try_from(data.len()) else {
            return reply.error(Errno::EIO);
        };
        match self.store().write(ino.0, offset, data) {
            Ok(()) => reply.written(len),
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // A close, not a cache flush: the data is already in the store.
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let mut store = self.store();
        if let Some(n) = store.nodes.get_mut(&ino.0) {
            n.open = n.open.saturating_sub(1);
        }
        store.reap(ino.0);
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.store().flush_device(ino.0) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let store = self.store();
        let dots = [
            (INodeNo::ROOT, FileType::Directory, OsStr::new(".")),
            (INodeNo::ROOT, FileType::Directory, OsStr::new("..")),
        ];
        let files = store
            .names
            .iter()
            .map(|(name, &i)| (INodeNo(i), FileType::RegularFile, name.as_os_str()));
        for (i, (ino, kind, name)) in dots.into_iter().chain(files).enumerate() {
            let next = i as u64 + 1;
            if next <= offset {
                continue;
            }
            if reply.add(ino, next, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let blocks = REPORTED_TOTAL_BYTES / BLOCK_BYTES;
        let free = blocks.saturating_sub(self.store().held_bytes().0 / BLOCK_BYTES);
        reply.statfs(
            blocks,
            free,
            free,
            1 << 20,
            1 << 20,
            BLOCK_BYTES as u32,
            255,
            BLOCK_BYTES as u32,
        );
    }
}
