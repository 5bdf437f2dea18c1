#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! `joj trace` reads the kernel's record of the command's system calls when a CPU's buffer is a
//! quarter full, at least every 100 ms, and once when the command has ended — not at a fixed
//! short interval: each read is work of joj's beside the command (a wake-up on its CPUs, the
//! pages, a map of each file synced since the last read). A command that runs for most of a
//! second, a few events at a time, is read about ten times; its counts stay exact.
//! (`command.event_reads` counts the reads.)

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
    // At most one read per 50 ms of the command's run, and the one at its end: twice what the
    // 100 ms bound allows; a reader at a fixed millisecond reads about once a millisecond, one
    // at 20 ms about every 20.
    assert!(
        (reads as f64) <= ran_ms / 50.0 + 1.0,
        "{reads} reads of the events in {ran_ms:.0} ms"
    );
    let f = common::traced_file(&doc, "f");
    assert_eq!(f["fdatasync"].as_u64(), Some(20), "{}", doc["command"]);
}
