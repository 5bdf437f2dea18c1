//! What every command prints and writes with: its result type, the errors it reports itself,
//! its output files (checked before any work, written atomically through
//! `joj_trace::output`), its JSON document, shared phrases.

use std::io::Write;
use std::path::{Path, PathBuf};

use joj_trace::OutputError;
use joj_trace::output::{Existing, check_output, check_output_dir, write_atomically};
use joj_trace::terminal::{escaped, escaped_json, escaped_lines};

/// `print!` that returns the write's error instead of panicking: a reader that went away
/// (`joj … | head -1`) ends the command quietly ([`is_closed_pipe`]) instead of a panic. What
/// it prints may hold names from joj's inputs (a path from someone's folder, a device name
/// from a trace): every character of it that acts on a terminal, but its line breaks, is
/// written as its escape ([`joj_trace::terminal::escaped_lines`]). JSON printed with it is
/// made with [`sorted_json`] or [`json_for_terminal`] first, which leave nothing to escape here.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        write!(
            std::io::stdout().lock(),
            "{}",
            joj_trace::terminal::escaped_lines(&text)
        )
    }};
}

/// `println!` that returns the write's error instead of panicking (see [`out!`]).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        writeln!(
            std::io::stdout().lock(),
            "{}",
            joj_trace::terminal::escaped_lines(&text)
        )
    }};
}

/// Whether `e` is stdout's reader having gone away: the command stops printing, as `cat` or
/// `grep` do, and exits without an error message.
pub fn is_closed_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// The lines that report `e`: `joj: error: …`, then one `  caused by: …` per cause in its
/// chain, leaving out a cause whose text the lines above already hold (many errors name their
/// source in their own message, and the same words twice say nothing more). A message names
/// paths and names from joj's inputs: each line is one line, with nothing in it that acts on
/// a terminal ([`escaped`]).
pub fn error_lines(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut shown = e.to_string();
    let mut lines = vec![format!("joj: error: {}", escaped(&shown))];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !shown.contains(&text) {
            lines.push(format!("  caused by: {}", escaped(&text)));
            shown.push('\n');
            shown.push_str(&text);
        }
        source = s.source();
    }
    lines
}

/// `doc` as pretty JSON to be printed: nothing in its strings acts on a terminal
/// ([`escaped_json`]: the same document).
pub fn json_for_terminal(doc: &impl serde::Serialize) -> Result<String, serde_json::Error> {
    let text = serde_json::to_string_pretty(doc)?;
    Ok(escaped_json(&text).into_owned())
}

/// Any error the commands report; printed with its chain of causes.
pub type CliResult = Result<(), Box<dyn std::error::Error>>;

/// `doc` as pretty JSON with the keys of every object in alphabetical order: the order joj's
/// documents have always had (they were built as `serde_json::Value`s, whose maps are sorted),
/// whatever the order of the fields of the typed documents they now are. Made to be printed:
/// nothing in its strings acts on a terminal ([`escaped_json`]: the same document).
pub fn sorted_json(doc: &impl serde::Serialize) -> Result<String, serde_json::Error> {
    json_for_terminal(&serde_json::to_value(doc)?)
}

