//! The tables of issue 33's checks (`workflow/scripts/timecheck_table.py`) read records other
//! people may have made: a run whose throughput, modeled throughput or host share is not a
//! number it can use — a flag, a text, zero, a number too large for a float — stops the table
//! with a message naming the run and the figure, never a traceback or a made-up row.
//!
//! Needs the system Python (`/usr/bin/python3`): without it the test fails and names it.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

/// A cell of one measured run with `ops` (JSON text) and one modeled run; the table's output.
fn table_of(ops: &str, share: &str) -> (bool, String) {
    let tmp = tempfile::tempdir().unwrap();
    let measured = tmp.path().join("m.json");
    let modeled = tmp.path().join("o.json");
    std::fs::write(
        &measured,
        format!(r#"{{"tag": "disk:measured:off:insert:0", "load": 1.0, "ops_per_sec": {ops}}}"#),
    )
    .unwrap();
    std::fs::write(
        &modeled,
        format!(
            r#"{{"tag": "disk:modeled:off:insert:0", "load": 1.0, "ops_per_sec": 1.0,
                "modeled": {{"modeled_ops_per_sec": 5500.0, "host_share": {share}}}}}"#
        ),
    )
    .unwrap();
    let out = common::workflow_script(
        "timecheck_table.py",
        &[measured.to_str().unwrap(), modeled.to_str().unwrap()],
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn a_figure_that_is_not_a_number_stops_the_table_naming_the_run() {
    let huge = format!("1{}", "0".repeat(400));
    for bad in ["true", "\"5000\"", "0", "-3", huge.as_str()] {
        let (ok, text) = table_of(bad, "0.3");
        assert!(!ok, "{bad}: {text}");
        assert!(
            text.contains("disk:measured:off:insert:0: ops_per_sec is not a number"),
            "{bad}: {text}"
        );
        assert!(!text.contains("Traceback"), "{bad}: {text}");
    }
    let (ok, text) = table_of("5000.0", "1.5");
    assert!(
        !ok && text.contains("modeled.host_share is not a number"),
        "{text}"
    );
    // A good cell of one measured run has no spread to show.
    let (ok, text) = table_of("5000.0", "0.3");
    assert!(ok, "{text}");
    assert!(
        text.contains("| off | insert | 5000.0 | 5500.0 | 30 % | +10.0 % | – | 1.00–1.00 |"),
        "{text}"
    );
}
