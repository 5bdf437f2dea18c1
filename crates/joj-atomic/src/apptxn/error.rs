//! What can end an application transaction early (`docs/formats/apptxn.md` §1): one structured
//! error per cause, each naming the transaction, which was aborted before the error returned.

use crate::flashfs::FsError;
use joj_device::{DeviceError, FtlError, Tid};

/// A limit of the device that a transaction outgrew.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceLimit {
    /// X-FTL: the X-L2P table of active transactions' pages is full.
    #[error("the device's transaction table holds {capacity} pages of open transactions")]
    TxnTable { capacity: u32 },
    /// No free block is left to write the transaction's pages to.
    #[error("the device has no free block left")]
    NoFreeBlocks,
    /// i-FTL: the `logFTL` (old pages of uncommitted transactions) in NVM is full.
    #[error("the device's logFTL holds {capacity} entries of open transactions")]
    LogFtlFull { capacity: u32 },
    /// i-FTL: every reserved log block (lazy GC's copies of old pages) holds pages open
    /// transactions still need.
    #[error("all {blocks} reserved log blocks of the device are in use")]
    LogBlocksFull { blocks: u32 },
    /// i-FTL: no NVM metadata slot is free.
    #[error("all {slots} NVM metadata slots of the device are in use")]
    NvmSlotsFull { slots: u32 },
    /// i-FTL: the table of open transactions is full.
    #[error("the device holds at most {slots} open transactions")]
    OpenTxnsFull { slots: u32 },
    /// i-FTL: the NVM cannot hold the tables.
    #[error("the device's tables need {needed_bytes} bytes of NVM, it has {nvm_bytes}")]
    NvmExhausted { needed_bytes: u64, nvm_bytes: u64 },
}

impl DeviceLimit {
    /// The limit `e` reports, if it is one (X-FTL's and i-FTL's refusals: each rejects the
    /// write without changing anything, and the device stays usable).
    pub fn of(e: &DeviceError) -> Option<DeviceLimit> {
        match e {
            DeviceError::Ftl(FtlError::XL2PFull { capacity }) => Some(DeviceLimit::TxnTable {
                capacity: *capacity,
            }),
            DeviceError::Ftl(FtlError::NoFreeBlocks) => Some(DeviceLimit::NoFreeBlocks),
            &DeviceError::Ftl(FtlError::LogFtlFull { capacity }) => {
                Some(DeviceLimit::LogFtlFull { capacity })
            }
            &DeviceError::Ftl(FtlError::LogBlocksFull { blocks }) => {
                Some(DeviceLimit::LogBlocksFull { blocks })
            }
            &DeviceError::Ftl(FtlError::NvmSlotsFull { slots }) => {
                Some(DeviceLimit::NvmSlotsFull { slots })
            }
            &DeviceError::Ftl(FtlError::TxnTableFull { slots }) => {
                Some(DeviceLimit::OpenTxnsFull { slots })
            }
            &DeviceError::Ftl(FtlError::NvmExhausted {
                needed_bytes,
                nvm_bytes,
            }) => Some(DeviceLimit::NvmExhausted {
                needed_bytes,
                nvm_bytes,
            }),
            _ => None,
        }
    }
}

/// Why an application transaction ended without committing. Every variant but `Ended` and
/// `NoFileLayer` means the transaction was aborted: every file is as before it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppTxnError {
    #[error(
        "application transaction {tid} touched {file}, which application transaction {holder} \
         holds; {tid} was aborted (retry it once {holder} ends)"
    )]
    Conflict { tid: Tid, file: String, holder: Tid },
    #[error(
        "application transaction {tid} outgrew the device ({limit}); it was aborted: split it \
         into smaller transactions"
    )]
    Outgrown {
        tid: Tid,
        limit: DeviceLimit,
        #[source]
        source: DeviceError,
    },
    #[error("application transaction {tid} was aborted after a device error: {source}")]
    Device {
        tid: Tid,
        #[source]
        source: DeviceError,
    },
    #[error("application transaction {tid} was aborted after a file-layer error: {source}")]
    FileLayer {
        tid: Tid,
        #[source]
        source: FsError,
    },
    #[error("application transaction {tid} was aborted after a failed statement: {source}")]
    Sql {
        tid: Tid,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "application transaction {tid} could not enroll schema {schema}: {reason}; it was aborted"
    )]
    NotEnrolled {
        tid: Tid,
        schema: String,
        reason: String,
    },
    #[error(
        "application transaction {tid}: a statement or BEGIN of an enrolled connection is still \
         open at commit; it was aborted (finish every statement before commit)"
    )]
    OpenStatement { tid: Tid },
    #[error(
        "application transaction {tid}: {file} is in use outside it (a SQLite lock or batch of \
         another handle); it was aborted (retry it)"
    )]
    Busy { tid: Tid, file: String },
    #[error(
        "application transaction {tid}: SQLite needed to write a rollback journal for {database}, \
         which would hold the transaction's changes outside it; it was aborted. SQLite writes one \
         outside journal_mode=OFF when its cache spills, when the database is empty or one SQL \
         transaction writes several databases (no batch-atomic write then), and to roll back a \
         hot journal a crash left: use journal_mode=OFF, or a cache_size that holds the \
         transaction, or open the database once outside any application transaction"
    )]
    JournalRefused { tid: Tid, database: String },
    #[error(
        "application transaction {tid}: an SQL transaction on {file} of a connection enrolled in \
         it ended without a commit (a ROLLBACK, a failed autocommit statement, or the connection \
         closed inside BEGIN) after SQLite had written some of its pages, which its rollback \
         does not restore inside an application transaction; it was aborted (roll back through \
         the API: abort, then retry the whole transaction)"
    )]
    RolledBack { tid: Tid, file: String },
    #[error("cannot begin an application transaction: {source}")]
    Begin {
        #[source]
        source: DeviceError,
    },
    #[error("application transaction {tid} has ended already (committed or aborted)")]
    Ended { tid: Tid },
    #[error("no flash file layer is attached to VFS {vfs}: call XftlVfs::attach first")]
    NoFileLayer { vfs: String },
}

impl AppTxnError {
    /// The error for device error `e` inside transaction `tid`.
    pub fn from_device(tid: Tid, e: DeviceError) -> AppTxnError {
        if let Some(limit) = DeviceLimit::of(&e) {
            return AppTxnError::Outgrown {
                tid,
                limit,
                source: e,
            };
        }
        if let DeviceError::Ftl(FtlError::TxnConflict { lpn, holder, .. }) = &e {
            return AppTxnError::Conflict {
                tid,
                file: format!("logical page {lpn}"),
                holder: Tid(*holder),
            };
        }
        AppTxnError::Device { tid, source: e }
    }

    /// The error for file-layer error `e` inside transaction `tid`.
    pub fn from_fs(tid: Tid, e: FsError) -> AppTxnError {
        match e {
            FsError::Device(d) => AppTxnError::from_device(tid, d),
            e => AppTxnError::FileLayer { tid, source: e },
        }
    }

    /// Whether the transaction lost a conflict (retrying it may succeed).
    pub fn is_conflict(&self) -> bool {
        matches!(self, AppTxnError::Conflict { .. })
    }
}
