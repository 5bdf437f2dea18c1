//! `joj bench --fs ext4 --device <profile> --json` traces the run (without `--trace`), replays the
//! trace through the profile and adds a `device` section whose modeled throughput counts the
//! run's transactions. Needs root and the scratch-filesystem prerequisites.

mod common;

/// The scratch-filesystem prerequisites; the test fails naming what is missing, unless
/// kernel-level tests are skipped on purpose (`JOJ_SKIP_KERNEL_TESTS=1`).
fn ready() -> bool {
    joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4])
}

#[test]
fn bench_device_adds_a_device_section() {
    if !ready() {
        return;
    }
    let out_dir = tempfile::tempdir().unwrap();
    let out = common::joj_command()
        .args([
            "bench",
            "--fs",
            "ext4",
            "--journal",
            "wal",
            "-n",
            "20",
            "--device",
            "galaxy-s5",
            "--json",
            "--out",
            out_dir.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["trace_file"].is_string(), "--device implies --trace");
    let d = &doc["device"];
    assert_eq!(d["profile"], "galaxy-s5");
    assert_eq!(d["ops_basis"], "transactions");
    assert_eq!(d["ops"], 20);
    let modeled_s = d["modeled_s"].as_f64().unwrap();
    assert!(modeled_s > 0.0);
    assert!((d["modeled_ops_per_sec"].as_f64().unwrap() - 20.0 / modeled_s).abs() < 1e-6);
    // The device saw what the block layer saw.
    assert_eq!(d["host_write_bytes"], doc["block"]["write_bytes"]);
    assert_eq!(d["flushes"], doc["block"]["flushes"]);
}
