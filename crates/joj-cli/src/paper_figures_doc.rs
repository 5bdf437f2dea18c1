//! The paper-figures document `joj report` reads (docs/formats/paper-figures.md): its typed
//! fields, parsed from an untrusted file (unknown fields ignored); drawn by
//! [`crate::report_papers`].

use serde::Deserialize;

/// A `paper_figures` document.
#[derive(Deserialize)]
pub struct PaperFigures {
    pub paper_figures: Vec<PaperFigure>,
    /// The workflow profile the run used (`quick`, `full`).
    pub profile: String,
    /// The published table the rows come from, relative to this document's folder.
    #[serde(default)]
    pub published: Option<String>,
}

/// One paper figure.
#[derive(Deserialize)]
pub struct PaperFigure {
    pub paper: String,
    pub figure: String,
    pub paper_value: String,
    /// joj's figure computed from this run, or `None` (see `not_in_this_run`).
    pub this_run: Option<String>,
    /// `measured`, `modeled` or `both`.
    pub this_run_basis: Option<String>,
    /// The documents `this_run` was computed from, relative to this document's folder.
    #[serde(default)]
    pub this_run_sources: Vec<String>,
    pub not_in_this_run: Option<String>,
    pub published_measured: String,
    pub published_modeled: String,
    pub published_verdict: String,
    /// The published detail, relative to this document's folder.
    #[serde(default)]
    pub details: Vec<Link>,
}

#[derive(Deserialize)]
pub struct Link {
    pub text: String,
    pub href: String,
}

impl PaperFigures {
    pub fn heading(&self) -> String {
        let done = self
            .paper_figures
            .iter()
            .filter(|r| r.this_run.is_some())
            .count();
        format!(
            "every paper figure next to joj's · {done} of {} rebuilt by this run (profile {})",
            self.paper_figures.len(),
            self.profile
        )
    }
}
