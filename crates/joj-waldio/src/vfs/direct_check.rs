//! Whether a database's directory takes waldio's WAL, asked before the database is first marked.
//!
//! The mark goes on with the header write that puts the database in WAL mode (SQLite's
//! `PRAGMA journal_mode=WAL`, or the `waldio_journal=wal` switch); the WAL opens at the next
//! transaction. A filesystem that refuses direct I/O — a FUSE filesystem that fails an
//! `O_DIRECT` open, or accepts it and fails the write — then left a database that neither
//! waldio (its WAL cannot open) nor a stock SQLite (the mark) could open, and the documented
//! way back (`PRAGMA journal_mode=DELETE` through waldio) needs the WAL too: the probe of
//! 2026-11-29 (docs/robustness.md H149). The header write is refused instead, before a byte of
//! it is written: SQLite rolls the switch back from its rollback journal, and the database
//! stays as it was, in its rollback mode, readable by any SQLite.

use crate::io::{AlignedBuf, DirectFile, WalIo};
use joj_vfs::{ResultCode, SqliteError};
use std::path::Path;

/// Check that waldio can keep `db`'s WAL with direct I/O: a WAL there opens with `O_DIRECT`,
/// and a direct write of one block goes through — into a file made for the check (`O_EXCL`:
/// nothing else is ever removed; it never held a header, and the WAL's open makes it again),
/// or into an empty one already there (a crash during an earlier check, a log whose
/// preallocation failed: a filesystem that takes the open and fails the write leaves one),
/// cut back to empty after. A log with content is only opened: it was written before.
pub(crate) fn takes_the_wal(db: &Path) -> Result<(), SqliteError> {
    let mut logical = db.as_os_str().to_owned();
    logical.push("-wal");
    let wal = &super::wal_name::physical(Path::new(&logical));
    let checked = match DirectFile::create_new(wal, 0o600) {
        Ok(f) => {
            let wrote = write_a_block(f);
            // A leftover of a crash before this is empty or a block of zeros: a WAL never
            // headed, which waldio reads as absent (docs/formats/waldio.md, case 5).
            let _ = std::fs::remove_file(wal);
            wrote
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => already_there(wal),
        Err(e) => {
            // An `O_DIRECT` open refused with `EINVAL` has made the file already: this check's,
            // by `O_EXCL`, if it is there now and empty.
            let ours = std::fs::symlink_metadata(wal).is_ok_and(|m| m.is_file() && m.len() == 0);
            if ours {
                let _ = std::fs::remove_file(wal);
            }
            Err(e)
        }
    };
    checked.map_err(|e| refused(db, wal, &e))
}

fn write_a_block(mut f: DirectFile) -> std::io::Result<()> {
    let block = AlignedBuf::zeroed(f.dio_align() as usize);
    f.write_at(&block, 0, false)
}

/// The WAL at the name before the check: opened with `O_DIRECT`, and when empty, written and
/// cut back to empty.
fn already_there(wal: &Path) -> std::io::Result<()> {
    let mut f = DirectFile::open(wal, false, 0o600, None)?;
    if f.read_only() || f.len()? > 0 {
        return Ok(());
    }
    let block = AlignedBuf::zeroed(f.dio_align() as usize);
    let wrote = f.write_at(&block, 0, false);
    f.set_len(0)?;
    wrote
}

fn refused(db: &Path, wal: &Path, e: &std::io::Error) -> SqliteError {
    let why = if e.raw_os_error() == Some(libc::EINVAL) {
        "the filesystem refuses direct I/O (O_DIRECT), which waldio's WAL is written with \
         (some FUSE filesystems refuse it at the open, others at the first write)"
    } else {
        "waldio could not make its WAL there with direct I/O"
    };
    SqliteError::with_message(
        ResultCode::IOERR_WRITE,
        format!(
            "{}: not put in WAL mode through waldio: {why} ({}: {e}); the database stays in its \
             rollback-journal mode, unchanged and readable by any SQLite; fix: keep the \
             database on a filesystem that takes direct I/O (ext4, xfs, btrfs, tmpfs), or open \
             it without vfs=waldio",
            db.display(),
            wal.display()
        ),
    )
}
