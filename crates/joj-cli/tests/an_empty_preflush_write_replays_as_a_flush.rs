#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! blkparse shows an fsync's flush at queue time as an empty write with a preflush (`Q FWS
//! 0 + 0`); joj's import takes such text, and the replay then refused it ("a write request of
//! zero sectors", found by a probe of 2026-11-29). It is a flush, and replays as one; an empty
//! write without a preflush is still refused, with the fix.

mod common;

#[test]
fn an_empty_preflush_write_replays_as_a_flush() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("fsync.txt");
    std::fs::write(
        &trace,
        "  8,0 1 1 0.0 1 Q WS 2048 + 8 [app]\n  8,0 1 2 0.0001 1 Q FWS 0 + 0 [app]\n",
    )
    .unwrap();
    let out = common::joj_ok([
        "replay".as_ref(),
        trace.as_os_str(),
        "--device".as_ref(),
        "emmc5".as_ref(),
        "--json".as_ref(),
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["replay"]["writes"], 1, "{doc}");
    assert_eq!(doc["replay"]["flushes"], 1, "{doc}");
    assert_eq!(doc["counters"]["host_write_bytes"], 4096, "{doc}");

    std::fs::write(&trace, "  8,0 1 1 0.0 1 Q WS 2048 + 0 [app]\n").unwrap();
    let (ok, _, err) = common::run_joj_text(&["replay", trace.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("zero sectors") && err.contains("fix:"),
        "{err}"
    );
}
