//! `joj report` of a folder holding no result document (only block traces, say — what a run's
//! `--out` holds without `--json`/`--save`) used to write an empty page and succeed; a trace
//! file named directly was "not JSON: trailing characters". Now: no page, an error naming the
//! fix, and the trace named as what it is.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

#[test]
fn a_folder_without_a_result_document_is_an_error_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("out");
    std::fs::create_dir(&results).unwrap();
    let trace = results.join("trace-ext4-app.trace.jsonl");
    std::fs::write(
        &trace,
        "{\"format\":\"joj-trace\",\"version\":1,\"records\":0}\n{\"t\":1}\n",
    )
    .unwrap();
    let page = dir.path().join("page.html");
    let run = common::joj_report(&results, &page);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no result document") && err.contains("fix: save results with --json"),
        "{err}"
    );
    assert!(!page.exists(), "an empty page was written");
    // Nothing was skipped, so nothing is "listed above".
    assert!(!err.contains("listed above"), "{err}");

    let run = common::joj_report(&trace, &page);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("a joj block trace: `joj trace show` reads it"),
        "{err}"
    );
}
