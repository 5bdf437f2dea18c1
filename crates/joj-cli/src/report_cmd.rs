//! `joj report DIR|FILE…`: one self-contained HTML page from saved results (bench, compare,
//! trace, crash and replay JSON; `docs/report.md`).
//!
//! Inputs may come from anywhere (a workflow hands over a folder of every result), so each is
//! read as joj reads any input: a regular file only (a FIFO or device is listed as refused,
//! never opened for reading), at most [`MAX_DOCUMENT_BYTES`]; a folder is walked
//! [`MAX_DEPTH`] levels deep without following symbolic links, at most [`MAX_FILES`] files. A
//! file that is no JSON, or JSON of no kind joj writes, is listed on the page with the reason,
//! never fatal: the page shows whatever can be shown. Documents are read one at a time, each
//! drawn onto the page and dropped, and the page is bounded (`report_page::MAX_PAGE_BYTES`).

use std::path::{Path, PathBuf};

use clap::Args;
use joj_trace::OutputError;
use joj_trace::TraceError;
use joj_trace::output::{Existing, write_atomically};

use crate::output::{CliError, CliResult, check_output_file};
use crate::report_doc::{Document, Kind, Skipped};
use crate::report_page::{MAX_SECTIONS, Page};

/// The largest result document read (a trace run's JSON with its file rows is a few MiB).
pub const MAX_DOCUMENT_BYTES: u64 = 64 << 20;
/// How deep a folder is walked.
pub const MAX_DEPTH: usize = 4;
/// How many files the page takes; the rest are counted as left out.
pub const MAX_FILES: usize = 2000;
/// How many files a folder's walk lists as not shown (links, FIFOs, folders too deep) before it
/// stops: a folder of a million links is not a million lines.
const MAX_WALK_SKIPPED: usize = 2000;

const _: () = assert!(
    MAX_FILES <= MAX_SECTIONS,
    "a page has a section for every file it takes"
);

#[derive(Args)]
pub struct ReportArgs {
    /// Result documents (`--save` or `--json` output), or folders holding them (`*.json`,
    /// walked four levels deep).
    #[arg(required = true, value_name = "DIR|FILE")]
    inputs: Vec<PathBuf>,
    /// The HTML page to write.
    #[arg(short = 'o', long = "output", default_value = "joj-report.html", help_heading = crate::groups::OUTPUT)]
    output: PathBuf,
    /// Replace an existing output file.
    #[arg(long, help_heading = crate::groups::OUTPUT)]
    force: bool,
    /// Let the paper-figure tables link to files beneath this folder (default: each
    /// document's own folder; a document may come from anyone, and its links may name any
    /// file of the host).
    #[arg(long = "link-root", value_name = "DIR", help_heading = crate::groups::OUTPUT)]
    link_root: Option<PathBuf>,
}

pub fn main(a: ReportArgs) -> CliResult {
    let inputs: Vec<&Path> = a.inputs.iter().map(PathBuf::as_path).collect();
    check_output_file("-o/--output", &a.output, a.force, &inputs)?;
    let link_root = match &a.link_root {
        Some(root) => {
            let canonical = root.canonicalize().map_err(|source| CliError::Open {
                path: root.clone(),
                source,
            })?;
            if !canonical.is_dir() {
                return Err(CliError::LinkRootNotAFolder { path: root.clone() }.into());
            }
            Some(canonical)
        }
        None => None,
    };
    let (files, mut skipped) = gather(&a.inputs);
    let mut page = Page::new("joj report", &a.output, &files);
    if let Some(root) = link_root {
        page.set_link_root(root);
    }
    let mut read_failed = Vec::new();
    for (k, f) in files.iter().enumerate() {
        // One document at a time: drawn onto the page, then dropped.
        match read(f) {
            Ok(d) => page.add(k, &d),
            Err(reason) => read_failed.push((k, Skipped::new(f, reason))),
        }
    }
    for s in &skipped {
        page.not_shown(None, s);
    }
    for (k, s) in &read_failed {
        page.not_shown(Some(*k), s);
    }
    skipped.extend(read_failed.into_iter().map(|(_, s)| s));
    if page.documents() == 0 {
        for sk in &skipped {
            // A name from the folder given: someone else's choice of bytes.
            eprintln!(
                "  not shown: {} — {}",
                joj_trace::terminal::escaped(&sk.path),
                joj_trace::terminal::escaped(&sk.reason)
            );
        }
        return Err(CliError::NoReportDocument {
            inputs: a
                .inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            skipped: skipped.len(),
        }
        .into());
    }
    write_page(&a.output, &page, Existing::replace_if(a.force))?;
    eprintln!(
        "joj report: {} document(s), {} file(s) not shown; wrote {}",
        page.documents(),
        skipped.len(),
        a.output.display()
    );
    Ok(())
}

