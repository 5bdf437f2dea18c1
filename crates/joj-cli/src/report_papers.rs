//! The section `joj report` opens with when a `paper_figures` document is among its inputs
//! (docs/formats/paper-figures.md; the workflow's `tables/paper-figures.json`): every paper
//! figure, the paper's number, joj's figure computed from this run and joj's published figures,
//! each with links to the detail.
//!
//! The document may come from anyone, like every input of the page: its text is escaped, and a
//! link is made only to a file that exists beneath the document's own folder once every `..`
//! and symbolic link is resolved (a document names files of its own run; `../../secret.md`, or
//! a link beside it pointing out, could be any file of the host), is a regular file with a
//! result or page extension (`.md`, `.json`, `.txt`, `.svg`, `.html`), and only as a relative
//! path from the page. A source that is itself one of the page's inputs links to its section
//! instead (or to the line saying why it is not shown), wherever it is: that link names no
//! file. Anything else is shown as text. `joj report --link-root DIR` widens "the document's
//! own folder" to DIR for every document of the page (the workflow's table links the
//! repository's published results, `../../../docs/results/…`).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use crate::paper_figures_doc::PaperFigures;
use crate::report_doc::esc;

/// Extensions a link may point at.
const LINKABLE: [&str; 5] = ["md", "json", "txt", "svg", "html"];
/// Rows of one paper-figures document shown at most (the workflow's has a few dozen), and
/// sources and detail links of one row looked for at most (a row has one to a few): each is
/// resolved on the filesystem, so a document naming a million costs a million lookups.
const MAX_ROWS: usize = 500;
const MAX_ROW_LINKS: usize = 20;

/// Where links on the page lead: the page's folder and the documents on it by their anchor.
pub struct Targets {
    pub page_dir: PathBuf,
    /// Where links may lead (canonical; `joj report --link-root`): beneath this folder rather
    /// than beneath each document's own.
    pub link_root: Option<PathBuf>,
    /// Every document on the page by canonical path: its anchor id.
    pub on_page: HashMap<PathBuf, String>,
}

/// The section's body: a note on what the columns are, then the table: at most [`MAX_ROWS`]
/// rows, each with at most [`MAX_ROW_LINKS`] sources and details, what is left out counted.
pub fn section(p: &PaperFigures, doc_dir: &Path, t: &Targets) -> String {
    let home = if doc_dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        doc_dir
    };
    // Where links may lead, resolved once for the document.
    let allowed = match &t.link_root {
        Some(root) => Some(root.clone()),
        None => home.canonicalize().ok(),
    };
    let at = Home {
        dir: home,
        allowed: allowed.as_deref(),
    };
    let mut h = String::new();
    let published = p
        .published
        .as_deref()
        .and_then(|f| link(&at, f, "the published table", t))
        .unwrap_or_else(|| "the published table".into());
    let _ = writeln!(
        h,
        "<p>Each row: the paper's number, joj's figure <b>computed from this run</b> (profile \
         <code>{}</code>; the quick profile's sizes are too small to compare with a paper — the \
         published figures are the full sizes), and joj's figures as published in {published}, \
         with its verdict. A row this run does not rebuild says so.</p>",
        esc(&p.profile)
    );
    h.push_str(
        "<table class=\"papers\">\n<tr><th>paper</th><th>figure</th><th>paper</th>\
         <th>joj, this run</th><th>joj, published: measured</th><th>published: modeled</th>\
         <th>published verdict</th><th>detail</th></tr>\n",
    );
    for r in p.paper_figures.iter().take(MAX_ROWS) {
        let this = match (&r.this_run, &r.not_in_this_run) {
            (Some(v), _) => format!(
                "{}{}",
                esc(v),
                r.this_run_basis
                    .as_deref()
                    .map(|b| format!(" <span class=\"src\">({})</span>", esc(b)))
                    .unwrap_or_default()
            ),
            (None, why) => format!(
                "<span class=\"src\">– {}</span>",
                esc(why.as_deref().unwrap_or("not in this run"))
            ),
        };
        let mut detail: Vec<String> = r
            .this_run_sources
            .iter()
            .take(MAX_ROW_LINKS)
            .filter_map(|s| link(&at, s, &source_name(s), t))
            .collect();
        detail.extend(
            r.details
                .iter()
                .take(MAX_ROW_LINKS)
                .map(|l| link(&at, &l.href, &l.text, t).unwrap_or_else(|| esc(&l.text))),
        );
        let more = r.this_run_sources.len().saturating_sub(MAX_ROW_LINKS)
            + r.details.len().saturating_sub(MAX_ROW_LINKS);
        if more > 0 {
            detail.push(format!(
                "<span class=\"left-out\">and {more} more sources and details (a row shows \
                 {MAX_ROW_LINKS} of each; open the document itself)</span>"
            ));
        }
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{this}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td></tr>",
            esc(&r.paper),
            esc(&r.figure),
            esc(&r.paper_value),
            esc(&r.published_measured),
            esc(&r.published_modeled),
            esc(&r.published_verdict),
            detail.join(", ")
        );
    }
    h.push_str("</table>\n");
    if p.paper_figures.len() > MAX_ROWS {
        let _ = writeln!(
            h,
            "<p class=\"left-out\">and {} more rows not shown (a page shows the first \
             {MAX_ROWS} of a paper-figures document; open the document itself)</p>",
            p.paper_figures.len() - MAX_ROWS
        );
    }
    h
}

