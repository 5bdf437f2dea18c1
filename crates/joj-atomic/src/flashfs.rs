//! The flash file layer: SQLite's files as fixed regions of a transactional device's logical
//! pages, each file's size in its own inode page. Format and crash argument:
//! `docs/formats/xftl.md` §2.
//!
//! Hand-written because no maintained crate offers a file layer whose metadata changes inside
//! the device's own transactions (that is the point of X-FTL: no filesystem journal).

use joj_device::{DeviceError, Tid, TransactionalDevice};

/// The superblock and inode pages are the file layer's metadata (i-FTL keeps them in NVM).
const META: joj_device::WriteKind = joj_device::WriteKind::Metadata;

const SUPER_MAGIC: &[u8; 8] = b"jojFFS\0\x01";
const INODE_MAGIC: &[u8; 8] = b"jojINODE";
const VERSION: u32 = 1;
const MAX_NAME: usize = 512;

/// What the file layer was asked to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsOptions {
    /// Bytes of the device the file layer owns, from its start.
    pub fs_bytes: u64,
    pub slots: u32,
}

impl Default for FsOptions {
    fn default() -> Self {
        FsOptions {
            fs_bytes: 1 << 30,
            slots: 16,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(
        "not a joj flash file layer: {0}; format the device first (joj_atomic::FlashFs::format)"
    )]
    NotFormatted(String),
    #[error("flash file layer corrupt: {0}")]
    Corrupt(String),
    #[error(
        "flash file layer corrupt: the inode of slot {slot} is unreadable ({source}); the device \
         was not written by this file layer, or was damaged: format it again"
    )]
    CorruptInode { slot: u32, source: InodeError },
    #[error("bad flash file layer geometry: {0}")]
    Geometry(String),
    #[error(
        "{name}: file would grow to {want} bytes, beyond its region of {limit} bytes; format the \
         device with fewer slots or a larger file layer"
    )]
    FileTooLarge { name: String, want: u64, limit: u64 },
    #[error("all {slots} file slots are in use; format the device with more slots")]
    NoFreeSlot { slots: u32 },
    #[error("no such file: {0}")]
    NoSuchFile(String),
    #[error("file name longer than {MAX_NAME} bytes: {0}")]
    NameTooLong(String),
    #[error("{0} is already in a batch (device transaction)")]
    AlreadyInBatch(String),
    #[error("{0} exists already")]
    Exists(String),
}

joj_vfs::counter_set! {
    FsCounters;
    db_page_writes: "Data pages written for files whose name ends in neither `-journal` nor `-wal`.",
    journal_page_writes: "Data pages written for rollback journals (`-journal`, the fallback path).",
    inode_page_writes: "Inode pages written (file create, delete, size changes): the filesystem's metadata.",
    page_reads: "Pages read from the device (host page cache misses and read-modify-writes).",
    flushes: "Device flushes (`xSync` outside a batch with plain writes to make durable).",
    batch_commits: "Batches (device transactions of SQLite's) committed.",
    batch_aborts: "Batches aborted.",
    inode_commits: "Device transactions of the layer's own for inode changes.",
}

/// Why an inode page does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InodeError {
    #[error("bad magic {found:02x?}")]
    BadMagic { found: [u8; 8] },
    #[error("name length {len} (at most {MAX_NAME}, and within the page)")]
    NameLength { len: usize },
    #[error("checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    ChecksumMismatch { stored: u32, computed: u32 },
    #[error("the name is not UTF-8")]
    NameNotUtf8,
}

