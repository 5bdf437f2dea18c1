//! `joj crash merge` parses a part straight into its types, reading the file as it goes: a
//! part of 234 MB (within the 256 MiB a part may be) took 3.3 GB as a `serde_json::Value`,
//! 14 times its size (found by a probe of joj's inputs, 2026-11-28; docs/robustness.md H130).
//! Measured as the peak resident size of the `joj` it ran (`getrusage(RUSAGE_CHILDREN)`: this
//! file is its own test process, and runs no other child).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::io::Write;

use common::long_trace::children_peak_kib;

const PART: &str =
    include_str!("../../joj-experiment/tests/fixtures/crash-part-ext4-wal-1-of-1.json");

#[test]
fn a_large_part_is_read_in_memory_near_its_size() {
    // The fixture's four states repeated until the part is some 35 MB: refused when its states
    // are compared with its share, after it was read whole. Written a state at a time: a
    // child's peak counts the pages it shares with this process at the fork.
    let mut v: serde_json::Value = serde_json::from_str(PART).unwrap();
    let states: Vec<String> = v["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.to_string())
        .collect();
    v["states"] = "STATES".into();
    let text = v.to_string();
    let (head, tail) = text.split_once("\"STATES\"").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("big.json");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&part).unwrap());
    w.write_all(head.as_bytes()).unwrap();
    w.write_all(b"[").unwrap();
    for (i, s) in states
        .iter()
        .cycle()
        .take(states.len() * 140_000)
        .enumerate()
    {
        if i > 0 {
            w.write_all(b",").unwrap();
        }
        w.write_all(s.as_bytes()).unwrap();
    }
    w.write_all(b"]").unwrap();
    w.write_all(tail.as_bytes()).unwrap();
    w.flush().unwrap();
    drop(w);
    let size_kib = std::fs::metadata(&part).unwrap().len() / 1024;
    let (ok, _, err) = common::run_joj_text(&["crash", "merge", part.to_str().unwrap()]);
    assert!(
        !ok && err.contains("its states are not exactly 0..4"),
        "{err}"
    );
    let peak_kib = children_peak_kib();
    eprintln!("joj crash merge of a {size_kib} KiB part: peak resident {peak_kib} KiB");
    // The states typed take about twice the text; as a `Value` they took 14 times it.
    assert!(
        peak_kib < 4 * size_kib as i64,
        "joj crash merge of a {size_kib} KiB part peaked at {peak_kib} KiB"
    );
}
