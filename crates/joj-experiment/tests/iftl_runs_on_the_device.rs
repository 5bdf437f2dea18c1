//! `--journal iftl`: the workload runs through the `xftl` VFS on the i-FTL device (mapping
//! tables and the file layer's metadata in NVM): every commit is one device transaction, no
//! journal is written, no flash page is programmed for mapping — where X-FTL on the same
//! profile programs map and commit-table pages — and the file layer's inode pages reach the NVM
//! as metadata. Threads run each on their own database.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_experiment::{DevicePlan, RunOptions, Workload, run};
use joj_workload::{DbOp, DbWorkload, JournalMode};

fn on(journal: JournalMode, threads: u32) -> joj_experiment::RunResult {
    let w = DbWorkload {
        journal,
        op: DbOp::Insert,
        transactions: 100,
        threads,
        ..DbWorkload::default()
    };
    let opts = RunOptions {
        device: Some(DevicePlan::new(
            joj_device::Profile::builtin("openssd-iftl").unwrap(),
        )),
        ..RunOptions::default()
    };
    run(&Workload::Db(w), &opts).unwrap()
}

#[test]
fn iftl_commits_are_device_transactions_with_its_tables_in_nvm_and_threads_each_commit() {
    let i = on(JournalMode::Iftl, 1);
    let (d, x) = (i.device.as_ref().unwrap(), i.xftl.as_ref().unwrap());
    assert_eq!(d.txn_commits, 100, "{d:?}");
    assert_eq!(x.paths.batch_commits, 100, "{x:?}");
    assert_eq!(x.fs.journal_page_writes, 0, "{x:?}");
    assert_eq!(x.mapping_programs_per_host_page, 0.0, "{x:?}");
    let s = x.iftl.as_ref().expect("the i-FTL's own counters");
    assert_eq!(s.mapping_flash_programs, 0, "{s:?}");
    assert!(s.metadata_bytes_to_nvm > 0, "inserts grow the file: {s:?}");
    assert!(s.data_bytes_to_flash > 0, "{s:?}");
    assert_eq!(i.config.fs, "iftl");

    let x = on(JournalMode::Xftl, 1);
    let xr = x.xftl.as_ref().unwrap();
    assert!(xr.mapping_programs_per_host_page > 0.0, "{xr:?}");
    assert!(xr.iftl.is_none());

    // Threads (one test: the runner's VFS holds one device at a time in this process).
    let r = on(JournalMode::Iftl, 4);
    let d = r.device.as_ref().unwrap();
    assert_eq!(d.txn_commits, 400, "{d:?}");
    assert_eq!(d.ops, 400, "{d:?}");
    assert_eq!(r.transactions, 400);
}
