//! docs/formats/replay.md documented `joj replay --profile`, `--profile-for` and
//! `--same-profile-ok` long after they became `--device`, `--device-for` and `--same-device-ok`.
//! No page of docs/formats names a flag by an old spelling: the old spellings are the renamed
//! table of docs/cli.md (made from the CLI), less those some command still has as its name
//! (`--journal`, renamed in `apptxn` only).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use std::collections::BTreeSet;

fn docs() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

/// The first backquoted cell of each table row between the two markers of a docs/cli.md block.
fn cells(cli: &str, block: &str, column: usize) -> BTreeSet<String> {
    cli.lines()
        .skip_while(|l| !l.starts_with(&format!("<!-- begin {block}")))
        .take_while(|l| !l.starts_with(&format!("<!-- end {block}")))
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l.split('|').nth(column))
        .map(|c| c.trim().trim_matches('`').to_string())
        .collect()
}

/// `flag` appears in `text` as a whole flag, not as the start of a longer one.
fn names(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(i, _)| {
        !text[i + flag.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

#[test]
fn the_format_pages_use_the_current_flag_names() {
    let cli = std::fs::read_to_string(docs().join("cli.md")).unwrap();
    let current = cells(&cli, "flags", 1);
    let old: Vec<String> = cells(&cli, "renamed", 2)
        .into_iter()
        .filter(|f| f.starts_with("--") && !current.contains(f))
        .collect();
    assert!(old.contains(&"--profile-for".to_string()), "{old:?}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(docs().join("formats")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            for flag in old.iter().filter(|f| names(line, f)) {
                found.push(format!("{}:{}: {flag}", path.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "old spellings in docs/formats: {found:#?}"
    );
}