/// The folder a document's links are relative to, and the canonical folder they must stay
/// beneath (`None`: that folder cannot be resolved, and no link is made).
struct Home<'a> {
    dir: &'a Path,
    allowed: Option<&'a Path>,
}

/// A source's name on the page: its file name and folder (`joj/ext4-1000.json`).
fn source_name(s: &str) -> String {
    let p = Path::new(s);
    let mut parts: Vec<String> = p
        .components()
        .rev()
        .take(2)
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.reverse();
    parts.join("/")
}

/// A link to `href` (relative to the document's folder, optionally with a `#fragment`) shown
/// as `text`, or `None` where it leads nowhere a page may link: see the module's header.
fn link(home: &Home, href: &str, text: &str, t: &Targets) -> Option<String> {
    let (file, fragment) = match href.split_once('#') {
        Some((f, frag)) => (f, Some(frag)),
        None => (href, None),
    };
    let fragment_ok = fragment.is_none_or(|f| {
        !f.is_empty()
            && f.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    });
    if file.is_empty() || Path::new(file).is_absolute() || file.contains(':') || !fragment_ok {
        return None;
    }
    let target = home.dir.join(file).canonicalize().ok()?;
    if let Some(anchor) = t.on_page.get(&target) {
        return Some(format!("<a href=\"#{anchor}\">{}</a>", esc(text)));
    }
    // Resolved (links followed), it must still be beneath the document's folder (or the
    // folder the page was told links may lead into).
    if !target.starts_with(home.allowed?) {
        return None;
    }
    let ext_ok = target
        .extension()
        .is_some_and(|e| LINKABLE.iter().any(|x| e == *x));
    if !ext_ok || !target.metadata().ok()?.is_file() {
        return None;
    }
    let mut rel = relative(&t.page_dir, &target);
    // A first component such as `javascript:x` would read as a URL scheme.
    if rel.to_string_lossy().contains(':') {
        rel = Path::new(".").join(rel);
    }
    let frag = fragment.map(|f| format!("#{f}")).unwrap_or_default();
    Some(format!(
        "<a href=\"{}{}\">{}</a>",
        url_path(&rel),
        esc(&frag),
        esc(text)
    ))
}

