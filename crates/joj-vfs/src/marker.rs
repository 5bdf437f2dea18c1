//! Marks a joj VFS leaves in a `joj trace` run's system-call trace, so that joj can count what
//! the trace alone cannot see: a SQLite commit (SQLite tells the main database's VFS with
//! `SQLITE_FCNTL_COMMIT_PHASETWO` after every commit, in every journal mode), and one-time
//! set-up work (waldio preallocating its log), whose block I/O joj reports apart from the
//! commits'.
//!
//! `joj trace` gives the command `JOJ_TRACE_MARKER`, the `trace_marker` file of its own tracefs
//! instance; without it (every run outside `joj trace`) nothing is written. A value that is not
//! such a file (`/sys/kernel/tracing/instances/joj-*/trace_marker`) is ignored: the variable is
//! someone else's input. Each mark is one `write` of one line, `joj <what> [<detail>]`, which the
//! kernel records with the writing thread and the time on the trace's clock.

use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

/// The environment variable `joj trace` sets.
pub const ENV: &str = "JOJ_TRACE_MARKER";

static MARKER: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();

/// Whether `path` names a `joj trace` instance's marker file.
pub fn is_marker_path(path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix("/sys/kernel/tracing/instances") else {
        return false;
    };
    let mut parts = rest.components();
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(std::path::Component::Normal(i)), Some(std::path::Component::Normal(f)), None)
            if i.to_string_lossy().starts_with("joj-") && f == "trace_marker"
    )
}

fn open() -> Option<Mutex<std::fs::File>> {
    let path = std::env::var_os(ENV)?;
    let path = Path::new(&path);
    if !is_marker_path(path) {
        return None;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .ok()
        .map(Mutex::new)
}

/// Write `joj <line>` (newlines in it escaped) to the run's marker file, if there is one.
fn mark(line: &str) {
    let Some(file) = MARKER.get_or_init(open) else {
        return;
    };
    let text = format!("joj {}\n", line.replace('\n', "\\n"));
    // One write, so the kernel records the line whole; a failure loses a mark, never the
    // application's call.
    let _ = crate::unpoisoned::lock(file).write_all(text.as_bytes());
}

/// SQLite committed a write transaction on database `db`.
pub fn commit(db: &Path) {
    mark(&format!("commit {}", db.display()));
}

/// One-time set-up work begins in this thread (`what`: a word, e.g. `waldio-preallocation`).
pub fn setup_begins(what: &str) {
    mark(&format!("setup-begin {what}"));
}

/// The set-up work this thread began is done.
pub fn setup_ends() {
    mark("setup-end");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_joj_instances_marker_file_is_taken() {
        assert!(is_marker_path(Path::new(
            "/sys/kernel/tracing/instances/joj-12-3/trace_marker"
        )));
        for not in [
            "/sys/kernel/tracing/trace_marker",
            "/sys/kernel/tracing/instances/other/trace_marker",
            "/sys/kernel/tracing/instances/joj-1/../../trace_marker",
            "/tmp/joj-1/trace_marker",
            "/sys/kernel/tracing/instances/joj-1/trace",
        ] {
            assert!(!is_marker_path(Path::new(not)), "{not}");
        }
    }
}
