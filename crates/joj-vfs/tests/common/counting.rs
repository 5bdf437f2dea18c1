//! A VFS over SQLite's `unix` VFS that counts every seam method and can be told to fail or
//! panic in a chosen call.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_vfs::{
    Access, BaseFile, BaseVfs, Connecting, DeviceCharacteristics, FetchedPage, FileControl,
    FileName, FullPathname, LockLevel, OpenFlags, ReadOutcome, ResultCode, ShmLockFlags,
    ShmMapping, SqliteError, SyncFlags, Vfs, VfsFile,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What a call does instead of its work, for files whose name ends with `suffix`.
#[derive(Clone, Debug)]
pub enum Fault {
    Fail {
        code: ResultCode,
        message: Option<String>,
    },
    Panic(String),
}

pub struct CountingVfs {
    unix: BaseVfs,
    calls: Mutex<BTreeMap<&'static str, u64>>,
    /// (method, file-name suffix) → fault.
    faults: Mutex<Vec<(&'static str, String, Fault)>>,
}

pub struct CountingFile {
    vfs: &'static CountingVfs,
    base: BaseFile,
    path: Option<PathBuf>,
}

impl Default for CountingVfs {
    fn default() -> Self {
        CountingVfs {
            unix: BaseVfs::find("unix").expect("SQLite's unix VFS"),
            calls: Mutex::default(),
            faults: Mutex::default(),
        }
    }
}

impl CountingVfs {
    pub fn calls(&self) -> BTreeMap<&'static str, u64> {
        self.calls.lock().unwrap().clone()
    }

    pub fn count(&self, method: &str) -> u64 {
        self.calls.lock().unwrap().get(method).copied().unwrap_or(0)
    }

    pub fn reset(&self) {
        self.calls.lock().unwrap().clear();
    }

    /// From now on, `method` on files whose path ends with `suffix` does `fault`.
    pub fn inject(&self, method: &'static str, suffix: &str, fault: Fault) {
        self.faults
            .lock()
            .unwrap()
            .push((method, suffix.to_string(), fault));
    }

    pub fn clear_faults(&self) {
        self.faults.lock().unwrap().clear();
    }

    /// Count `method` on `path`, then fail or panic if a fault says so.
    fn enter(&self, method: &'static str, path: Option<&Path>) -> Result<(), SqliteError> {
        *self.calls.lock().unwrap().entry(method).or_default() += 1;
        let fault = {
            let faults = self.faults.lock().unwrap();
            faults
                .iter()
                .find(|(m, suffix, _)| {
                    *m == method
                        && path.is_some_and(|p| p.to_string_lossy().ends_with(suffix.as_str()))
                })
                .map(|(_, _, f)| f.clone())
        };
        match fault {
            None => Ok(()),
            Some(Fault::Fail {
                code,
                message: None,
            }) => Err(SqliteError::new(code)),
            Some(Fault::Fail {
                code,
                message: Some(m),
            }) => Err(SqliteError::with_message(code, m)),
            Some(Fault::Panic(m)) => panic!("{m}"),
        }
    }
}

impl Vfs for CountingVfs {
    type File = CountingFile;

    fn open(
        &'static self,
        name: Option<&FileName<'_>>,
        flags: OpenFlags,
    ) -> Result<(CountingFile, OpenFlags), SqliteError> {
        let path = name.map(|n| n.path().to_path_buf());
        self.enter("open", path.as_deref())?;
        let (base, out) = self.unix.open(name, flags)?;
        Ok((
            CountingFile {
                vfs: self,
                base,
                path,
            },
            out,
        ))
    }

    fn delete(&self, path: &Path, sync_dir: bool) -> Result<(), SqliteError> {
        self.enter("delete", Some(path))?;
        self.unix.delete(path, sync_dir)
    }

    fn access(&self, path: &Path, check: Access) -> Result<bool, SqliteError> {
        self.enter("access", Some(path))?;
        self.unix.access(path, check)
    }