#[derive(Debug, Clone, Default)]
struct Inode {
    in_use: bool,
    name: String,
    /// Size on the device (the inode page's).
    size: u64,
    generation: u64,
    /// Size as the host sees it (may be ahead of `size` until sync or commit).
    mem_size: u64,
    batch: Option<Tid>,
    /// `batch` is an application transaction's (`docs/formats/apptxn.md`): SQLite's batch
    /// controls and syncs do not end it, only `commit_app` / `abort_app` do.
    app: bool,
    /// The application transaction `batch` created the file: an abort frees the slot again.
    created: bool,
    /// The batch wrote the inode page already (its size changed inside the batch).
    journal: bool,
    /// Device offsets of the pages the open batch wrote (dropped from the cache on abort).
    batch_pages: Vec<u64>,
}

/// A file, by slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId(pub u32);

/// The file layer on device `D`.
#[derive(Debug)]
pub struct FlashFs<D> {
    dev: D,
    page: u64,
    slots: u32,
    region: u64,
    inodes: Vec<Inode>,
    counters: FsCounters,
    buf: Vec<u8>,
    /// Plain (non-transactional) writes or discards since the last device flush.
    unflushed: bool,
    /// The host's page cache (what the kernel's page cache is to ext4): pages by device byte
    /// offset, as the host last read or wrote them. A batch's pages are dropped again when it
    /// aborts.
    cache: std::collections::HashMap<u64, Box<[u8]>>,
}

/// Pages the host page cache holds before it starts over (128 MiB of 8 KiB pages).
const CACHE_PAGES: usize = 16384;

