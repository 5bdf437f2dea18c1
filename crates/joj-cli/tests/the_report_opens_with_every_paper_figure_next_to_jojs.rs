//! The workflow's report page opens with every paper figure next to joj's figure computed from
//! the run (issue 36, point 4): `workflow/scripts/paper_figures.py` over a results folder that
//! holds one compare document, then `joj report` over the folder.
//!
//! - every row of docs/results/README.md's summary is on the page, in a table before the
//!   contents list and every other document;
//! - the one row this folder can rebuild (WALDIO Table 1, WAL) carries figures computed from
//!   the compare document — checked here against the document's own bytes per transaction —
//!   and links to that document's section on the same page;
//! - every other row says why this run has no figure for it, and keeps the published figure
//!   beside.
//!
//! Needs the system Python (`/usr/bin/python3`): without it the test fails and names it.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::Path;
use std::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const COMPARE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/report/compare.json"
);

fn python() -> &'static str {
    let p = "/usr/bin/python3";
    assert!(
        Path::new(p).is_file(),
        "{p} is missing: this test runs the workflow's paper_figures.py; install python3"
    );
    p
}

/// The summary rows of docs/results/README.md.
fn readme_rows() -> usize {
    let text = std::fs::read_to_string(format!("{ROOT}/docs/results/README.md")).unwrap();
    let start = text.find("## Every paper figure next to joj's").unwrap();
    let end = start + 1 + text[start + 1..].find("\n## ").unwrap();
    text[start..end]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| paper |"))
        .count()
}

/// WALDIO Table 1's figure for WAL from the compare document itself: data / FS journal /
/// total KiB per transaction.
fn wal_table1(compare: &serde_json::Value) -> String {
    let row = compare["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["mode"] == "wal")
        .unwrap();
    let b = &row["block_per_txn"];
    let f = |k: &str| b[k].as_f64().unwrap() / 1024.0;
    let total = f("data_bytes") + f("metadata_bytes") + f("fs_journal_bytes");
    format!(
        "{:.1} / {:.1} / {:.1}",
        f("data_bytes"),
        f("fs_journal_bytes"),
        total
    )
}

#[test]
fn the_report_opens_with_every_paper_figure_next_to_jojs() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    std::fs::create_dir_all(results.join("joj")).unwrap();
    std::fs::create_dir_all(results.join("tables")).unwrap();
    std::fs::copy(COMPARE, results.join("joj/ext4-1000.json")).unwrap();
    // Hostile inputs the script must not read: a FIFO (it would block), a link out of the
    // folder, a file past the size bound.
    let fifo = results.join("joj/ext4-fsync-1000.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::fs::create_dir_all(results.join("waldio")).unwrap();
    std::os::unix::fs::symlink(COMPARE, results.join("waldio/ext4-insert-fresh.json")).unwrap();
    std::fs::create_dir_all(results.join("crash-states")).unwrap();
    let huge = std::fs::File::create(results.join("crash-states/ext4-wal.json")).unwrap();
    huge.set_len((64 << 20) + 1).unwrap();
    let doc = results.join("tables/paper-figures.json");
    let made = Command::new(python())
        .arg(format!("{ROOT}/workflow/scripts/paper_figures.py"))
        .arg(format!("{ROOT}/docs/results/README.md"))
        .arg(&results)
        .arg("quick")
        .arg(&doc)
        .arg(results.join("tables/paper-figures.md"))
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );

    let figures: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&doc).unwrap()).unwrap();
    let rows = figures["paper_figures"].as_array().unwrap();
    assert_eq!(rows.len(), readme_rows(), "one row per README summary row");
    let computed: Vec<_> = rows.iter().filter(|r| !r["this_run"].is_null()).collect();
    assert_eq!(
        computed.len(),
        1,
        "only WALDIO Table 1 (WAL) is in this folder"
    );
    let compare: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(COMPARE).unwrap()).unwrap();
    let this_run = computed[0]["this_run"].as_str().unwrap();
    assert!(
        this_run.starts_with(&wal_table1(&compare)),
        "{this_run} is not the compare document's {}",
        wal_table1(&compare)
    );
    let why = |figure: &str| {
        rows.iter()
            .find(|r| r["figure"].as_str().unwrap().starts_with(figure))
            .and_then(|r| r["not_in_this_run"].as_str())
            .unwrap()
            .to_string()
    };
    assert!(
        why("Table 1: OFF").contains("not a regular file"),
        "the FIFO"
    );
    assert!(
        why("write volume").contains("not a regular file"),
        "the link"
    );
    assert!(
        why("durability of a committed").contains("larger than"),
        "the huge file"
    );
    for r in rows.iter().filter(|r| r["this_run"].is_null()) {
        let why = r["not_in_this_run"].as_str().unwrap();
        assert!(
            why.starts_with("not computed: ") || why.starts_with("not rebuilt by the workflow"),
            "{why}"
        );
    }

    let page = tmp.path().join("report.html");
    let run = common::joj_report(&results, &page);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let papers = html
        .find("every paper figure next to joj&#39;s")
        .expect("the paper-figures section");
    let contents = html.find("<h2>Every document</h2>").unwrap();
    let compare_section = html.find("<h2>compare · insert on ext4").unwrap();
    assert!(papers < contents && contents < compare_section);
    let table = &html[papers..contents];
    assert_eq!(table.matches("<tr><td>").count(), rows.len());
    assert!(table.contains(&wal_table1(&compare)));
    // The computed row links to the compare document's section on this page.
    let anchor = html[..compare_section]
        .rfind("<section id=\"doc")
        .map(|i| &html[i + 13..i + 13 + html[i + 13..].find('"').unwrap()])
        .unwrap();
    assert!(
        table.contains(&format!("<a href=\"#{anchor}\">joj/ext4-1000.json</a>")),
        "no link to #{anchor}"
    );
    // The published detail is in the repository, outside the document's folder: shown as
    // text unless the page is told links may lead there (as the workflow does,
    // `--link-root .`); then a relative link to a results page that exists.
    let published = "docs/results/waldio.md#table-1-the-joj-on-ext4\">waldio.md</a>";
    assert!(
        !table.contains(published),
        "a link out of the document's folder"
    );
    assert!(table.contains("waldio.md"));
    let page = tmp.path().join("report-linked.html");
    let run = common::joj_report_with(&results, &page, &["--link-root", ROOT]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(published));
}
