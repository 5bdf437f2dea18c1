#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! A name joj did not choose — a file in a folder handed to `joj report`, a file a traced
//! program made — reached the terminal of whoever ran joj (root) as its bytes: an ESC in it
//! started an escape sequence (`\e[2J` cleared the screen), a CR or newline rewrote or forged
//! a line of joj's. Every such character is now written as its escape (`\u{1b}`), in joj's
//! text, its error lines and its JSON (where a JSON escape keeps the document the same), and in
//! a plot's title (an ESC there made the SVG not well-formed XML: no browser showed it). A name
//! in a row of joj's tables is one line, its newline escaped too.

mod common;

use joj_trace::terminal::acts_on_terminal;

/// The name of a file someone else chose: a screen clear, a title set, a CR, a newline that
/// starts a line of its own, an 8-bit CSI and a right-to-left override.
const NAME: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}x\rjoj: all ok\nforged\u{9b}1m\u{202e}nosj.json";

/// Whether `text`, split at its line breaks, holds a character that acts on a terminal.
fn acts(text: &str) -> bool {
    text.chars().any(|c| c != '\n' && acts_on_terminal(c))
}

#[test]
fn a_file_name_in_a_folder_given_to_joj_report_is_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    std::fs::write(results.join(NAME), "not a result").unwrap();
    let page = dir.path().join("page.html");
    let run = common::joj_report(&results, &page);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        !acts(&err),
        "a character of the name acts on the terminal: {err:?}"
    );
    assert!(
        !err.lines().any(|l| l.starts_with("forged")),
        "the name's newline forged a line: {err:?}"
    );
    assert!(
        err.contains("not shown: ") && err.contains("\\u{1b}[2J\\u{1b}]0;pwned\\u{7}x\\u{d}"),
        "the name is not shown escaped: {err}"
    );
}

#[test]
fn a_file_name_a_traced_program_chose_is_shown_escaped_in_text_and_json() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let script = "printf x > \"$1\" && sync -d \"$1\"";
    let out_dir = tempfile::tempdir().unwrap();
    let plots = out_dir.path().to_str().unwrap();
    let base = ["--fs", "ext4", "--empty", "--out", plots];
    let cmd = ["sh", "-c", script, "sh", NAME];
    let run = common::joj_command()
        .arg("trace")
        .args(base)
        .arg("--")
        .args(cmd)
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{err}");
    assert!(
        out.contains("\\u{1b}[2J"),
        "the file's row is not in the text: {out}"
    );
    assert!(!acts(&out), "text: {out:?}");
    assert!(
        !out.lines().any(|l| l.starts_with("forged")),
        "the name's newline forged a line: {out}"
    );
    assert!(!acts(&err), "stderr: {err:?}");
    // The plot's title names the command: XML 1.0 refuses an ESC, so it is escaped there too.
    let svg = std::fs::read_dir(plots)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "svg"))
        .expect("a plot");
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(
        svg.contains("\\u{1b}[2J"),
        "the title does not name the file"
    );
    assert!(!acts(&svg), "the plot holds a character XML refuses");

    let json = common::joj_command()
        .args(["trace", "--json"])
        .args(base)
        .arg("--")
        .args(cmd)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&json.stdout);
    assert!(
        json.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    assert!(!acts(&text), "JSON: {text:?}");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    common::traced_file(&doc, NAME);
}

#[test]
fn a_trace_named_by_someone_else_is_named_escaped_in_the_replay_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(NAME);
    let records = vec![
        joj_trace::TraceRecord::new(0, "7:0", joj_trace::Op::Write, 2048, 8),
        joj_trace::TraceRecord::new(1, "7:0", joj_trace::Op::Flush, 0, 0),
    ];
    joj_trace::write_trace_file(&path, &common::loop0_header(1), &records).unwrap();
    let run = common::joj_command()
        .arg("replay")
        .arg(&path)
        .args(["--device", "emmc5"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(out.contains("\\u{1b}[2J"), "the trace is not named: {out}");
    assert!(!acts(&out), "text: {out:?}");
}
