//! `timing.command_latency_ns` (`docs/device-model.md`, "Timing"): every command pays it before
//! its controller work, and commands in flight together pay it side by side, while the
//! controller's `command_overhead_ns` stays one command at a time. Each of two host threads
//! writes one page into the write-back cache (no NAND work), so only the command's fixed time,
//! its transfer and the queue decide when each completes.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_device::queue::CommandTimes;
use joj_device::{DataMode, Emmc, Profile, Timing, WriteFlags};

const LATENCY_NS: u64 = 40_000;
const OVERHEAD_NS: u64 = 10_000;

fn profile(queue_depth: u32, latency_ns: u64, overhead_ns: u64) -> Profile {
    let mut p = Profile::builtin("emmc5")
        .unwrap()
        .with_blocks_per_plane(256)
        .with_data_mode(DataMode::OobOnly);
    p.timing.queue_depth = queue_depth;
    p.timing.command_latency_ns = latency_ns;
    p.timing.command_overhead_ns = overhead_ns;
    // A fast bus (a page in 2 µs): the controller, not the bus, spaces the commands.
    p.timing.host_bytes_per_s = 4_000_000_000;
    p
}

/// Thread 1 writes page 0, then thread 2 writes page 1, into the cache of a fresh device; and
/// the transfer time of a page.
fn two_threads_write(p: &Profile) -> (CommandTimes, CommandTimes, u64) {
    let page = p.geometry.page_bytes as usize;
    let mut dev = Emmc::new(p).unwrap();
    let (first, second) = common::two_threads_write(&mut dev, page, WriteFlags::NONE);
    let xfer = Timing::transfer_ns(page as u64, p.timing.host_bytes_per_s);
    (first, second, xfer)
}

#[test]
fn one_command_pays_its_latency_and_its_overhead() {
    let (a, _, xfer) = two_threads_write(&profile(32, LATENCY_NS, OVERHEAD_NS));
    assert_eq!(
        a.done_ns - a.start_ns,
        LATENCY_NS + OVERHEAD_NS + xfer,
        "{a:?}"
    );
}

#[test]
fn two_commands_in_flight_overlap_their_latency() {
    let (a, b, _) = two_threads_write(&profile(32, LATENCY_NS, OVERHEAD_NS));
    assert!(b.start_ns < a.done_ns, "queued together: {a:?} {b:?}");
    assert_eq!(
        b.done_ns - a.done_ns,
        OVERHEAD_NS,
        "only the controller's overhead separates them (the bus works beside it): {a:?} {b:?}"
    );
}

#[test]
fn all_of_it_serial_spaces_the_commands_by_all_of_it() {
    let (a, b, _) = two_threads_write(&profile(32, 0, LATENCY_NS + OVERHEAD_NS));
    assert!(b.start_ns < a.done_ns, "queued together: {a:?} {b:?}");
    assert_eq!(
        b.done_ns - a.done_ns,
        LATENCY_NS + OVERHEAD_NS,
        "{a:?} {b:?}"
    );
}

#[test]
fn without_a_queue_the_second_command_waits_for_the_whole_first() {
    let (a, b, xfer) = two_threads_write(&profile(1, LATENCY_NS, OVERHEAD_NS));
    assert_eq!(b.start_ns, a.done_ns, "{a:?} {b:?}");
    assert_eq!(
        b.done_ns - a.done_ns,
        LATENCY_NS + OVERHEAD_NS + xfer,
        "{a:?} {b:?}"
    );
}
