//! A replay with the optimized journal (`--emmc-journal`) transforms the trace as a whole, so
//! it holds its records: at most `joj_device::MAX_HELD_RECORDS` (4,000,000, some 2 GB with the
//! transformation). A trace of more is refused before a record is held, naming the limit and
//! the fix (a plain replay reads any number from the file).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::long_trace::write_joj_trace;

#[test]
fn a_replay_that_must_hold_more_records_than_its_bound_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("many.jsonl");
    // The header's count is what is checked, before anything is read past it.
    write_joj_trace(&trace, 8, 4_000_001);
    let out = common::joj_bounded(&["replay", "--emmc-journal", trace.to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("holds 4000001 requests, more than joj holds in memory for")
            && out.stderr.contains("(4000000,")
            && out.stderr.contains("fix: replay it without --emmc-journal"),
        "{}",
        out.stderr
    );
}
