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

/// A firmware that logs its whole map on every flush (`flush_meta_pages`, the OpenSSD greedy FTL)
/// programs that many metadata pages per flush, even with nothing cached, and an X-FTL commit
/// programs `commit_meta_pages`; the default checkpoint writes only what changed.
#[test]
fn whole_map_flushes_and_commits_program_their_metadata() {
    use joj_device::TransactionalDevice;
    let page = vec![3u8; 2048];
    let run = |flush_meta: u32, commit_meta: u32| {
        let mut p = tiny_profile();
        p.ftl.flush_meta_pages = flush_meta;
        p.ftl.commit_meta_pages = commit_meta;
        let mut dev = Emmc::new(&p).unwrap();
        dev.write(0, &page, WriteFlags::NONE).unwrap();
        dev.flush().unwrap();
        let after_first = dev.counters().map_page_programs;
        let before = dev.now_ns();
        dev.flush().unwrap();
        let empty_flush_ns = dev.now_ns() - before;
        let after_empty = dev.counters().map_page_programs;
        let tid = dev.begin_txn().unwrap();
        dev.write_txn(tid, 4096, &page).unwrap();
        dev.commit_txn(tid).unwrap();
        let c = dev.counters();
        (
            after_first,
            after_empty - after_first,
            empty_flush_ns,
            c.commit_table_programs,
        )
    };
    let p = tiny_profile();
    let (first, empty, empty_ns, commit) = run(0, 0);
    assert_eq!(
        (first, empty, commit),
        (2, 0, 1),
        "dirty map page + root; one table page"
    );
    assert_eq!(empty_ns, p.timing.command_overhead_ns);
    let (first, empty, empty_ns, commit) = run(12, 5);
    assert_eq!((first, empty, commit), (12, 12, 5));
    // 12 pages on 2 units: six programs one after the other on each.
    assert!(
        empty_ns >= 6 * p.timing.program_page_ns,
        "an empty flush still logs the map: {empty_ns} ns"
    );
}

#[test]
fn the_board_erases_its_map_blocks_and_counts_them_apart() {
    // `openssd` logs 27 map pages per flush over 16 units and erases a map block each time a
    // unit's log enters one after the first (`FtlConfig::erase_map_blocks`).
    let p = joj_device::Profile::builtin("openssd")
        .unwrap()
        .with_blocks_per_plane(64)
        .with_data_mode(joj_device::DataMode::OobOnly);
    assert!(p.ftl.erase_map_blocks);
    let units = u64::from(p.geometry.units());
    let ppb = u64::from(p.geometry.pages_per_block);
    let page = u64::from(p.geometry.page_bytes);
    let mut on = Emmc::new(&p).unwrap();
    let mut off_profile = p.clone();
    off_profile.ftl.erase_map_blocks = false;
    let mut off = Emmc::new(&off_profile).unwrap();
    let data = vec![5u8; page as usize];
    for dev in [&mut on, &mut off] {
        for i in 0..300u64 {
            dev.write((i % 64) * page, &data, WriteFlags::NONE).unwrap();
            dev.flush().unwrap();
        }
    }
    let (c, c_off) = (on.counters(), off.counters());
    // Round-robin from unit 0: unit u took n_u map pages; blocks entered after the first one.
    let total = c.map_page_programs + c.commit_table_programs;
    let expected: u64 = (0..units)
        .map(|u| total / units + u64::from(u < total % units))
        .map(|n| n.div_ceil(ppb).saturating_sub(1))
        .sum();
    assert!(expected > 0, "{total} map pages fill no block");
    assert_eq!(c.map_erases, expected);
    assert_eq!(c.erases, c.gc_runs, "data-block erases stay apart");
    assert_eq!(c_off.map_erases, 0);
    assert_eq!(c_off.map_page_programs, c.map_page_programs);
    assert!(
        c.modeled_s > c_off.modeled_s,
        "the erases take unit time: {} s against {} s",
        c.modeled_s,
        c_off.modeled_s
    );
}

/// `log_gc_commands` names the commands during which GC ran, numbered as `cut_power_after`
/// counts them: a device armed to fail right after one of them has run that GC.
#[test]
fn the_gc_command_log_names_the_commands_that_collected() {
    let p = tiny_profile();
    let page = vec![3u8; 2048];
    let mut dev = Emmc::new(&p).unwrap();
    dev.log_gc_commands(true);
    let mut commands = 0u64;
    for i in 0..400u64 {
        dev.write((i % 40) * 2048, &page, WriteFlags::FUA).unwrap();
        commands += 1;
    }
    let gc_runs = dev.counters().gc_runs;
    let logged = dev.gc_commands().to_vec();
    assert!(gc_runs > 0, "400 overwrites of 40 pages must collect");
    assert!(!logged.is_empty() && logged.len() as u64 <= gc_runs);
    assert!(logged.windows(2).all(|w| w[0] < w[1]));
    assert!(logged.iter().all(|&c| c < commands));

    // Replay the same commands armed to stop right after the first logged one: its GC ran.
    let first = logged[0];
    let mut again = Emmc::new(&p).unwrap();
    again.cut_power_after(Some(first + 1));
    let mut done = 0u64;
    while again
        .write((done % 40) * 2048, &page, WriteFlags::FUA)
        .is_ok()
    {
        done += 1;
    }
    assert_eq!(done, first + 1);
    assert!(
        again.counters().gc_runs > 0,
        "the command before the cut collected"
    );
    let mut before = Emmc::new(&p).unwrap();
    for i in 0..first {
        before
            .write((i % 40) * 2048, &page, WriteFlags::FUA)
            .unwrap();
    }
    assert_eq!(
        before.counters().gc_runs,
        0,
        "no command before it collected"
    );

    dev.log_gc_commands(false);
    assert!(dev.gc_commands().is_empty());
}

/// A reliable command made atomic (`ReliableWriteAtomicity::Command`) completes only when its
/// commit table is programmed, after its slowest page: at least one page program later than
/// the same command with per-page reliable write.
#[test]
fn an_atomic_reliable_command_waits_for_its_commit_table() {
    let data = vec![3u8; 2048];
    let writes: Vec<PackedWrite> = (0..4u64)
        .map(|i| PackedWrite {
            offset_bytes: i * 4096,
            data: &data,
        })
        .collect();
    let mut done = Vec::new();
    for atomicity in [
        joj_device::ReliableWriteAtomicity::Page,
        joj_device::ReliableWriteAtomicity::Command,
    ] {
        let mut p = tiny_profile();
        p.ftl.reliable_write_atomicity = atomicity;
        let mut dev = Emmc::new(&p).unwrap();
        dev.write_packed(&writes, WriteFlags::RELIABLE).unwrap();
        done.push(dev.now_ns());
    }
    let p = tiny_profile();
    assert!(
        done[1] >= done[0] + p.timing.program_page_ns,
        "per page {} ns, atomic {} ns",
        done[0],
        done[1]
    );
}
