//! [`BaseVfs`]: a safe handle to a VFS registered with SQLite (SQLite's `unix`, or one of
//! joj's), for VFSs that run over another one: open its files ([`BaseFile`]), delete, check
//! access and resolve names through it.

use crate::base_file::BaseFile;
use crate::error::{ResultCode, SqliteError, check};
use crate::flags::{Access, OpenFlags};
use crate::name::FileName;
use crate::outcome::FullPathname;
use libsqlite3_sys as ffi;
use std::ffi::{CStr, CString, OsStr, c_char, c_int};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

/// A VFS registered with SQLite. Registered VFS objects are never freed (SQLite's are static,
/// joj's are leaked), so the handle is valid for the whole process.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BaseVfs {
    raw: NonNull<ffi::sqlite3_vfs>,
}

// SAFETY: the handle points at a VFS object that lives for the process, and SQLite's VFS calls
// may be made from any thread in a threadsafe build (libsqlite3-sys sets SQLITE_THREADSAFE=1).
unsafe impl Send for BaseVfs {}
// SAFETY: as above; the handle itself is immutable.
unsafe impl Sync for BaseVfs {}

/// `path` as the C string SQLite's VFS calls take.
fn c_path(path: &Path) -> Result<CString, SqliteError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        SqliteError::with_message(
            ResultCode::CANTOPEN,
            format!("{} contains a NUL byte", path.display()),
        )
    })
}

impl BaseVfs {
    /// The VFS SQLite knows as `name`.
    pub fn find(name: &str) -> Option<BaseVfs> {
        let c = CString::new(name).ok()?;
        crate::sqlite_alloc::initialize();
        // SAFETY: vfs_find takes any C string.
        let raw = unsafe { ffi::sqlite3_vfs_find(c.as_ptr()) };
        NonNull::new(raw).map(|raw| BaseVfs { raw })
    }

    /// SQLite's default VFS (`unix` unless someone made another one the default).
    pub fn default_vfs() -> Option<BaseVfs> {
        crate::sqlite_alloc::initialize();
        // SAFETY: NULL asks for the default.
        let raw = unsafe { ffi::sqlite3_vfs_find(std::ptr::null()) };
        NonNull::new(raw).map(|raw| BaseVfs { raw })
    }

    pub(crate) fn from_raw(raw: *mut ffi::sqlite3_vfs) -> Option<BaseVfs> {
        NonNull::new(raw).map(|raw| BaseVfs { raw })
    }

    pub(crate) fn as_ptr(&self) -> *mut ffi::sqlite3_vfs {
        self.raw.as_ptr()
    }

    fn vfs(&self) -> &ffi::sqlite3_vfs {
        // SAFETY: a registered VFS object, never freed.
        unsafe { self.raw.as_ref() }
    }

    /// Make this VFS the process's default (what connections opened without a VFS name use).
    pub fn make_default(&self) -> Result<(), SqliteError> {
        // SAFETY: a VFS SQLite knows; registering it again only moves it to the list's head.
        let rc = unsafe { ffi::sqlite3_vfs_register(self.raw.as_ptr(), 1) };
        if rc != ffi::SQLITE_OK {
            return Err(SqliteError::with_message(
                ResultCode::from_raw(rc),
                format!("making {} the default VFS", self.name()),
            ));
        }
        Ok(())
    }

    pub fn name(&self) -> String {
        let z = self.vfs().zName;
        if z.is_null() {
            return String::new();
        }
        // SAFETY: zName of a registered VFS is a NUL-terminated string that lives with it.
        unsafe { CStr::from_ptr(z) }.to_string_lossy().into_owned()
    }

    /// SQLite's unix VFS or one of its variants (`unix-excl`, `unix-none`, ...), which share
    /// the `unixFile` layout.
    fn is_unix(&self) -> bool {
        let z = self.vfs().zName;
        // SAFETY: zName of a registered VFS is NULL or a NUL-terminated string that lives with it.
        !z.is_null() && unsafe { CStr::from_ptr(z) }.to_bytes().starts_with(b"unix")
    }

    /// Longest full pathname the VFS handles (`mxPathname`).
    pub fn max_pathname(&self) -> usize {
        self.vfs().mxPathname.max(0) as usize
    }

    /// Open a file through this VFS: the file, and the flags the VFS opened it with.
    pub fn open(
        &self,
        name: Option<&FileName<'_>>,
        flags: OpenFlags,
    ) -> Result<(BaseFile, OpenFlags), SqliteError> {
        let raw_name = name.map_or(std::ptr::null(), |n| n.as_ptr());
        let unix = self.is_unix();
        // SAFETY: a registered VFS; the name is NULL or one SQLite passed to an xOpen.
        let (file, out) = unsafe { BaseFile::open_in(self.raw, unix, raw_name, flags.bits())? };
        Ok((file, OpenFlags::from_raw(out)))
    }

    pub fn delete(&self, path: &Path, sync_dir: bool) -> Result<(), SqliteError> {
        let c = c_path(path)?;
        let Some(x_delete) = self.vfs().xDelete else {
            return Err(SqliteError::new(ResultCode::IOERR_DELETE));
        };
        // SAFETY: this VFS's own method with a valid C string.
        let rc = unsafe { x_delete(self.as_ptr(), c.as_ptr(), c_int::from(sync_dir)) };
        check(rc)
    }

    pub fn access(&self, path: &Path, check: Access) -> Result<bool, SqliteError> {
        let c = c_path(path)?;
        let Some(x_access) = self.vfs().xAccess else {
            return Err(SqliteError::new(ResultCode::ERROR));
        };
        let mut out: c_int = 0;
        // SAFETY: this VFS's own method with a valid C string and out pointer.
        let rc = unsafe { x_access(self.as_ptr(), c.as_ptr(), check.raw(), &mut out) };
        crate::error::check(rc).map(|()| out != 0)
    }

    pub fn full_pathname(&self, name: &Path) -> Result<FullPathname, SqliteError> {
        let c = c_path(name)?;
        let Some(x_full) = self.vfs().xFullPathname else {
            return Err(SqliteError::new(ResultCode::ERROR));
        };
        let mut out = vec![0u8; self.max_pathname() + 1];
        let n = out.len() as c_int;
        // SAFETY: this VFS's own method; `out` has the mxPathname + 1 bytes SQLite provides.
        let rc = unsafe {
            x_full(
                self.as_ptr(),
                c.as_ptr(),
                n,
                out.as_mut_ptr() as *mut c_char,
            )
        };
        if rc != ffi::SQLITE_OK && rc != ffi::SQLITE_OK_SYMLINK {
            return Err(SqliteError::new(ResultCode::from_raw(rc)));
        }
        let end = out.iter().position(|&b| b == 0).unwrap_or(out.len());
        Ok(FullPathname {
            path: PathBuf::from(OsStr::from_bytes(&out[..end])),
            through_symlink: rc == ffi::SQLITE_OK_SYMLINK,
        })
    }
}

impl std::fmt::Debug for BaseVfs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BaseVfs({:?})", self.name())
    }
}
