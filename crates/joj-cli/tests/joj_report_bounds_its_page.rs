#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! `joj report` bounds the page it writes, whatever its inputs hold (docs/robustness.md, H12 and
//! H13; found by a probe of 2026-11-27: 20 rows naming one 20 MiB SVG made a 559 MB page):
//!
//! - a plot file named by several rows is inlined once, later rows referring to it;
//! - plots past the page's share for them are left out, each with a line saying which and why,
//!   and documents whose text would take the page past its bound are left out the same way:
//!   the page never passes `MAX_PAGE_BYTES` (128 MiB, `report_page.rs`);
//! - a paper-figures document links only to files beneath its own folder (a symbolic link out
//!   of it is not followed out): a `..` path to a file elsewhere on the host is text.

mod common;

use std::path::Path;

const COMPARE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/report/compare.json"
);

/// The page's bound, `report_page::MAX_PAGE_BYTES`.
const MAX_PAGE_BYTES: usize = 128 << 20;
/// The plots' share of it, `report_doc::MAX_PAGE_PLOT_BYTES`.
const MAX_PAGE_PLOT_BYTES: usize = 64 << 20;

/// An SVG plot of `size` bytes (a comment pads it), starting as joj's plots do.
fn svg(path: &Path, size: usize) {
    let head = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><!-- ";
    let tail = " --></svg>\n";
    let pad = "x".repeat(size - head.len() - tail.len());
    std::fs::write(path, format!("{head}{pad}{tail}")).unwrap();
}

/// The saved compare document with `n` rows (the fixture's, repeated), row `i` naming the
/// plot `plot(i)`.
fn compare_naming(n: usize, plot: impl Fn(usize) -> String) -> String {
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(COMPARE).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap().clone();
    let mut many = Vec::new();
    for i in 0..n {
        let mut r = rows[i % rows.len()].clone();
        r["plot_file"] = format!("out/{}", plot(i)).into();
        many.push(r);
    }
    doc["rows"] = many.into();
    doc.to_string()
}

/// `joj report DIR -o PAGE`, which must succeed: the page's text.
fn report(results: &Path, page: &Path) -> String {
    let run = common::joj_report(results, page);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    std::fs::read_to_string(page).unwrap()
}

#[test]
fn a_plot_named_by_many_rows_is_inlined_once() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let plot_bytes = 5 << 20;
    svg(&results.join("big.svg"), plot_bytes);
    std::fs::write(
        results.join("compare.json"),
        compare_naming(20, |_| "big.svg".into()),
    )
    .unwrap();
    let html = report(&results, &tmp.path().join("report.html"));
    assert!(
        html.len() < 2 * plot_bytes,
        "a page of {} bytes for one plot of {plot_bytes}",
        html.len()
    );
    assert_eq!(html.matches("alt=\"big.svg\"").count(), 1, "inlined once");
    assert_eq!(
        html.matches("the same plot as <a href=\"#plot").count(),
        19,
        "each later row refers to it"
    );
}

#[test]
fn plots_past_the_pages_share_are_left_out_with_a_line() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let n = 14;
    for i in 0..n {
        svg(&results.join(format!("p{i}.svg")), 10 << 20);
    }
    std::fs::write(
        results.join("compare.json"),
        compare_naming(n, |i| format!("p{i}.svg")),
    )
    .unwrap();
    let html = report(&results, &tmp.path().join("report.html"));
    assert!(
        html.len() <= MAX_PAGE_BYTES,
        "a page of {} bytes",
        html.len()
    );
    let inlined = (0..n)
        .filter(|i| html.contains(&format!("alt=\"p{i}.svg\"")))
        .count();
    let left_out: Vec<usize> = (0..n)
        .filter(|i| html.contains(&format!("the plot p{i}.svg (10.0 MiB) is left out")))
        .collect();
    assert!(inlined >= 1, "no plot inlined");
    assert_eq!(
        inlined + left_out.len(),
        n,
        "each plot inlined or said left out"
    );
    assert!(
        html.len() < MAX_PAGE_PLOT_BYTES + (2 << 20),
        "plots past their share: {} bytes",
        html.len()
    );
    let first = left_out[0];
    let line = html
        .lines()
        .find(|l| l.contains(&format!("the plot p{first}.svg")))
        .unwrap();
    assert!(
        line.contains("a page inlines at most 64.0 MiB of plots")
            && line.contains(&format!("results/p{first}.svg")),
        "{line}"
    );
}

