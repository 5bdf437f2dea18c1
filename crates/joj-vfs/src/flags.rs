//! Safe types for the integer arguments of SQLite's VFS calls: open flags, access checks, lock
//! levels, sync flags, shared-memory lock flags and device characteristics. Each keeps SQLite's
//! bits unchanged, so a VFS that forwards them passes exactly what SQLite gave it.

use libsqlite3_sys as ffi;
use std::ffi::c_int;
use std::fmt;

/// The flags of `xOpen`: what kind of file, and how to open it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct OpenFlags(c_int);

/// The kind of file SQLite opens (one of the `SQLITE_OPEN_*` kind bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    MainDb,
    MainJournal,
    TempDb,
    TempJournal,
    TransientDb,
    SubJournal,
    SuperJournal,
    Wal,
    /// No kind bit set (not something SQLite's core opens).
    Other,
}

impl OpenFlags {
    pub const fn from_raw(bits: c_int) -> OpenFlags {
        OpenFlags(bits)
    }

    pub const fn bits(self) -> c_int {
        self.0
    }

    fn has(self, bit: c_int) -> bool {
        self.0 & bit != 0
    }

    pub fn kind(self) -> FileKind {
        const KINDS: [(c_int, FileKind); 8] = [
            (ffi::SQLITE_OPEN_MAIN_DB, FileKind::MainDb),
            (ffi::SQLITE_OPEN_MAIN_JOURNAL, FileKind::MainJournal),
            (ffi::SQLITE_OPEN_TEMP_DB, FileKind::TempDb),
            (ffi::SQLITE_OPEN_TEMP_JOURNAL, FileKind::TempJournal),
            (ffi::SQLITE_OPEN_TRANSIENT_DB, FileKind::TransientDb),
            (ffi::SQLITE_OPEN_SUBJOURNAL, FileKind::SubJournal),
            (ffi::SQLITE_OPEN_SUPER_JOURNAL, FileKind::SuperJournal),
            (ffi::SQLITE_OPEN_WAL, FileKind::Wal),
        ];
        KINDS
            .iter()
            .find(|(bit, _)| self.has(*bit))
            .map_or(FileKind::Other, |(_, kind)| *kind)
    }

    /// `SQLITE_OPEN_CREATE`: create the file if it does not exist.
    pub fn create(self) -> bool {
        self.has(ffi::SQLITE_OPEN_CREATE)
    }

    pub fn read_only(self) -> bool {
        self.has(ffi::SQLITE_OPEN_READONLY)
    }

    pub fn read_write(self) -> bool {
        self.has(ffi::SQLITE_OPEN_READWRITE)
    }

    /// These flags as `xOpen` answers them for a file it could open for reading only:
    /// `SQLITE_OPEN_READONLY` instead of `READWRITE` and `CREATE` (SQLite's unix VFS does so).
    pub const fn opened_read_only(self) -> OpenFlags {
        OpenFlags(
            (self.0 & !(ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_CREATE))
                | ffi::SQLITE_OPEN_READONLY,
        )
    }

    /// `SQLITE_OPEN_DELETEONCLOSE`: the file is gone once closed.
    pub fn delete_on_close(self) -> bool {
        self.has(ffi::SQLITE_OPEN_DELETEONCLOSE)
    }

    pub fn exclusive(self) -> bool {
        self.has(ffi::SQLITE_OPEN_EXCLUSIVE)
    }
}

impl fmt::Debug for OpenFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OpenFlags({:?}, {:#x})", self.kind(), self.0)
    }
}

/// What `xAccess` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The file exists.
    Exists,
    /// The file is readable and writable.
    ReadWrite,
    /// The file is readable.
    Read,
}

impl Access {
    /// `None` for a value SQLite does not define.
    pub const fn from_raw(v: c_int) -> Option<Access> {
        match v {
            ffi::SQLITE_ACCESS_EXISTS => Some(Access::Exists),
            ffi::SQLITE_ACCESS_READWRITE => Some(Access::ReadWrite),
            ffi::SQLITE_ACCESS_READ => Some(Access::Read),
            _ => None,
        }
    }

    pub const fn raw(self) -> c_int {
        match self {
            Access::Exists => ffi::SQLITE_ACCESS_EXISTS,
            Access::ReadWrite => ffi::SQLITE_ACCESS_READWRITE,
            Access::Read => ffi::SQLITE_ACCESS_READ,
        }
    }
}

/// SQLite's file lock levels, in order: a connection moves up one level at a time (SHARED to
/// read, RESERVED to start writing, PENDING then EXCLUSIVE to write the database file) and back
/// down to SHARED or NONE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum LockLevel {
    #[default]
    None,
    Shared,
    Reserved,
    Pending,
    Exclusive,
}

impl LockLevel {
    /// `None` for a value SQLite does not define.
    pub const fn from_raw(v: c_int) -> Option<LockLevel> {
        match v {
            ffi::SQLITE_LOCK_NONE => Some(LockLevel::None),
            ffi::SQLITE_LOCK_SHARED => Some(LockLevel::Shared),
            ffi::SQLITE_LOCK_RESERVED => Some(LockLevel::Reserved),
            ffi::SQLITE_LOCK_PENDING => Some(LockLevel::Pending),
            ffi::SQLITE_LOCK_EXCLUSIVE => Some(LockLevel::Exclusive),
            _ => None,
        }
    }

