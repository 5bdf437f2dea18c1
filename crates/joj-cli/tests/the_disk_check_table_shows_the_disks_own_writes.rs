//! The disk check's table (issue 33, point 5; `workflow/scripts/timecheck_table.py`) shows, per
//! cell, the KiB per commit the disk wrote of its own in the measured runs — the image file's
//! metadata, a cost of the loop-over-a-file rig that no device has (docs/measurement.md,
//! "Known limits") — from the records' `backing` section; records made before it have no such
//! column. Each cell also shows its measured runs' own spread.
//!
//! Needs the system Python (`/usr/bin/python3`): without it the test fails and names it.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

fn record(
    dir: &std::path::Path,
    kind: &str,
    run: u32,
    tps: f64,
    own: Option<serde_json::Value>,
) -> String {
    let path = dir.join(format!("disk.{kind}.off.insert.{run}.json"));
    let mut doc = serde_json::json!({
        "tag": format!("disk:{kind}:off:insert:{run}"), "load": 1.0, "ops_per_sec": tps,
        "modeled": {"modeled_ops_per_sec": tps, "host_share": 0.3},
    });
    if let Some(o) = own {
        doc["backing"] = serde_json::json!({ "own_bytes_per_txn": o });
    }
    std::fs::write(&path, doc.to_string()).unwrap();
    path.to_str().unwrap().to_string()
}

fn table(paths: &[String]) -> String {
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let out = common::workflow_script("timecheck_table.py", &args);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn the_column_is_the_median_of_the_measured_runs_and_absent_from_older_records() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut paths: Vec<String> = [
        (0, 4096.0, 4800.0),
        (1, 5120.0, 5000.0),
        (2, 3072.0, 5200.0),
    ]
    .iter()
    .map(|&(i, own, tps)| record(d, "measured", i, tps, Some(own.into())))
    .collect();
    paths.extend((0..3).map(|i| record(d, "modeled", i, 5500.0, None)));
    let text = table(&paths);
    assert!(text.contains("the disk's own KiB per commit"), "{text}");
    // Median 4096 B = 4.0 KiB; modeled 10 % fast; the measured runs spread by 400 / 5000.
    let row = "| off | insert | 5000.0 | 5500.0 | 30 % | +10.0 % | 8.0 % | 1.00–1.00 | 4.0 |";
    assert!(text.contains(row), "want the row\n{row}\nin\n{text}");

    let old = tempfile::tempdir().unwrap();
    let mut paths: Vec<String> = (0..3)
        .map(|i| record(old.path(), "measured", i, 5000.0, None))
        .collect();
    paths.extend((0..3).map(|i| record(old.path(), "modeled", i, 5500.0, None)));
    let text = table(&paths);
    assert!(!text.contains("own KiB"), "{text}");
    assert!(
        text.contains("| off | insert | 5000.0 | 5500.0 | 30 % | +10.0 % | 0.0 % | 1.00–1.00 |\n"),
        "{text}"
    );

    // Records are other people's: a flag, a text, a negative count or a number too large for a
    // float is no figure; the table is still made, without the column.
    let odd = tempfile::tempdir().unwrap();
    let values = [
        serde_json::json!(true),
        serde_json::json!("4096"),
        serde_json::json!(-1.0),
    ];
    let mut paths: Vec<String> = values
        .into_iter()
        .enumerate()
        .map(|(i, v)| record(odd.path(), "measured", i as u32, 5000.0, Some(v)))
        .collect();
    // serde_json holds no 400-digit number: that record is written as text.
    let huge = odd.path().join("disk.measured.off.insert.3.json");
    std::fs::write(
        &huge,
        format!(
            r#"{{"tag": "disk:measured:off:insert:3", "load": 1.0, "ops_per_sec": 5000.0,
                "backing": {{"own_bytes_per_txn": 1{}}}}}"#,
            "0".repeat(400)
        ),
    )
    .unwrap();
    paths.push(huge.to_str().unwrap().to_string());
    paths.extend((0..3).map(|i| record(odd.path(), "modeled", i, 5500.0, None)));
    let text = table(&paths);
    assert!(!text.contains("own KiB"), "{text}");
}
