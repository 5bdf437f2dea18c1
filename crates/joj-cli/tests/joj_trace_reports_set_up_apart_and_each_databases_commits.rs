//! `joj trace` gives figures an application developer can act on: per database, per commit,
//! with the commits counted where they can be seen, and one-time set-up work (waldio's
//! preallocation of its log) reported apart instead of spread over the commits.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::Path;

fn repo() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn lib() -> String {
    let lib = repo().join("target/ext/release/libjoj.so");
    assert!(
        lib.exists(),
        "the SQLite extension is not built; fix: ./scripts/setup.sh"
    );
    lib.with_extension("").to_string_lossy().into_owned()
}

/// a.db in DELETE mode with 30 inserts and b.db in WAL mode with 20, in one program; `uri`
/// is appended to both databases' URIs (`?vfs=joj` opens them through the extension's VFS).
fn two_databases(load: bool, vfs: &str) -> String {
    let loader = if load {
        format!(
            "l = sqlite3.connect(':memory:'); l.enable_load_extension(True); l.load_extension('{}')\n",
            lib()
        )
    } else {
        String::new()
    };
    format!(
        "import sqlite3
{loader}a = sqlite3.connect('file:a.db{vfs}', uri=True, isolation_level=None)
a.execute('CREATE TABLE t(x)')
b = sqlite3.connect('file:b.db{vfs}', uri=True, isolation_level=None)
b.execute('PRAGMA journal_mode=WAL'); b.execute('PRAGMA synchronous=FULL')
b.execute('CREATE TABLE t(x)')
for i in range(30): a.execute('INSERT INTO t VALUES(?)', (i,))
for i in range(20): b.execute('INSERT INTO t VALUES(?)', (i,))
"
    )
}

fn database<'a>(doc: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    doc["command"]["databases"]
        .as_array()
        .expect("command.databases")
        .iter()
        .find(|d| d["path"] == path)
        .unwrap_or_else(|| panic!("no database {path}: {}", doc["command"]["databases"]))
}

#[test]
fn two_databases_in_two_modes_get_their_own_commits_counted_as_the_vfs_counts_them() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let from_calls =
        common::joj_trace_json(&[], &["/usr/bin/python3", "-c", &two_databases(false, "")]);
    let from_vfs = common::joj_trace_json(
        &[],
        &["/usr/bin/python3", "-c", &two_databases(true, "?vfs=joj")],
    );
    for (db, mode, at_least) in [("a.db", "delete", 31), ("b.db", "wal", 21)] {
        let seen = database(&from_calls, db);
        let marked = database(&from_vfs, db);
        // Each database is named by its own mode; `PRAGMA journal_mode=WAL`'s one commit
        // through a rollback journal is said apart, not in the name (`delete+wal` before).
        assert_eq!(seen["journal_mode"], mode, "{seen}");
        if mode == "wal" {
            assert!(
                seen["other_modes"]
                    .as_str()
                    .is_some_and(|o| o.contains("commit(s) in delete")),
                "{seen}"
            );
        }
        assert!(
            marked["commits_counted_by"]
                .as_str()
                .unwrap()
                .contains("COMMIT_PHASETWO"),
            "{marked}"
        );
        let (n, m) = (
            seen["commits"].as_u64().unwrap(),
            marked["commits"].as_u64().unwrap(),
        );
        assert!(m >= at_least, "{db}: the VFS counted {m}");
        assert_eq!(
            n, m,
            "{db}: commits counted from system calls ({}) must equal the VFS's",
            seen["commits_counted_by"]
        );
        let per = &seen["per_commit"];
        assert!(per["syncs"].as_f64().unwrap() >= 1.0, "{seen}");
        assert!(per["data_bytes"].as_f64().unwrap() > 0.0, "{seen}");
    }
    // A DELETE commit syncs the journal twice, the directory once and the database once.
    let a = &database(&from_calls, "a.db")["per_commit"];
    assert!((a["syncs"].as_f64().unwrap() - 4.0).abs() < 0.2, "{a}");
}

