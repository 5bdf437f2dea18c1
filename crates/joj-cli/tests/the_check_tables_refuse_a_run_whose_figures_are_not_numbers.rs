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
    table_of_records(&[
        format!(r#"{{"tag": "disk:measured:off:insert:0", "load": 1.0, "ops_per_sec": {ops}}}"#),
        format!(
            r#"{{"tag": "disk:modeled:off:insert:0", "load": 1.0, "ops_per_sec": 1.0,
                "modeled": {{"modeled_ops_per_sec": 5500.0, "host_share": {share}}}}}"#
        ),
    ])
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

/// The table of `records` (JSON texts, one file each): whether it succeeded, and its output.
fn table_of_records(records: &[String]) -> (bool, String) {
    let tmp = tempfile::tempdir().unwrap();
    let paths: Vec<String> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let p = tmp.path().join(format!("r{i}.json"));
            std::fs::write(&p, r).unwrap();
            p.to_str().unwrap().to_string()
        })
        .collect();
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let out = common::workflow_script("timecheck_table.py", &args);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A tag of the wrong shape, a load that is not a number, a repeat run whose figures are
/// missing, deep nesting, or cells with no pair: each stops the table
/// with a message (or, for no pair, prints no summary), never a traceback.
#[test]
fn a_record_of_the_wrong_shape_stops_the_table_with_a_message() {
    let repeat = |modeled: &str| {
        format!(
            r#"{{"tag": "repeat:wal:0", "load": 1.0, "ops_per_sec": 1.0, "modeled": {modeled},
                "device": {{"modeled_ops_per_sec": 100.0}},
                "host": {{"threads": 1, "cpu_s": 0.1, "journal_thread_cpu_s": 0.0,
                          "host_s": 0.2, "sync_calls": 10}}}}"#
        )
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![r#"{"tag": "disk:x", "load": 1.0}"#.into()],
            "is not disk:measured|modeled",
        ),
        (
            vec![r#"{"tag": "disk:weird:off:insert:0", "load": 1.0}"#.into()],
            "is not disk:measured|modeled",
        ),
        (
            vec![r#"{"tag": "host:measured:off:insert:0"}"#.into()],
            "load is not a number",
        ),
        (
            vec![r#"{"tag": "host:measured:off:insert:0", "load": "high"}"#.into()],
            "load is not a number",
        ),
        (
            vec![repeat("null")],
            "modeled.modeled_ops_per_sec is not a number",
        ),
        (
            vec![repeat(
                r#"{"modeled_ops_per_sec": 90.0, "ops": 10, "cpu_factor": 1.0, "device_s": 0.0}"#,
            )
            .replace(r#""threads": 1"#, r#""threads": 0"#)],
            "host.threads is not a number",
        ),
        (
            vec![format!("{}{}", "[".repeat(100_000), "]".repeat(100_000))],
            "nests too deeply",
        ),
        (
            vec![format!(
                r#"{{"tag": "repeat:x", "load": {}}}"#,
                "9".repeat(5000)
            )],
            "is not a record",
        ),
        (
            vec![format!(
                r#"{{"tag": "noise:cpu", "cpu_s": [1{z}, 1{z}, 1{z}, 1{z}, 1{z}], "gap_s": 2, "load": 0.1}}"#,
                z = "0".repeat(400)
            )],
            "a noise:cpu record needs",
        ),
    ];
    for (records, says) in cases {
        let (ok, text) = table_of_records(&records);
        assert!(!ok, "{records:?} was accepted: {text}");
        assert!(text.contains(says), "{records:?}: {text}");
        assert!(!text.contains("Traceback"), "{records:?}: {text}");
    }
    // Only measured runs: the table says there is nothing to summarise, and ends well.
    let (ok, text) = table_of_records(&[
        r#"{"tag": "host:measured:off:insert:0", "load": 1.0, "ops_per_sec": 10.0}"#.into(),
    ]);
    assert!(
        ok && text.contains("no cell has both measured and modeled runs"),
        "{text}"
    );
    assert!(!text.contains("Traceback"), "{text}");
}
