//! What the waldio VFS did to its WAL files (process-wide per registered VFS).

use std::sync::atomic::{AtomicU64, Ordering};

joj_vfs::atomic_counter_set! {
    WaldioCounters, AtomicWaldioCounters;
    commits: "Commit frames written by SQLite.",
    direct_writes: "Direct-I/O write calls carrying log blocks (frames or header block).",
    direct_write_bytes: "Bytes in those writes.",
    dsync_writes: "Of those, writes issued with RWF_DSYNC (option fua).",
    wal_syncs: "fdatasync calls on the WAL outside preallocation.",
    group_writes: "Writes of the group-sync frame buffer.",
    header_writes: "Header-block writes (WAL restart, logical delete or truncate).",
    rmw_reads: "Blocks read back to complete a partial write.",
    read_calls: "Logical reads served.",
    direct_read_bytes: "Bytes read from the file with direct I/O.",
    prealloc_bytes: "Zero bytes written to preallocate or extend WAL files.",
    prealloc_syncs: "fdatasync calls that made a preallocation durable (explicit journaling).",
    short_extensions: "Extensions cut to the blocks one write needed: the one the options ask for did not fit in the free space less a spare (a nearly full disk).",
    rollback_journal_opens: "Rollback journals opened through waldio: transactions of a database not in WAL mode, for which waldio is not in use.",
    switched_to_wal: "Databases switched to WAL mode at a commit (option waldio_journal=wal).",
    foreign_wal_indexes: "Wal-indexes found not to index the waldio WAL (a SQLite without waldio built them from its own -wal) and invalidated, so that SQLite rebuilt them from the waldio WAL.",
}

/// Add `n` to one counter.
pub(crate) fn bump(field: &AtomicU64, n: u64) {
    field.fetch_add(n, Ordering::Relaxed);
}
