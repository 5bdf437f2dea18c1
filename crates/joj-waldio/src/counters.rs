//! What the waldio VFS did to its WAL files (process-wide per registered VFS).

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! counters {
    ($($field:ident: $doc:literal),* $(,)?) => {
        /// A snapshot of the counters.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct WaldioCounters {
            $(#[doc = $doc] pub $field: u64,)*
        }

        #[derive(Default)]
        #[doc(hidden)]
        pub struct AtomicWaldioCounters {
            $(pub(crate) $field: AtomicU64,)*
        }

        impl AtomicWaldioCounters {
            pub fn snapshot(&self) -> WaldioCounters {
                WaldioCounters { $($field: self.$field.load(Ordering::Relaxed),)* }
            }
        }

        impl WaldioCounters {
            /// `self - before`, field by field.
            pub fn delta(&self, before: &WaldioCounters) -> WaldioCounters {
                WaldioCounters { $($field: self.$field.saturating_sub(before.$field),)* }
            }
        }
    };
}

counters! {
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
}

/// Add `n` to one counter.
pub(crate) fn bump(field: &AtomicU64, n: u64) {
    field.fetch_add(n, Ordering::Relaxed);
}
