#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! `joj trace` reads the kernel's record of the command's system calls when a CPU's buffer is a
//! quarter full, at least every 20 ms, and once when the command has ended — not at a fixed
//! short interval: each read is a wake-up of a thread of joj on the command's CPUs. A command
//! that runs for most of a second, a few events at a time, is read a few dozen times; its
//! counts stay exact. (`command.event_reads` counts the reads.)

mod common;

#[test]
fn the_events_are_read_a_few_times_a_second_not_every_millisecond() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let script =
        "i=0; while [ $i -lt 20 ]; do echo $i > f; sync -d f; sleep 0.03; i=$((i+1)); done";
    let doc = common::joj_trace_json(&["--empty"], &["sh", "-c", script]);
    let reads = doc["command"]["event_reads"].as_u64().unwrap();
    let ran_ms = doc["elapsed_s"].as_f64().unwrap() * 1e3;
    assert!(ran_ms > 400.0, "the command ran only {ran_ms} ms");
    // At most one read per 10 ms of the command's run, and the one at its end: twice what the
    // 20 ms bound allows; a reader at a fixed millisecond reads about once a millisecond.
    assert!(
        (reads as f64) <= ran_ms / 10.0 + 1.0,
        "{reads} reads of the events in {ran_ms:.0} ms"
    );
    let f = common::traced_file(&doc, "f");
    assert_eq!(f["fdatasync"].as_u64(), Some(20), "{}", doc["command"]);
}
