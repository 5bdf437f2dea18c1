//! `joj report DIR` over a folder of mixed results — compare, trace, crash and replay documents
//! saved by joj, beside JSON of no kind joj writes, a file that is no JSON, a FIFO, a link, a
//! file past the size limit, a document carrying markup in its text and a paper-figures
//! document carrying markup and a `javascript:` link — writes one
//! self-contained page: every document with its facts, table, plot and "what this means", the
//! rest listed with the reason, nothing fatal. Headless Chromium (Debian's `chromium`) opens
//! the page without one console message; the page has no script and loads nothing from outside.
//! Without Chromium the test fails and says how to install it: it is never skipped.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/report");

/// Chromium on PATH, or a failure that names it.
fn chromium() -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
            .find(|p| p.is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "chromium is missing: this test opens the report page in headless Chromium; \
             install it (apt-get install chromium)"
        )
    })
}

/// The console messages Chromium logs while it loads `page`, and the page's DOM.
fn open_in_chromium(page: &Path) -> (Vec<String>, String) {
    let profile = tempfile::tempdir().unwrap();
    let run = Command::new("timeout")
        .arg("180")
        .arg(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "chromium failed: {err}");
    let console = err
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    (console, String::from_utf8_lossy(&run.stdout).into_owned())
}

/// A folder of every kind of input the page must take.
fn mixed_results(dir: &Path) {
    for f in std::fs::read_dir(FIXTURES).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
    }
    // A document whose text is markup: shown as text, never run.
    let trace = std::fs::read_to_string(dir.join("trace.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&trace).unwrap();
    doc["config"]["op"] =
        "python3 <script>console.error('ran')</script><img src=x onerror=alert(1)>".into();
    let nested = dir.join("nested/deeper");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("marked-up.json"), doc.to_string()).unwrap();
    std::fs::write(dir.join("unknown.json"), r#"{"hello": [1, 2]}"#).unwrap();
    std::fs::write(dir.join("broken.json"), "{ not json").unwrap();
    std::fs::write(dir.join("notes.txt"), "ignored: not .json").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.join("link.json")).unwrap();
    let made = Command::new("mkfifo")
        .arg(dir.join("fifo.json"))
        .status()
        .unwrap();
    assert!(made.success());
    let huge = std::fs::File::create(dir.join("huge.json")).unwrap();
    huge.set_len((64 << 20) + 1).unwrap();
}

#[test]
fn the_report_page_opens_in_chromium_without_console_errors() {
    let chromium_found = chromium();
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    std::fs::create_dir(&results).unwrap();
    mixed_results(&results);
    let page = tmp.path().join("report.html");
    let run = common::joj_report(&results, &page);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(err.contains("6 document(s), 5 file(s) not shown"), "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    for s in [
        "compare · insert on ext4, 3 modes",
        "every paper figure next to joj&#39;s · 2 of 3 rebuilt by this run (profile quick)",
        "<a href=\"#doc1\">compare.json</a>",
        "&lt;img src=x onerror=console.error(2)&gt;",
        "trace · /usr/bin/python3 small.py on ext4",
        "crash · xftl-synthetic · emmc5",
        "replay · ",
        "group ≤ 2 ms (SQLite normal)",
        "What this means",
        "kernel",
        "SQLite",
        "3.54",
        "&lt;script&gt;console.error(&#39;ran&#39;)&lt;/script&gt;",
    ] {
        assert!(html.contains(s), "the page lacks {s:?}");
    }
    for (file, why) in [
        ("unknown.json", "not a result joj writes"),
        ("broken.json", "not JSON"),
        ("link.json", "a symbolic link"),
        ("fifo.json", "not a regular file"),
        ("huge.json", "more than joj reads"),
    ] {
        let line = html
            .lines()
            .find(|l| l.contains(file))
            .unwrap_or_else(|| panic!("{file} is not listed"));
        assert!(line.contains(why), "{file}: {line}");
    }
    assert!(!html.contains("notes.txt"));
    assert!(
        !html.contains("href=\"javascript"),
        "a document's link made a script URL"
    );
    // Self-contained: no script, and every image inline.
    assert!(!html.contains("<script"));
    let images = html.matches("<img ").count();
    // The comparison, drawn from its rows; a mode's trace plot; the trace's plot.
    assert!(images >= 3, "{images} plots inline");
    assert_eq!(
        html.matches("src=\"data:image/svg+xml;base64,").count(),
        images
    );
    let (console, dom) = open_in_chromium(&page);
    assert!(
        console.is_empty(),
        "{} logged on the console: {console:#?}",
        chromium_found.display()
    );
    assert!(dom.contains("What this means"), "the DOM Chromium built");
}

/// The check above can fail: a page that logs an error is caught.
#[test]
fn a_page_with_a_console_error_is_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>x</title></head><body>\
         <script>console.error('boom'); no_such_function();</script></body></html>",
    )
    .unwrap();
    let (console, _) = open_in_chromium(&page);
    assert!(console.iter().any(|l| l.contains("boom")), "{console:?}");
    assert!(
        console.iter().any(|l| l.contains("no_such_function")),
        "{console:?}"
    );
}
