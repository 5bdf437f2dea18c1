//! `joj device run --json` prints one document with the workload, the wall-clock speed of the
//! model and the device counters under `device`; `--fua-every 1` makes every write FUA.

mod common;

#[test]
fn device_run_json_has_device_counters() {
    let out = common::joj_command()
        .args([
            "device",
            "run",
            "--device",
            "emmc5",
            "--raw-gib",
            "1",
            "--workload",
            "randwrite",
            "--io-size",
            "4k",
            "--precondition",
            "50%",
            "--requests",
            "2000",
            "--fua-every",
            "1",
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
    let d = &doc["device"];
    assert_eq!(d["host_write_bytes"], 2000 * 4096);
    assert_eq!(d["fua"], 2000);
    assert_eq!(d["ops"], 2000);
    assert_eq!(d["ops_basis"], "requests");
    assert!(d["modeled_s"].as_f64().unwrap() > 0.0);
    assert!(d["waf"].as_f64().unwrap() >= 1.0);
    assert!(doc["wall"]["simulated_requests_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(doc["spec"]["precondition_fill"], 0.5);
}

/// The text names the requests its latency line is of, and gives the flushes' apart: the
/// requests/s hold the flushes' time, and a write's latency does not (a researcher read 50 µs
/// writes beside 225 µs a request, with nothing saying why).
#[test]
fn device_run_text_gives_the_flushes_latency_apart() {
    let (ok, out, err) = common::run_joj_text(&[
        "device",
        "run",
        "--device",
        "emmc5",
        "--raw-gib",
        "1",
        "--workload",
        "randwrite",
        "--io-size",
        "4k",
        "--precondition",
        "none",
        "--requests",
        "2000",
        "--flush-every",
        "8",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("latency µs of the writes: mean"), "{out}");
    assert!(out.contains("latency µs of the flushes: mean"), "{out}");
}
