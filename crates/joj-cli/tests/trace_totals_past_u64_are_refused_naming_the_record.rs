//! A joj-trace file may carry any `sectors` its JSON holds: a record of 2^55 sectors (2^64
//! bytes) or of u64::MAX sectors. `joj trace show` and `joj trace plot` refuse such a trace,
//! naming the record that brings its bytes past a u64, instead of printing a wrapped total.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

fn trace(dir: &std::path::Path, name: &str, sectors: &[u64]) -> std::path::PathBuf {
    let path = dir.join(name);
    let header = joj_trace::TraceHeader {
        clock: joj_trace::Clock::Relative,
        devices: vec![joj_trace::TraceDevice {
            dev: "8:0".into(),
            role: joj_trace::DeviceRole::Main,
            name: "8:0".into(),
        }],
        source: joj_trace::TraceSource::Blkparse,
        meta: serde_json::Map::new(),
    };
    let records: Vec<_> = (0u64..)
        .zip(sectors)
        .map(|(i, &n)| joj_trace::TraceRecord::new(i, "8:0", joj_trace::Op::Write, 0, n))
        .collect();
    joj_trace::write_trace_file(&path, &header, &records).unwrap();
    path
}

#[test]
fn trace_totals_past_u64_are_refused_naming_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The first wraps to 0 bytes alone; the third is fine alone but not with the first two.
    let cases = [
        (trace(d, "wrap.jsonl", &[1 << 55, 8]), 0, 1u64 << 55),
        (trace(d, "max.jsonl", &[u64::MAX]), 0, u64::MAX),
        (trace(d, "sum.jsonl", &[8, 1 << 54, 1 << 54]), 2, 1 << 54),
    ];
    for (path, index, sectors) in &cases {
        let path = path.to_str().unwrap();
        let svg = d.join("out.svg");
        for args in [
            vec!["trace", "show", path],
            vec!["trace", "plot", "-o", svg.to_str().unwrap(), path],
        ] {
            let out = common::run_joj(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(out.stdout.is_empty(), "{args:?}: nothing printed");
            assert!(
                err.contains(&format!("trace record {index}: its {sectors} sectors"))
                    && err.contains("past 18446744073709551615")
                    && err.contains("fix:"),
                "{args:?}: {err}"
            );
            assert!(!svg.exists(), "{args:?}: no plot written");
        }
    }
    let fine = trace(d, "fine.jsonl", &[8, 16]);
    let out = common::run_joj(&["trace", "show", fine.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"write_bytes\": 12288"));
}
