//! The HTML of `joj report` (`docs/report.md`): one self-contained page — no script, no
//! request for anything outside it, every plot an `<img>` with a `data:` URI (an SVG shown as
//! an image runs no script, whatever it holds), every text from a document escaped.
//!
//! Per document: where it came from, the run's facts (kernel, filesystem, mount options,
//! SQLite, profile), its table, its plot, and the "what this means" lines; at the end what was
//! not shown and why.
//!
//! The page is bounded, whatever its inputs hold: at most [`MAX_PAGE_BYTES`]. A [`Page`] is
//! made one document at a time (each document's section is drawn when it is read, and the
//! document dropped), so what is held is the page itself and one document. Plots take at most
//! [`MAX_PAGE_PLOT_BYTES`] of it (each file once), the sections' text at most
//! [`MAX_SECTIONS_TEXT_BYTES`]; each line of a list, heading and path is cut to
//! [`MAX_LINE_BYTES`], each list to [`MAX_LIST_BYTES`]. What does not fit is left out with a
//! line on the page saying which and why.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::report_doc::{
    Document, Keep, Kind, MAX_PAGE_PLOT_BYTES, Plots, Skipped, esc, esc_within, mib, scalar,
};
use crate::report_papers::{Targets, section};

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1450px;color:#1e1e1e;\
padding:0 1em}h1{font-size:1.6em}h2{font-size:1.25em;border-top:2px solid #ddd;padding-top:.8em;\
margin-top:2em}table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;\
padding:.2em .6em}th{background:#f2f2f2;text-align:left}td.n{text-align:right;\
font-variant-numeric:tabular-nums}.src{color:#666;font-size:.9em}img.plot{max-width:100%;\
border:1px solid #eee;margin:.6em 0}pre{background:#f7f7f7;padding:.6em;overflow-x:auto;\
font-size:.85em}ul.meaning li{margin:.3em 0}table.papers td{font-size:.9em;vertical-align:top}\
.left-out{color:#8a4b00}";

/// The largest page `joj report` writes, in bytes. A browser opens a page of a few tens of MiB
/// in seconds and stalls on hundreds (20 rows naming one 20 MiB plot once made a 559 MB page);
/// a workflow's whole results make a page of a few MiB of text and 20 to 30 MiB of plots. What
/// would take a page past it is left out with a line saying so, never a bigger page.
pub const MAX_PAGE_BYTES: usize = 128 << 20;
/// The documents' sections, their plots apart: a section that would take them past this is
/// left out, a line in its place (a section of a saved result is a few KiB to a few MiB).
const MAX_SECTIONS_TEXT_BYTES: usize = 40 << 20;
/// The sections a page holds (`report_cmd::MAX_FILES` documents of a folder); a document past
/// them is listed as not shown.
pub const MAX_SECTIONS: usize = 2000;
/// Each list (contents, not shown) at most; lines past it are counted, not listed.
const MAX_LIST_BYTES: usize = 4 << 20;
/// A line of a list, or a section left out, at most: a heading, a path and a reason are cut to
/// fit ([`esc_within`]).
const MAX_LINE_BYTES: usize = 6 << 10;
/// A heading, a path and a reason, escaped, at most: each line has them and some markup.
const HEADING_BYTES: usize = 1000;
const PATH_BYTES: usize = 2000;
const REASON_BYTES: usize = 2500;
/// The page's head, its own lines and the lists' count lines.
const MAX_FRAME_BYTES: usize = 64 << 10;

// The parts add up to at most the page: its plots, its sections' text, a line for each section
// left out, two lists each past its bound by one line at most, and the frame.
const _: () = assert!(
    MAX_PAGE_PLOT_BYTES
        + MAX_SECTIONS_TEXT_BYTES
        + MAX_SECTIONS * MAX_LINE_BYTES
        + 2 * (MAX_LIST_BYTES + MAX_LINE_BYTES)
        + MAX_FRAME_BYTES
        <= MAX_PAGE_BYTES
);
const _: () = assert!(HEADING_BYTES + PATH_BYTES + REASON_BYTES + 512 <= MAX_LINE_BYTES);

/// One document's section, drawn.
struct Section {
    /// Its anchor, `doc{k}`: `k` the document's place among the inputs.
    anchor: String,
    /// Its heading and source, escaped and cut to their room.
    heading: String,
    source: String,
    html: String,
}

/// A page being made, one document at a time (see the module's header).
pub struct Page {
    title: String,
    targets: Targets,
    plots: Plots,
    /// Paper-figures documents, shown first (before the contents), then the others in order.
    papers: Vec<Section>,
    others: Vec<Section>,
    /// Bytes of the sections shown, their plots apart, within [`MAX_SECTIONS_TEXT_BYTES`].
    text_bytes: usize,
    /// The "Not shown" list's lines (within [`MAX_LIST_BYTES`]), how many files it names, and
    /// how many of them are counted but not listed.
    not_shown: String,
    not_shown_files: usize,
    not_shown_unlisted: usize,
}

impl Page {
    /// A page to be written at `page_path`, of documents read from `files` (by their index
    /// there, links to a document lead to its section, or to the line saying why it is not
    /// shown).
    /// Lets the paper-figure links lead to files beneath `root` (canonical), whatever folder
    /// the document naming them is in.
    pub fn set_link_root(&mut self, root: PathBuf) {
        self.targets.link_root = Some(root);
    }

    pub fn new(title: &str, page_path: &Path, files: &[PathBuf]) -> Page {
        Page {
            title: title.to_string(),
            targets: targets(files, page_path),
            plots: Plots::default(),
            papers: Vec::new(),
            others: Vec::new(),
            text_bytes: 0,
            not_shown: String::new(),
            not_shown_files: 0,
            not_shown_unlisted: 0,
        }
    }

    /// The plot files read for the page: inputs its output may not replace.
    pub fn plot_inputs(&self) -> Vec<PathBuf> {
        self.plots.opened()
    }

    /// How many documents the page shows (a section left out for room included).
    pub fn documents(&self) -> usize {
        self.papers.len() + self.others.len()
    }

    /// Add document `k`'s section; one that would take the page past its bound is left out, a
    /// line saying so in its place.
    pub fn add(&mut self, k: usize, d: &Document) {
        if self.documents() >= MAX_SECTIONS {
            let why = format!("past the {MAX_SECTIONS} documents a page shows");
            return self.not_shown(Some(k), &Skipped::new(&d.path, why));
        }
        let anchor = format!("doc{k}");
        let heading = esc_within(&heading(&d.kind), HEADING_BYTES, Keep::Start);
        let source = source_of(d);
        let mark = self.plots.mark();
        let plots_before = self.plots.bytes();
        let mut html = format!(
            "<section id=\"{anchor}\">\n<h2>{heading}</h2>\n<p class=\"src\">from {source}</p>\n"
        );
        match &d.kind {
            Kind::PaperFigures(p) => {
                let dir = d.path.parent().unwrap_or(Path::new("."));
                html.push_str(&section(p, dir, &self.targets));
            }
            _ => html.push_str(&crate::report_parts::body(d, &mut self.plots)),
        }
        html.push_str("</section>\n");
        let plot_bytes = usize::try_from(self.plots.bytes() - plots_before).unwrap_or(usize::MAX);
        let text = html.len().saturating_sub(plot_bytes);
        if self.text_bytes + text > MAX_SECTIONS_TEXT_BYTES {
            // Its plots go with it: nothing on the page refers to a section left out.
            self.plots.undo(mark);
            html = self.left_out(&anchor, &heading, &source, html.len());
        } else {
            self.text_bytes += text;
        }
        let s = Section {
            anchor,
            heading,
            source,
            html,
        };
        if matches!(d.kind, Kind::PaperFigures(_)) {
            self.papers.push(s);
        } else {
            self.others.push(s);
        }
    }

    /// The section in place of one the page has no room for.
    fn left_out(&self, anchor: &str, heading: &str, source: &str, bytes: usize) -> String {
        let fix = if bytes > MAX_SECTIONS_TEXT_BYTES {
            "open the document itself: it holds more than any page shows"
        } else {
            "open the document itself, or make a page of it alone (joj report FILE)"
        };
        let why = esc(&format!(
            "this document's section ({}) is left out: this page already holds {} of text \
             besides its plots, and a page holds at most {} of it ({} in all) so that a browser \
             opens it; {fix}",
            mib(bytes as u64),
            mib(self.text_bytes as u64),
            mib(MAX_SECTIONS_TEXT_BYTES as u64),
            mib(MAX_PAGE_BYTES as u64)
        ));
        let h = format!(
            "<section id=\"{anchor}\">\n<h2>{heading}</h2>\n<p class=\"src\">from {source}</p>\n\
             <p class=\"left-out\">{why}</p>\n</section>\n"
        );
        assert!(h.len() <= MAX_LINE_BYTES, "a section left out is one line");
        h
    }

    /// List a file that is not on the page, and why; `k` its place among the inputs, if it
    /// has one (links to it lead here).
    pub fn not_shown(&mut self, k: Option<usize>, s: &Skipped) {
        self.not_shown_files += 1;
        let id = k.map(|k| format!(" id=\"doc{k}\"")).unwrap_or_default();
        let line = format!(
            "<li{id}>{} — {}</li>\n",
            esc_within(&s.path, PATH_BYTES, Keep::End),
            esc_within(&s.reason, REASON_BYTES, Keep::Start)
        );
        assert!(
            line.len() <= MAX_LINE_BYTES,
            "a line of a list is cut to fit"
        );
        if self.not_shown.len() + line.len() <= MAX_LIST_BYTES {
            self.not_shown.push_str(&line);
        } else {
            self.not_shown_unlisted += 1;
        }
    }

    /// Write the page to `w`.
    pub fn write(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        let head = self.head();
        let contents = self.contents();
        let tail = self.tail();
        let parts: Vec<&str> = std::iter::once(head.as_str())
            .chain(self.papers.iter().map(|s| s.html.as_str()))
            .chain(std::iter::once(contents.as_str()))
            .chain(self.others.iter().map(|s| s.html.as_str()))
            .chain(std::iter::once(tail.as_str()))
            .collect();
        let bytes: usize = parts.iter().map(|p| p.len()).sum();
        assert!(
            bytes <= MAX_PAGE_BYTES,
            "a page of {bytes} bytes: each of its parts is bounded, and they add up to at most \
             {MAX_PAGE_BYTES}"
        );
        for p in parts {
            w.write_all(p.as_bytes())?;
        }
        Ok(())
    }

    fn head(&self) -> String {
        let mut h = format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
            esc(&self.title),
            esc(&self.title)
        );
        let _ = writeln!(
            h,
            "<p>{} result document(s); {} file(s) not shown. Written by joj {}.</p>",
            self.documents(),
            self.not_shown_files,
            esc(env!("CARGO_PKG_VERSION"))
        );
        h
    }

    /// The contents list: every document but the paper figures, which come before it.
    fn contents(&self) -> String {
        let mut h = String::from("<h2>Every document</h2>\n<ol>\n");
        let mut unlisted = 0;
        for s in &self.others {
            let line = format!(
                "<li><a href=\"#{}\">{}</a> <span class=\"src\">{}</span></li>\n",
                s.anchor, s.heading, s.source
            );
            assert!(
                line.len() <= MAX_LINE_BYTES,
                "a line of a list is cut to fit"
            );
            if h.len() + line.len() <= MAX_LIST_BYTES {
                h.push_str(&line);
            } else {
                unlisted += 1;
            }
        }
        if unlisted > 0 {
            let _ = writeln!(
                h,
                "<li>and {unlisted} more, below (a contents list holds at most {})</li>",
                mib(MAX_LIST_BYTES as u64)
            );
        }
        if self.not_shown_files > 0 {
            h.push_str("<li><a href=\"#skipped\">not shown</a></li>\n");
        }
        h.push_str("</ol>\n");
        h
    }

    fn tail(&self) -> String {
        let mut h = String::new();
        if self.not_shown_files > 0 {
            h.push_str("<section id=\"skipped\">\n<h2>Not shown</h2>\n<ul>\n");
            h.push_str(&self.not_shown);
            if self.not_shown_unlisted > 0 {
                let _ = writeln!(
                    h,
                    "<li>and {} more file(s) not shown (this list holds at most {})</li>",
                    self.not_shown_unlisted,
                    mib(MAX_LIST_BYTES as u64)
                );
            }
            h.push_str("</ul>\n</section>\n");
        }
        h.push_str("</body>\n</html>\n");
        h
    }
}

