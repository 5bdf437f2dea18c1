//! The checks of modeled time print this machine's own floor above them (issue 33; results:
//! measurement-stack.md, "This machine's own repeatability"): `workflow/scripts/cpu_repeat.py`
//! times one fixed piece of CPU work again and again, and `timecheck_table.py` reads its record
//! into the spreads a reader sets the checks against.
//!
//! The table's figures are the record's: nine runs with one slow run give one window of five
//! within 2 % out of five, and medians of three that move by 1 %.
//!
//! Needs the system Python (`/usr/bin/python3`): without it the test fails and names it.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

#[test]
fn the_table_gives_the_records_spreads() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("noise.json");
    let cpu = [1.0, 1.01, 1.0, 1.01, 1.0, 1.3, 1.0, 1.0, 1.0];
    let doc = serde_json::json!({
        "tag": "noise:cpu", "load": 0.5, "steps": 1000, "gap_s": 2.0,
        "cpu_s": cpu, "wall_s": cpu,
    });
    std::fs::write(&rec, doc.to_string()).unwrap();
    let out = common::workflow_script("timecheck_table.py", &[rec.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Windows of five: only the first leaves out the slow run (spread 1.0 %); the others hold
    // it (29.7 % over a median of 1.01, else 30.0 %), so their median is 30.0 %. Medians of
    // three: 1.0, 1.01, 1.0, so each moves by 1.0 % to the next.
    let row = "| 9 | 1.000–1.300 s | 30.0 % | 30.0 % (30.0 %) | 1/5 | 1.0 % (1.0 %) |";
    assert!(text.contains(row), "want the row\n{row}\nin\n{text}");
    assert!(
        text.contains("9 runs of 1.000 s CPU, 2 s apart, load 0.50"),
        "{text}"
    );
}
