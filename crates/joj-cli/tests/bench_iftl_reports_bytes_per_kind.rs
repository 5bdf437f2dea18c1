//! `joj bench -j iftl --device openssd-iftl` prints, next to the device's throughput, where the
//! i-FTL put the run's bytes: data to flash, the file layer's metadata to NVM, and no flash
//! page for mapping (its tables are NVM stores); aged (`--gc-validity`), GC runs. No kernel
//! filesystem is involved.

mod common;

#[test]
fn an_iftl_run_says_where_its_bytes_went() {
    let out = common::run_joj(&[
        "bench",
        "--journal",
        "iftl",
        "--device",
        "openssd-iftl",
        "-n",
        "50",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("i-FTL:"))
        .unwrap_or_else(|| panic!("no i-FTL line in:\n{text}"));
    let numbers: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let [data, metadata, mapping, _lazy] = numbers[..] else {
        panic!("unexpected i-FTL line: {line}");
    };
    assert!(
        data >= 50 * 4096,
        "50 inserts wrote {data} B of data: {line}"
    );
    assert!(metadata > 0, "the database grew, its inode changed: {line}");
    assert_eq!(mapping, 0, "{line}");
}

/// `--gc-validity` ages the i-FTL device as it ages X-FTL's eMMC: GC runs inside the run and
/// its victims' validity is reported.
#[test]
fn an_aged_iftl_run_collects_garbage() {
    let out = common::run_joj(&[
        "bench",
        "--journal",
        "iftl",
        "--device",
        "openssd-iftl",
        "--gc-validity",
        "50",
        "-n",
        "300",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &doc["device"];
    assert!(
        d["gc_runs"].as_u64().unwrap() > 0,
        "no GC on an aged device: {d}"
    );
    let v = d["gc_validity"].as_f64().unwrap();
    assert!(0.0 < v && v < 1.0, "GC validity {v}");
}
