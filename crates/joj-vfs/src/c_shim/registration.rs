//! What SQLite's `pAppData` points at for a registered VFS: the Rust VFS, its name and its
//! error log. Leaked at registration: SQLite's VFS registry lives as long as the process.

use super::errors::{ErrorLog, panic_error};
use crate::error::{ResultCode, SqliteError};
use crate::vfs::Vfs;
use libsqlite3_sys as ffi;
use std::ffi::{CString, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};

pub(crate) struct Registration<V> {
    pub(crate) name: String,
    pub(crate) c_name: CString,
    pub(crate) vfs: V,
    pub(crate) errors: ErrorLog,
}

impl<V: Vfs> Registration<V> {
    /// The registration behind one of our `sqlite3_vfs` objects.
    ///
    /// # Safety
    /// `vfs` is a VFS object `register_vfs::<V>` made (its callbacks are the `V` ones).
    pub(crate) unsafe fn of<'a>(vfs: *mut ffi::sqlite3_vfs) -> &'a Registration<V> {
        // SAFETY: pAppData was set to a leaked Registration<V> by register_vfs::<V>.
        unsafe { &*((*vfs).pAppData as *const Registration<V>) }
    }

    /// Run a VFS-level method: its result, or the code SQLite gets (errors with a message and
    /// panics reported).
    pub(crate) fn guard<R>(
        &self,
        method: &str,
        code: ResultCode,
        f: impl FnOnce(&V) -> Result<R, SqliteError>,
    ) -> Result<R, c_int> {
        match catch_unwind(AssertUnwindSafe(|| f(&self.vfs))) {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(self.errors.fail(&e)),
            Err(payload) => Err(self.errors.fail(&panic_error(
                &format!("{}.{method}", self.name),
                code,
                payload.as_ref(),
                "",
            ))),
        }
    }
}