/// Write the page to `path` atomically.
pub fn write_page(path: &Path, page: &Page, existing: Existing) -> Result<(), TraceError> {
    write_atomically(path, existing, |w| page.write(w).map_err(TraceError::from))
}

/// Every file under `inputs` to read as a document, in the order named (a folder's files sorted
/// by path), and what was left out with the reason.
pub fn gather(inputs: &[PathBuf]) -> (Vec<PathBuf>, Vec<Skipped>) {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for input in inputs {
        match std::fs::symlink_metadata(input) {
            Ok(m) if m.is_dir() => walk(input, 0, &mut files, &mut skipped),
            // A file named on the command line is read even through a link: the reader
            // still refuses anything but a regular file.
            Ok(_) => files.push(input.clone()),
            Err(e) => skipped.push(Skipped::new(input, format!("cannot be read: {e}"))),
        }
    }
    if files.len() > MAX_FILES {
        files.truncate(MAX_FILES);
        skipped.push(Skipped {
            path: "more files".into(),
            reason: format!(
                "past the first {MAX_FILES} a page takes (a folder is not walked further); \
                 fix: report fewer files, or each folder on its own page"
            ),
        });
    }
    (files, skipped)
}

/// The `*.json` files under `dir`, sorted; links and special files listed as left out.
fn walk(dir: &Path, depth: usize, files: &mut Vec<PathBuf>, skipped: &mut Vec<Skipped>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => return skipped.push(Skipped::new(dir, format!("cannot be listed: {e}"))),
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if files.len() > MAX_FILES || skipped.len() > MAX_WALK_SKIPPED {
            return;
        }
        if skipped.len() == MAX_WALK_SKIPPED {
            let why = format!(
                "not walked: {MAX_WALK_SKIPPED} files are listed as not shown already; fix: name \
                 the documents, or a folder without so many links and special files"
            );
            return skipped.push(Skipped::new(dir, why));
        }
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let json = p.extension().is_some_and(|e| e == "json");
        if m.is_dir() && depth + 1 < MAX_DEPTH {
            walk(&p, depth + 1, files, skipped);
        } else if m.is_dir() {
            skipped.push(Skipped::new(&p, format!("deeper than {MAX_DEPTH} levels")));
        } else if json && m.file_type().is_symlink() {
            skipped.push(Skipped::new(&p, "a symbolic link (not followed)".into()));
        } else if json && !m.is_file() {
            skipped.push(Skipped::new(&p, "not a regular file".into()));
        } else if json {
            files.push(p);
        }
    }
}

/// One document, read within the bounds and recognised by its fields.
fn read(path: &Path) -> Result<Document, String> {
    let bytes = joj_trace::input::read_all(path, MAX_DOCUMENT_BYTES, "a result document")
        .map_err(|e| e.to_string())?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
        match serde_json::from_slice::<serde_json::Value>(first) {
            Ok(head) => format!(
                "JSON lines ({}), not one result document: a result is what --json or --save \
                 writes",
                match head.get("format").and_then(|f| f.as_str()) {
                    Some("joj-trace") => "a joj block trace: `joj trace show` reads it",
                    Some("joj-syscalls") => "a recording of system calls",
                    _ => "one document per line",
                }
            ),
            Err(_) => format!("not JSON: {e}"),
        }
    })?;
    let kind = Kind::of(value)?;
    Ok(Document {
        path: path.to_path_buf(),
        kind,
    })
}

/// `--report` of `joj compare` and `joj trace`: the page of one document just made, written
/// beside its trace and plot as `<its plot's name>.html`, or `-2`, `-3`, … after it when a
/// file has that name (a page of an earlier run, or anyone's file: never replaced, as the
/// trace and plot are not); returns the page's path.
pub fn beside(kind: Kind, plot_file: Option<&str>, out: &Path) -> Result<PathBuf, TraceError> {
    let name = plot_file
        .and_then(|p| Path::new(p).file_stem())
        .map_or_else(|| "joj-report".into(), |s| s.to_string_lossy().into_owned());
    let mut doc = Document {
        path: PathBuf::new(),
        kind,
    };
    for n in 1..=joj_trace::output::MAX_UNIQUE_STEMS {
        let path = match n {
            1 => out.join(format!("{name}.html")),
            n => out.join(format!("{name}-{n}.html")),
        };
        doc.path.clone_from(&path);
        let mut page = Page::new("joj report", &path, &[]);
        page.add(0, &doc);
        match write_page(&path, &page, Existing::Keep) {
            Ok(()) => return Ok(path),
            Err(TraceError::Output(OutputError::Exists { .. })) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(TraceError::Output(OutputError::Exists {
        path: out.join(format!("{name}.html")),
    }))
}
