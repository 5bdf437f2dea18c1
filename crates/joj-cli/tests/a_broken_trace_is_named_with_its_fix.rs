//! `joj trace show`, `plot` and `import` of a trace that cannot be read say which file, what is
//! wrong with it in words that fit (a file cut short is not one with records added), and the
//! fix — as `joj replay` names the file it could not read.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::long_trace::write_joj_trace;

#[test]
fn a_broken_trace_is_named_with_its_fix() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fewer = d.join("fewer.jsonl");
    write_joj_trace(&fewer, 10, 12);
    let more = d.join("more.jsonl");
    write_joj_trace(&more, 10, 8);
    let cut = d.join("cut.jsonl");
    let whole = d.join("whole.jsonl");
    write_joj_trace(&whole, 10, 10);
    let bytes = std::fs::read(&whole).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 7]).unwrap();
    let garbage = d.join("garbage.jsonl");
    std::fs::write(&garbage, "garbage\n").unwrap();
    let cases = [
        (
            &fewer,
            "the header announces 12 records but the file holds 10: the file was cut short",
        ),
        (
            &more,
            "the header announces 8 records but the file holds 10: records were added after it was written",
        ),
        (
            &cut,
            "line 11: incomplete last line: the file was cut short",
        ),
        (&garbage, "not a joj-trace file"),
    ];
    let svg = d.join("out.svg");
    for (path, want) in cases {
        let p = path.to_str().unwrap();
        for args in [
            vec!["trace", "show", p],
            vec!["trace", "plot", "-o", svg.to_str().unwrap(), p],
        ] {
            let (ok, stdout, err) = common::run_joj_text(&args);
            assert!(!ok && stdout.is_empty(), "{args:?}: {err}");
            assert!(
                err.contains(&format!("cannot read trace {p}: {want}")) && err.contains("; fix: "),
                "{args:?}: {err}"
            );
            assert!(!svg.exists(), "{args:?}: no plot written");
        }
    }
    let bad = d.join("bad.txt");
    std::fs::write(
        &bad,
        "  7,0    1        1     0.000100000  1234  D  WS abc + 8 [joj]\n",
    )
    .unwrap();
    let out = d.join("out.jsonl");
    let (ok, _, err) = common::run_joj_text(&[
        "trace",
        "import",
        bad.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!ok, "{err}");
    assert!(
        err.contains(&format!(
            "cannot read trace {}: blkparse line 1: bad sector",
            bad.display()
        )) && err.contains("; fix: "),
        "{err}"
    );
    assert!(!out.exists());
}
