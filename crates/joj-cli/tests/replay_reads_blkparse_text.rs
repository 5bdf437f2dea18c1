//! `joj replay` takes blkparse text as well as joj-trace files; without a transaction count
//! in the input, modeled throughput counts requests, and the JSON says so.

mod common;

#[test]
fn replay_reads_blkparse_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sda.txt");
    let text = "\
  8,0    1        1     0.000000000  1234  D  WS 2048 + 16 [sqlite]
  8,0    1        2     0.000100000  1234  D  FN [jbd2/sda-8]
  8,0    1        3     0.000200000  1234  D  WS 526336 + 8 [jbd2/sda-8]
  8,0    1        4     0.000300000  1234  D  RM 4096 + 8 [sqlite]
CPU0 (sda):
 Reads Queued:           0,        0KiB\t Writes Queued:           3,       12KiB
";
    std::fs::write(&path, text).unwrap();
    let out = common::joj_command()
        .args([
            "replay",
            path.to_str().unwrap(),
            "--device",
            "emmc5",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["format"], "blkparse");
    assert_eq!(doc["device"]["ops_basis"], "requests");
    assert_eq!(
        doc["device"]["ops"], 3,
        "two writes and a read; the flush is no op"
    );
    assert_eq!(doc["device"]["flushes"], 1);
    assert_eq!(doc["device"]["host_write_bytes"], 24 * 512);
    assert_eq!(doc["counters"]["host_read_requests"], 1);
}
