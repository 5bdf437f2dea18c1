//! What `joj report` puts on its page, before any HTML: the kinds of result document, how a
//! document's text and plots are made safe to show (see [`crate::report_page`]), and how many
//! bytes of plots one page inlines ([`Plots`]).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use joj_linux::Beneath;

use joj_experiment::RunResult;
use joj_experiment::compare::Comparison;

/// The largest plot file put inline. A trace plot joj draws is at most
/// `joj_trace::plot::MAX_SVG_BYTES` (4 MiB) whatever the trace; one an older joj drew grew by
/// some 100 bytes a request (10 MiB for 100,000).
const MAX_PLOT_BYTES: u64 = 24 << 20;

/// The most bytes of the page its inlined plots take (`<img>` tags, base64 and all). A browser
/// opens a page of a few tens of MiB in seconds and stalls on hundreds; a workflow's whole
/// results inline 20 to 30 MiB of plots, and the largest trace plot joj draws (4 MiB, 5.3 MiB
/// in base64) fits twelve times. Past it a plot is left out with a line saying which and why:
/// the page never grows past its bound (`report_page::MAX_PAGE_BYTES`) for plots.
pub const MAX_PAGE_PLOT_BYTES: usize = 64 << 20;

/// What a result document is, recognised by its fields.
pub enum Kind {
    Compare(Box<Comparison>),
    /// `joj bench`, `joj trace -- COMMAND` or `joj syscalls replay` (a [`RunResult`]).
    Run(Box<RunResult>),
    /// `joj crash device` or `joj crash fs` (kernel filesystem): shown field by field.
    Crash(serde_json::Value),
    /// `joj replay`: shown field by field.
    Replay(serde_json::Value),
    /// The workflow's paper figures (docs/formats/paper-figures.md): the page opens with it.
    PaperFigures(Box<crate::paper_figures_doc::PaperFigures>),
    /// Another result joj writes (`joj speed`, `joj restart`, `joj apptxn`, `joj device
    /// calibrate`, the workflow's modeled-time check runs): named, shown field by field.
    Other(&'static str, serde_json::Value),
}

/// Results shown field by field, each recognised by fields only it has: (name, fields).
const OTHERS: [(&str, &[&str]); 5] = [
    ("speed", &["baseline", "rounds", "summaries"]),
    ("restart", &["rows", "pages_per_txn", "profile"]),
    ("apptxn", &["ledger_bytes", "device", "xftl"]),
    ("calibration", &["measured", "profile"]),
    ("modeled-time check", &["tag", "args", "load"]),
];

impl Kind {
    /// The kind of `v`, or why it is not shown: none joj writes, or a joj file that is no
    /// result (a device profile, a crash-state shard or record).
    pub fn of(v: serde_json::Value) -> Result<Kind, String> {
        let has = |k: &str| v.get(k).is_some();
        let parse_err = |e: serde_json::Error| {
            format!("not a result joj writes: its fields do not parse ({e})")
        };
        if !v.is_object() {
            return Err("not a result joj writes: not a JSON object".into());
        }
        if has("paper_figures") {
            return serde_json::from_value(v)
                .map(|p| Kind::PaperFigures(Box::new(p)))
                .map_err(parse_err);
        }
        if let Some((name, _)) = OTHERS.iter().find(|(_, f)| f.iter().all(|k| has(k))) {
            return Ok(Kind::Other(name, v));
        }
        if has("geometry") && has("timing") {
            return Err("a device profile, not a result".into());
        }
        if has("shard") && has("format") {
            return Err(
                "one shard of a crash-state run (its row's merged document is the result)".into(),
            );
        }
        if has("saved_log") && !has("states_explored") {
            return Err(
                "the record of a crash-state run (its row's merged document is the result)".into(),
            );
        }
        if has("rows") {
            return serde_json::from_value(v)
                .map(|c| Kind::Compare(Box::new(c)))
                .map_err(parse_err);
        }
        if has("config") && has("syscalls") {
            return serde_json::from_value(v)
                .map(|r| Kind::Run(Box::new(r)))
                .map_err(parse_err);
        }
        if (has("cuts") && has("passed")) || (has("states_explored") && has("violations")) {
            return Ok(Kind::Crash(v));
        }
        if has("replay") && has("device") {
            return Ok(Kind::Replay(v));
        }
        Err(
            "not a result joj writes: no fields of a bench, compare, trace, crash, replay, \
             speed, restart, apptxn or calibration result"
                .into(),
        )
    }
}

/// A document to show, and the folder its plots are looked for in.
pub struct Document {
    pub path: PathBuf,
    /// The folder it was read from (or, for a page of a run just made, `--report`, the folder
    /// its plots were written to), open: plots are looked for in it, never by its path again —
    /// a folder on the way swapped for a link since leads nowhere.
    pub dir: Beneath,
    pub kind: Kind,
}

/// A file that is not on the page, and why.
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// The characters of a reason a file is not shown kept (a parser's message may quote a whole
/// string of the document).
const MAX_REASON_CHARS: usize = 1000;

impl Skipped {
    pub fn new(path: &Path, mut reason: String) -> Skipped {
        if let Some((cut, _)) = reason.char_indices().nth(MAX_REASON_CHARS) {
            reason.truncate(cut);
            reason.push('…');
        }
        Skipped {
            path: path.display().to_string(),
            reason,
        }
    }
}

/// `text` safe inside HTML text and attribute values.
pub fn esc(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match escaped(c) {
            Some(e) => s.push_str(e),
            None => s.push(c),
        }
    }
    s
}

