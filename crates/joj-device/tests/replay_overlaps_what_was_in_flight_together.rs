//! Replaying a trace through a device with a command queue (`docs/device-model.md`, "Replaying
//! a trace through a queue"): two FUA writes the kernel had in flight together overlap in the
//! model; the same two writes, the second issued after the first completed, run one after the
//! other — as do writes whose completions the trace does not give.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_device::{Profile, ReplayOptions, replay_with};
use joj_trace::{Op, TraceRecord};

fn fua_write(issue_ns: u64, sector: u64, complete_ns: Option<u64>) -> TraceRecord {
    let mut r = TraceRecord::new(issue_ns, "7:0", Op::Write, sector, 16);
    r.fua = true;
    r.complete_ns = complete_ns;
    r
}

fn modeled_ns(records: &[TraceRecord]) -> u64 {
    let mut p = Profile::builtin("emmc5").unwrap().with_blocks_per_plane(64);
    p.timing.queue_depth = 32;
    let r = replay_with(records, &p, &ReplayOptions::default()).unwrap();
    (r.modeled_s * 1e9).round() as u64
}

#[test]
fn writes_in_flight_together_overlap_and_writes_one_after_the_other_do_not() {
    let together = modeled_ns(&[
        fua_write(0, 0, Some(100_000)),
        fua_write(1_000, 16, Some(101_000)),
    ]);
    let apart = modeled_ns(&[
        fua_write(0, 0, Some(100_000)),
        fua_write(150_000, 16, Some(250_000)),
    ]);
    let unknown = modeled_ns(&[fua_write(0, 0, None), fua_write(1_000, 16, None)]);
    assert!(
        together < apart,
        "in flight together in the kernel: they overlap ({together} ns against {apart} ns)"
    );
    assert_eq!(
        apart, unknown,
        "without completions every request waits for the one before"
    );
}
