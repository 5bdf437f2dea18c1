//! Cross-checks: counts from two independent observers that must agree. What SQLite wrote
//! through the VFS and synced must reach the block layer as at least as many bytes of the same
//! file, and every sync call of a file must reach the device as a flush.

use std::path::PathBuf;

use joj_trace::totals::BlockTotals;
use joj_vfs::IoCounters;
use joj_waldio::WaldioCounters;
use joj_workload::{FileSync, Synchronous};

use crate::result::Check;
use crate::stack::{Stack, Workload};

fn at_least(name: &str, block_bytes: u64, vfs_bytes: u64) -> Check {
    Check {
        name: name.to_string(),
        ok: block_bytes >= vfs_bytes,
        detail: format!("block layer {block_bytes} B ≥ written through the VFS {vfs_bytes} B"),
    }
}

/// Every sync of a file (the directory syncs SQLite adds need not flush: their change may
/// already be in the journal commit of the file's sync) is a flush at the device. Threads
/// syncing at once may share one flush (the block layer merges flushes in flight), so with
/// `threads` threads a flush may stand for up to that many syncs.
/// waldio's own syncs of its WAL (`waldio_syncs`: made on its direct-I/O descriptor, which the
/// accounting VFS below it never sees) count as syncs of files.
fn flushes(block: &BlockTotals, vfs: &IoCounters, waldio_syncs: u64, threads: u32) -> Check {
    let syncs = (vfs.fsync + vfs.fdatasync).saturating_sub(vfs.dir_syncs) + waldio_syncs;
    let needed = syncs.div_ceil(u64::from(threads.max(1)));
    let shared = if threads > 1 {
        format!(", at least one per {threads} syncs of {threads} threads")
    } else {
        String::new()
    };
    let own = if waldio_syncs > 0 {
        format!(", {waldio_syncs} of them waldio's of its WAL")
    } else {
        String::new()
    };
    Check {
        name: "flushes".into(),
        ok: block.flushes >= needed,
        detail: format!(
            "{} flush requests for {} sync calls ({syncs} of files{own}{shared})",
            block.flushes,
            vfs.fsync + vfs.fdatasync + waldio_syncs
        ),
    }
}

/// A steady-state WAL run starts with every WAL at its final size: each existed when the
/// window began and none grew (or was created) in it, so the window measures overwrites of
/// allocated blocks, not the WAL's growth. A WAL absent or empty from start to end (a read-only
/// window) is steady too.
pub(super) fn steady_wal(
    start: &[(PathBuf, Option<u64>)],
    end: &[(PathBuf, Option<u64>)],
) -> Check {
    let mut problems = Vec::new();
    for (wal, at_start) in start {
        let at_end = end.iter().find(|(p, _)| p == wal).and_then(|(_, s)| *s);
        let name = wal
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        match (at_start, at_end) {
            // Nothing went to the WAL in the window (a read-only workload): steady too.
            (None | Some(0), None | Some(0)) => {}
            (None | Some(0), Some(b)) => problems.push(format!(
                "{name} did not exist at the start and held {b} B at the end"
            )),
            (Some(a), Some(b)) if b != *a => {
                problems.push(format!("{name} grew from {a} B to {b} B"));
            }
            (Some(_), None) => problems.push(format!("{name} was gone at the end")),
            _ => {}
        }
    }
    let sizes: Vec<String> = start
        .iter()
        .map(|(_, s)| s.map_or("none".into(), |b| format!("{b} B")))
        .collect();
    Check {
        name: "steady_wal".into(),
        ok: !start.is_empty() && problems.is_empty(),
        detail: if problems.is_empty() {
            format!(
                "{} WAL file(s) at their final size from the start ({})",
                start.len(),
                sizes.join(", ")
            )
        } else {
            problems.join("; ")
        },
    }
}

