//! `joj restart`'s measurement: a power cut inside a commit in delete, wal, xftl and iftl mode, a
//! restart that recovers exactly the acknowledged transactions (or the durable one more),
//! passes `integrity_check`, and is timed through the device profile; nothing is left behind.

mod common;

use joj_experiment::restart::{RestartOptions, measure};
use joj_linux::FsKind;
use joj_workload::JournalMode;
use joj_workload::paper::PaperWorkload;

#[test]
fn each_mode_recovers_what_it_acknowledged_and_pays_for_its_log() {
    if !common::kernel_ready(&[FsKind::Ext4]) {
        return;
    }
    let before = common::leftovers();
    let opts = RestartOptions {
        workload: PaperWorkload::synthetic(5),
        modes: vec![
            JournalMode::Delete,
            JournalMode::Wal,
            JournalMode::Xftl,
            JournalMode::Iftl,
        ],
        profile: joj_device::Profile::load("galaxy-s5").unwrap(),
        transactions: 60,
        runs: 2,
        page_size: 8192,
        seed: 7,
        fs: FsKind::Ext4,
        image_size_bytes: 256 << 20,
        trace_buffer_kb: 8 * 1024,
    };
    let mut heard = 0;
    let report = measure(&opts, |_, _| heard += 1).expect("restart measurement");
    assert_eq!(heard, 8);
    assert_eq!(report.rows.len(), 4);
    for row in &report.rows {
        assert_eq!(row.runs.len(), 2);
        for run in &row.runs {
            let mode = row.mode.as_str();
            assert!(
                (run.acknowledged..=run.acknowledged + 1).contains(&run.recovered),
                "{mode}: {run:?}"
            );
            assert_eq!(run.acknowledged + 1, run.crash_in_txn);
            assert!(run.restart_ms > 0.0 && run.reads > 0, "{mode}: {run:?}");
            match mode {
                "delete" => {
                    // A hot journal: its pages are copied back and the database synced.
                    assert!(run.log_bytes > 5 * 8192, "{run:?}");
                    assert!(run.writes >= 5 && run.flushes >= 1, "{run:?}");
                    assert_eq!(run.recovered, run.acknowledged, "the cut commit rolls back");
                    assert!(run.not_counted_ms.fs_mount_ms.is_some());
                }
                "wal" => {
                    // The cut came after the commit's WAL sync: it is durable.
                    assert_eq!(run.recovered, run.crash_in_txn, "{run:?}");
                    let frames = run.wal_frames.expect("a WAL run counts its frames");
                    assert!(frames >= 6, "{run:?}");
                    assert!(run.checkpoint_ms.unwrap() > 0.0, "{run:?}");
                }
                "xftl" => {
                    assert_eq!(run.log_bytes, 0);
                    assert_eq!(run.writes, 0, "an X-FTL restart copies nothing: {run:?}");
                    assert!(run.xl2p_load_ms.is_some());
                    assert!(run.not_counted_ms.device_recovery_ms.unwrap() > 0.0);
                }
                "iftl" => {
                    assert_eq!(run.log_bytes, 0);
                    assert_eq!(run.writes, 0, "an i-FTL restart copies nothing: {run:?}");
                    let algorithm1 = run.logftl_recovery_ms.expect("Algorithm 1 is counted");
                    let whole = run.not_counted_ms.device_recovery_ms.unwrap();
                    assert!(0.0 < algorithm1 && algorithm1 < whole, "{run:?}");
                }
                other => panic!("unexpected mode {other}"),
            }
        }
    }
    let mean = |m: &str| {
        report
            .rows
            .iter()
            .find(|r| r.mode == m)
            .unwrap()
            .mean_restart_ms
    };
    println!(
        "restart ms: delete {:.2}, wal {:.2}, xftl {:.3}, iftl {:.3}",
        mean("delete"),
        mean("wal"),
        mean("xftl"),
        mean("iftl")
    );
    assert_eq!(common::leftovers(), before, "nothing left behind");
}
