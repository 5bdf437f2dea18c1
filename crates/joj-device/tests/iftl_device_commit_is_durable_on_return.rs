//! The i-FTL device API the file layer calls — begin / write(tid, lpn, kind, data) / read /
//! commit / abort / power_cut / recover — on the `openssd-iftl` profile: a commit is durable
//! when it returns (a cut right after shows it), its latency includes its pages' programs, an
//! open transaction vanishes at a cut, and a transaction's writes return before their pages
//! are programmed.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_device::{IftlDevice, Lpn, Profile, WriteKind};

/// The board cut down to 16 blocks per plane, with more spare so the small device formats.
fn profile() -> Profile {
    let mut p = Profile::builtin("openssd-iftl")
        .unwrap()
        .with_blocks_per_plane(16);
    p.ftl.over_provisioning_percent = 40.0;
    p
}

fn page(v: u8) -> Vec<u8> {
    vec![v; 4096]
}

#[test]
fn a_returned_commit_survives_a_cut_and_an_open_transaction_does_not() {
    let p = profile();
    let mut d = IftlDevice::new(&p).unwrap();
    let t = d.begin().unwrap();
    let before = d.now_ns();
    d.write(Some(t), Lpn(1), WriteKind::Data, &page(1)).unwrap();
    d.write(Some(t), Lpn(2), WriteKind::Metadata, &page(2))
        .unwrap();
    let written = d.now_ns();
    assert!(
        written - before < p.timing.program_page_ns,
        "transactional writes return before their programs complete"
    );
    d.commit(t).unwrap();
    assert!(
        d.now_ns() - before >= p.timing.program_page_ns,
        "the commit waits for the transaction's page programs"
    );
    let u = d.begin().unwrap();
    d.write(Some(u), Lpn(1), WriteKind::Data, &page(9)).unwrap();
    d.write(Some(u), Lpn(3), WriteKind::Data, &page(9)).unwrap();
    let mut buf = page(0);
    d.read(Some(u), Lpn(1), &mut buf).unwrap();
    assert_eq!(buf, page(9), "a transaction reads its own write");
    d.read(None, Lpn(1), &mut buf).unwrap();
    assert_eq!(buf, page(1), "everyone else reads the committed version");
    let at = d.now_ns();
    let cut = d.power_cut(at, 7);
    let (mut d, report) = IftlDevice::recover(cut, &p).unwrap();
    assert!(report.modeled_ns > 0);
    for (lpn, want) in [(1, 1u8), (2, 2), (3, 0)] {
        d.read(None, Lpn(lpn), &mut buf).unwrap();
        assert_eq!(buf, page(want), "logical page {lpn} after the cut");
    }
    let c = d.host_counters().clone();
    assert_eq!(
        (c.reads, c.writes),
        (3, 0),
        "counters start again after recovery"
    );
    d.ftl().check_invariants();
}

#[test]
fn abort_restores_every_page() {
    let p = profile();
    let mut d = IftlDevice::new(&p).unwrap();
    d.write(None, Lpn(5), WriteKind::Data, &page(5)).unwrap();
    let t = d.begin().unwrap();
    d.write(Some(t), Lpn(5), WriteKind::Data, &page(6)).unwrap();
    d.write(Some(t), Lpn(6), WriteKind::Metadata, &page(6))
        .unwrap();
    d.write_bytes(Some(t), Lpn(6), 10, &[1, 2, 3]).unwrap();
    d.abort(t).unwrap();
    let mut buf = page(0);
    d.read(None, Lpn(5), &mut buf).unwrap();
    assert_eq!(buf, page(5));
    d.read(None, Lpn(6), &mut buf).unwrap();
    assert_eq!(buf, page(0));
    assert!(
        d.write(None, Lpn(5), WriteKind::Data, &page(1)[..100])
            .is_err()
    );
    d.ftl().check_invariants();
}

/// Benches run without page data (`DataMode::OobOnly`): the same commands give exactly the
/// counters and times of a device that keeps its data, GC and lazy GC included.
#[test]
fn oob_only_gives_the_counters_and_times_of_full() {
    let run = |mode| {
        let p = profile().with_data_mode(mode);
        let mut d = IftlDevice::new(&p).unwrap();
        let n = d.logical_pages() as u32;
        let mut rng = joj_device::rng::SimRng::new(4);
        let mut buf = page(0);
        for i in 0..20_000u32 {
            let t = d.begin().unwrap();
            for _ in 0..3 {
                let lpn = rng.below(u64::from(n)) as u32;
                let kind = if lpn.is_multiple_of(16) {
                    WriteKind::Metadata
                } else {
                    WriteKind::Data
                };
                match d.write(Some(t), Lpn(lpn), kind, &page(i as u8)) {
                    Ok(())
                    | Err(joj_device::DeviceError::Ftl(joj_device::FtlError::TxnConflict {
                        ..
                    })) => {}
                    Err(e) => panic!("{e}"),
                }
            }
            d.read(None, Lpn(rng.below(u64::from(n)) as u32), &mut buf)
                .unwrap();
            if i % 5 == 0 {
                d.abort(t).unwrap();
            } else {
                d.commit(t).unwrap();
            }
        }
        (d.stats().clone(), d.nvm_stats().clone(), d.now_ns())
    };
    let full = run(joj_device::DataMode::Full);
    let oob = run(joj_device::DataMode::OobOnly);
    assert!(full.0.gc_runs > 0, "GC ran: {:?}", full.0);
    assert_eq!(full, oob);
}
