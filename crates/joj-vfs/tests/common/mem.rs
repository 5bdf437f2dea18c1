//! An in-memory VFS on the seam.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_vfs::{
    Access, DeviceCharacteristics, FileControl, FileName, HandleLock, LockLevel, LockTable,
    OpenFlags, ReadOutcome, ResultCode, SqliteError, SyncFlags, Vfs, VfsFile,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

type Data = Arc<Mutex<Vec<u8>>>;

#[derive(Default)]
pub struct MemVfs {
    files: Mutex<HashMap<PathBuf, Data>>,
    locks: Mutex<LockTable<PathBuf>>,
    next_temp: AtomicU64,
    /// Fill every read buffer with this pattern (repeated) before reading: what a VFS that
    /// scribbles on the buffer leaves where the file has no bytes, unless zero-filled.
    pub prefill_reads: Option<Vec<u8>>,
    pub syncs: AtomicU64,
}

pub struct MemFile {
    vfs: &'static MemVfs,
    key: PathBuf,
    data: Data,
    lock: HandleLock,
    delete_on_close: bool,
}

impl MemVfs {
    /// A VFS whose reads first fill the buffer with `pattern` (see `prefill_reads`).
    pub fn scribbling(pattern: Vec<u8>) -> MemVfs {
        MemVfs {
            prefill_reads: Some(pattern),
            ..MemVfs::default()
        }
    }

    /// The bytes of file `path`, if it exists.
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        let files = self.files.lock().unwrap();
        files.get(path).map(|d| d.lock().unwrap().clone())
    }

    pub fn file_names(&self) -> Vec<PathBuf> {
        let mut v: Vec<_> = self.files.lock().unwrap().keys().cloned().collect();
        v.sort();
        v
    }
}

impl Vfs for MemVfs {
    type File = MemFile;

    fn open(
        &'static self,
        name: Option<&FileName<'_>>,
        flags: OpenFlags,
    ) -> Result<(MemFile, OpenFlags), SqliteError> {
        let key = match name {
            Some(n) => n.path().to_path_buf(),
            None => PathBuf::from(format!(
                "temp:{}",
                self.next_temp.fetch_add(1, Ordering::Relaxed)
            )),
        };
        let mut files = self.files.lock().unwrap();
        let data = match files.get(&key) {
            Some(d) => d.clone(),
            None if flags.create() => files.entry(key.clone()).or_default().clone(),
            None => return Err(SqliteError::new(ResultCode::CANTOPEN)),
        };
        let file = MemFile {
            vfs: self,
            key,
            data,
            lock: HandleLock::new(),
            delete_on_close: name.is_none() || flags.delete_on_close(),
        };
        Ok((file, flags))
    }

    fn delete(&self, path: &Path, _sync_dir: bool) -> Result<(), SqliteError> {
        match self.files.lock().unwrap().remove(path) {
            Some(_) => Ok(()),
            None => Err(SqliteError::new(ResultCode::IOERR_DELETE_NOENT)),
        }
    }

    fn access(&self, path: &Path, _check: Access) -> Result<bool, SqliteError> {
        Ok(self.files.lock().unwrap().contains_key(path))
    }
}

impl VfsFile for MemFile {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError> {
        if let Some(pattern) = &self.vfs.prefill_reads {
            for (b, p) in buf.iter_mut().zip(pattern.iter().cycle()) {
                *b = *p;
            }
        }
        let data = self.data.lock().unwrap();
        let start = (offset as usize).min(data.len());
        let n = (data.len() - start).min(buf.len());
        buf[..n].copy_from_slice(&data[start..start + n]);
        Ok(ReadOutcome::from_filled(buf, n))
    }

    fn write(&mut self, bytes: &[u8], offset: u64) -> Result<(), SqliteError> {
        let mut data = self.data.lock().unwrap();
        let end = offset as usize + bytes.len();
        if data.len() < end {
            data.resize(end, 0);
        }
        data[offset as usize..end].copy_from_slice(bytes);
        Ok(())
    }

    fn truncate(&mut self, size: u64) -> Result<(), SqliteError> {
        self.data.lock().unwrap().resize(size as usize, 0);
        Ok(())
    }

    fn sync(&mut self, _flags: SyncFlags) -> Result<(), SqliteError> {
        self.vfs.syncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn file_size(&mut self) -> Result<u64, SqliteError> {
        Ok(self.data.lock().unwrap().len() as u64)
    }

    fn lock(&mut self, level: LockLevel) -> Result<(), SqliteError> {
        let mut locks = self.vfs.locks.lock().unwrap();
        locks
            .lock(&self.key, &mut self.lock, level)
            .map_err(|_| SqliteError::busy())
    }

    fn unlock(&mut self, level: LockLevel) -> Result<(), SqliteError> {
        let mut locks = self.vfs.locks.lock().unwrap();
        locks.unlock(&self.key, &mut self.lock, level);
        Ok(())
    }

    fn check_reserved_lock(&mut self) -> Result<bool, SqliteError> {
        Ok(self.vfs.locks.lock().unwrap().is_reserved(&self.key))
    }

    fn file_control(&mut self, control: FileControl<'_>) -> Result<(), SqliteError> {
        match control {
            FileControl::Pragma(mut p) if p.name() == Some("memvfs_files") => {
                let n = self.vfs.files.lock().unwrap().len();
                p.reply(&n.to_string())
            }
            FileControl::SizeHint(_) => Ok(()),
            _ => Err(SqliteError::not_found()),
        }
    }

    fn device_characteristics(&mut self) -> DeviceCharacteristics {
        DeviceCharacteristics::POWERSAFE_OVERWRITE
    }

    fn close(mut self) -> Result<(), SqliteError> {
        self.unlock(LockLevel::None)?;
        if self.delete_on_close {
            self.vfs.files.lock().unwrap().remove(&self.key);
        }
        Ok(())
    }
}