/// Failures the commands report themselves; the libraries' errors pass through as they are.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A trace that `joj trace show`, `plot` or `import` could not read.
    #[error("cannot read trace {}: {source}", path.display())]
    TraceFile {
        path: PathBuf,
        #[source]
        source: joj_trace::TraceError,
    },
    /// The output that option `flag` names cannot be written; found before any work.
    #[error("{flag}: {cause}")]
    Output {
        flag: &'static str,
        cause: OutputError,
    },
    /// Two output options name one file; found before any work.
    #[error(
        "{flag} {} is the same file as {other_flag} {}: one output would replace the other; \
         fix: give the two outputs different paths",
        .path.display(),
        .other.display()
    )]
    SameOutput {
        flag: &'static str,
        path: PathBuf,
        other_flag: &'static str,
        other: PathBuf,
    },
    /// An emulated device that would hold more than joj keeps in memory; found before any work.
    #[error(
        "the emulated {profile} device of {} GiB raw would hold up to {} MiB in memory ({what}), \
         more than joj keeps in memory ({} MiB: half of this machine's memory, less what `ulimit -v` \
         and the cgroup's memory.max leave); fix: {fix}",
        .raw_bytes >> 30, .model_bytes >> 20, .limit_bytes >> 20
    )]
    DeviceTooLargeForMemory {
        profile: String,
        raw_bytes: u64,
        model_bytes: u64,
        limit_bytes: u64,
        what: &'static str,
        fix: &'static str,
    },
    /// Writing `--save` failed after the run; the result was printed first.
    #[error("--save: {cause} (the result is printed above, so nothing computed is lost)")]
    SaveAfterRun { cause: OutputError },
    #[error(
        "cannot open {}: {source}; fix: check that the path exists and is readable",
        .path.display()
    )]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `joj trace import` of a file with no blkparse `D` or `Q` event in it.
    #[error(
        "{} holds no block request: `joj trace import` reads blkparse's text output, whose event \
         lines look like `  8,0    1        6     0.000004500  1234  D  WS 2048 + 8 [sqlite3]` \
         (device major,minor; cpu; sequence; seconds; pid; action D or Q; rwbs; sector + \
         sectors; [command]); fix: produce it with `blktrace -d /dev/sdX -o - | blkparse -i - \
         > trace.txt` (or `blkparse -i <blktrace files> -o trace.txt`); a joj-trace file needs \
         no import",
        .path.display()
    )]
    NoBlkparseRequests { path: PathBuf },
    /// `joj trace -- COMMAND` whose command failed: no report, no trace file or plot.
    #[error(
        "the traced command failed ({exit}); no report, trace or plot is made of a run that \
         stopped part-way; fix: {fix}"
    )]
    CommandFailed { exit: String, fix: String },
    /// `joj trace -- COMMAND` whose command failed with the scratch filesystem full.
    #[error(
        "the traced command failed ({exit}) with the scratch filesystem full (not 1 MiB more \
         could be allocated in its {image_mib} MiB); no report, trace or plot is made of it; \
         fix: give the command a larger scratch filesystem (--image-mib, now {image_mib})"
    )]
    CommandFailedFull { exit: String, image_mib: u64 },
    /// `joj replay --completion` with `--honor-timestamps`: the completion model needs a
    /// back-to-back replay, whose modeled time is all device time.
    #[error(
        "--completion needs a back-to-back replay: with --honor-timestamps the modeled time holds \
         the trace's idle gaps, which polling would not spin through; fix: drop \
         --honor-timestamps"
    )]
    CompletionWithTimestamps,
    /// `--journal-region-mib` without `--emmc-journal`.
    #[error(
        "--journal-region-mib sizes the optimized journal's region and only means something with \
         --emmc-journal; fix: add --emmc-journal or drop --journal-region-mib"
    )]
    RegionWithoutEmmcJournal,
    /// `--completion` with `--device-for`.
    #[error(
        "--completion applies to one back-to-back device; with --device-for the devices overlap \
         and no one completion count times the run; fix: drop --completion, or replay one \
         device with --dev"
    )]
    CompletionWithDevices,
    /// `--wakeup-us` without `--completion interrupt`.
    #[error(
        "--wakeup-us is the cost of an interrupt-driven wakeup and only means something with \
         --completion interrupt; fix: add --completion interrupt or drop --wakeup-us"
    )]
    WakeupWithoutInterrupt,
    /// `joj trace` with neither a subcommand nor a command after `--`.
    #[error(
        "joj trace needs a command to run after `--` (e.g. `joj trace --fs ext4 -- python3 \
         app.py`) or a subcommand (import, show, plot); fix: add one"
    )]
    NoTraceCommand,
    /// joj's working directory cannot be read (removed while joj started).
    #[error(
        "cannot read the directory joj trace was started from: {source}; fix: start joj trace \
         from an existing directory, or pass --empty"
    )]
    StartDir { source: std::io::Error },
    /// `joj syscalls record` without strace (it runs the command under it).
    #[error("joj syscalls record runs the command under strace: {0}")]
    NoStrace(#[from] joj_linux::ToolMissing),
    /// `joj report` found no result document to show.
    #[error(
        "joj report: no result document in {inputs}{}; \
         no page was written; fix: save results with --json > FILE.json or --save FILE.json \
         (joj bench, compare, trace, crash, replay) and pass those files or their folder (a \
         folder is searched for *.json; the *.trace.jsonl beside them are block traces, which \
         `joj trace show` reads)",
        if *.skipped == 0 { String::new() } else { format!(" ({} file(s) not shown, listed above)", .skipped) }
    )]
    NoReportDocument { inputs: String, skipped: usize },
    /// `joj report --link-root` naming something that is not a folder.
    #[error(
        "--link-root {}: not a folder; fix: name the folder the paper-figure links may lead \
         into (the workflow passes the repository: --link-root .)",
        .path.display()
    )]
    LinkRootNotAFolder { path: PathBuf },
    /// `joj syscalls record`'s private directory for strace's output cannot be made.
    #[error(
        "cannot make a private directory for strace's output in {}: {source}; fix: check free \
         space and permissions there, or set TMPDIR to a writable directory",
        .parent.display()
    )]
    StraceDir {
        parent: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `joj syscalls record` whose command failed; no recording is written.
    #[error(
        "the recorded command failed ({status}); no recording was written; fix: make the \
         command succeed on its own first"
    )]
    RecordedCommandFailed { status: String },
}

