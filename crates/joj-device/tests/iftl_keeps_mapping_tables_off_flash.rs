//! The same transactional workload on X-FTL (mapping tables on flash) and on i-FTL (mapping
//! tables in NVM): X-FTL programs flash pages for its commit tables and map checkpoints,
//! i-FTL none — "mapping flash pages per host page written" is the counter a bench compares
//! (the paper's "about 100×" claim). And the data tag sends metadata to NVM, data to flash,
//! each counted by kind and destination.

#[path = "common/iftl.rs"]
mod common;

use common::{LOGICAL_PAGES, device, ftl_config, geometry, kind_of, page};
use joj_device::{DataMode, Ftl, Lpn, NandMedium, Timing, WriteKind, rng::SimRng};

/// Transactions of 1–8 pages over a hot set, all committed.
fn workload(seed: u64) -> Vec<Vec<u32>> {
    let mut rng = SimRng::new(seed);
    (0..300)
        .map(|_| {
            (0..1 + rng.below(8))
                .map(|_| rng.below(LOGICAL_PAGES) as u32)
                .collect()
        })
        .collect()
}

#[test]
fn iftl_programs_no_mapping_page_where_xftl_programs_many() {
    let txns = workload(5);
    let m = NandMedium::new(geometry(), Timing::default(), DataMode::Full);
    let mut x = Ftl::format(m, ftl_config(), LOGICAL_PAGES).unwrap();
    let mut now = 0;
    for pages in &txns {
        let t = x.begin();
        let mut seen = std::collections::HashSet::new();
        for &lpn in pages {
            if seen.insert(lpn) {
                now = x.txn_write(t, Lpn(lpn), &page(1), now).unwrap();
            }
        }
        now = x.commit(t, now).unwrap();
    }
    let xs = x.stats().clone();

    let mut f = device();
    let mut now = 0;
    for pages in &txns {
        let (t, d) = f.begin(now).unwrap();
        now = d;
        for &lpn in pages {
            now = f
                .write(Some(t), Lpn(lpn), WriteKind::Data, &page(1), now)
                .unwrap();
        }
        now = f.commit(t, now).unwrap();
    }
    let is = f.stats().clone();
    let x_ratio = xs.mapping_programs_per_host_page();
    let i_ratio = is.mapping_programs_per_host_page();
    eprintln!(
        "mapping flash pages per host page: X-FTL {x_ratio:.3} ({} map + {} commit-table pages for {} host pages), i-FTL {i_ratio} ({} NVM bytes written)",
        xs.map_programs,
        xs.commit_table_programs,
        xs.host_programs,
        f.nvm_stats().bytes_written
    );
    assert!(x_ratio > 0.1, "X-FTL programs its commit tables to flash");
    assert_eq!(is.mapping_flash_programs, 0);
    assert_eq!(i_ratio, 0.0);
    assert!(
        f.nvm_stats().bytes_written > 0,
        "i-FTL's mapping changes are NVM stores"
    );
}

#[test]
fn the_data_tag_sends_metadata_to_nvm_and_data_to_flash() {
    let mut f = device();
    let mut now = 0;
    let (t, d) = f.begin(now).unwrap();
    now = d;
    let (mut meta, mut data) = (0u64, 0u64);
    for lpn in 0..50u32 {
        now = f
            .write(Some(t), Lpn(lpn), kind_of(lpn), &page(9), now)
            .unwrap();
        match kind_of(lpn) {
            WriteKind::Metadata => meta += 1,
            WriteKind::Data => data += 1,
        }
    }
    // A small metadata update inside the transaction: in place, only the bytes given.
    let programs = f.stats().host_programs;
    let nvm_before = f.stats().metadata_bytes_to_nvm;
    now = f
        .write_bytes(Some(t), Lpn(10), 100, &[7u8; 24], now)
        .unwrap();
    assert_eq!(f.stats().metadata_bytes_to_nvm - nvm_before, 24);
    assert_eq!(
        f.stats().host_programs,
        programs,
        "no flash program for metadata"
    );
    f.commit(t, now).unwrap();
    let s = f.stats();
    let pb = common::PAGE_BYTES as u64;
    assert_eq!(s.data_bytes_to_flash, data * pb);
    assert_eq!(s.metadata_bytes_to_nvm, meta * pb + 24);
    assert_eq!(s.host_programs, data);
    let mut buf = vec![0u8; common::PAGE_BYTES];
    f.read(None, Lpn(10), &mut buf, 0).unwrap();
    assert_eq!(&buf[100..124], &[7u8; 24]);
    assert_eq!(buf[124], page(9)[124]);
    f.check_invariants();
}
