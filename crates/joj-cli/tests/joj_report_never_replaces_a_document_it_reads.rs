#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! `joj report DIR -o DIR/a.json --force`, `a.json` a document the walk of DIR finds, is refused
//! before anything is read or written, as `-o` naming an input on the command line is
//! (docs/robustness.md H21; found by a probe of 2026-11-27: the page replaced the document it
//! had just read). A hard link to it elsewhere is the same file, and refused too.

mod common;

const CRASH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/report/crash.json"
);

#[test]
fn joj_report_never_replaces_a_document_it_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fo");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let doc = dir.join("sub/a.json");
    std::fs::copy(CRASH, &doc).unwrap();
    let before = std::fs::read(&doc).unwrap();
    let link = tmp.path().join("elsewhere.json");
    std::fs::hard_link(&doc, &link).unwrap();

    for out in [&doc, &link] {
        let (ok, _, err) = common::run_joj_text(&[
            "report",
            dir.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--force",
        ]);
        assert!(!ok, "{err}");
        assert!(
            err.contains("is the same file as the input") && err.contains("a.json"),
            "{err}"
        );
        assert_eq!(std::fs::read(&doc).unwrap(), before, "the document is kept");
    }

    // Elsewhere the page is written.
    let page = tmp.path().join("page.html");
    let (ok, _, err) = common::run_joj_text(&[
        "report",
        dir.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(std::fs::read_to_string(&page).unwrap().contains("crash"));
}

const COMPARE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/report/compare.json"
);
const COMPARE_PLOT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/report/compare-ext4-insert-wal.svg"
);

/// A plot beside a document is read for the page: an input too, never replaced by it (found by
/// a probe of 2026-11-28: `-o DIR/compare-ext4-insert-wal.svg --force` replaced the plot).
#[test]
fn joj_report_never_replaces_a_plot_it_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("col");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(COMPARE, dir.join("compare.json")).unwrap();
    let plot = dir.join("compare-ext4-insert-wal.svg");
    std::fs::copy(COMPARE_PLOT, &plot).unwrap();
    let before = std::fs::read(&plot).unwrap();
    let (ok, _, err) = common::run_joj_text(&[
        "report",
        dir.to_str().unwrap(),
        "-o",
        plot.to_str().unwrap(),
        "--force",
    ]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("is the same file as the input") && err.contains("insert-wal.svg"),
        "{err}"
    );
    assert_eq!(std::fs::read(&plot).unwrap(), before, "the plot is kept");
}