/// The cross-checks that apply to this run.
pub(super) fn cross_checks(
    stack: &Stack,
    workload: &Workload,
    vfs: &IoCounters,
    waldio: Option<&WaldioCounters>,
    block: &BlockTotals,
) -> Vec<Check> {
    let mut checks = Vec::new();
    match (workload, &stack.sqlite) {
        (Workload::Db(w), Some(sqlite)) => {
            // The level asked for (WALDIO's option may run SQLite at another, see the stack).
            let synced = w.synchronous != Synchronous::Off;
            // waldio writes its WAL itself, not through the VFS below it: its own check
            // (`waldio_wal_bytes`, below) stands for this one.
            if synced
                && sqlite.journal.is_wal()
                && w.synchronous == Synchronous::Full
                && waldio.is_none()
            {
                checks.push(at_least("wal_bytes", block.data_by_role.wal, vfs.wal_bytes));
            }
            if synced && sqlite.journal.is_rollback_file() {
                checks.push(at_least(
                    "rollback_journal_bytes",
                    block.data_by_role.rollback_journal,
                    vfs.rollback_journal_bytes,
                ));
                checks.push(at_least(
                    "database_bytes",
                    block.data_by_role.database,
                    vfs.database_bytes,
                ));
            }
            let waldio_syncs = waldio.map_or(0, |wc| wc.wal_syncs + wc.prealloc_syncs);
            if synced && vfs.fsync + vfs.fdatasync + waldio_syncs > 0 {
                checks.push(flushes(block, vfs, waldio_syncs, w.threads));
            }
        }
        (Workload::File(w), _) => {
            if w.access.is_write() && w.sync != FileSync::Buffered {
                checks.push(at_least(
                    "file_bytes",
                    block.data_by_role.other,
                    vfs.other_bytes,
                ));
            }
        }
        (Workload::Db(_), None) => {}
    }
    if let Some(wc) = waldio {
        // Every direct write of log blocks reached the block layer as WAL data.
        let wal = block.data_by_role.wal;
        checks.push(Check {
            name: "waldio_wal_bytes".to_string(),
            ok: wal >= wc.direct_write_bytes,
            detail: format!(
                "block layer {wal} B ≥ waldio's direct log writes {} B",
                wc.direct_write_bytes
            ),
        });
    }
    checks
}

/// The devices' own counters over the window against the trace: the same sectors written and
/// flushes, and as many write I/Os as the writes issued plus the empty preflush write bios (an
/// `fsync` whose file needed no journal commit sends one; the block layer counts it as a write
/// request but issues a flush for it — see `joj_linux::diskstats`).
pub(super) fn kernel_counters(
    k: &joj_linux::diskstats::DiskStats,
    b: &BlockTotals,
    empty_preflush: u64,
) -> Check {
    let writes = b.write_requests + empty_preflush;
    Check {
        name: "kernel_counters".into(),
        ok: k.write_ios == writes
            && k.write_sectors * 512 == b.write_bytes
            && k.flush_ios == b.flushes,
        detail: format!(
            "the devices' stat: {} write I/Os = {} writes issued + {} empty preflush writes \
             (issued as flushes); {} B written = {} B traced; {} flushes = {} traced",
            k.write_ios,
            b.write_requests,
            empty_preflush,
            k.write_sectors * 512,
            b.write_bytes,
            k.flush_ios,
            b.flushes
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syncs(fdatasync: u64, dir_syncs: u64) -> IoCounters {
        IoCounters {
            fdatasync,
            dir_syncs,
            ..IoCounters::default()
        }
    }

    fn flushed(n: u64) -> BlockTotals {
        BlockTotals {
            flushes: n,
            ..BlockTotals::default()
        }
    }

    #[test]
    fn one_flush_does_not_cover_many_syncs() {
        // 10 syncs of files (and 2 of directories) need 10 flushes.
        assert!(!flushes(&flushed(1), &syncs(12, 2), 0, 1).ok);
        assert!(!flushes(&flushed(9), &syncs(12, 2), 0, 1).ok);
        assert!(flushes(&flushed(10), &syncs(12, 2), 0, 1).ok);
        // Two threads may share each flush.
        assert!(flushes(&flushed(5), &syncs(12, 2), 0, 2).ok);
        assert!(!flushes(&flushed(4), &syncs(12, 2), 0, 2).ok);
    }

    #[test]
    fn waldios_own_syncs_of_its_wal_need_flushes_too() {
        // One sync through the VFS (the database's, at close) and 1000 of waldio's WAL: 1001
        // flushes needed, and the detail says whose the syncs were.
        let c = flushes(&flushed(1000), &syncs(1, 0), 1000, 1);
        assert!(!c.ok, "{}", c.detail);
        let c = flushes(&flushed(1001), &syncs(1, 0), 1000, 1);
        assert!(c.ok, "{}", c.detail);
        assert!(
            c.detail
                .contains("for 1001 sync calls (1001 of files, 1000 of them waldio's"),
            "{}",
            c.detail
        );
    }

    #[test]
    fn a_steady_wal_neither_appears_nor_grows() {
        let wal = |s: Option<u64>| vec![(PathBuf::from("/d/joj-0.db-wal"), s)];
        assert!(steady_wal(&wal(Some(8192)), &wal(Some(8192))).ok);
        assert!(!steady_wal(&wal(Some(8192)), &wal(Some(12288))).ok);
        assert!(!steady_wal(&wal(None), &wal(Some(8192))).ok);
        assert!(!steady_wal(&wal(Some(8192)), &wal(None)).ok);
        assert!(!steady_wal(&[], &[]).ok);
        // A read-only window writes no WAL: absent or empty from start to end is steady (a
        // probe of 2026-11-28: `joj speed --op select` reported "checks failed" every round).
        assert!(steady_wal(&wal(None), &wal(None)).ok);
        assert!(steady_wal(&wal(Some(0)), &wal(Some(0))).ok);
        assert!(!steady_wal(&wal(Some(0)), &wal(Some(4096))).ok);
    }
}