    pub const fn raw(self) -> c_int {
        match self {
            LockLevel::None => ffi::SQLITE_LOCK_NONE,
            LockLevel::Shared => ffi::SQLITE_LOCK_SHARED,
            LockLevel::Reserved => ffi::SQLITE_LOCK_RESERVED,
            LockLevel::Pending => ffi::SQLITE_LOCK_PENDING,
            LockLevel::Exclusive => ffi::SQLITE_LOCK_EXCLUSIVE,
        }
    }
}

/// The flags of `xSync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncFlags(c_int);

impl SyncFlags {
    pub const fn from_raw(bits: c_int) -> SyncFlags {
        SyncFlags(bits)
    }

    pub const fn bits(self) -> c_int {
        self.0
    }

    /// `SQLITE_SYNC_FULL` (else `SQLITE_SYNC_NORMAL`).
    pub fn full(self) -> bool {
        self.0 & 0x0f == ffi::SQLITE_SYNC_FULL
    }

    /// `SQLITE_SYNC_DATAONLY`: the file's size and other metadata need not be synced.
    pub fn data_only(self) -> bool {
        self.0 & ffi::SQLITE_SYNC_DATAONLY != 0
    }
}

/// The flags of `xShmLock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShmLockFlags(c_int);

impl ShmLockFlags {
    pub const fn from_raw(bits: c_int) -> ShmLockFlags {
        ShmLockFlags(bits)
    }

    pub const fn bits(self) -> c_int {
        self.0
    }

    /// Take the locks (else release them).
    pub fn lock(self) -> bool {
        self.0 & ffi::SQLITE_SHM_LOCK != 0
    }

    /// Exclusive (else shared).
    pub fn exclusive(self) -> bool {
        self.0 & ffi::SQLITE_SHM_EXCLUSIVE != 0
    }
}

/// What a file promises about how writes reach its medium (`xDeviceCharacteristics`). Declare
/// only what is truly guaranteed: SQLite skips work on the strength of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeviceCharacteristics(c_int);

impl DeviceCharacteristics {
    pub const NONE: DeviceCharacteristics = DeviceCharacteristics(0);
    /// A write changes only the bytes written, torn or not (WAL skips sector padding).
    pub const POWERSAFE_OVERWRITE: DeviceCharacteristics =
        DeviceCharacteristics(ffi::SQLITE_IOCAP_POWERSAFE_OVERWRITE);
    /// The writes between `BEGIN_ATOMIC_WRITE` and `COMMIT_ATOMIC_WRITE` land all or none.
    pub const BATCH_ATOMIC: DeviceCharacteristics =
        DeviceCharacteristics(ffi::SQLITE_IOCAP_BATCH_ATOMIC);
    pub const SAFE_APPEND: DeviceCharacteristics =
        DeviceCharacteristics(ffi::SQLITE_IOCAP_SAFE_APPEND);
    pub const SEQUENTIAL: DeviceCharacteristics =
        DeviceCharacteristics(ffi::SQLITE_IOCAP_SEQUENTIAL);

    pub const fn from_raw(bits: c_int) -> DeviceCharacteristics {
        DeviceCharacteristics(bits)
    }

    pub const fn bits(self) -> c_int {
        self.0
    }

    pub const fn contains(self, other: DeviceCharacteristics) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for DeviceCharacteristics {
    type Output = DeviceCharacteristics;
    fn bitor(self, rhs: DeviceCharacteristics) -> DeviceCharacteristics {
        DeviceCharacteristics(self.0 | rhs.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_levels_keep_sqlite_numbers_and_order() {
        let all = [
            LockLevel::None,
            LockLevel::Shared,
            LockLevel::Reserved,
            LockLevel::Pending,
            LockLevel::Exclusive,
        ];
        for (i, l) in all.iter().enumerate() {
            assert_eq!(l.raw(), i as c_int);
            assert_eq!(LockLevel::from_raw(l.raw()), Some(*l));
        }
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(LockLevel::from_raw(5), None);
    }

    #[test]
    fn open_flags_name_the_kind_and_keep_the_bits() {
        let f = OpenFlags::from_raw(
            ffi::SQLITE_OPEN_WAL | ffi::SQLITE_OPEN_CREATE | ffi::SQLITE_OPEN_READWRITE,
        );
        assert_eq!(f.kind(), FileKind::Wal);
        assert!(f.create() && f.read_write() && !f.read_only() && !f.delete_on_close());
        assert_eq!(OpenFlags::from_raw(f.bits()), f);
        assert_eq!(OpenFlags::from_raw(0).kind(), FileKind::Other);
        let d = DeviceCharacteristics::BATCH_ATOMIC | DeviceCharacteristics::POWERSAFE_OVERWRITE;
        assert!(d.contains(DeviceCharacteristics::BATCH_ATOMIC));
        assert!(!d.contains(DeviceCharacteristics::SEQUENTIAL));
    }
}
