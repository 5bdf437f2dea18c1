//! `joj trace import` of a file with no blkparse request in it is an error that says what was
//! expected (blkparse text lines, with an example) and how to produce it; no output is written
//! and an existing one is kept, even with `--force`.

mod common;
mod in_dir;

use in_dir::joj;

#[test]
fn an_input_without_requests_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("notatrace.txt"), "shopping list\neggs\n").unwrap();
    std::fs::write(d.join("empty.txt"), "").unwrap();
    std::fs::write(d.join("keep.jsonl"), "kept\n").unwrap();

    for input in ["notatrace.txt", "empty.txt"] {
        let (ok, _, err) = joj(&["trace", "import", "-o", "new.jsonl", input], d);
        assert!(!ok, "{input} holds no request: {err}");
        assert!(
            err.contains(&format!("{input} holds no block request"))
                && err.contains("D  WS 2048 + 8")
                && err.contains("blkparse -i")
                && err.contains("fix:"),
            "{err}"
        );
        assert!(!d.join("new.jsonl").exists(), "no output for no requests");

        let (ok, _, err) = joj(
            &["trace", "import", "--force", "-o", "keep.jsonl", input],
            d,
        );
        assert!(!ok);
        assert!(err.contains("holds no block request"), "{err}");
        assert_eq!(
            std::fs::read_to_string(d.join("keep.jsonl")).unwrap(),
            "kept\n"
        );
    }
    let mut left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["empty.txt", "keep.jsonl", "notatrace.txt"]);
}
