//! Several threads of a run on an in-process device (`--journal iftl`, each thread its own
//! database) take their turns in device time, so their commands reach the device's command
//! queue together (`docs/device-model.md`, "Command queue"): with a queue of 32 tasks four
//! threads do four times the work of one in much less than four times the modeled time; with
//! a queue of one task (the profile as built) they take about four times as long.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_experiment::{DevicePlan, RunOptions, Workload, run};
use joj_workload::{DbOp, DbWorkload, JournalMode};

fn modeled_s(threads: u32, queue_depth: u32) -> f64 {
    let w = DbWorkload {
        journal: JournalMode::Iftl,
        op: DbOp::Insert,
        transactions: 100,
        threads,
        ..DbWorkload::default()
    };
    let mut p = joj_device::Profile::builtin("openssd-iftl").unwrap();
    p.timing.queue_depth = queue_depth;
    let opts = RunOptions {
        device: Some(DevicePlan::new(p)),
        ..RunOptions::default()
    };
    let r = run(&Workload::Db(w), &opts).unwrap();
    r.device.unwrap().modeled_s
}

#[test]
fn four_threads_overlap_on_a_queue_and_not_without_one() {
    let one = modeled_s(1, 32);
    let four = modeled_s(4, 32);
    assert!(
        four < 2.0 * one,
        "queue of 32: four threads' 400 transactions in {four} s, one thread's 100 in {one} s"
    );
    let one = modeled_s(1, 1);
    let four = modeled_s(4, 1);
    assert!(
        four > 3.5 * one,
        "queue of 1: {four} s for 400 transactions, {one} s for 100"
    );
}