/// What [`esc`] writes for `c`, if not `c` itself.
fn escaped(c: char) -> Option<&'static str> {
    match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        '\'' => Some("&#39;"),
        _ => None,
    }
}

/// Which end of a text [`esc_within`] keeps: a heading's start, a path's end (its file name).
#[derive(Clone, Copy)]
pub enum Keep {
    Start,
    End,
}

/// `text` escaped as [`esc`] does, in at most `max_bytes` bytes: cut where needed, with `…`
/// where it is cut. A heading, path or reason taken from a document is one line of a list,
/// whatever the document holds.
pub fn esc_within(text: &str, max_bytes: usize, keep: Keep) -> String {
    // No character escapes to more than six bytes (`&quot;`).
    if text.len().saturating_mul(6) <= max_bytes {
        return esc(text);
    }
    const CUT: &str = "…";
    let room = max_bytes.saturating_sub(CUT.len());
    let mut used = 0;
    let mut overflows = |c: char| {
        used += escaped(c).map_or(c.len_utf8(), str::len);
        used > room
    };
    match keep {
        Keep::Start => match text.char_indices().find(|&(_, c)| overflows(c)) {
            Some((end, _)) => format!("{}{CUT}", esc(&text[..end])),
            None => esc(text),
        },
        Keep::End => match text.char_indices().rev().find(|&(_, c)| overflows(c)) {
            Some((i, c)) => format!("{CUT}{}", esc(&text[i + c.len_utf8()..])),
            None => esc(text),
        },
    }
}

/// Standard base64 with padding (RFC 4648), for `data:` URIs.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// [`base64`], for tests elsewhere in the crate.
#[cfg(test)]
pub fn tests_base64(bytes: &[u8]) -> String {
    base64(bytes)
}

/// An SVG document as an inline image, `id` its anchor on the page.
fn svg_img(svg: &str, alt: &str, id: &str) -> String {
    format!(
        "<img class=\"plot\" id=\"{id}\" alt=\"{}\" src=\"data:image/svg+xml;base64,{}\">\n",
        esc(alt),
        base64(svg.as_bytes())
    )
}

/// The bytes [`svg_img`] makes of an SVG of `svg_bytes` bytes.
fn svg_img_bytes(svg_bytes: u64, alt: &str, id: &str) -> u64 {
    let tag = svg_img("", alt, id).len() as u64;
    tag + svg_bytes.div_ceil(3) * 4
}

/// `n` bytes in MiB, for a message.
pub fn mib(n: u64) -> String {
    format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20))
}

/// The plots on one page so far: each plot file inlined once (a later row naming it refers to
/// the first), and all of them within [`MAX_PAGE_PLOT_BYTES`]. A section left out of the page
/// takes back the plots it placed ([`Plots::undo`]), so that no reference leads to a section
/// that is not there.
#[derive(Default)]
pub struct Plots {
    /// Each plot file placed (by device and inode, so a file named by two rows, two documents
    /// or two hard links is one plot), and the anchor of where it is on the page: its image,
    /// or the line saying it is left out.
    placed: HashMap<(u64, u64), String>,
    /// The files in the order placed, for [`Plots::undo`].
    order: Vec<(u64, u64)>,
    /// Bytes of the page the inlined plots take.
    bytes: u64,
    /// Anchors given so far (`plot{n}`); never taken back, so each stays unique.
    anchors: usize,
    /// Every plot file opened (shown, left out or taken back), by device and inode, with its
    /// path: inputs of the page, which its output may not replace.
    opened: HashMap<(u64, u64), PathBuf>,
}

