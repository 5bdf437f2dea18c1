//! X-FTL for SQLite (Kang et al., SIGMOD '13) without changing SQLite: SQLite's batch-atomic
//! writes (`SQLITE_IOCAP_BATCH_ATOMIC`) become transactions of joj's emulated eMMC.
//!
//! - [`FlashFs`]: the flash file layer — SQLite's files on the device, metadata changed inside
//!   the device's transactions, so no filesystem journal is needed.
//! - [`register`] / [`XftlVfs`]: the `xftl` VFS over a `FlashFs` attached to it
//!   ([`register_with`] for a device other than the emulated eMMC of this process).
//! - [`AppTxn`] ([`XftlVfs::begin_app`]): an application transaction — statements on several
//!   databases and writes to plain files, committed or aborted as one device transaction
//!   (`docs/formats/apptxn.md`).
//! - [`remote`]: the device served to another process over a Unix socket, so that process can
//!   be killed (`kill -9`) in the middle of a transaction while the device keeps running.
//!
//! Format and crash argument: `docs/formats/xftl.md`.
//!
//! ```no_run
//! use joj_atomic::{FlashFs, FsOptions, new_device};
//! let dev = new_device(&joj_device::Profile::builtin("galaxy-s5").unwrap()).unwrap();
//! let vfs = joj_atomic::register("xftl").unwrap();
//! vfs.attach(FlashFs::format(dev, FsOptions::default()).unwrap()).unwrap();
//! let conn = rusqlite::Connection::open_with_flags_and_vfs(
//!     "app.db",
//!     rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_CREATE,
//!     vfs.name(),
//! ).unwrap();
//! conn.execute_batch("PRAGMA page_size=8192; PRAGMA journal_mode=DELETE;").unwrap();
//! ```

pub mod apptxn;
pub mod flashfs;
pub mod remote;
mod vfs;

use std::sync::Mutex;

use joj_device::{DeviceError, Emmc, NandMedium, Profile, TransactionalDevice};
use joj_vfs::{Registered, VfsError};

pub use apptxn::AppTxn;
pub use apptxn::error::{AppTxnError, DeviceLimit};
pub use flashfs::{FileId, FlashFs, FsCounters, FsError, FsOptions, InodeError};
pub use remote::{
    ConnectionEnd, ProtocolError, RemoteDevice, ServeOptions, ServeReport, TxnWrite, serve,
};
pub use vfs::XftlCounters;

/// The calling thread's issuer number, as the `xftl` VFS names it to the device
/// (`BlockDevice::set_issuer`): one per thread.
pub fn thread_issuer() -> u32 {
    vfs::thread_issuer()
}

/// The device the VFS runs on by default: the emulated eMMC with X-FTL.
pub type XDevice = Emmc<NandMedium>;

// An application transaction moves between threads with its work.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<AppTxn<XDevice>>();
    send::<AppTxnError>();
};

/// A freshly formatted device of `profile` (page data kept: SQLite needs it back).
pub fn new_device(profile: &Profile) -> Result<XDevice, DeviceError> {
    Emmc::new(&profile.clone().with_data_mode(joj_device::DataMode::Full))
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AtomicError {
    #[error("cannot register the SQLite VFS: {0}")]
    Vfs(#[from] VfsError),
    #[error("VFS {0}: files are open; close every connection before swapping its device")]
    Busy(String),
    #[error("VFS {name} has no flash file layer attached: call XftlVfs::attach first")]
    NoFileLayer { name: String },
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(
        "VFS {name} is registered already for devices of another type; register this device \
         type under another name"
    )]
    OtherDevice { name: String },
}

/// A registered `xftl` VFS (lives for the process, as SQLite's VFS registry does) whose files
/// are on a device of type `D`.
pub struct XftlVfs<D: 'static = XDevice> {
    reg: Registered<vfs::Xftl<D>>,
}

impl<D: 'static> Clone for XftlVfs<D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<D: 'static> Copy for XftlVfs<D> {}

