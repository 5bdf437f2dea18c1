//! `joj compare`'s rows by default are SQLite's six journal modes and WALDIO without and with
//! group sync — the JOJ and its removal side by side — and, with a device, X-FTL too; every row
//! is traced and its cross-checks hold.

mod common;

use joj_experiment::compare::{compare, default_modes};
use joj_experiment::{ExperimentError, FsChoice, RunOptions, StackError};
use joj_linux::FsKind;
use joj_workload::{DbWorkload, JournalMode};

#[test]
fn default_rows_are_the_stock_modes_and_waldio_and_xftl_with_a_device() {
    let names = |device| {
        default_modes(device)
            .into_iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(false),
        [
            "off",
            "memory",
            "wal",
            "delete",
            "truncate",
            "persist",
            "waldio",
            "waldio-gs"
        ]
    );
    assert_eq!(names(true).last().map(String::as_str), Some("xftl"));
    // Compare traces every row: a host directory cannot be compared.
    let host = compare(
        &DbWorkload::default(),
        &[JournalMode::Wal],
        &RunOptions::default(),
        |_| {},
    );
    assert!(matches!(
        host,
        Err(ExperimentError::Stack(StackError::CompareNeedsScratch))
    ));
}

#[test]
fn compare_runs_every_default_row_traced() {
    if !common::kernel_ready(&[FsKind::Ext4]) {
        return;
    }
    let opts = RunOptions {
        fs: FsChoice::Scratch(FsKind::Ext4),
        image_size_bytes: 256 << 20,
        trace_buffer_kb: 8 * 1024,
        ..RunOptions::default()
    };
    let base = DbWorkload {
        transactions: 30,
        ..DbWorkload::default()
    };
    let c = compare(&base, &default_modes(false), &opts, |_| {}).expect("compare");
    let modes: Vec<&str> = c.rows.iter().map(|r| r.mode.as_str()).collect();
    assert_eq!(modes.len(), 8);
    for row in &c.rows {
        assert!(row.result.block.is_some(), "{} was not traced", row.mode);
        common::assert_checks(&row.result);
    }
    let wal = &c.rows[2].result;
    let waldio = &c.rows[6].result;
    let fs_jnl = |r: &joj_experiment::RunResult| r.block_per_txn.as_ref().unwrap().fs_journal_bytes;
    assert!(
        fs_jnl(waldio) * 4.0 < fs_jnl(wal),
        "waldio {} B of FS journal per insert against WAL's {}",
        fs_jnl(waldio),
        fs_jnl(wal)
    );
    assert_eq!(common::leftovers(), (vec![], vec![], vec![]));
}