/// The state of [`Plots`] before a section, to take it back to.
pub struct PlotsMark {
    placed: usize,
    bytes: u64,
}

impl Plots {
    /// Bytes of the page the inlined plots take.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The plot files read for the page (see [`Plots::opened`]).
    pub fn opened(&self) -> Vec<PathBuf> {
        self.opened.values().cloned().collect()
    }

    pub fn mark(&self) -> PlotsMark {
        PlotsMark {
            placed: self.order.len(),
            bytes: self.bytes,
        }
    }

    /// Forget the plots placed since `m` (their section is left out of the page).
    pub fn undo(&mut self, m: PlotsMark) {
        for key in self.order.drain(m.placed..) {
            self.placed.remove(&key);
        }
        self.bytes = m.bytes;
    }

    /// A new anchor for a plot, or the line in its place.
    fn anchor(&mut self) -> String {
        let id = self.next_anchor();
        self.anchors += 1;
        id
    }

    fn next_anchor(&self) -> String {
        format!("plot{}", self.anchors + 1)
    }

    /// `svg` as an inline image, if the page has room for it; else the line saying it is left
    /// out, naming it `alt` (and the file it is, `file`).
    fn inline(&mut self, svg: &str, alt: &str, file: Option<&Path>) -> (String, String) {
        let id = self.anchor();
        let cost = svg_img_bytes(svg.len() as u64, alt, &id);
        if self.bytes + cost > MAX_PAGE_PLOT_BYTES as u64 {
            return (self.left_out(alt, file, svg.len() as u64, &id), id);
        }
        let img = svg_img(svg, alt, &id);
        assert_eq!(
            img.len() as u64,
            cost,
            "svg_img_bytes counts what svg_img makes"
        );
        self.bytes += cost;
        (img, id)
    }

    /// The line in place of a plot the page has no room for.
    fn left_out(&self, name: &str, file: Option<&Path>, svg_bytes: u64, id: &str) -> String {
        let open = file.map_or_else(
            || "report fewer documents on one page".to_string(),
            |f| {
                format!(
                    "open the file itself ({}), or report fewer documents on one page",
                    f.display()
                )
            },
        );
        format!(
            "<p class=\"left-out\" id=\"{id}\">{}</p>\n",
            esc(&format!(
                "the plot {name} ({}) is left out: this page already inlines {} of plots, and \
                 a page inlines at most {} of plots so that a browser opens it; {open}",
                mib(svg_bytes),
                mib(self.bytes),
                mib(MAX_PAGE_PLOT_BYTES as u64)
            ))
        )
    }

    /// Note where the plot file `key` is on the page.
    fn place(&mut self, key: (u64, u64), id: String) {
        self.placed.insert(key, id);
        self.order.push(key);
    }
}

/// A JSON scalar as text; `None` for objects and arrays.
pub fn scalar(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        serde_json::Value::Null => Some("null".into()),
        _ => None,
    }
}

