//! Timing semantics of the eMMC command set: a cached write returns before its page is
//! programmed, a FUA write after; a flush pays for what is cached; a packed command pays one
//! command overhead; sub-page writes cost a read-modify-write.

mod common;

use common::tiny_profile;
use joj_device::{BlockDevice, Emmc, PackedWrite, WriteFlags};

#[test]
fn fua_waits_for_the_program_and_a_cached_write_does_not() {
    let p = tiny_profile();
    let mut dev = Emmc::new(&p).unwrap();
    let page = vec![1u8; 2048];
    dev.write(0, &page, WriteFlags::NONE).unwrap();
    let cached = dev.now_ns();
    assert!(
        cached < p.timing.program_page_ns,
        "cached write took {cached} ns"
    );
    let before = dev.now_ns();
    dev.write(2048, &page, WriteFlags::FUA).unwrap();
    assert!(dev.now_ns() - before >= p.timing.program_page_ns);
    let before = dev.now_ns();
    dev.flush().unwrap();
    assert!(
        dev.now_ns() - before >= p.timing.program_page_ns,
        "the flush programs the cached page"
    );
    let before = dev.now_ns();
    dev.flush().unwrap();
    assert_eq!(
        dev.now_ns() - before,
        p.timing.command_overhead_ns,
        "nothing left to flush"
    );
    let c = dev.counters();
    assert_eq!((c.fua, c.flushes, c.host_write_requests), (1, 2, 2));
}

#[test]
fn a_packed_command_pays_one_overhead() {
    let p = tiny_profile();
    let data = vec![2u8; 2048];
    let mut one_by_one = Emmc::new(&p).unwrap();
    for i in 0..4u64 {
        one_by_one.write(i * 4096, &data, WriteFlags::NONE).unwrap();
    }
    let mut packed = Emmc::new(&p).unwrap();
    let writes: Vec<PackedWrite> = (0..4u64)
        .map(|i| PackedWrite {
            offset_bytes: i * 4096,
            data: &data,
        })
        .collect();
    packed.write_packed(&writes, WriteFlags::NONE).unwrap();
    assert_eq!(
        one_by_one.now_ns() - packed.now_ns(),
        3 * p.timing.command_overhead_ns
    );
    assert_eq!(packed.counters().packed_commands, 1);
}

#[test]
fn a_sub_page_write_to_a_written_page_reads_the_old_page() {
    let p = tiny_profile();
    let mut dev = Emmc::new(&p).unwrap();
    dev.write(0, &vec![1u8; 2048], WriteFlags::FUA).unwrap();
    dev.write(512, &[2u8; 512], WriteFlags::FUA).unwrap();
    let c = dev.counters();
    assert_eq!(c.rmw_reads, 1);
    let mut buf = vec![0u8; 2048];
    dev.read(0, &mut buf).unwrap();
    assert_eq!(&buf[..512], &[1u8; 512][..]);
    assert_eq!(&buf[512..1024], &[2u8; 512][..]);
    assert_eq!(&buf[1024..], &[1u8; 1024][..]);
}

#[test]
fn reads_of_cached_pages_hit_the_cache() {
    let p = tiny_profile();
    let mut dev = Emmc::new(&p).unwrap();
    dev.write(0, &vec![3u8; 2048], WriteFlags::NONE).unwrap();
    let mut buf = vec![0u8; 1024];
    dev.read(512, &mut buf).unwrap();
    assert_eq!(buf, vec![3u8; 1024]);
    assert_eq!(dev.counters().cache_hits, 1);
}