/// A Python program that commits 200 rows through waldio in WAL mode, into `w.db`.
fn waldio_app() -> String {
    format!(
        "import sqlite3
l = sqlite3.connect(':memory:'); l.enable_load_extension(True); l.load_extension('{}')
db = sqlite3.connect('file:w.db?vfs=waldio', uri=True, isolation_level=None)
db.execute('PRAGMA journal_mode=WAL')
db.execute('CREATE TABLE t(i INTEGER PRIMARY KEY, v TEXT)')
for i in range(200): db.execute('INSERT INTO t(v) VALUES(hex(randomblob(50)))')
",
        lib()
    )
}

#[test]
fn waldios_preallocation_is_reported_as_set_up_not_spread_over_the_commits() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let code = waldio_app();
    let doc = common::joj_trace_json(&[], &["/usr/bin/python3", "-c", &code]);
    let setup = &doc["command"]["setup"];
    assert!(
        setup["work"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["what"] == "waldio-preallocation"),
        "{setup}"
    );
    // 1024 frames of 4 KiB: the 4 MiB written once when the log was made.
    assert!(
        setup["block"]["data_bytes"].as_u64().unwrap() >= 4 << 20,
        "{setup}"
    );
    let w = database(&doc, "w.db");
    assert!(w["commits"].as_u64().unwrap() >= 200, "{w}");
    // With the preallocation spread over 200 commits, each would write 20 KiB more.
    let per = w["per_commit"]["data_bytes"].as_f64().unwrap();
    assert!(per < 8.0 * 1024.0, "{per} B of data per commit: {w}");
    let per_txn = doc["block_per_txn"]["write_bytes"].as_f64().unwrap();
    assert!(
        per_txn < 12.0 * 1024.0,
        "block_per_txn.write_bytes {per_txn}"
    );
}

/// The plot's caption gives what a transaction writes with the one-time set-up apart, as the
/// text and the document do: waldio's 4 MiB preallocation spread over 200 commits read as 20 KiB
/// more per transaction (the caption said 4.6 KiB per transaction where the text said 4.2 for
/// the README's 10,000 rows).
#[test]
fn the_plots_caption_keeps_the_set_up_out_of_the_per_transaction_figure() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let code = waldio_app();
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .args(["trace", "--json", "--out"])
        .arg(out.path())
        .args(["--", "/usr/bin/python3", "-c", &code])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let plot = doc["plot_file"].as_str().expect("plot_file");
    let svg = std::fs::read_to_string(plot).unwrap();
    let texts: Vec<&str> = svg
        .split("<text")
        .filter_map(|t| t.split_once('>'))
        .filter_map(|(_, rest)| rest.split_once("</text>"))
        .map(|(text, _)| text.trim())
        .collect();
    let caption = texts
        .iter()
        .find(|t| t.starts_with("written so far"))
        .unwrap_or_else(|| panic!("no caption \"written so far\" in {plot}: {texts:?}"));
    // The document's figures, as the caption writes sizes (one decimal of KiB or MiB).
    let size = |b: f64| {
        if b >= 1024.0 * 1024.0 {
            format!("{:.1} MiB", b / 1024.0 / 1024.0)
        } else {
            format!("{:.1} KiB", b / 1024.0)
        }
    };
    let setup = doc["command"]["setup"]["block"]["write_bytes"]
        .as_f64()
        .unwrap();
    let per_txn = doc["block_per_txn"]["write_bytes"].as_f64().unwrap();
    let want = format!("— {} per transaction", size(per_txn));
    assert!(
        caption.ends_with(&want),
        "caption {caption:?}, the document's figure: {want:?}"
    );
    let apart = format!("{} of it one-time set-up", size(setup));
    assert!(
        texts.iter().any(|t| t.contains(&apart)),
        "the set-up is not said apart ({apart:?}): {texts:?}"
    );
    // And the text's "each commit writes …" of the one database, within a tenth.
    let p = &database(&doc, "w.db")["per_commit"];
    let text_figure = [
        "data_bytes",
        "fs_journal_bytes_in_syncs",
        "metadata_bytes_in_syncs",
    ]
    .iter()
    .map(|k| p[k].as_f64().unwrap())
    .sum::<f64>();
    assert!(
        (per_txn - text_figure).abs() <= 0.1 * text_figure,
        "per transaction {per_txn} B, each commit in the text {text_figure} B"
    );
}