/// `rel` as the path of a relative URL naming exactly that file: every byte of each component
/// but the unreserved ones percent-encoded. The path was checked on the filesystem, but a
/// browser follows it as a URL, and would read a directory named `%2e%2e` as `..`, a `\` as
/// `/`, a `?` or `#` as the path's end.
fn url_path(rel: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for (k, c) in rel.components().enumerate() {
        if k > 0 {
            out.push('/');
        }
        for &b in c.as_os_str().as_bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// `to` as a path relative to the folder `from` (both canonical). Written here because std has
/// none, and these ten lines are all a page needs (no `..` or links left to resolve).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c.as_os_str());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`link`] from a document in `dir`.
    fn link_in(dir: &Path, href: &str, text: &str, t: &Targets) -> Option<String> {
        let allowed = dir.canonicalize().ok();
        let home = Home {
            dir,
            allowed: allowed.as_deref(),
        };
        link(&home, href, text, t)
    }

    /// A paper-figures document of 2,000 rows naming 100,000 sources each (docs/robustness.md
    /// H25; a million sources once took 25 s, each resolved on the filesystem and compared with
    /// every input): the first rows and sources are shown, and the rest counted.
    #[test]
    fn a_paper_figures_documents_rows_and_sources_are_bounded_and_counted() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("run.json"), "{}").unwrap();
        let sources: Vec<serde_json::Value> = (0..100_000).map(|_| ".".into()).collect();
        let row = serde_json::json!({
            "paper": "p", "figure": "f", "paper_value": "v", "this_run": "x",
            "this_run_sources": sources, "published_measured": "", "published_modeled": "",
            "published_verdict": "", "details": []
        });
        let mut rows = vec![row];
        rows.extend((0..1999).map(|_| {
            serde_json::json!({
                "paper": "p", "figure": "f", "paper_value": "v", "published_measured": "",
                "published_modeled": "", "published_verdict": ""
            })
        }));
        let doc = serde_json::json!({"paper_figures": rows, "profile": "quick"});
        let p: PaperFigures = serde_json::from_value(doc).unwrap();
        let h = section(&p, d, &targets(d));
        assert!(
            h.contains("and 99980 more sources and details (a row shows 20 of each"),
            "sources counted"
        );
        assert!(h.contains("and 1500 more rows not shown"), "rows counted");
        assert_eq!(h.matches("<tr>").count(), 1 + MAX_ROWS);
    }

    fn targets(dir: &Path) -> Targets {
        Targets {
            page_dir: dir.canonicalize().unwrap(),
            link_root: None,
            on_page: HashMap::from([(dir.join("run.json").canonicalize().unwrap(), "doc3".into())]),
        }
    }

    #[test]
    fn relative_paths_climb_and_descend() {
        assert_eq!(
            relative(Path::new("/a/b/c"), Path::new("/a/d/e.md")),
            PathBuf::from("../../d/e.md")
        );
        assert_eq!(
            relative(Path::new("/a"), Path::new("/a/t/x.md")),
            PathBuf::from("t/x.md")
        );
    }

    #[test]
    fn links_lead_only_to_files_a_page_may_show() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::create_dir(d.join("tables")).unwrap();
        std::fs::write(d.join("run.json"), "{}").unwrap();
        std::fs::write(d.join("tables/t.md"), "x").unwrap();
        std::fs::write(d.join("javascript:alert(1).md"), "x").unwrap();
        std::fs::write(d.join("secret"), "x").unwrap();
        std::fs::write(d.join("outside.md"), "x").unwrap();
        std::os::unix::fs::symlink("../outside.md", d.join("tables/out.md")).unwrap();
        let t = targets(d);
        let tables = d.join("tables");
        // A document on the page: its section.
        assert_eq!(
            link_in(&tables, "../run.json", "r", &t).unwrap(),
            "<a href=\"#doc3\">r</a>"
        );
        assert_eq!(
            link_in(&tables, "t.md#a-b_1", "t", &t).unwrap(),
            "<a href=\"tables/t.md#a-b_1\">t</a>"
        );
        // An href that could read as a URL scheme is refused outright.
        assert_eq!(
            link_in(d, "javascript:alert(1).md", "j", &t),
            None,
            "a ':' in the href is refused outright"
        );
        // A directory whose name a browser would read as `..`, and a backslash: the link names
        // exactly that file (`%` itself encoded).
        std::fs::create_dir(d.join("tables/%2e%2e")).unwrap();
        std::fs::write(d.join("tables/%2e%2e/p\\q.md"), "x").unwrap();
        assert_eq!(
            link_in(&tables, "%2e%2e/p\\q.md", "p", &t).unwrap(),
            "<a href=\"tables/%252e%252e/p%5Cq.md\">p</a>"
        );
        for bad in [
            "javascript:alert(1)",
            "/etc/passwd",
            "../secret",
            "../outside.md",
            "out.md",
            "t.md#\"><script>",
            "missing.md",
            "",
        ] {
            assert_eq!(link_in(&tables, bad, "x", &t), None, "{bad}");
        }
    }
}