/// The names of every `xftl` VFS registered in this process, whatever their device type.
static REGISTERED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The last error any `xftl` VFS of this process reported (SQLite only sees a result code).
pub fn last_error() -> Option<String> {
    let names = vfs::lock(&REGISTERED);
    names
        .iter()
        .filter_map(|n| joj_vfs::last_error_of(n))
        .reduce(|a, b| if b.is_newer_than(&a) { b } else { a })
        .map(|e| e.message().to_string())
}

/// Register (once per name) an `xftl` VFS on joj's emulated eMMC. It has no device until
/// [`XftlVfs::attach`].
pub fn register(name: &str) -> Result<XftlVfs, AtomicError> {
    register_with::<XDevice>(name)
}

/// Register (once per name) an `xftl` VFS whose file layer is on devices of type `D` (for
/// example a [`RemoteDevice`]). A name registered for another device type is refused.
pub fn register_with<D: TransactionalDevice + Send + 'static>(
    name: &str,
) -> Result<XftlVfs<D>, AtomicError> {
    let mut names = vfs::lock(&REGISTERED);
    match joj_vfs::register_vfs(name, |_errors| vfs::Xftl::<D>::new(name)) {
        Ok(reg) => {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
            Ok(XftlVfs { reg })
        }
        Err(VfsError::OtherType { .. }) if names.iter().any(|n| n == name) => {
            Err(AtomicError::OtherDevice { name: name.into() })
        }
        Err(e) => Err(AtomicError::Vfs(e)),
    }
}

impl<D: TransactionalDevice + Send + 'static> XftlVfs<D> {
    fn inst(&self) -> &'static vfs::Xftl<D> {
        self.reg.vfs()
    }

    pub fn name(&self) -> &'static str {
        self.reg.name()
    }

    /// Put `fs` under this VFS (replacing a previous one, which must have no open file).
    pub fn attach(&self, fs: FlashFs<D>) -> Result<(), AtomicError> {
        if self.inst().attach(fs) {
            Ok(())
        } else {
            Err(AtomicError::Busy(self.name().into()))
        }
    }

    /// Take the file layer back (to cut its power, save it, or inspect it).
    pub fn detach(&self) -> Result<FlashFs<D>, AtomicError> {
        self.inst()
            .detach()
            .ok_or_else(|| AtomicError::Busy(self.name().into()))
    }

    /// Run `f` on the attached file layer (its device commands issued by the calling thread).
    pub fn with_fs<R>(&self, f: impl FnOnce(&mut FlashFs<D>) -> R) -> Option<R> {
        let mut g = vfs::lock(&self.inst().mounted);
        g.as_mut().map(|m| {
            m.fs.device_mut().set_issuer(vfs::thread_issuer());
            f(&mut m.fs)
        })
    }

    /// Open an application transaction (`docs/formats/apptxn.md`): one device transaction
    /// for statements on several databases and writes to plain files, until
    /// [`AppTxn::commit`] or [`AppTxn::abort`].
    pub fn begin_app(&self) -> Result<AppTxn<D>, AppTxnError> {
        AppTxn::begin(self.inst())
    }

    /// Create plain file `name` (empty, durable on return) if it does not exist, for
    /// application transactions to write.
    pub fn create_file(&self, name: &str) -> Result<(), AtomicError> {
        self.with_fs(|fs| fs.open(name, true).map(|_| ()))
            .ok_or_else(|| AtomicError::NoFileLayer {
                name: self.name().into(),
            })?
            .map_err(AtomicError::Fs)
    }

    /// How often each commit path ran (since registration).
    pub fn counters(&self) -> XftlCounters {
        self.inst().counters()
    }

    /// The last error this VFS reported.
    pub fn last_error(&self) -> Option<joj_vfs::LastError> {
        self.reg.errors().last()
    }

    /// Canary for the crash tests: application transactions write plain files outside their
    /// device transaction (plain writes, synced at once) — not atomic with their databases.
    /// Crash and abort tests must catch it.
    pub fn set_canary_files_outside_app_txns(&self, on: bool) {
        self.inst()
            .canary_files_outside
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Fault injection: the next `n` batch commits fail with `SQLITE_IOERR_WRITE` (the batch is
    /// aborted first), so SQLite takes its journal path.
    pub fn fail_next_commits(&self, n: u32) {
        self.inst()
            .fail_commits
            .store(n, std::sync::atomic::Ordering::Relaxed);
    }
}
