//! The C shim: the only place with SQLite's `sqlite3_vfs` / `sqlite3_io_methods` tables and
//! their `extern "C"` callbacks. [`register_vfs`] turns a Rust [`Vfs`] into a VFS SQLite can
//! open connections with, and keeps it in a registry by name and pointer; [`Registered`] is the
//! typed handle back to it.
//!
//! - `vfs_calls`: the VFS-level callbacks; `file_calls`: the io methods and the file's memory.
//! - `registration`: what `pAppData` points at; `registry`: name/pointer to instance.
//! - `errors`: last error per VFS, `sqlite3_log`, panics; `connect_hook`: the auto-extension.

mod connect_hook;
mod errors;
mod file_calls;
mod registration;
mod registry;
mod vfs_calls;

pub use errors::{ErrorLog, LastError};

use crate::base::BaseVfs;
use crate::connect::Connecting;
use crate::error::{ResultCode, SqliteError, VfsError};
use crate::vfs::Vfs;
use file_calls::FileSlot;
use libsqlite3_sys as ffi;
use registration::Registration;
use std::any::Any;
use std::ffi::CString;

/// A registered VFS of type `V` (lives for the process, as SQLite's VFS registry does).
pub struct Registered<V: 'static> {
    reg: &'static Registration<V>,
    vfs: BaseVfs,
}

impl<V> Clone for Registered<V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<V> Copy for Registered<V> {}

impl<V> std::fmt::Debug for Registered<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Registered({:?})", self.reg.name)
    }
}

impl<V: Vfs> Registered<V> {
    /// The VFS registered as `name`, if it is a `V` (`Ok(None)`: no VFS of joj's has that name;
    /// [`VfsError::OtherType`]: one of another type has).
    pub fn find(name: &str) -> Result<Option<Registered<V>>, VfsError> {
        registry::by_name(name).map(downcast::<V>).transpose()
    }

    /// The Rust VFS.
    pub fn vfs(&self) -> &'static V {
        &self.reg.vfs
    }

    /// The name to open connections with.
    pub fn name(&self) -> &'static str {
        &self.reg.name
    }

    /// Where this VFS's errors went (the last one, and `report` for errors outside calls).
    pub fn errors(&self) -> &'static ErrorLog {
        &self.reg.errors
    }

    /// This VFS as a base for another one.
    pub fn as_base(&self) -> BaseVfs {
        self.vfs
    }
}

fn downcast<V: Vfs>(entry: registry::Entry) -> Result<Registered<V>, VfsError> {
    match entry.instance.downcast_ref::<Registration<V>>() {
        Some(reg) => Ok(Registered {
            reg,
            vfs: entry.vfs,
        }),
        None => Err(VfsError::OtherType {
            name: entry.name.to_string(),
            registered: entry.type_name,
            wanted: std::any::type_name::<V>(),
        }),
    }
}

fn on_connect<V: Vfs>(
    instance: &'static (dyn Any + Send + Sync),
    conn: &mut Connecting<'_>,
) -> Result<(), SqliteError> {
    match instance.downcast_ref::<Registration<V>>() {
        Some(reg) => reg.vfs.on_connect(conn),
        None => Ok(()),
    }
}

/// Register a VFS called `name` with SQLite, made by `make` (given the VFS's error log), or,
/// if a `V` is registered under `name` already, return that one. It is not made SQLite's
/// default VFS: open connections with its name.
///
/// Errors: the name is taken by a VFS of another type, or by one SQLite has that joj did not
/// register; the name has a NUL byte; SQLite refused. `make` runs without the registry locked
/// (it may open connections or register other VFSs); if another thread registers `name` in
/// the meantime, that VFS is returned and the one `make` built is dropped.
pub fn register_vfs<V: Vfs>(
    name: &str,
    make: impl FnOnce(ErrorLog) -> V,
) -> Result<Registered<V>, VfsError> {
    let () = FileSlot::<V>::FITS_SQLITE_ALIGNMENT;
    if let Some(existing) = Registered::<V>::find(name)? {
        // Again, in case SQLite was shut down since (which clears auto-extensions).
        install_connect_hook(name)?;
        match BaseVfs::find(name) {
            Some(known) if known.as_ptr() == existing.vfs.as_ptr() => {}
            Some(_) => return Err(VfsError::NameTaken { name: name.into() }),
            // The application unregistered it (`sqlite3_vfs_unregister`): the same object
            // again, as SQLite knew it.
            None => {
                // SAFETY: the leaked sqlite3_vfs registered before, which lives forever.
                let rc = unsafe { ffi::sqlite3_vfs_register(existing.vfs.as_ptr(), 0) };
                if rc != ffi::SQLITE_OK {
                    return Err(VfsError::Register {
                        name: name.into(),
                        code: ResultCode::from_raw(rc),
                    });
                }
            }
        }
        return Ok(existing);
    }
    let c_name = CString::new(name).map_err(|_| VfsError::BadName { name: name.into() })?;
    if BaseVfs::find(name).is_some() {
        // Another thread may be registering this name now: it registers with SQLite, then
        // records it, both under the registry's lock. Ask the registry again under that lock.
        let entries = registry::lock();
        return match entries.iter().find(|e| e.name == name) {
            Some(e) => downcast::<V>(*e),
            None => Err(VfsError::NameTaken { name: name.into() }),
        };
    }
    let errors = ErrorLog::new(name);
    let vfs = make(errors.clone());
    let mut entries = registry::lock();
    if let Some(e) = entries.iter().find(|e| e.name == name) {
        return downcast::<V>(*e);
    }
    if BaseVfs::find(name).is_some() {
        return Err(VfsError::NameTaken { name: name.into() });
    }
    // The hook first: once SQLite knows the VFS, its connections must get their on_connect.
    install_connect_hook(name)?;
    let reg: &'static Registration<V> = Box::leak(Box::new(Registration {
        name: name.to_string(),
        c_name,
        vfs,
        errors,
    }));
    let raw: &'static mut ffi::sqlite3_vfs = Box::leak(Box::new(vfs_calls::make_vfs(reg)));
    let raw: *mut ffi::sqlite3_vfs = raw;
    // SAFETY: a leaked, fully initialised sqlite3_vfs whose name and pAppData live forever.
    let rc = unsafe { ffi::sqlite3_vfs_register(raw, 0) };
    if rc != ffi::SQLITE_OK {
        return Err(VfsError::Register {
            name: name.into(),
            code: ResultCode::from_raw(rc),
        });
    }
    let Some(vfs) = BaseVfs::from_raw(raw) else {
        unreachable!("a leaked box is never null");
    };
    // Registered while the registry is locked: a connection opened meanwhile waits for this
    // entry in the hook, so it gets its on_connect.
    entries.push(registry::Entry {
        name: &reg.name,
        vfs,
        instance: reg,
        type_name: std::any::type_name::<V>(),
        errors: &reg.errors,
        on_connect: on_connect::<V>,
    });
    Ok(Registered { reg, vfs })
}

/// Install the connect hook (again: SQLite ignores an auto-extension it has).
fn install_connect_hook(name: &str) -> Result<(), VfsError> {
    let rc = connect_hook::install();
    if rc != ffi::SQLITE_OK {
        return Err(VfsError::AutoExtension {
            name: name.into(),
            code: ResultCode::from_raw(rc),
        });
    }
    Ok(())
}

/// The last error of the VFS of joj's registered as `name`, whatever its type.
pub fn last_error_of(name: &str) -> Option<LastError> {
    registry::by_name(name)?.errors.last()
}
