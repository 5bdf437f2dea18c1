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

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use crate::paper_figures_doc::PaperFigures;
use crate::report_doc::esc;

/// Extensions a link may point at.
const LINKABLE: [&str; 5] = ["md", "json", "txt", "svg", "html"];

/// Where links on the page lead: the page's folder and the documents on it by their anchor.
pub struct Targets {
    pub page_dir: PathBuf,
    /// Where links may lead (canonical; `joj report --link-root`): beneath this folder rather
    /// than beneath each document's own.
    pub link_root: Option<PathBuf>,
    /// (canonical path, anchor id) of every document on the page.
    pub on_page: Vec<(PathBuf, String)>,
}

/// The section's body: a note on what the columns are, then the table.
pub fn section(p: &PaperFigures, doc_dir: &Path, t: &Targets) -> String {
    let mut h = String::new();
    let published = p
        .published
        .as_deref()
        .and_then(|f| link(doc_dir, f, "the published table", t))
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
    for r in &p.paper_figures {
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
            .filter_map(|s| link(doc_dir, s, &source_name(s), t))
            .collect();
        detail.extend(
            r.details
                .iter()
                .map(|l| link(doc_dir, &l.href, &l.text, t).unwrap_or_else(|| esc(&l.text))),
        );
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
    h
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

/// A link to `href` (relative to `doc_dir`, optionally with a `#fragment`) shown as `text`, or
/// `None` where it leads nowhere a page may link: see the module's header.
fn link(doc_dir: &Path, href: &str, text: &str, t: &Targets) -> Option<String> {
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
    let home = if doc_dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        doc_dir
    };
    let target = home.join(file).canonicalize().ok()?;
    if let Some((_, anchor)) = t.on_page.iter().find(|(p, _)| *p == target) {
        return Some(format!("<a href=\"#{anchor}\">{}</a>", esc(text)));
    }
    // Resolved (links followed), it must still be beneath the document's folder (or the
    // folder the page was told links may lead into).
    let allowed = match &t.link_root {
        Some(root) => root.clone(),
        None => home.canonicalize().ok()?,
    };
    if !target.starts_with(allowed) {
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

    fn targets(dir: &Path) -> Targets {
        Targets {
            page_dir: dir.canonicalize().unwrap(),
            link_root: None,
            on_page: vec![(dir.join("run.json").canonicalize().unwrap(), "doc3".into())],
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
            link(&tables, "../run.json", "r", &t).unwrap(),
            "<a href=\"#doc3\">r</a>"
        );
        assert_eq!(
            link(&tables, "t.md#a-b_1", "t", &t).unwrap(),
            "<a href=\"tables/t.md#a-b_1\">t</a>"
        );
        // An href that could read as a URL scheme is refused outright.
        assert_eq!(
            link(d, "javascript:alert(1).md", "j", &t),
            None,
            "a ':' in the href is refused outright"
        );
        // A directory whose name a browser would read as `..`, and a backslash: the link names
        // exactly that file (`%` itself encoded).
        std::fs::create_dir(d.join("tables/%2e%2e")).unwrap();
        std::fs::write(d.join("tables/%2e%2e/p\\q.md"), "x").unwrap();
        assert_eq!(
            link(&tables, "%2e%2e/p\\q.md", "p", &t).unwrap(),
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
            assert_eq!(link(&tables, bad, "x", &t), None, "{bad}");
        }
    }
}
