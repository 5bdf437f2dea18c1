//! File controls (`xFileControl`) as a typed enum: the ones joj's VFSs act on have variants with
//! their arguments decoded (a control earns a variant when a VFS acts on it; decoding costs a
//! little on every call); every other one is [`FileControl::Other`], which a VFS answers with
//! [`SqliteError::not_found`](crate::SqliteError::not_found) or forwards to a base file
//! unchanged (its argument stays opaque: only the shim and [`BaseFile`](crate::BaseFile) touch
//! it).

use crate::error::{ResultCode, SqliteError};
use libsqlite3_sys as ffi;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::marker::PhantomData;

/// One `xFileControl` request. `'a` is the duration of the call.
#[derive(Debug)]
#[non_exhaustive]
pub enum FileControl<'a> {
    /// `SQLITE_FCNTL_BEGIN_ATOMIC_WRITE`: the writes until commit or rollback are one batch.
    BeginAtomicWrite,
    /// `SQLITE_FCNTL_COMMIT_ATOMIC_WRITE`: make the batch durable, all of it or none.
    CommitAtomicWrite,
    /// `SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE`: drop the batch.
    RollbackAtomicWrite,
    /// `SQLITE_FCNTL_SIZE_HINT`: the file is about to grow to this many bytes.
    SizeHint(u64),
    /// `SQLITE_FCNTL_VFSNAME`: name the VFS stack (answer with [`VfsNameReply::set`]).
    VfsName(VfsNameReply<'a>),
    /// `SQLITE_FCNTL_PRAGMA`: a `PRAGMA` SQLite does not know itself.
    Pragma(PragmaRequest<'a>),
    /// Any other control.
    Other(OtherControl<'a>),
}

/// Where the answer to `SQLITE_FCNTL_VFSNAME` goes.
#[derive(Debug)]
pub struct VfsNameReply<'a> {
    out: *mut *mut c_char,
    _call: PhantomData<&'a mut ()>,
}

/// A `PRAGMA name` or `PRAGMA name=value` that SQLite passes to the VFS.
#[derive(Debug)]
pub struct PragmaRequest<'a> {
    /// SQLite's three strings: the reply (set by the VFS), the name, the value (or NULL).
    args: *mut *mut c_char,
    _call: PhantomData<&'a mut ()>,
}

/// A control without a variant of its own.
#[derive(Debug)]
pub struct OtherControl<'a> {
    op: c_int,
    arg: *mut c_void,
    _call: PhantomData<&'a mut ()>,
}

/// A string SQLite will free with `sqlite3_free` (what `VFSNAME` and `PRAGMA` replies must be).
fn sqlite_string(text: &str) -> Result<*mut c_char, SqliteError> {
    if text.contains('\0') {
        return Err(SqliteError::with_message(
            ResultCode::MISUSE,
            format!("a file-control reply contains a NUL byte: {text:?}"),
        ));
    }
    crate::sqlite_alloc::string(text).ok_or_else(|| SqliteError::new(ResultCode::NOMEM))
}

impl VfsNameReply<'_> {
    /// Answer with `name`.
    pub fn set(&mut self, name: &str) -> Result<(), SqliteError> {
        let s = sqlite_string(name)?;
        // SAFETY: SQLite passes a valid `char **` for VFSNAME and frees what we store there.
        unsafe { *self.out = s };
        Ok(())
    }
}

impl PragmaRequest<'_> {
    fn arg(&self, i: usize) -> Option<&str> {
        // SAFETY: SQLite passes an array of three `char *` for PRAGMA, [1] and [2] NULL or
        // NUL-terminated strings that live for the call.
        unsafe {
            let p = *self.args.add(i);
            (!p.is_null()).then(|| CStr::from_ptr(p).to_str().ok())?
        }
    }

    /// The pragma's name (`None` if not UTF-8).
    pub fn name(&self) -> Option<&str> {
        self.arg(1)
    }

    /// The value after `=`, if any.
    pub fn value(&self) -> Option<&str> {
        self.arg(2)
    }

    /// The text the pragma returns (one row), or with an error result, the error message.
    pub fn reply(&mut self, text: &str) -> Result<(), SqliteError> {
        let s = sqlite_string(text)?;
        // SAFETY: args[0] is SQLite's slot for the reply, freed by SQLite.
        unsafe { *self.args = s };
        Ok(())
    }
}

impl OtherControl<'_> {
    /// The `SQLITE_FCNTL_*` number.
    pub fn op(&self) -> c_int {
        self.op
    }
}

impl<'a> FileControl<'a> {
    /// Decode SQLite's `(op, arg)`.
    ///
    /// # Safety
    /// `arg` must be what SQLite passes with `op` (its documented type), valid for `'a`.
    pub(crate) unsafe fn from_raw(op: c_int, arg: *mut c_void) -> FileControl<'a> {
        let other = || OtherControl {
            op,
            arg,
            _call: PhantomData,
        };
        // SAFETY (each arm): the argument types SQLite documents for these controls.
        unsafe {
            match op {
                ffi::SQLITE_FCNTL_BEGIN_ATOMIC_WRITE => FileControl::BeginAtomicWrite,
                ffi::SQLITE_FCNTL_COMMIT_ATOMIC_WRITE => FileControl::CommitAtomicWrite,
                ffi::SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE => FileControl::RollbackAtomicWrite,
                ffi::SQLITE_FCNTL_SIZE_HINT if !arg.is_null() => {
                    FileControl::SizeHint((*(arg as *const i64)).max(0) as u64)
                }
                ffi::SQLITE_FCNTL_VFSNAME if !arg.is_null() => FileControl::VfsName(VfsNameReply {
                    out: arg as *mut *mut c_char,
                    _call: PhantomData,
                }),
                ffi::SQLITE_FCNTL_PRAGMA if !arg.is_null() => FileControl::Pragma(PragmaRequest {
                    args: arg as *mut *mut c_char,
                    _call: PhantomData,
                }),
                _ => FileControl::Other(other()),
            }
        }
    }

    /// Run `f` with this control as SQLite's `(op, arg)` again (for a base file). Decoded
    /// arguments are re-encoded in locals that live for the call.
    pub(crate) fn with_raw<R>(self, f: impl FnOnce(c_int, *mut c_void) -> R) -> R {
        let none = std::ptr::null_mut();
        match self {
            FileControl::BeginAtomicWrite => f(ffi::SQLITE_FCNTL_BEGIN_ATOMIC_WRITE, none),
            FileControl::CommitAtomicWrite => f(ffi::SQLITE_FCNTL_COMMIT_ATOMIC_WRITE, none),
            FileControl::RollbackAtomicWrite => f(ffi::SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE, none),
            FileControl::SizeHint(n) => {
                let mut size = n.min(i64::MAX as u64) as i64;
                f(
                    ffi::SQLITE_FCNTL_SIZE_HINT,
                    &mut size as *mut i64 as *mut c_void,
                )
            }
            FileControl::VfsName(r) => f(ffi::SQLITE_FCNTL_VFSNAME, r.out as *mut c_void),
            FileControl::Pragma(p) => f(ffi::SQLITE_FCNTL_PRAGMA, p.args as *mut c_void),
            FileControl::Other(o) => f(o.op, o.arg),
        }
    }
}
