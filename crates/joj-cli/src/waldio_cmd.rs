//! `joj waldio`: convert a database for the waldio VFS, and inspect a waldio WAL file.

use crate::output::CliResult;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args)]
pub struct WaldioArgs {
    #[command(subcommand)]
    command: WaldioCommand,
}

#[derive(Subcommand)]
enum WaldioCommand {
    /// Give an existing database the 24 reserved bytes per page waldio needs (VACUUM through
    /// SQLite's default VFS; a stock WAL is checkpointed first) and put it in WAL mode.
    Convert {
        /// The database file.
        db: PathBuf,
    },
    /// Show a database's page size and reserve and its WAL's header block.
    Inspect {
        /// The database file (its WAL is DB-wal).
        db: PathBuf,
    },
}

/// The database a name on the command line leads to, its links resolved as SQLite resolves a
/// database's name before it opens it (so that the header is read, and the WAL found, where
/// SQLite would; a link was refused with `Too many levels of symbolic links`). A name that
/// leads nowhere is kept, for the error that names it.
fn as_sqlite_names(db: PathBuf) -> PathBuf {
    std::fs::canonicalize(&db).unwrap_or(db)
}

pub fn main(a: WaldioArgs) -> CliResult {
    match a.command {
        WaldioCommand::Convert { db } => {
            let db = as_sqlite_names(db);
            let r = joj_waldio::convert(&db)?;
            if r.vacuumed {
                outln!(
                    "{}: reserve {} -> {} bytes per page (page size {}), journal_mode=WAL through waldio",
                    db.display(),
                    r.reserve_before,
                    r.reserve_after,
                    r.page_size
                )?;
            } else {
                outln!(
                    "{}: already had {} reserved bytes per page; journal_mode=WAL through waldio",
                    db.display(),
                    r.reserve_before
                )?;
            }
            Ok(())
        }
        WaldioCommand::Inspect { db } => {
            let db = as_sqlite_names(db);
            // waldio's own file; else what is at SQLite's name (a stock WAL, or a waldio WAL
            // from before the rename, which the next waldio open moves).
            let wal = match joj_waldio::wal_path(&db) {
                w if w.exists() => w,
                w => Some(joj_waldio::sqlite_wal_path(&db))
                    .filter(|s| s.exists())
                    .unwrap_or(w),
            };
            let (page, reserve) = joj_waldio::existing_db_header(&db)?;
            outln!(
                "{}: page size {page} B, {reserve} reserved bytes per page",
                db.display()
            )?;
            // Only its size and first block are needed: a WAL of any size is read no further,
            // and a device or FIFO at its name is refused unread.
            let input = match joj_trace::input::open(&wal, u64::MAX, "a waldio WAL") {
                Ok(i) => i,
                Err(joj_trace::InputError::Open { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    outln!("{}: no WAL file", wal.display())?;
                    return Ok(());
                }
                Err(e) => return Err(e.into()),
            };
            let len = input.size_bytes;
            let mut bytes = vec![0u8; len.min(4096) as usize];
            std::os::unix::fs::FileExt::read_exact_at(&input.file, &mut bytes, 0).map_err(
                |source| joj_trace::InputError::Read {
                    path: wal.clone(),
                    source,
                },
            )?;
            if len == 0 {
                outln!(
                    "{}: empty (waldio has not written a WAL header yet)",
                    wal.display()
                )?;
                return Ok(());
            }
            match joj_waldio::layout::HeaderBlock::decode(&bytes[..bytes.len().min(4096)]) {
                joj_waldio::layout::Decoded::Waldio(h) => {
                    let blocks = len / u64::from(h.block_bytes);
                    outln!(
                        "{}: waldio WAL v{}, block {} B, {} blocks ({} frame slots), logical WAL {}",
                        wal.display(),
                        joj_waldio::layout::FORMAT_VERSION,
                        h.block_bytes,
                        blocks,
                        blocks.saturating_sub(1),
                        if h.wal_header.is_some() {
                            "present"
                        } else {
                            "absent (deleted or truncated by SQLite)"
                        }
                    )?;
                }
                other => outln!("{}: {other}", wal.display())?,
            }
            Ok(())
        }
    }
}
