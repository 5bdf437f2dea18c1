//! Sub-page mapping (`ftl.mapping_unit_bytes`, `docs/device-model.md`, "Mapping unit"): on an
//! 8 KiB-page device that maps 4 KiB units, a 4 KiB write over data already on flash costs no
//! read — FUA or cached and flushed — and the page's other half keeps its data; two 4 KiB
//! units written together share one page program. The same writes on the device mapping whole
//! pages read the page to merge.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_device::{BlockDevice, DataMode, Emmc, NandMedium, Profile, WriteFlags};

fn device(unit: Option<u32>) -> Emmc<NandMedium> {
    let mut p = Profile::builtin("emmc5")
        .unwrap()
        .with_blocks_per_plane(64)
        .with_data_mode(DataMode::Full);
    assert_eq!(p.geometry.page_bytes, 8192);
    p.ftl.mapping_unit_bytes = unit;
    Emmc::new(&p).unwrap()
}

/// An 8 KiB page of `a` written and flushed, then its first 4 KiB rewritten with `b`: returns
/// the NAND reads the rewrite cost and what the page reads.
fn rewrite_half(dev: &mut Emmc<NandMedium>, flags: WriteFlags) -> (u64, Vec<u8>) {
    dev.write(0, &[0xa; 8192], WriteFlags::NONE).unwrap();
    dev.flush().unwrap();
    let before = dev.counters();
    dev.write(0, &[0xb; 4096], flags).unwrap();
    dev.flush().unwrap();
    let after = dev.counters();
    let mut page = vec![0; 8192];
    dev.read(0, &mut page).unwrap();
    (after.nand_reads - before.nand_reads, page)
}

#[test]
fn a_4k_write_costs_no_read_where_4k_is_mapped() {
    for flags in [WriteFlags::FUA, WriteFlags::NONE] {
        let (reads, page) = rewrite_half(&mut device(Some(4096)), flags);
        assert_eq!(
            reads, 0,
            "{flags:?}: no read-modify-write of a mapped 4 KiB unit"
        );
        assert!(page[..4096].iter().all(|&b| b == 0xb));
        assert!(
            page[4096..].iter().all(|&b| b == 0xa),
            "the other unit kept"
        );

        let (reads, page) = rewrite_half(&mut device(None), flags);
        assert_eq!(
            reads, 1,
            "{flags:?}: the whole-page device reads the page to merge"
        );
        assert!(page[..4096].iter().all(|&b| b == 0xb));
        assert!(page[4096..].iter().all(|&b| b == 0xa));
    }
}

#[test]
fn two_4k_units_written_together_share_one_page_program() {
    let mut dev = device(Some(4096));
    let before = dev.counters();
    dev.write(64 << 10, &[0xc; 8192], WriteFlags::FUA).unwrap();
    let after = dev.counters();
    assert_eq!(after.host_page_programs - before.host_page_programs, 2);
    assert_eq!(after.nand_programs - before.nand_programs, 1);
    assert_eq!(after.padding_slots - before.padding_slots, 0);
    // One 4 KiB FUA write alone pads the page's other slot.
    dev.write(128 << 10, &[0xd; 4096], WriteFlags::FUA).unwrap();
    let alone = dev.counters();
    assert_eq!(alone.nand_programs - after.nand_programs, 1);
    assert_eq!(alone.padding_slots - after.padding_slots, 1);
}
