//! `joj device run --iodepth N` (`WorkloadSpec::issuers`): N host issuers, each issuing its
//! next request when its previous one completed, the earliest in device time first. On a
//! device with a command queue and several NAND units their FUA writes overlap, so the same
//! requests take less modeled time; on a device that holds one task at a time (queue depth 1),
//! or with one issuer, they take exactly the time of one request after another.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_device::{DataMode, IoKind, Pattern, Profile, SyncKind, WorkloadSpec, run_workload};

fn profile(queue_depth: u32) -> Profile {
    let mut p = Profile::builtin("emmc5")
        .unwrap()
        .with_blocks_per_plane(256)
        .with_data_mode(DataMode::OobOnly);
    p.timing.queue_depth = queue_depth;
    p
}

/// FUA random writes: each is complete when its page is programmed, so a request's time is
/// its NAND program, which other units can do beside it.
fn modeled_s(queue_depth: u32, issuers: u32) -> f64 {
    let spec = WorkloadSpec {
        pattern: Pattern::Rand,
        kind: IoKind::Write,
        io_bytes: 8192,
        sync: SyncKind::Fua,
        sync_every: 1,
        ops: 2000,
        seed: 3,
        issuers,
        ..WorkloadSpec::default()
    };
    let r = run_workload(&profile(queue_depth), &spec).unwrap();
    assert_eq!(r.device.host_write_requests, 2000);
    assert_eq!(r.spec.issuers, issuers, "the report says how many issued");
    r.device.modeled_s
}

#[test]
fn four_issuers_on_a_queue_of_32_overlap_their_writes() {
    let one = modeled_s(32, 1);
    let four = modeled_s(32, 4);
    assert!(
        four < one * 0.6,
        "four issuers on a queue and {} units: {four} s against {one} s for one",
        profile(32).geometry.units()
    );
}

#[test]
fn without_a_queue_more_issuers_change_nothing() {
    let one = modeled_s(1, 1);
    let four = modeled_s(1, 4);
    assert_eq!(
        four, one,
        "a device of one task serves one request at a time"
    );
}
