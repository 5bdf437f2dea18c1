#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! A folder of hard links to one document is one document: read, parsed and drawn once, each
//! other name listed as not shown with the name it repeats. (Found by a probe of 2026-11-28:
//! 40 links to one 60 MiB document took 105 s, each parsed again and its plot drawn again; a
//! folder may hold 2,000, some 87 minutes from 60 MB of disk.)

mod common;

const CRASH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/report/crash.json"
);

#[test]
fn joj_report_reads_a_document_of_many_names_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("hl");
    std::fs::create_dir_all(&dir).unwrap();
    let first = dir.join("a0.json");
    std::fs::copy(CRASH, &first).unwrap();
    for i in 1..20 {
        std::fs::hard_link(&first, dir.join(format!("a{i:02}.json"))).unwrap();
    }
    let page = tmp.path().join("page.html");
    // The file named on the command line as well as found in the folder: still once.
    let (ok, _, err) = common::run_joj_text(&[
        "report",
        dir.to_str().unwrap(),
        first.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("1 document(s), 20 file(s) not shown"), "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("the same file as"),
        "each other name says which it repeats"
    );
    assert_eq!(html.matches("id=\"doc").count(), 1, "one section");
}