/// The plot file `named` by a document, looked for beside it in its folder `dir` (only its file
/// name is used, so a document cannot point the page at a file elsewhere), as an inline image;
/// the second time the page names a file, a reference to the first; past the page's room for
/// plots, a line saying it is left out. `None` when there is no such plot to show.
///
/// The file is opened from the folder's descriptor with no symbolic link followed anywhere, without
/// blocking on a FIFO, and checked from the opened descriptor to be a regular file
/// ([`Beneath::open_file`]): whoever owns the folder cannot lead root to a file elsewhere,
/// however they swap its names meanwhile.
pub fn plot_beside(dir: &Beneath, named: &str, plots: &mut Plots) -> Option<String> {
    let name = Path::new(Path::new(named).file_name()?);
    if name.extension().is_none_or(|e| e != "svg") {
        return None;
    }
    let path = dir.absolute(name);
    let shown = name.to_string_lossy();
    let file = dir.open_file(name).ok()?;
    let meta = file.metadata().ok()?;
    let key = (meta.dev(), meta.ino());
    plots.opened.entry(key).or_insert_with(|| path.clone());
    if let Some(id) = plots.placed.get(&key) {
        return Some(format!(
            "<p class=\"src\">{}: the same plot as <a href=\"#{id}\">above</a></p>\n",
            esc(&shown)
        ));
    }
    if meta.len() > MAX_PLOT_BYTES {
        let id = plots.anchor();
        let line = format!(
            "<p class=\"left-out\" id=\"{id}\">{}</p>\n",
            esc(&format!(
                "the plot {shown} ({}) is not shown: a plot file of more than {} is not put on \
                 a page; open the file itself ({})",
                mib(meta.len()),
                mib(MAX_PLOT_BYTES),
                path.display()
            ))
        );
        plots.place(key, id);
        return Some(line);
    }
    if plots.bytes + svg_img_bytes(meta.len(), &shown, &plots.next_anchor())
        > MAX_PAGE_PLOT_BYTES as u64
    {
        // Not read: the page has no room for it.
        let id = plots.anchor();
        let line = plots.left_out(&shown, Some(&path), meta.len(), &id);
        plots.place(key, id);
        return Some(line);
    }
    let input = joj_trace::input::checked(file, &path, MAX_PLOT_BYTES, "an SVG plot").ok()?;
    let bytes = input.read_all().ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let head = text.trim_start();
    if !(head.starts_with("<svg") || head.starts_with("<?xml")) {
        return None;
    }
    let (html, id) = plots.inline(&text, &shown, Some(&path));
    plots.place(key, id);
    Some(html)
}

/// An SVG rendered here, as an inline image (or the line saying it is left out, naming it as
/// `alt`).
pub fn inline_svg(svg: &str, alt: &str, plots: &mut Plots) -> String {
    plots.inline(svg, alt, None).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plot_beside_a_document_is_read_but_never_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret.svg");
        std::fs::write(&secret, "<svg>PRIVATE</svg>").unwrap();
        let docs = dir.path().join("docs");
        std::fs::create_dir(&docs).unwrap();
        std::fs::write(docs.join("own.svg"), "<svg>own</svg>").unwrap();
        std::os::unix::fs::symlink(&secret, docs.join("p.svg")).unwrap();
        let mut plots = Plots::default();
        let dir = Beneath::open_root(&docs).unwrap();
        assert!(plot_beside(&dir, "own.svg", &mut plots).is_some());
        assert_eq!(plot_beside(&dir, "p.svg", &mut plots), None);
    }

    #[test]
    fn base64_is_rfc_4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn every_result_joj_writes_is_recognised_and_the_rest_named() {
        let kind = |j: &str| Kind::of(serde_json::from_str(j).unwrap());
        let speed = r#"{"baseline": "wal", "rounds": 1, "runs": [], "summaries": []}"#;
        assert!(matches!(kind(speed), Ok(Kind::Other("speed", _))));
        let restart = r#"{"rows": [], "pages_per_txn": 5, "profile": "galaxy-s5"}"#;
        assert!(matches!(kind(restart), Ok(Kind::Other("restart", _))));
        let profile = r#"{"name": "x", "geometry": {}, "timing": {}}"#;
        assert!(kind(profile).err().unwrap().contains("a device profile"));
        let shard = r#"{"format": "joj-crash-part", "shard": "1/2"}"#;
        assert!(kind(shard).err().unwrap().contains("one shard"));
        let unknown = kind(r#"{"hello": 1}"#).err().unwrap();
        assert!(unknown.starts_with("not a result joj writes"), "{unknown}");
    }

    #[test]
    fn a_text_cut_to_its_room_stays_within_it() {
        assert_eq!(esc_within("a<b", 100, Keep::Start), "a&lt;b");
        let long = "'".repeat(1000);
        for keep in [Keep::Start, Keep::End] {
            let cut = esc_within(&long, 100, keep);
            assert!(cut.len() <= 100 && cut.contains('…'), "{cut}");
        }
        let path = format!("/{}/file.json", "d".repeat(500));
        let end = esc_within(&path, 60, Keep::End);
        assert!(end.starts_with('…') && end.ends_with("/file.json"), "{end}");
        assert!(end.len() <= 60, "{end}");
        let start = esc_within(&format!("a<b{}", "é".repeat(500)), 60, Keep::Start);
        assert!(start.starts_with("a&lt;b") && start.ends_with('…') && start.len() <= 60);
    }

    #[test]
    fn text_from_documents_is_escaped() {
        assert_eq!(
            esc("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }
}
