//! The HTML of `joj report` (`docs/report.md`): one self-contained page — no script, no
//! request for anything outside it, every plot an `<img>` with a `data:` URI (an SVG shown as
//! an image runs no script, whatever it holds), every text from a document escaped.
//!
//! Per document: where it came from, the run's facts (kernel, filesystem, mount options,
//! SQLite, profile), its table, its plot, and the "what this means" lines; at the end what was
//! not shown and why.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::Path;

use crate::report_doc::{Document, Kind, Skipped, esc, scalar};
use crate::report_papers::{Targets, section};

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1450px;color:#1e1e1e;\
padding:0 1em}h1{font-size:1.6em}h2{font-size:1.25em;border-top:2px solid #ddd;padding-top:.8em;\
margin-top:2em}table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;\
padding:.2em .6em}th{background:#f2f2f2;text-align:left}td.n{text-align:right;\
font-variant-numeric:tabular-nums}.src{color:#666;font-size:.9em}img.plot{max-width:100%;\
border:1px solid #eee;margin:.6em 0}pre{background:#f7f7f7;padding:.6em;overflow-x:auto;\
font-size:.85em}ul.meaning li{margin:.3em 0}table.papers td{font-size:.9em;vertical-align:top}";

/// The whole page, to be written at `page_path`: a paper-figures document first, before the
/// contents (its links are made relative to the page's folder), then every other in the order
/// given.
pub fn page(title: &str, docs: &[Document], skipped: &[Skipped], page_path: &Path) -> String {
    let mut docs: Vec<&Document> = docs.iter().collect();
    docs.sort_by_key(|d| !matches!(d.kind, Kind::PaperFigures(_)));
    let papers = docs
        .iter()
        .take_while(|d| matches!(d.kind, Kind::PaperFigures(_)))
        .count();
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(title),
        esc(title)
    );
    let _ = writeln!(
        h,
        "<p>{} result document(s); {} file(s) not shown. Written by joj {}.</p>",
        docs.len(),
        skipped.len(),
        esc(env!("CARGO_PKG_VERSION"))
    );
    let targets = targets(&docs, page_path);
    sections(&mut h, &docs, 0..papers, &targets);
    h.push_str("<h2>Every document</h2>\n<ol>\n");
    for (i, d) in docs.iter().enumerate().skip(papers) {
        let _ = writeln!(
            h,
            "<li><a href=\"#doc{i}\">{}</a> <span class=\"src\">{}</span></li>",
            esc(&heading(&d.kind)),
            esc(source_of(d).trim_start_matches("from "))
        );
    }
    if !skipped.is_empty() {
        h.push_str("<li><a href=\"#skipped\">not shown</a></li>\n");
    }
    h.push_str("</ol>\n");
    sections(&mut h, &docs, papers..docs.len(), &targets);
    if !skipped.is_empty() {
        h.push_str("<section id=\"skipped\">\n<h2>Not shown</h2>\n<ul>\n");
        for s in skipped {
            let _ = writeln!(h, "<li>{} — {}</li>", esc(&s.path), esc(&s.reason));
        }
        h.push_str("</ul>\n</section>\n");
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// Where a document came from: its file, or — on a page of `--report`, which holds the run
/// just made, saved nowhere but in the page itself (its document's path is the page's) — that
/// run.
fn source_of(d: &Document) -> String {
    if d.path.extension().is_some_and(|e| e == "html") {
        "from the run this page was written for (--report); --json or --save keeps its result \
         as a document"
            .to_string()
    } else {
        format!("from {}", d.path.display())
    }
}

/// The sections of `docs[range]`, each with its anchor `doc{i}`.
fn sections(h: &mut String, docs: &[&Document], range: Range<usize>, targets: &Targets) {
    for i in range {
        let d = docs[i];
        let _ = writeln!(
            h,
            "<section id=\"doc{i}\">\n<h2>{}</h2>\n<p class=\"src\">{}</p>",
            esc(&heading(&d.kind)),
            esc(&source_of(d))
        );
        match &d.kind {
            Kind::PaperFigures(p) => {
                let dir = d.path.parent().unwrap_or(Path::new("."));
                h.push_str(&section(p, dir, targets));
            }
            _ => h.push_str(&crate::report_parts::body(d)),
        }
        h.push_str("</section>\n");
    }
}

/// The page's folder and each document's anchor, by canonical path, for links.
fn targets(docs: &[&Document], page_path: &Path) -> Targets {
    let page_dir = page_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Targets {
        page_dir: page_dir
            .canonicalize()
            .unwrap_or_else(|_| page_dir.to_path_buf()),
        on_page: docs
            .iter()
            .enumerate()
            .filter_map(|(i, d)| Some((d.path.canonicalize().ok()?, format!("doc{i}"))))
            .collect(),
    }
}

/// What a document is, in a few words.
fn heading(k: &Kind) -> String {
    match k {
        Kind::Compare(c) => match c.rows.first() {
            Some(r) => format!(
                "compare · {} on {}, {} modes",
                r.result.config.op,
                r.result.config.fs,
                c.rows.len()
            ),
            None => "compare · no rows".into(),
        },
        Kind::Run(r) if r.command.is_some() => {
            format!("trace · {} on {}", r.config.op, r.config.fs)
        }
        Kind::Run(r) => format!(
            "{} · {} {} on {}",
            r.config.workload,
            r.config.journal_mode.as_deref().unwrap_or(""),
            r.config.op,
            r.config.fs
        ),
        Kind::Crash(v) => format!(
            "crash · {}",
            ["fs", "mode", "workload", "profile"]
                .iter()
                .filter_map(|k| v.get(*k).and_then(scalar))
                .collect::<Vec<_>>()
                .join(" · ")
        ),
        Kind::Replay(v) => format!(
            "replay · {}",
            v.pointer("/device/profile")
                .and_then(scalar)
                .unwrap_or_default()
        ),
        Kind::PaperFigures(p) => p.heading(),
        Kind::Other(what, v) => format!(
            "{what} · {}",
            ["tag", "mode", "baseline", "workload", "profile", "fs"]
                .iter()
                .filter_map(|k| v.get(*k).and_then(scalar))
                .collect::<Vec<_>>()
                .join(" · ")
        ),
    }
}
