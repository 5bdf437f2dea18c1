//! Ordering under the command queue, as Linux drives eMMC 5.1 CMDQ (`docs/device-model.md`,
//! "Command queue"): a FUA write is an ordinary queued task — it starts beside another thread's
//! write in flight —, while a flush is a barrier — it starts only once every task in flight
//! completed, and a command after it arrives only once it completed.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_device::{BlockDevice, DataMode, Emmc, Profile, WriteFlags};

fn device() -> (Emmc<joj_device::NandMedium>, usize) {
    let mut p = Profile::builtin("emmc5")
        .unwrap()
        .with_blocks_per_plane(64)
        .with_data_mode(DataMode::OobOnly);
    p.timing.queue_depth = 32;
    let page = p.geometry.page_bytes as usize;
    (Emmc::new(&p).unwrap(), page)
}

#[test]
fn a_fua_write_of_another_thread_starts_while_the_first_is_in_flight() {
    let (mut dev, page) = device();
    let (first, second) = common::two_threads_write(&mut dev, page, WriteFlags::FUA);
    assert!(second.start_ns < first.done_ns, "{first:?} {second:?}");
}

#[test]
fn a_flush_starts_after_every_task_in_flight_and_holds_back_what_follows() {
    let (mut dev, page) = device();
    dev.set_issuer(1);
    dev.write(0, &vec![0; page], WriteFlags::FUA).unwrap();
    let write = dev.last_command();
    dev.set_issuer(2);
    dev.flush().unwrap();
    let flush = dev.last_command();
    assert_eq!(
        flush.arrival_ns, write.arrival_ns,
        "the second thread was ready at once"
    );
    assert!(
        flush.start_ns >= write.done_ns,
        "the flush waits for the write in flight: {write:?} {flush:?}"
    );
    dev.set_issuer(3);
    dev.write(2 * page as u64, &vec![0; page], WriteFlags::FUA)
        .unwrap();
    let after = dev.last_command();
    assert!(
        after.arrival_ns >= flush.done_ns,
        "a command after the flush arrives once it completed: {flush:?} {after:?}"
    );
}