/// Where a document came from, escaped and cut to its room: its file, or — on a page of
/// `--report`, which holds the run just made, saved nowhere but in the page itself (its
/// document's path is the page's) — that run.
fn source_of(d: &Document) -> String {
    if d.path.extension().is_some_and(|e| e == "html") {
        esc(
            "the run this page was written for (--report); --json or --save keeps its result \
             as a document",
        )
    } else {
        esc_within(&d.path.display().to_string(), PATH_BYTES, Keep::End)
    }
}

/// The page's folder and each input file's anchor, by canonical path, for links.
fn targets(files: &[PathBuf], page_path: &Path) -> Targets {
    let page_dir = page_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Targets {
        page_dir: page_dir
            .canonicalize()
            .unwrap_or_else(|_| page_dir.to_path_buf()),
        link_root: None,
        on_page: files
            .iter()
            .enumerate()
            .filter_map(|(k, f)| Some((f.canonicalize().ok()?, k)))
            .fold(HashMap::new(), |mut m, (f, k)| {
                // A file named twice: links lead to its first section.
                m.entry(f).or_insert_with(|| format!("doc{k}"));
                m
            }),
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
        Kind::Replay(v) => {
            let name = v
                .pointer("/device/profile")
                .and_then(scalar)
                .unwrap_or_default();
            // A profile file may carry a built-in's name: the file is named with it.
            match v.pointer("/device/profile_source").and_then(scalar) {
                Some(file) if file != joj_device::profile_source::BUILT_IN => {
                    format!("replay · {name} (file {file})")
                }
                _ => format!("replay · {name}"),
            }
        }
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
