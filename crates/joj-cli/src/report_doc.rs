//! What `joj report` puts on its page, before any HTML: the kinds of result document, how a
//! document's text and plots are made safe to show (see [`crate::report_page`]).

use std::path::{Path, PathBuf};

use joj_experiment::RunResult;
use joj_experiment::compare::Comparison;

/// The largest plot file put inline (a trace plot of 100,000 requests is about 10 MiB).
const MAX_PLOT_BYTES: u64 = 24 << 20;

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
    pub kind: Kind,
}

/// A file that is not on the page, and why.
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

impl Skipped {
    pub fn new(path: &Path, reason: String) -> Skipped {
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
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            c => s.push(c),
        }
    }
    s
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

/// An SVG document as an inline image.
fn svg_img(svg: &str, alt: &str) -> String {
    format!(
        "<img class=\"plot\" alt=\"{}\" src=\"data:image/svg+xml;base64,{}\">\n",
        esc(alt),
        base64(svg.as_bytes())
    )
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

/// The plot file `named` by a document, looked for beside it (only its file name is used, so
/// a document cannot point the page at a file elsewhere), as an inline image.
pub fn plot_beside(doc_dir: &Path, named: &str) -> Option<String> {
    let name = Path::new(named).file_name()?;
    if Path::new(name).extension().is_none_or(|e| e != "svg") {
        return None;
    }
    let bytes = joj_trace::input::read_all_not_through_a_link(
        &doc_dir.join(name),
        MAX_PLOT_BYTES,
        "an SVG plot",
    )
    .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let head = text.trim_start();
    (head.starts_with("<svg") || head.starts_with("<?xml"))
        .then(|| svg_img(&text, &name.to_string_lossy()))
}

/// An SVG rendered here, as an inline image.
pub fn inline_svg(svg: &str, alt: &str) -> String {
    svg_img(svg, alt)
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
        assert!(plot_beside(&docs, "own.svg").is_some());
        assert_eq!(plot_beside(&docs, "p.svg"), None);
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
    fn text_from_documents_is_escaped() {
        assert_eq!(
            esc("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }
}
