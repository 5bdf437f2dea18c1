//! The command queue (`docs/device-model.md`, "Command queue"): two host threads' commands are
//! in flight together when the queue holds more than one task, and their NAND work overlaps
//! when it falls on two units — not when there is one unit, nor when the queue holds one task.
//! Each thread writes one page with FUA (a queued task, complete when its page is programmed);
//! the frontiers are used round-robin, so the two pages land on different units when there
//! are two.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_device::queue::CommandTimes;
use joj_device::{DataMode, Emmc, Profile, WriteFlags};

fn profile(channels: u32, queue_depth: u32) -> Profile {
    let mut p = Profile::builtin("emmc5")
        .unwrap()
        .with_blocks_per_plane(256)
        .with_data_mode(DataMode::OobOnly);
    p.geometry.channels = channels;
    p.geometry.dies_per_channel = 1;
    p.geometry.planes_per_die = 1;
    p.timing.queue_depth = queue_depth;
    p
}

/// Thread 1 writes page 0, then thread 2 writes page 1, both FUA, on a fresh device.
fn two_threads_write(channels: u32, queue_depth: u32) -> (CommandTimes, CommandTimes, u64) {
    let p = profile(channels, queue_depth);
    let page = p.geometry.page_bytes as usize;
    let program_ns = p.timing.program_page_ns;
    let mut dev = Emmc::new(&p).unwrap();
    let (first, second) = common::two_threads_write(&mut dev, page, WriteFlags::FUA);
    (first, second, program_ns)
}

#[test]
fn two_threads_overlap_on_two_units() {
    let (a, b, program_ns) = two_threads_write(2, 32);
    assert!(
        b.start_ns < a.done_ns,
        "the second thread's write starts while the first is in flight: {a:?} {b:?}"
    );
    assert!(
        b.done_ns < a.done_ns + program_ns,
        "its page was programmed beside the first one, on the other unit: {a:?} {b:?}"
    );
}

#[test]
fn two_threads_do_not_overlap_their_programs_on_one_unit() {
    let (a, b, program_ns) = two_threads_write(1, 32);
    assert!(b.start_ns < a.done_ns, "still queued together: {a:?} {b:?}");
    assert!(
        b.done_ns >= a.done_ns + program_ns,
        "its program waited for the one unit: {a:?} {b:?}"
    );
}

#[test]
fn without_a_queue_the_second_thread_waits_for_the_first_command() {
    let (a, b, _) = two_threads_write(2, 1);
    assert!(
        b.start_ns >= a.done_ns,
        "queue depth 1: one command at a time: {a:?} {b:?}"
    );
}