#[test]
fn documents_whose_text_passes_the_pages_bound_are_left_out_with_a_line() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    std::fs::create_dir(&results).unwrap();
    // Quotes: five bytes each on the page (`&#39;`), in a heading, a table and a message. A
    // section shows at most 16 tables of cells cut to 400 bytes, about 4 MiB: a dozen such
    // documents pass the page's 40 MiB of text.
    let quotes = "'".repeat(6 << 20);
    let cell = "'".repeat(100);
    let row: serde_json::Map<String, serde_json::Value> = (0..12)
        .map(|c| (format!("c{c}"), cell.clone().into()))
        .collect();
    let table = serde_json::Value::Array(vec![row.into(); 100]);
    for i in 0..12 {
        let mut crash = serde_json::json!({"cuts": 1, "passed": true, "fs": quotes});
        for t in 0..16 {
            crash[format!("t{t}")] = table.clone();
        }
        std::fs::write(results.join(format!("crash{i}.json")), crash.to_string()).unwrap();
    }
    let broken = serde_json::json!({"rows": quotes});
    std::fs::write(results.join("broken.json"), broken.to_string()).unwrap();
    let html = report(&results, &tmp.path().join("report.html"));
    assert!(
        html.len() <= MAX_PAGE_BYTES,
        "a page of {} bytes",
        html.len()
    );
    assert!(html.contains("12 result document(s); 1 file(s) not shown"));
    let line = html
        .lines()
        .find(|l| l.contains("this document&#39;s section"))
        .expect("a line in place of a section left out");
    assert!(line.contains("is left out"), "{line}");
    assert!(
        html.lines().any(|l| l.contains("broken.json")),
        "the broken document is listed"
    );
}

#[test]
fn a_link_out_of_the_documents_folder_is_text() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    std::fs::create_dir_all(results.join("tables")).unwrap();
    std::fs::create_dir_all(results.join("joj")).unwrap();
    std::fs::copy(COMPARE, results.join("joj/ext4-1000.json")).unwrap();
    // A file of the host, outside the folder, and a link beside the document to it.
    std::fs::write(tmp.path().join("secret.md"), "private").unwrap();
    std::os::unix::fs::symlink("../../secret.md", results.join("tables/inside.md")).unwrap();
    std::fs::write(results.join("tables/detail.md"), "detail").unwrap();
    let row = serde_json::json!({
        "paper": "WALDIO (ATC'15)", "figure": "Table 1", "paper_value": "8 / 20 / 28",
        "this_run": "8.2 / 21.8 / 30.0", "this_run_basis": "measured",
        "this_run_sources": ["../joj/ext4-1000.json", "../../secret.md"],
        "not_in_this_run": null, "published_measured": "8.3", "published_modeled": "–",
        "published_verdict": "reproduced",
        "details": [
            {"text": "outside", "href": "../../secret.md"},
            {"text": "through a link", "href": "inside.md"},
            {"text": "beside", "href": "detail.md#t"},
        ],
    });
    let doc = serde_json::json!({
        "paper_figures": [row], "profile": "quick", "published": "../../secret.md#x",
    });
    std::fs::write(results.join("tables/paper-figures.json"), doc.to_string()).unwrap();
    let html = report(&results, &tmp.path().join("report.html"));
    let papers = &html[..html.find("<h2>Every document</h2>").unwrap()];
    assert!(
        papers.contains("<a href=\"results/tables/detail.md#t\">beside</a>"),
        "a file beside the document is linked: {papers}"
    );
    assert!(
        papers.contains("\">joj/ext4-1000.json</a>"),
        "a document on the page links to its section"
    );
    for a in papers.split("<a href=\"").skip(1) {
        let target = &a[..a.find('"').unwrap()];
        assert!(
            !target.contains("secret") && !target.contains("inside"),
            "a link out of the document's folder: {target}"
        );
    }
    assert!(papers.contains(">outside<") || papers.contains(", outside"));
    assert!(papers.contains("through a link"));
}

/// `--link-root` names a folder: a file, a FIFO or a device is refused before any page is made.
#[test]
fn a_link_root_that_is_not_a_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let page = tmp.path().join("p.html");
    for root in [file.to_str().unwrap(), "/dev/zero"] {
        let run = common::joj_report_with(tmp.path(), &page, &["--link-root", root]);
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(
            !run.status.success() && err.contains("not a folder"),
            "{root}: {err}"
        );
        assert!(!page.exists());
    }
}