    fn full_pathname(&self, name: &Path) -> Result<FullPathname, SqliteError> {
        self.enter("full_pathname", Some(name))?;
        self.unix.full_pathname(name)
    }

    fn delegate(&self) -> Option<BaseVfs> {
        Some(self.unix)
    }

    fn on_connect(&self, _conn: &mut Connecting<'_>) -> Result<(), SqliteError> {
        self.enter("on_connect", None)
    }
}

impl CountingFile {
    fn enter(&self, method: &'static str) -> Result<(), SqliteError> {
        self.vfs.enter(method, self.path.as_deref())
    }
}

impl VfsFile for CountingFile {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<ReadOutcome, SqliteError> {
        self.enter("read")?;
        self.base.read(buf, offset)
    }

    fn write(&mut self, data: &[u8], offset: u64) -> Result<(), SqliteError> {
        self.enter("write")?;
        self.base.write(data, offset)
    }

    fn truncate(&mut self, size: u64) -> Result<(), SqliteError> {
        self.enter("truncate")?;
        self.base.truncate(size)
    }

    fn sync(&mut self, flags: SyncFlags) -> Result<(), SqliteError> {
        self.enter("sync")?;
        self.base.sync(flags)
    }

    fn file_size(&mut self) -> Result<u64, SqliteError> {
        self.enter("file_size")?;
        self.base.file_size()
    }

    fn lock(&mut self, level: LockLevel) -> Result<(), SqliteError> {
        self.enter("lock")?;
        self.base.lock(level)
    }

    fn unlock(&mut self, level: LockLevel) -> Result<(), SqliteError> {
        self.enter("unlock")?;
        self.base.unlock(level)
    }

    fn check_reserved_lock(&mut self) -> Result<bool, SqliteError> {
        self.enter("check_reserved_lock")?;
        self.base.check_reserved_lock()
    }

    fn file_control(&mut self, control: FileControl<'_>) -> Result<(), SqliteError> {
        self.enter("file_control")?;
        if let FileControl::Pragma(mut p) = control {
            if p.name() == Some("counting_echo") {
                let v = p.value().unwrap_or("").to_string();
                return p.reply(&format!("echo {v}"));
            }
            return self.base.file_control(FileControl::Pragma(p));
        }
        self.base.file_control(control)
    }

    fn sector_size(&mut self) -> u32 {
        let _ = self.enter("sector_size");
        self.base.sector_size()
    }

    fn device_characteristics(&mut self) -> DeviceCharacteristics {
        let _ = self.enter("device_characteristics");
        self.base.device_characteristics()
    }

    fn has_shared_memory(&self) -> bool {
        self.base.has_shared_memory()
    }

    fn shm_map(
        &mut self,
        region: u32,
        bytes: u32,
        extend: bool,
    ) -> Result<ShmMapping, SqliteError> {
        self.enter("shm_map")?;
        self.base.shm_map(region, bytes, extend)
    }

    fn shm_lock(&mut self, offset: u32, n: u32, flags: ShmLockFlags) -> Result<(), SqliteError> {
        self.enter("shm_lock")?;
        self.base.shm_lock(offset, n, flags)
    }

    fn shm_barrier(&mut self) {
        let _ = self.enter("shm_barrier");
        self.base.shm_barrier()
    }

    fn shm_unmap(&mut self, delete: bool) -> Result<(), SqliteError> {
        self.enter("shm_unmap")?;
        self.base.shm_unmap(delete)
    }

    fn fetch(&mut self, offset: u64, amount: usize) -> Result<Option<FetchedPage>, SqliteError> {
        self.enter("fetch")?;
        self.base.fetch(offset, amount)
    }

    fn unfetch(&mut self, offset: u64, page: Option<FetchedPage>) -> Result<(), SqliteError> {
        self.enter("unfetch")?;
        self.base.unfetch(offset, page)
    }

    fn close(self) -> Result<(), SqliteError> {
        let r = self.enter("close");
        self.base.close()?;
        r
    }
}