fn crc(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

impl<D: TransactionalDevice> FlashFs<D> {
    fn layout(dev: &D, opts: FsOptions) -> Result<(u64, u64), FsError> {
        let g = dev.geometry();
        let page = u64::from(g.optimal_write_bytes);
        if page < 4096 {
            return Err(FsError::Geometry(format!(
                "device page of {page} bytes; the file layer needs at least 4096"
            )));
        }
        if opts.fs_bytes > g.capacity_bytes {
            return Err(FsError::Geometry(format!(
                "{} bytes asked, the device has {}",
                opts.fs_bytes, g.capacity_bytes
            )));
        }
        let fs_pages = opts.fs_bytes / page;
        if opts.slots == 0 || fs_pages < 1 + 2 * u64::from(opts.slots) {
            return Err(FsError::Geometry(format!(
                "{fs_pages} pages cannot hold {} slots",
                opts.slots
            )));
        }
        Ok((page, (fs_pages - 1) / u64::from(opts.slots)))
    }

    /// Make a new, empty file layer on `dev` (durable on return).
    pub fn format(mut dev: D, opts: FsOptions) -> Result<FlashFs<D>, FsError> {
        let (page, region) = Self::layout(&dev, opts)?;
        let mut sb = vec![0u8; page as usize];
        sb[0..8].copy_from_slice(SUPER_MAGIC);
        sb[8..12].copy_from_slice(&VERSION.to_le_bytes());
        sb[12..16].copy_from_slice(&(page as u32).to_le_bytes());
        sb[16..24].copy_from_slice(&(opts.fs_bytes / page).to_le_bytes());
        sb[24..28].copy_from_slice(&opts.slots.to_le_bytes());
        let c = crc(&sb[0..32]);
        sb[32..36].copy_from_slice(&c.to_le_bytes());
        // Free every inode page (a reformatted device may hold old ones), then the superblock.
        let t = dev.begin_txn()?;
        let zero = vec![0u8; page as usize];
        for i in 0..opts.slots {
            dev.write_txn_kind(t, (1 + u64::from(i) * region) * page, &zero, META)?;
        }
        dev.write_txn_kind(t, 0, &sb, META)?;
        dev.commit_txn(t)?;
        Ok(FlashFs {
            dev,
            page,
            slots: opts.slots,
            region,
            inodes: vec![Inode::default(); opts.slots as usize],
            counters: FsCounters::default(),
            buf: vec![0; page as usize],
            unflushed: false,
            cache: Default::default(),
        })
    }

    /// Open the file layer on `dev` (after a power loss: the device's recovery ran already).
    pub fn mount(mut dev: D) -> Result<FlashFs<D>, FsError> {
        let page = u64::from(dev.geometry().optimal_write_bytes);
        let mut sb = vec![0u8; page as usize];
        dev.read(0, &mut sb)?;
        if &sb[0..8] != SUPER_MAGIC {
            return Err(FsError::NotFormatted(
                "no superblock magic at the device's first page".into(),
            ));
        }
        let stored = u32::from_le_bytes(sb[32..36].try_into().expect("4 bytes"));
        if stored != crc(&sb[0..32]) {
            return Err(FsError::Corrupt("superblock checksum mismatch".into()));
        }
        let version = u32::from_le_bytes(sb[8..12].try_into().expect("4 bytes"));
        if version != VERSION {
            return Err(FsError::NotFormatted(format!(
                "format version {version}, this build reads {VERSION}"
            )));
        }
        let p = u64::from(u32::from_le_bytes(sb[12..16].try_into().expect("4 bytes")));
        if p != page {
            return Err(FsError::Corrupt(format!(
                "made for {p}-byte pages, the device has {page}"
            )));
        }
        let fs_pages = u64::from_le_bytes(sb[16..24].try_into().expect("8 bytes"));
        let slots = u32::from_le_bytes(sb[24..28].try_into().expect("4 bytes"));
        let (_, region) = Self::layout(
            &dev,
            FsOptions {
                fs_bytes: fs_pages * page,
                slots,
            },
        )?;
        let mut fs = FlashFs {
            dev,
            page,
            slots,
            region,
            inodes: vec![Inode::default(); slots as usize],
            counters: FsCounters::default(),
            buf: vec![0; page as usize],
            unflushed: false,
            cache: Default::default(),
        };
        for i in 0..slots {
            let mut b = vec![0u8; page as usize];
            fs.dev.read(fs.inode_offset(i), &mut b)?;
            fs.inodes[i as usize] =
                decode_inode(&b).map_err(|source| FsError::CorruptInode { slot: i, source })?;
        }
        Ok(fs)
    }

    fn cache_put(&mut self, off: u64, page: &[u8]) {
        if self.cache.len() >= CACHE_PAGES && !self.cache.contains_key(&off) {
            self.cache.clear();
        }
        self.cache.insert(off, page.into());
    }

    fn cache_forget(&mut self, off: u64, len: u64) {
        let mut o = off;
        while o < off + len {
            self.cache.remove(&o);
            o += self.page;
        }
    }

    fn inode_offset(&self, slot: u32) -> u64 {
        (1 + u64::from(slot) * self.region) * self.page
    }

    fn data_offset(&self, slot: u32, page_index: u64) -> u64 {
        self.inode_offset(slot) + (1 + page_index) * self.page
    }

    /// Largest size a file may have.
    pub fn max_file_bytes(&self) -> u64 {
        (self.region - 1) * self.page
    }

    pub fn page_bytes(&self) -> u64 {
        self.page
    }

    pub fn device(&self) -> &D {
        &self.dev
    }

    pub fn device_mut(&mut self) -> &mut D {
        &mut self.dev
    }

    pub fn into_device(self) -> D {
        self.dev
    }

    pub fn counters(&self) -> FsCounters {
        self.counters
    }

    pub fn lookup(&self, name: &str) -> Option<FileId> {
        self.inodes
            .iter()
            .position(|i| i.in_use && i.name == name)
            .map(|i| FileId(i as u32))
    }

    pub fn name(&self, id: FileId) -> &str {
        &self.inodes[id.0 as usize].name
    }

    /// Names of the files that exist.
    pub fn list(&self) -> Vec<String> {
        self.inodes
            .iter()
            .filter(|i| i.in_use)
            .map(|i| i.name.clone())
            .collect()
    }

    /// Size as the host sees it.
    pub fn size(&self, id: FileId) -> u64 {
        self.inodes[id.0 as usize].mem_size
    }

    fn inode_page(&self, slot: u32) -> Vec<u8> {
        let ino = &self.inodes[slot as usize];
        let mut b = vec![0u8; self.page as usize];
        if ino.in_use || ino.generation > 0 {
            b[0..8].copy_from_slice(INODE_MAGIC);
            b[8..12].copy_from_slice(&u32::from(ino.in_use).to_le_bytes());
            let name = ino.name.as_bytes();
            b[12..16].copy_from_slice(&(name.len() as u32).to_le_bytes());
            b[16..24].copy_from_slice(&ino.mem_size.to_le_bytes());
            b[24..32].copy_from_slice(&ino.generation.to_le_bytes());
            b[32..32 + name.len()].copy_from_slice(name);
            let c = crc(&b[..32 + name.len()]);
            b[32 + name.len()..36 + name.len()].copy_from_slice(&c.to_le_bytes());
        }
        b
    }

    /// Write slot's inode (with `mem_size`) in a device transaction of its own.
    fn commit_inode(&mut self, slot: u32) -> Result<(), FsError> {
        self.inodes[slot as usize].generation += 1;
        let b = self.inode_page(slot);
        let off = self.inode_offset(slot);
        let t = self.dev.begin_txn()?;
        let r = self
            .dev
            .write_txn_kind(t, off, &b, META)
            .and_then(|_| self.dev.commit_txn(t));
        if let Err(e) = r {
            let _ = self.dev.abort_txn(t);
            return Err(e.into());
        }
        self.counters.inode_page_writes += 1;
        self.counters.inode_commits += 1;
        let ino = &mut self.inodes[slot as usize];
        ino.size = ino.mem_size;
        Ok(())
    }

    /// Open `name`, creating it (durably) if `create` and it does not exist.
    pub fn open(&mut self, name: &str, create: bool) -> Result<FileId, FsError> {
        if let Some(id) = self.lookup(name) {
            return Ok(id);
        }
        if !create {
            return Err(FsError::NoSuchFile(name.into()));
        }
        if name.len() > MAX_NAME {
            return Err(FsError::NameTooLong(name.into()));
        }
        let slot = self
            .inodes
            .iter()
            .position(|i| !i.in_use)
            .ok_or(FsError::NoFreeSlot { slots: self.slots })? as u32;
        {
            let ino = &mut self.inodes[slot as usize];
            ino.in_use = true;
            ino.name = name.to_string();
            ino.mem_size = 0;
        }
        if let Err(e) = self.commit_inode(slot) {
            let ino = &mut self.inodes[slot as usize];
            ino.in_use = false;
            ino.name.clear();
            return Err(e);
        }
        // A new file reads as zeros: its region may hold pages of a deleted one.
        Ok(FileId(slot))
    }

    /// Delete `name` (durable on return), then discard its pages.
    pub fn delete(&mut self, name: &str) -> Result<(), FsError> {
        let id = self
            .lookup(name)
            .ok_or_else(|| FsError::NoSuchFile(name.into()))?;
        let slot = id.0;
        let old = self.inodes[slot as usize].clone();
        if old.batch.is_some() {
            return Err(FsError::AlreadyInBatch(name.into()));
        }
        {
            let ino = &mut self.inodes[slot as usize];
            ino.in_use = false;
            ino.name.clear();
            ino.mem_size = 0;
        }
        if let Err(e) = self.commit_inode(slot) {
            self.inodes[slot as usize] = old;
            return Err(e);
        }
        let pages = old.mem_size.max(old.size).div_ceil(self.page);
        if pages > 0 {
            self.unflushed = true;
            self.cache_forget(self.data_offset(slot, 0), pages * self.page);
            self.dev
                .discard(self.data_offset(slot, 0), pages * self.page)?;
        }
        Ok(())
    }

    /// Read at `offset`; bytes beyond the end of the file read as zeros. Returns the bytes that
    /// were inside the file.
    pub fn read(&mut self, id: FileId, offset: u64, out: &mut [u8]) -> Result<usize, FsError> {
        let ino = &self.inodes[id.0 as usize];
        let size = ino.mem_size;
        let batch = ino.batch;
        let inside = size.saturating_sub(offset).min(out.len() as u64) as usize;
        out[inside..].fill(0);
        let mut pos = offset;
        let end = offset + inside as u64;
        let mut buf = std::mem::take(&mut self.buf);
        while pos < end {
            let pi = pos / self.page;
            let in_page = (pos % self.page) as usize;
            let n = ((self.page - in_page as u64).min(end - pos)) as usize;
            let off = self.data_offset(id.0, pi);
            if let Some(p) = self.cache.get(&off) {
                buf.copy_from_slice(p);
            } else {
                let r = match batch {
                    Some(t) => self.dev.read_txn(t, off, &mut buf),
                    None => self.dev.read(off, &mut buf),
                };
                if let Err(e) = r {
                    self.buf = buf;
                    return Err(e.into());
                }
                self.counters.page_reads += 1;
                self.cache_put(off, &buf);
            }
            let at = (pos - offset) as usize;
            out[at..at + n].copy_from_slice(&buf[in_page..in_page + n]);
            pos += n as u64;
        }
        self.buf = buf;
        Ok(inside)
    }

    /// Write `data` at `offset` (in the file's batch, if one is open).
    pub fn write(&mut self, id: FileId, offset: u64, data: &[u8]) -> Result<(), FsError> {
        let end = offset + data.len() as u64;
        let (size, batch, name) = {
            let ino = &self.inodes[id.0 as usize];
            (ino.mem_size, ino.batch, ino.name.clone())
        };
        if end > self.max_file_bytes() {
            return Err(FsError::FileTooLarge {
                name,
                want: end,
                limit: self.max_file_bytes(),
            });
        }
        let is_journal = name.ends_with("-journal");
        let mut buf = std::mem::take(&mut self.buf);
        let mut pos = offset;
        let r = (|| {
            while pos < end {
                let pi = pos / self.page;
                let in_page = (pos % self.page) as usize;
                let n = ((self.page - in_page as u64).min(end - pos)) as usize;
                let off = self.data_offset(id.0, pi);
                if n as u64 != self.page {
                    // Read-modify-write of a partial page; a page wholly beyond the old end is
                    // zeros.
                    if pi * self.page < size {
                        if let Some(p) = self.cache.get(&off) {
                            buf.copy_from_slice(p);
                        } else {
                            match batch {
                                Some(t) => self.dev.read_txn(t, off, &mut buf)?,
                                None => self.dev.read(off, &mut buf)?,
                            }
                            self.counters.page_reads += 1;
                        }
                    } else {
                        buf.fill(0);
                    }
                }
                let at = (pos - offset) as usize;
                buf[in_page..in_page + n].copy_from_slice(&data[at..at + n]);
                match batch {
                    Some(t) => self.dev.write_txn(t, off, &buf)?,
                    None => {
                        self.unflushed = true;
                        self.dev.write(off, &buf, joj_device::WriteFlags::NONE)?
                    }
                }
                if is_journal {
                    self.counters.journal_page_writes += 1;
                } else {
                    self.counters.db_page_writes += 1;
                }
                self.cache_put(off, &buf);
                if batch.is_some() {
                    self.inodes[id.0 as usize].batch_pages.push(off);
                }
                pos += n as u64;
            }
            Ok::<_, DeviceError>(())
        })();
        self.buf = buf;
        r?;
        let ino = &mut self.inodes[id.0 as usize];
        ino.mem_size = ino.mem_size.max(end);
        Ok(())
    }

    /// Set the size; whole pages beyond it are discarded (outside a batch).
    pub fn truncate(&mut self, id: FileId, size: u64) -> Result<(), FsError> {
        let (old, batch) = {
            let ino = &self.inodes[id.0 as usize];
            (ino.mem_size.max(ino.size), ino.batch)
        };
        if size > self.max_file_bytes() {
            return Err(FsError::FileTooLarge {
                name: self.inodes[id.0 as usize].name.clone(),
                want: size,
                limit: self.max_file_bytes(),
            });
        }
        if batch.is_none() && size < old {
            let first = size.div_ceil(self.page);
            let last = old.div_ceil(self.page);
            if last > first {
                self.unflushed = true;
                self.cache_forget(self.data_offset(id.0, first), (last - first) * self.page);
                self.dev
                    .discard(self.data_offset(id.0, first), (last - first) * self.page)?;
            }
        }
        self.inodes[id.0 as usize].mem_size = size;
        Ok(())
    }

    /// Make the file durable: a device flush, then the inode if its size changed. With no
    /// plain write or discard since the last flush there is nothing to flush (committed
    /// transactions are durable already), so the flush is skipped — SQLite syncs the database
    /// after every batch commit.
    pub fn sync(&mut self, id: FileId) -> Result<(), FsError> {
        if self.inodes[id.0 as usize].app {
            // The application transaction's commit makes the file durable.
            return Ok(());
        }
        if self.inodes[id.0 as usize].batch.is_some() {
            return Err(FsError::AlreadyInBatch(self.name(id).into()));
        }
        if self.unflushed {
            self.dev.flush()?;
            self.counters.flushes += 1;
            self.unflushed = false;
        }
        let ino = &self.inodes[id.0 as usize];
        if ino.mem_size != ino.size {
            self.commit_inode(id.0)?;
        }
        Ok(())
    }

    /// Open a device transaction for `id`'s writes (`SQLITE_FCNTL_BEGIN_ATOMIC_WRITE`).
    pub fn begin_batch(&mut self, id: FileId) -> Result<(), FsError> {
        if self.inodes[id.0 as usize].app {
            // Inside an application transaction SQLite's batch is part of it.
            return Ok(());
        }
        if self.inodes[id.0 as usize].batch.is_some() {
            return Err(FsError::AlreadyInBatch(self.name(id).into()));
        }
        let t = self.dev.begin_txn()?;
        let ino = &mut self.inodes[id.0 as usize];
        ino.batch = Some(t);
        ino.journal = false;
        Ok(())
    }

    /// Whether a batch of SQLite's own (not an application transaction) is open on `id`.
    pub fn in_batch(&self, id: FileId) -> bool {
        let ino = &self.inodes[id.0 as usize];
        ino.batch.is_some() && !ino.app
    }

    /// The application transaction `id` belongs to, if any.
    pub fn app_txn(&self, id: FileId) -> Option<Tid> {
        let ino = &self.inodes[id.0 as usize];
        if ino.app { ino.batch } else { None }
    }

    /// Commit the batch: the inode too if the size changed, in the same device transaction.
    /// On an error the batch is aborted (nothing of it stays) and the error returned.
    pub fn commit_batch(&mut self, id: FileId) -> Result<(), FsError> {
        let slot = id.0;
        let ino = &self.inodes[slot as usize];
        let Some(t) = ino.batch.filter(|_| !ino.app) else {
            return Ok(());
        };
        match self.commit_files(t, &[id]) {
            Ok(()) => {
                self.counters.batch_commits += 1;
                Ok(())
            }
            Err(e) => {
                self.rollback_batch(id);
                Err(e)
            }
        }
    }

    /// Write the inode of every file in `ids` whose size changed under `t`, then commit `t`;
    /// on success the files leave the transaction. On an error nothing is undone here.
    fn commit_files(&mut self, t: Tid, ids: &[FileId]) -> Result<(), FsError> {
        for &id in ids {
            let slot = id.0;
            let ino = &self.inodes[slot as usize];
            if ino.batch != Some(t) || ino.mem_size == ino.size {
                continue;
            }
            self.inodes[slot as usize].generation += 1;
            let b = self.inode_page(slot);
            let off = self.inode_offset(slot);
            // `journal` records that the generation moved, so an abort moves it back.
            self.inodes[slot as usize].journal = true;
            self.dev.write_txn_kind(t, off, &b, META)?;
            self.counters.inode_page_writes += 1;
        }
        self.dev.commit_txn(t)?;
        for &id in ids {
            let ino = &mut self.inodes[id.0 as usize];
            if ino.batch == Some(t) {
                ino.batch = None;
                ino.app = false;
                ino.created = false;
                ino.journal = false;
                ino.size = ino.mem_size;
                ino.batch_pages.clear();
            }
        }
        Ok(())
    }

    /// Put `id` into application transaction `t` (`docs/formats/apptxn.md` §2): its reads and
    /// writes run under `t` until [`FlashFs::commit_app`] or [`FlashFs::abort_app`].
    pub fn join_app(&mut self, id: FileId, t: Tid) -> Result<(), FsError> {
        let ino = &mut self.inodes[id.0 as usize];
        match ino.batch {
            Some(b) if b == t && ino.app => Ok(()),
            Some(_) => Err(FsError::AlreadyInBatch(ino.name.clone())),
            None => {
                ino.batch = Some(t);
                ino.app = true;
                ino.journal = false;
                Ok(())
            }
        }
    }

    /// Create file `name` inside application transaction `t`: its inode is written under `t`,
    /// so the file exists on the device only if `t` commits (an abort frees the slot). The
    /// file is in `t` from now on. A name that exists already is refused.
    pub fn create_app(&mut self, name: &str, t: Tid) -> Result<FileId, FsError> {
        if self.lookup(name).is_some() {
            return Err(FsError::Exists(name.into()));
        }
        if name.len() > MAX_NAME {
            return Err(FsError::NameTooLong(name.into()));
        }
        let slot = self
            .inodes
            .iter()
            .position(|i| !i.in_use && i.batch.is_none())
            .ok_or(FsError::NoFreeSlot { slots: self.slots })? as u32;
        {
            let ino = &mut self.inodes[slot as usize];
            ino.in_use = true;
            ino.name = name.to_string();
            ino.mem_size = 0;
            ino.generation += 1;
            ino.batch = Some(t);
            ino.app = true;
            ino.created = true;
            ino.journal = true;
        }
        let b = self.inode_page(slot);
        if let Err(e) = self
            .dev
            .write_txn_kind(t, self.inode_offset(slot), &b, META)
        {
            self.revert_inode(slot as usize);
            return Err(e.into());
        }
        self.counters.inode_page_writes += 1;
        Ok(FileId(slot))
    }

    /// Commit application transaction `t` over the files `ids` it holds: their changed sizes
    /// and `t`'s pages in one device commit (durable on return). On an error `t` is aborted
    /// (every file as before) and the error returned.
    pub fn commit_app(&mut self, t: Tid, ids: &[FileId]) -> Result<(), FsError> {
        match self.commit_files(t, ids) {
            Ok(()) => Ok(()),
            Err(e) => {
                // The abort's own error adds nothing: the commit's is the cause.
                let _ = self.abort_app(t, ids);
                Err(e)
            }
        }
    }

    /// Abort application transaction `t`: one device abort; every file in `ids` it holds is
    /// as before it (size, and the host page cache). The in-memory state is reverted even if
    /// the device refuses the abort (a dead device: its recovery drops `t`).
    pub fn abort_app(&mut self, t: Tid, ids: &[FileId]) -> Result<(), FsError> {
        let r = self.dev.abort_txn(t);
        for &id in ids {
            if self.inodes[id.0 as usize].batch == Some(t) {
                self.revert_inode(id.0 as usize);
            }
        }
        Ok(r?)
    }

    /// The file's state as before its transaction (which was aborted).
    fn revert_inode(&mut self, slot: usize) {
        let ino = &mut self.inodes[slot];
        ino.batch = None;
        ino.app = false;
        if std::mem::take(&mut ino.created) {
            ino.in_use = false;
            ino.name.clear();
        }
        if ino.journal {
            ino.generation -= 1;
            ino.journal = false;
        }
        ino.mem_size = ino.size;
        let pages = std::mem::take(&mut ino.batch_pages);
        for off in pages {
            self.cache.remove(&off);
        }
    }

    /// Abort the batch: every page it wrote, and the size, are as before it.
    /// An application transaction's file is left alone (only `abort_app` ends it).
    pub fn rollback_batch(&mut self, id: FileId) {
        let slot = id.0 as usize;
        if self.inodes[slot].app {
            return;
        }
        if let Some(t) = self.inodes[slot].batch {
            let _ = self.dev.abort_txn(t);
            self.revert_inode(slot);
            self.counters.batch_aborts += 1;
        }
    }
}

fn decode_inode(b: &[u8]) -> Result<Inode, InodeError> {
    if b[0..8].iter().all(|&x| x == 0) {
        return Ok(Inode::default());
    }
    if &b[0..8] != INODE_MAGIC {
        let mut found = [0u8; 8];
        found.copy_from_slice(&b[0..8]);
        return Err(InodeError::BadMagic { found });
    }
    let state = u32::from_le_bytes(b[8..12].try_into().expect("4"));
    let n = u32::from_le_bytes(b[12..16].try_into().expect("4")) as usize;
    if n > MAX_NAME || 36 + n > b.len() {
        return Err(InodeError::NameLength { len: n });
    }
    let stored = u32::from_le_bytes(b[32 + n..36 + n].try_into().expect("4"));
    let computed = crc(&b[..32 + n]);
    if stored != computed {
        return Err(InodeError::ChecksumMismatch { stored, computed });
    }
    let size = u64::from_le_bytes(b[16..24].try_into().expect("8"));
    let name = String::from_utf8(b[32..32 + n].to_vec()).map_err(|_| InodeError::NameNotUtf8)?;
    Ok(Inode {
        in_use: state == 1,
        name: if state == 1 { name } else { String::new() },
        size,
        generation: u64::from_le_bytes(b[24..32].try_into().expect("8")),
        mem_size: size,
        batch: None,
        app: false,
        created: false,
        journal: false,
        batch_pages: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_with(name: &str) -> Vec<u8> {
        let mut b = vec![0u8; 4096];
        b[0..8].copy_from_slice(INODE_MAGIC);
        b[8..12].copy_from_slice(&1u32.to_le_bytes());
        b[12..16].copy_from_slice(&(name.len() as u32).to_le_bytes());
        b[32..32 + name.len()].copy_from_slice(name.as_bytes());
        let c = crc(&b[..32 + name.len()]);
        b[32 + name.len()..36 + name.len()].copy_from_slice(&c.to_le_bytes());
        b
    }

    #[test]
    fn an_inode_page_decodes_and_each_kind_of_damage_is_named() {
        let good = page_with("a.db");
        assert_eq!(decode_inode(&good).unwrap().name, "a.db");
        let mut magic = good.clone();
        magic[0] ^= 1;
        assert!(matches!(
            decode_inode(&magic),
            Err(InodeError::BadMagic { .. })
        ));
        let mut long = good.clone();
        long[12..16].copy_from_slice(&(MAX_NAME as u32 + 1).to_le_bytes());
        assert_eq!(
            decode_inode(&long).unwrap_err(),
            InodeError::NameLength { len: MAX_NAME + 1 }
        );
        let mut flipped = good.clone();
        flipped[33] ^= 1;
        assert!(matches!(
            decode_inode(&flipped),
            Err(InodeError::ChecksumMismatch { .. })
        ));
    }
}