/// Check, before any work, the output file `path` that option `flag` names: not the same file
/// as any of `inputs`, not an existing file unless `force`, in a directory we can write to.
pub fn check_output_file(
    flag: &'static str,
    path: &Path,
    force: bool,
    inputs: &[&Path],
) -> Result<(), CliError> {
    check_output(path, Existing::replace_if(force), inputs)
        .map_err(|cause| CliError::Output { flag, cause })
}

/// Check, before any work, that the outputs options `flag` and `other_flag` name are not one
/// file ([`joj_trace::output::same_output`]: by name, by link, or by device and inode).
pub fn check_outputs_differ(
    (flag, path): (&'static str, &Path),
    (other_flag, other): (&'static str, &Path),
) -> Result<(), CliError> {
    if joj_trace::output::same_output(path, other) {
        return Err(CliError::SameOutput {
            flag,
            path: path.to_path_buf(),
            other_flag,
            other: other.to_path_buf(),
        });
    }
    Ok(())
}

/// Check, before any work, the directory `dir` that option `flag` names for output files (it is
/// created when missing): a directory, or creatable, and one we can write to.
pub fn check_output_folder(flag: &'static str, dir: &Path) -> Result<(), CliError> {
    check_output_dir(dir).map_err(|cause| CliError::Output { flag, cause })
}

/// Check `--save`, if given, before the run (see [`check_output_file`]); the device profile,
/// when `profile` names a file rather than a built-in profile, is an input it may not replace.
pub fn check_save(save: Option<&Path>, force: bool, profile: Option<&str>) -> Result<(), CliError> {
    match save {
        Some(path) => {
            let inputs: Vec<&Path> = profile.and_then(profile_file).into_iter().collect();
            check_output_file("--save", path, force, &inputs)
        }
        None => Ok(()),
    }
}

/// The file a `--device` value names, when it names one rather than a built-in
/// profile: an input no output may replace.
pub fn profile_file(name: &str) -> Option<&Path> {
    let path = Path::new(name);
    path.is_file().then_some(path)
}

/// A command's result: printed on stdout — the JSON document when `json`, else `text()` — and
/// then written to `save` (replacing a file there only when `force`). Printing comes first so
/// that a save failing after a long run loses nothing computed; a reader that went away before
/// the end (`| head`) does not keep the result from being saved.
pub fn emit<T: serde::Serialize>(
    doc: &T,
    save: Option<&Path>,
    force: bool,
    json: bool,
    text: impl FnOnce() -> String,
) -> CliResult {
    emit_to(&mut std::io::stdout().lock(), doc, save, force, json, text)
}

fn emit_to<T: serde::Serialize>(
    out: &mut impl Write,
    doc: &T,
    save: Option<&Path>,
    force: bool,
    json: bool,
    text: impl FnOnce() -> String,
) -> CliResult {
    let shown = if json {
        json_for_terminal(doc)? + "\n"
    } else {
        escaped_lines(&text()).into_owned()
    };
    let printed = out.write_all(shown.as_bytes()).and_then(|()| out.flush());
    if let Some(path) = save {
        write_atomically(path, Existing::replace_if(force), |w| {
            serde_json::to_writer_pretty(w, doc).map_err(|e| OutputError::Write {
                path: path.to_path_buf(),
                source: e.into(),
            })
        })
        .map_err(|cause| CliError::SaveAfterRun { cause })?;
    }
    Ok(printed?)
}

/// "N erases", plus the map-area blocks when the profile erases them (`erase_map_blocks`).
pub fn erases_phrase(data_blocks: u64, map_blocks: u64) -> String {
    if map_blocks == 0 {
        format!("{data_blocks} erases")
    } else {
        format!("{data_blocks} erases (+{map_blocks} map blocks)")
    }
}

/// How a command shows the unplaced data in detail: `joj trace` has `--verbose`, the others
/// only their JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnplacedDetail {
    /// Listed now, one line per file and reason.
    Listed,
    /// `--verbose` would list it.
    VerboseFlag,
    /// Only the JSON has it.
    JsonOnly,
}

/// What the file data joj could not place on the device at some extent snapshot means for the
/// figures, in one line; with [`UnplacedDetail::Listed`], one more line per file and reason.
/// Such data can only have been counted as FS metadata (a request no snapshot places falls to
/// metadata), so the bound is the smaller of the unplaced bytes and the run's metadata; with no
/// metadata written, nothing was misplaced and only a listing says anything.
pub fn unplaced_note(r: &joj_experiment::RunResult, detail: UnplacedDetail) -> String {
    if r.unplaced_data.is_empty() {
        return String::new();
    }
    let unplaced: u64 = r.unplaced_data.iter().map(|u| u.max_bytes).sum();
    let metadata = r.block.as_ref().map_or(unplaced, |b| b.metadata_bytes);
    let bound = unplaced.min(metadata);
    let mut s = String::new();
    if bound == 0 && detail != UnplacedDetail::Listed {
        return s;
    }
    if bound == 0 {
        s.push_str(
            "  note: some file data had no place on the device yet when joj mapped its file (e.g. \
             delayed allocation); a later snapshot placed it (no FS metadata was written):\n",
        );
    } else {
        s.push_str(&format!(
            "  note: some file data had no place on the device yet when joj mapped its file (e.g. \
             delayed allocation); at most {:.1} KiB of the {:.1} KiB counted as FS metadata may \
             be that data{}\n",
            bound as f64 / 1024.0,
            metadata as f64 / 1024.0,
            match detail {
                UnplacedDetail::Listed => ":",
                UnplacedDetail::VerboseFlag =>
                    " (--verbose lists it; the JSON has it in unplaced_data)",
                UnplacedDetail::JsonOnly => " (the JSON lists it in unplaced_data)",
            }
        ));
    }
    if detail == UnplacedDetail::Listed {
        for u in &r.unplaced_data {
            s.push_str(&format!(
                "    {}: up to {} B at {} snapshot(s): {}\n",
                u.path, u.max_bytes, u.snapshots, u.reason
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read trace t: {source}")]
    struct Outer {
        source: Middle,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("cannot open t: {source}; fix: check the path")]
    struct Middle {
        source: std::io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("the run failed")]
    struct Bare {
        source: std::io::Error,
    }

    #[test]
    fn a_cause_is_shown_once_whether_or_not_the_message_names_it() {
        let enoent = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = Outer {
            source: Middle { source: enoent() },
        };
        assert_eq!(error_lines(&e), vec![format!("joj: error: {e}")]);
        let bare = Bare { source: enoent() };
        assert_eq!(
            error_lines(&bare),
            vec![
                "joj: error: the run failed".to_string(),
                format!("  caused by: {}", enoent()),
            ]
        );
    }

    #[test]
    fn an_error_naming_a_hostile_path_is_one_line_that_acts_on_nothing() {
        let e = CliError::Open {
            path: PathBuf::from("/x/\u{1b}[2Jgone\njoj: forged\u{202e}"),
            source: std::io::Error::other("cause with \u{1b}]0;title\u{7}"),
        };
        let lines = error_lines(&e);
        for l in &lines {
            assert!(!l.contains('\n'), "{l:?}");
            assert!(
                !l.chars().any(joj_trace::terminal::acts_on_terminal),
                "{l:?}"
            );
        }
        assert!(
            lines[0].contains("\\u{1b}[2Jgone\\u{a}joj: forged\\u{202e}"),
            "{lines:?}"
        );
    }

    #[test]
    fn a_save_failing_after_the_run_still_prints_the_result_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        // The directory vanished during the run: the check before it had passed.
        let save = dir.path().join("gone/result.json");
        let doc = serde_json::json!({ "rows": 3 });
        let mut out = Vec::new();
        let err = emit_to(&mut out, &doc, Some(&save), false, false, || {
            "the table\n".to_owned()
        })
        .expect_err("the save cannot succeed");
        assert_eq!(String::from_utf8_lossy(&out), "the table\n");
        let message = err.to_string();
        assert!(
            message.contains("gone/result.json") && message.contains("printed above"),
            "{message}"
        );
        let mut out = Vec::new();
        emit_to(&mut out, &doc, Some(&save), false, true, String::new).expect_err("no save");
        let printed: serde_json::Value = serde_json::from_slice(&out).expect("one JSON document");
        assert_eq!(printed, doc);
    }

    /// A reader that went away: every write fails as a closed pipe does.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_stdout_does_not_keep_the_result_from_being_saved() {
        let dir = tempfile::tempdir().expect("tempdir");
        let save = dir.path().join("result.json");
        let doc = serde_json::json!({ "rows": 3 });
        let err = emit_to(&mut Closed, &doc, Some(&save), false, false, || {
            "table".into()
        })
        .expect_err("the print failed");
        assert!(is_closed_pipe(err.as_ref()), "{err}");
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&save).expect("read")).expect("json");
        assert_eq!(saved, doc);
    }

    #[test]
    fn a_save_replaces_a_file_only_when_forced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let save = dir.path().join("result.json");
        std::fs::write(&save, "old").expect("write");
        let doc = serde_json::json!({ "rows": 3 });
        let kept = emit_to(&mut Vec::new(), &doc, Some(&save), false, true, String::new);
        assert!(kept.is_err());
        assert_eq!(std::fs::read_to_string(&save).expect("read"), "old");
        emit_to(&mut Vec::new(), &doc, Some(&save), true, true, String::new).expect("forced");
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&save).expect("read")).expect("json");
        assert_eq!(saved, doc);
    }

    /// A run saved by `joj trace` (its unplaced data: 36 KiB; its FS metadata: 40 KiB).
    fn saved_trace(metadata_bytes: u64) -> joj_experiment::RunResult {
        let mut r: joj_experiment::RunResult =
            serde_json::from_str(include_str!("../tests/fixtures/report/trace.json"))
                .expect("the fixture is a run result");
        r.block.as_mut().expect("block totals").metadata_bytes = metadata_bytes;
        r
    }

    #[test]
    fn the_unplaced_note_is_bounded_by_the_metadata_and_names_a_flag_the_command_has() {
        let r = saved_trace(40960);
        let json_only = unplaced_note(&r, UnplacedDetail::JsonOnly);
        assert!(
            json_only.contains("at most 36.0 KiB of the 40.0 KiB counted as FS metadata"),
            "{json_only}"
        );
        assert!(!json_only.contains("--verbose"), "{json_only}");
        assert!(unplaced_note(&r, UnplacedDetail::VerboseFlag).contains("--verbose lists it"));
        // Less metadata than unplaced data: the bound is the metadata.
        let r = saved_trace(8192);
        let n = unplaced_note(&r, UnplacedDetail::JsonOnly);
        assert!(n.contains("at most 8.0 KiB of the 8.0 KiB"), "{n}");
        // No metadata written: nothing was misplaced, and only a listing says anything.
        let r = saved_trace(0);
        assert_eq!(unplaced_note(&r, UnplacedDetail::JsonOnly), "");
        assert_eq!(unplaced_note(&r, UnplacedDetail::VerboseFlag), "");
        let listed = unplaced_note(&r, UnplacedDetail::Listed);
        assert!(listed.contains("a later snapshot placed it"), "{listed}");
        assert!(listed.contains("small.db-shm: up to 32768 B"), "{listed}");
    }

    /// The quantities `joj compare`'s columns name are named alike by `joj bench` and `joj
    /// trace` (docs/cli.md, "Names of the quantities"), and trace's db and log are separate
    /// parts that add up to what its database's files wrote (its "data" used to hold the log).
    #[test]
    fn compare_bench_and_trace_name_the_same_quantities_alike() {
        let words = ["db", "log", "FS metadata", "FS journal", "(JOJ)"];
        let c: joj_experiment::compare::Comparison =
            serde_json::from_str(include_str!("../tests/fixtures/report/compare.json"))
                .expect("the fixture is a comparison");
        let compare = joj_experiment::compare::table(&c);
        let head = compare.lines().next().unwrap_or_default();
        for w in words.iter().chain(&["total", "flushes"]) {
            assert!(head.contains(w), "compare's header lacks {w:?}: {head}");
        }
        let r = saved_trace(40960);
        let bench = crate::bench::summary(&r);
        let trace = crate::trace_report::table(&r, false);
        for (what, text, line) in [
            ("bench", &bench, "per transaction:"),
            ("bench", &bench, "block:"),
            ("trace", &trace, "block:"),
        ] {
            let l = text
                .lines()
                .find(|l| l.trim_start().starts_with(line))
                .unwrap_or_else(|| panic!("{what}: no {line:?} line in {text}"));
            for w in ["db ", "log ", "FS metadata ", "FS journal "] {
                assert!(l.contains(w), "{what}'s {line:?} lacks {w:?}: {l}");
            }
        }
        for old in [
            "fs-jnl",
            "FS jrnl",
            " meta ",
            " sfr ",
            "data KiB (database",
            "(data ",
        ] {
            for (what, text) in [("compare", &compare), ("bench", &bench), ("trace", &trace)] {
                assert!(!text.contains(old), "{what} still says {old:?}: {text}");
            }
        }
        let head = trace
            .lines()
            .find(|l| l.trim_start().starts_with("database"))
            .expect("the per-database table");
        for w in ["db", "log", "FS journal*", "(JOJ)", "syncs"] {
            assert!(head.contains(w), "trace's header lacks {w:?}: {head}");
        }
        assert!(trace.contains("sync_file_range"), "{trace}");
        // The row's db and log add up to the data its files wrote per commit.
        let d = &r.command.as_ref().expect("a command").databases[0];
        let row = trace
            .lines()
            .find(|l| l.trim_start().starts_with(&d.path))
            .expect("the database's row");
        let figures: Vec<f64> = row
            .split('|')
            .nth(1)
            .unwrap_or_default()
            .split_whitespace()
            .map(|x| x.parse().expect("a figure"))
            .collect();
        let data_kib = d.per_commit.expect("per commit").data_bytes / 1024.0;
        assert!(
            (figures[0] + figures[1] - data_kib).abs() <= 0.1,
            "db {} + log {} is not the {data_kib:.1} KiB its files wrote: {row}",
            figures[0],
            figures[1]
        );
    }
}
