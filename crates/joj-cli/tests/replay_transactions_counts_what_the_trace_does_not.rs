//! `joj replay --transactions N` on a trace whose header does not count transactions (blkparse
//! text from a phone): N is the count, and modeled throughput is per transaction — in the one
//! device's report and in the host's time of `--device-for`, each saying the count came from the
//! option.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

#[test]
fn replay_transactions_counts_what_the_trace_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sda.txt");
    let text = "\
  8,0    1        1     0.000000000  1234  D  WS 2048 + 16 [sqlite]
  8,0    1        2     0.000100000  1234  D  FN [jbd2/sda-8]
  8,0    1        3     0.000200000  1234  D  WS 526336 + 8 [jbd2/sda-8]
  8,0    1        4     0.000300000  1234  D  RM 4096 + 8 [sqlite]
";
    std::fs::write(&path, text).unwrap();
    let trace = path.to_str().unwrap();

    let out = common::joj_ok([
        "replay",
        trace,
        "--device",
        "emmc5",
        "--transactions",
        "10",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let d = &doc["device"];
    assert_eq!(d["ops_basis"], "transactions", "{d}");
    assert_eq!(d["ops"], 10, "{d}");
    let modeled_s = d["modeled_s"].as_f64().unwrap();
    assert!(modeled_s > 0.0, "{d}");
    let per_sec = d["modeled_ops_per_sec"].as_f64().unwrap();
    assert!(
        (per_sec - 10.0 / modeled_s).abs() <= 1e-9 * per_sec,
        "{per_sec} is not 10 / {modeled_s}"
    );
    assert_eq!(doc["transactions_from"], "option", "{doc}");
    assert!(doc["header_transactions"].is_null(), "{doc}");
    assert_eq!(
        doc["replay"]["records"], 4,
        "the requests are still counted as requests"
    );

    let out = common::joj_ok(["replay", trace, "--device", "emmc5", "--transactions", "10"]);
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("transactions/s over 10 transactions (--transactions)"),
        "{text}"
    );

    // The same count through a profile per device: the host's time and each device's section.
    let out = common::joj_ok([
        "replay",
        trace,
        "--device-for",
        "8:0=emmc5",
        "--transactions",
        "10",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let h = &doc["host"];
    assert_eq!(h["ops_basis"], "transactions", "{h}");
    assert_eq!(h["ops"], 10, "{h}");
    let per_sec = h["modeled_ops_per_sec"].as_f64().unwrap();
    let modeled_s = h["modeled_s"].as_f64().unwrap();
    assert!((per_sec - 10.0 / modeled_s).abs() <= 1e-9 * per_sec, "{h}");
    assert_eq!(doc["transactions_from"], "option", "{doc}");
    assert_eq!(doc["devices"][0]["device"]["ops"], 10, "{doc}");
}
