//! Where a profile came from: a built-in compiled into the crate, or a file. A result names its
//! profile; a file's `name` is whatever its author wrote, so a copy of `emmc5.json` with other
//! timings still says `"name": "emmc5"`. Every result therefore carries the source next to the
//! name ([`ProfileRef`]), and a file named like a built-in but differing from it is said at load.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Mutex;

/// `profile_source` of a built-in profile.
pub const BUILT_IN: &str = "built-in";

/// Where a profile was read from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ProfileSource {
    /// Compiled in (`Profile::builtin`), or built in code.
    #[default]
    BuiltIn,
    /// A profile JSON file, as an absolute path when it could be made one.
    File(PathBuf),
}

impl ProfileSource {
    /// `built-in`, or the file's path.
    pub fn label(&self) -> String {
        match self {
            ProfileSource::BuiltIn => BUILT_IN.to_string(),
            ProfileSource::File(p) => p.display().to_string(),
        }
    }
}

/// A profile as a result names it: `profile` (its name) and `profile_source` (`built-in` or
/// the file's absolute path). Flattened into a result, it adds `profile_source` beside the
/// `profile` every result already had; printed, it is `emmc5` or `emmc5 (file /abs/x.json)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileRef {
    #[serde(rename = "profile")]
    pub name: String,
    #[serde(rename = "profile_source", default = "built_in")]
    pub source: String,
}

fn built_in() -> String {
    BUILT_IN.to_string()
}

impl ProfileRef {
    /// A built-in profile (or one made in code) of this name.
    pub fn built_in(name: &str) -> ProfileRef {
        ProfileRef {
            name: name.to_string(),
            source: built_in(),
        }
    }
}

impl std::fmt::Display for ProfileRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.source == BUILT_IN {
            write!(f, "{}", self.name)
        } else {
            write!(f, "{} (file {})", self.name, self.source)
        }
    }
}

/// The paths (`timing.command_overhead_ns`) of the fields where two profile documents differ.
pub fn differing_fields(a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    diff("", a, b, &mut out);
    out
}

fn diff(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value::Object;
    match (a, b) {
        (Object(x), Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => diff(&p, u, v, out),
                    _ => out.push(p),
                }
            }
        }
        _ if a != b => out.push(path.to_string()),
        _ => {}
    }
}

/// Says `message` on stderr once per process: every command resolves its profiles through
/// `Profile::load`, some more than once (a run and its replay), and the reader needs it once.
/// The one place this crate writes to the terminal; what it says is about the user's input,
/// before any result, and no caller can say it instead (the loads happen deep in a run).
pub(crate) fn say_once(message: String) {
    static SAID: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let first = SAID
        .lock()
        .map(|mut s| s.insert(message.clone()))
        .unwrap_or(true);
    if first {
        eprintln!("{}", joj_trace::terminal::escaped(&message));
    }
}
