//! Restart after a power cut: i-FTL's modeled recovery time is NVM work only — the header, the
//! transaction table, the live logFTL entries, the restores, one scan of `dataFTL` — and no
//! flash read; it grows with the live log. Printed next to X-FTL's recovery time (checkpoint
//! load, OOB scan, commit table) on the same workload.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

#[path = "common/iftl.rs"]
mod common;

use common::{LOGICAL_PAGES, device, ftl_config, geometry, iftl_config, page};
use joj_device::{DataMode, Ftl, IFtl, Lpn, Medium, NandMedium, Timing, WriteKind};

/// Run `open_pages` writes of an open transaction after `committed` committed ones, cut, and
/// recover; returns i-FTL's report.
fn iftl_cut(committed: u32, open_pages: u32) -> joj_device::IftlRecoveryReport {
    let mut f = device();
    let mut now = 0;
    let (t, d) = f.begin(now).unwrap();
    now = d;
    for lpn in 0..committed {
        now = f
            .write(Some(t), Lpn(lpn), WriteKind::Data, &page(1), now)
            .unwrap();
    }
    now = f.commit(t, now).unwrap();
    let (u, d) = f.begin(now).unwrap();
    now = d;
    for lpn in 0..open_pages {
        now = f
            .write(Some(u), Lpn(lpn), WriteKind::Data, &page(2), now)
            .unwrap();
    }
    let (mut m, mut nvm) = f.into_parts();
    m.power_loss(now, 1);
    nvm.power_loss(now, 1);
    let reads_before = m.busy_ns();
    let (g, report) = IFtl::recover(m, nvm, iftl_config(), &ftl_config(), now).unwrap();
    assert_eq!(
        g.medium().busy_ns(),
        reads_before,
        "recovery reads no flash"
    );
    assert_eq!(report.entries_restored, u64::from(open_pages));
    report
}

#[test]
fn recovery_time_is_nvm_work_and_grows_with_the_live_log() {
    let few = iftl_cut(100, 2);
    let many = iftl_cut(100, 150);
    eprintln!("i-FTL recovery: 2 open pages {few:?}\n150 open pages {many:?}");
    assert!(many.modeled_ns > few.modeled_ns);
    // At least one scan of dataFTL at the NVM's bandwidth.
    let map_ns = (LOGICAL_PAGES * 4) * 1_000_000_000 / iftl_config().nvm.bytes_per_s;
    assert!(few.modeled_ns >= map_ns);
    assert!(few.nvm_bytes_read >= LOGICAL_PAGES * 4);

    // X-FTL on the same workload: recovery loads its checkpoint and scans OOB areas on flash.
    let m = NandMedium::new(geometry(), Timing::default(), DataMode::Full);
    let mut x = Ftl::format(m, ftl_config(), LOGICAL_PAGES).unwrap();
    let mut now = 0;
    let t = x.begin();
    for lpn in 0..100 {
        now = x.txn_write(t, Lpn(lpn), &page(1), now).unwrap();
    }
    now = x.commit(t, now).unwrap();
    let u = x.begin();
    for lpn in 0..150 {
        now = x.txn_write(u, Lpn(lpn), &page(2), now).unwrap();
    }
    let mut m = x.into_medium();
    m.power_loss(now, 1);
    let (_, xr) = Ftl::recover(m, ftl_config(), LOGICAL_PAGES, now).unwrap();
    eprintln!(
        "restart after a cut, same workload: X-FTL {} ns ({} OOB reads), i-FTL {} ns (NVM only)",
        xr.modeled_ns, xr.oob_reads, many.modeled_ns
    );
    assert!(xr.modeled_ns > 0);
}
